#!/usr/bin/env bash
# Writes the merge request's comment to comment.md and exits with gatesync plan's code
# (0 no changes, 2 changes, 3 blocked changes, 4 breaking changes; anything else: no plan):
# the plan (markdown) when the repository validates, else its located validation errors.
# Usage: plan-comment.sh CONFIG DIR  (gatesync on PATH; DATABASE_URL etc. in the environment)
set -u
config="$1"; dir="$2"
gatesync plan --config "$config" --dir "$dir" --format markdown --out plan.json --detailed-exitcode --fail-on-breaking > plan.md 2> plan.err
code=$?
case "$code" in
  0|2|3|4) cp plan.md comment.md ;;
  *)
    {
      echo "### gatesync plan: this merge request does not validate"
      echo
      echo '```'
      cat plan.err
      echo '```'
    } > comment.md ;;
esac
exit "$code"
