#!/usr/bin/env bash
# Builds, on the CPU machine, everything the GPU smoke check needs: one kernel library per example x recipe
# (recipe -> kforge-lower-to-nvvm fatbin -> LLVM IR -> object -> shared object with the mgpu* calls left
# undefined) and the mgpu runtime. Output: $1 (default gpu-artifacts/).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${1:-$root/gpu-artifacts}"
opt="$root/${KFORGE_BUILD_DIR:-build}/bin/kforge-opt"
mkdir -p "$out"

mapfile -t combos < <(grep -v -e '^#' -e '^$' "$(dirname "$0")/combos.txt")
for combo in "${combos[@]}"; do
  read -r example recipe <<< "$combo"
  name="$example.$recipe"
  "$opt" "$root/examples/$example.mlir" \
    -transform-preload-library="transform-library-paths=$root/recipes/$recipe.mlir" -transform-interpreter \
    --kforge-lower-to-nvvm="format=fatbin" -o "$out/$name.host.mlir"
  mlir-translate-22 --mlir-to-llvmir "$out/$name.host.mlir" -o "$out/$name.ll"
  llc-22 -O2 -relocation-model=pic -filetype=obj "$out/$name.ll" -o "$out/$name.o"
  gcc -shared "$out/$name.o" -o "$out/$name.so"
  rm -f "$out/$name.o" "$out/$name.ll"
done
gcc -O2 -Wall -Wextra -shared -fPIC -I/usr/local/cuda/include "$root/runtime/mgpu_runtime.c" \
  -L/usr/local/cuda/lib64/stubs -lcuda -o "$out/libkforge_mgpu.so"
ls "$out"
