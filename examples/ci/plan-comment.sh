#!/usr/bin/env bash
# Writes the merge request's comment to comment.md and exits with gatesync plan's code
# (0 no changes, 2 changes, 3 blocked changes, 4 breaking changes; anything else: no plan —
# the files do not validate, or the daemon's state could not be used; the comment says which).
# Usage: plan-comment.sh CONFIG DIR [more gatesync plan flags]   (gatesync on PATH)
#
# The plan shows what the daemon will do (docs/user/merge-requests.md): this checkout's team
# settings, and the daemon's environments, orphan policy and guard (its GET /config), each
# environment against the state the daemon applies it with (GET /environments/NAME/state):
#   GATESYNC_STATE_URL    the daemon's address, e.g. https://gatesync.internal:9464
#   GATESYNC_STATE_TOKEN  the token in the variable the daemon's server.stateTokenEnv names
# In CI (CI=true) a plan against an empty state fails (STATE_EMPTY) instead of showing
# everything as a create; pass --allow-empty-state while nothing was ever applied.
# The secrets the resources reference must resolve (both optional):
#   GATESYNC_PLAN_ENV           NAME=value lines, exported for ${env:NAME} references (the
#                               variables gatesync.yaml's secrets.env lists; GATESYNC_HASH_KEY
#                               too when the daemon has one)
#   GATESYNC_PLAN_SECRET_FILES  base64 of a tar.gz of the secrets directory, for ${file:}
#                               references: `tar czf - secrets | base64 -w0` at the repository root
set -u
config="$1"; dir="$2"; shift 2
if [ -n "${GATESYNC_PLAN_SECRET_FILES:-}" ]; then
  if ! printf '%s' "$GATESYNC_PLAN_SECRET_FILES" | base64 -d | tar xzf -; then
    echo "GATESYNC_PLAN_SECRET_FILES is not a base64 tar.gz (make it with: tar czf - secrets | base64 -w0)" >&2
    exit 1
  fi
fi
if [ -n "${GATESYNC_PLAN_ENV:-}" ]; then
  n=0
  while IFS= read -r line || [ -n "$line" ]; do
    n=$((n + 1))
    case "$line" in '' | '#'*) continue ;; esac
    name="${line%%=*}"
    # the line itself holds a secret: only its number is named
    if [ "$name" = "$line" ] || ! [[ "$name" =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]]; then
      echo "GATESYNC_PLAN_ENV line $n is not NAME=value" >&2
      exit 1
    fi
    export "$name=${line#*=}"
  done <<< "$GATESYNC_PLAN_ENV"
fi
unset GATESYNC_PLAN_ENV GATESYNC_PLAN_SECRET_FILES
gatesync plan --config "$config" --dir "$dir" --format markdown --out plan.json --detailed-exitcode --fail-on-breaking "$@" > plan.md 2> plan.err
code=$?
case "$code" in
  0|2|3|4) cp plan.md comment.md ;;
  *)
    {
      if grep -q 'error\[STATE_' plan.err; then
        echo "### gatesync plan: the daemon's state could not be used, so no plan was made"
      else
        echo "### gatesync plan: this merge request does not validate"
      fi
      echo
      echo '```'
      cat plan.err
      echo '```'
    } > comment.md ;;
esac
exit "$code"
