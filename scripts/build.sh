#!/usr/bin/env bash
# Configures (once) and builds kforge into ./build. Usage: scripts/build.sh [extra ninja targets...]
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR="${KFORGE_BUILD_DIR:-build}"
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -G Ninja -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir -DCMAKE_CXX_COMPILER=g++ -DCMAKE_C_COMPILER=gcc
fi
# Two cores on the CI machines; linking against the MLIR dylib keeps memory use low.
ninja -C "$BUILD_DIR" -j "${KFORGE_JOBS:-2}" "$@"
