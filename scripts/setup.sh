#!/usr/bin/env bash
# Set up mas-agents from nothing: a virtualenv in .venv with every dependency.
# torch==2.13.0 goes first: its CPU wheel is on this machine's local wheel path, and an
# unpinned torch (pulled by sentence-transformers) would download gigabytes of CUDA packages.
# llama-cpp-python compiles from source on first install (~5 min on 2 cores; pip caches the wheel).
set -euo pipefail
cd "$(dirname "$0")/.."
# The browser tests of `mas serve` (tests/web) drive Debian's Chromium through the playwright
# package (dev extra) with executable_path=/usr/bin/chromium; `playwright install` is never run
# (it downloads browser builds). CI runs this script as root from nothing.
if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "note: /usr/bin/chromium is missing and this is not root: install Debian's chromium for the browser tests" >&2
  fi
fi
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet torch==2.13.0
.venv/bin/python -m pip install --quiet -e ".[dev]"
.venv/bin/mas --help >/dev/null
echo "mas-agents installed in .venv (activate with: source .venv/bin/activate)"
