#!/usr/bin/env bash
# Set up mas-agents from nothing: a virtualenv in .venv with every dependency, the same versions on
# every machine, and an embedded model that runs on any x86-64 CPU. Ends with a self-check that
# loads the embedded model and decodes a few tokens; a broken build stops here, with one line.
#
# Environment:
#   PYTHON                 the interpreter for the venv (default python3, >= 3.11)
#   MAS_LLAMA_CMAKE_ARGS   llama.cpp build flags, replacing the portable defaults below
#   MAS_WHEEL_CACHE        where the built llama-cpp-python wheel is kept (default ~/.cache/mas-agents/wheels)
#
# 1. The same stack every time: every package is installed under requirements.lock, a constraints
#    file that scripts/lock.sh generates with uv from the ranges in pyproject.toml (README: "Refreshing
#    the lock"). pip itself is pinned too.
# 2. torch==2.13.0 goes first: its CPU wheel is on this machine's local wheel path, and an unpinned
#    torch (pulled by sentence-transformers) would download gigabytes of CUDA packages.
# 3. llama-cpp-python is compiled from its sdist (PyPI has no Linux wheel). By default pip would let
#    llama.cpp's CMake build for the build machine's own CPU (GGML_NATIVE=ON, -march=native): such a
#    build segfaulted in llama_decode on a CPU with AVX-512 VNNI/BF16 and AMX (issue 25), and a wheel
#    built on one machine can crash on another. So the instruction sets are chosen here, on purpose:
#    x86-64-v3 (SSE4.2, AVX, AVX2, FMA, F16C, BMI2: every Intel CPU since Haswell, 2013, and every AMD
#    CPU since Excavator/Zen), nothing newer. Not chosen: ggml's runtime dispatch (GGML_BACKEND_DL +
#    GGML_CPU_ALL_VARIANTS) builds about ten CPU variants (several times the compile time) and on an
#    AMX machine picks the sapphirerapids variant, i.e. the AMX/AVX-512-BF16 code that crashed. The
#    cost on an AVX2 machine is nil (the native build there enables the same kernels: docs/reference/engine.md, "Speed of
#    the portable build"); on an AVX-512 machine the AVX-512 matmul kernels are not used. A CPU without
#    AVX2 fails the self-check with SIGILL and the line says which flags to rebuild with.
#    The wheel is built once per (version, flags) into MAS_WHEEL_CACHE and reused; pip's own wheel cache
#    is not used for it (its key ignores CMAKE_ARGS, so it would hand back a build made with other flags).
# 4. The browser tests of `mas serve` (tests/web) drive Debian's Chromium through the playwright package
#    (dev extra) with executable_path=/usr/bin/chromium; `playwright install` is never run (it downloads
#    browser builds). CI runs this script as root from nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

PIP_VERSION=26.3
LOCK=requirements.lock
PORTABLE_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_SSE42=ON -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON \
-DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF -DGGML_AVX_VNNI=OFF \
-DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DGGML_CCACHE=OFF"
LLAMA_CMAKE_ARGS=${MAS_LLAMA_CMAKE_ARGS:-$PORTABLE_CMAKE_ARGS}

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
VPY=.venv/bin/python
$VPY -m pip install --quiet "pip==$PIP_VERSION"
$VPY -m pip install --quiet -c "$LOCK" torch==2.13.0

# llama-cpp-python: the locked version, built once with LLAMA_CMAKE_ARGS
LLAMA_VERSION=$(sed -n 's/^llama-cpp-python==\([^ ;]*\).*/\1/p' "$LOCK")
if [ -z "$LLAMA_VERSION" ]; then
  echo "error: $LOCK pins no llama-cpp-python version (regenerate it: bash scripts/lock.sh)" >&2
  exit 1
fi
BUILD_KEY=$(printf '%s\n%s\n' "$LLAMA_VERSION" "$LLAMA_CMAKE_ARGS" | sha256sum | cut -c1-12)
WHEEL_DIR=${MAS_WHEEL_CACHE:-$HOME/.cache/mas-agents/wheels}/llama-cpp-python-$LLAMA_VERSION-$BUILD_KEY
if ! ls "$WHEEL_DIR"/llama_cpp_python-*.whl >/dev/null 2>&1; then
  echo "building llama-cpp-python $LLAMA_VERSION for any x86-64-v3 CPU (~6 min on 2 cores, once; flags: $LLAMA_CMAKE_ARGS)"
  rm -rf "$WHEEL_DIR.tmp" && mkdir -p "$WHEEL_DIR.tmp"
  CMAKE_ARGS="$LLAMA_CMAKE_ARGS" FORCE_CMAKE=1 $VPY -m pip wheel --quiet --no-deps --no-cache-dir \
    --no-binary llama-cpp-python -w "$WHEEL_DIR.tmp" "llama-cpp-python==$LLAMA_VERSION"
  rm -rf "$WHEEL_DIR" && mv "$WHEEL_DIR.tmp" "$WHEEL_DIR"
  printf '%s\n' "$LLAMA_CMAKE_ARGS" > "$WHEEL_DIR/CMAKE_ARGS"
fi
if [ "$(head -1 .venv/.mas-llama-build 2>/dev/null || true)" != "$BUILD_KEY" ]; then
  # a venv made before (or with other flags) may hold another build of the same version: replace it
  $VPY -m pip install --quiet --no-deps --force-reinstall "$WHEEL_DIR"/llama_cpp_python-*.whl
  printf '%s\n%s\n' "$BUILD_KEY" "$LLAMA_CMAKE_ARGS" > .venv/.mas-llama-build   # read by mas doctor and config.json
fi

$VPY -m pip install --quiet -c "$LOCK" -e ".[dev,docs]"   # docs: mkdocs build --strict (tests/test_docs_build.py)
$VPY -m pip check >/dev/null || { $VPY -m pip check >&2; echo "error: the installed packages do not fit together (pip check above)" >&2; exit 1; }
.venv/bin/mas --help >/dev/null

# the self-check: load the embedded GGUF and decode in a subprocess (a crash is reported, not suffered)
if ! $VPY -m mas_agents.selfcheck; then
  exit 1
fi
echo "mas-agents installed in .venv (activate with: source .venv/bin/activate; check it with: mas doctor)"
