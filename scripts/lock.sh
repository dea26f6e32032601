#!/usr/bin/env bash
# Refresh requirements.lock, the constraints file scripts/setup.sh installs with, from the ranges in
# pyproject.toml (project deps + the dev and docs extras). uv resolves one version of every package for every
# platform and Python >= 3.11 at once (--universal), so the lock is the same whoever refreshes it.
# Run it on purpose (a new dependency, a wanted upgrade), then run the tests and commit the lock with
# the reason; `config.json` of every run records the versions it ran with.
#   bash scripts/lock.sh                      # latest releases that fit pyproject.toml
#   bash scripts/lock.sh --upgrade-package openai   # move one package, keep the rest
set -euo pipefail
cd "$(dirname "$0")/.."
UV=${UV:-uv}
if ! command -v "$UV" >/dev/null; then
  echo "error: uv is not on PATH: pip install uv (or set UV=/path/to/uv)" >&2
  exit 2
fi
"$UV" pip compile pyproject.toml --extra dev --extra docs --universal --python-version 3.11 \
  --custom-compile-command "bash scripts/lock.sh" -o requirements.lock "$@"
