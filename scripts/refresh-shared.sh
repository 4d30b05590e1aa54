#!/usr/bin/env bash
# Copies the shared reference material the tests and the bench need into test/fixtures/shared.
# Run by hand after the project's shared folder changes; the tests never read it directly.
set -euo pipefail
cd "$(dirname "$0")/.."
from=${1:-../shared}
dest=test/fixtures/shared
rm -rf "$dest/corpus" "$dest/reference"
mkdir -p "$dest/reference"
cp -r "$from/corpus" "$dest/"
cp -r "$from/reference/published" "$dest/reference/"
cp "$from/reference/interface-behaviour.md" "$dest/reference/"
chmod -R u+w "$dest"
git status --short "$dest"
