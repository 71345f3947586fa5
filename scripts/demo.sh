#!/usr/bin/env bash
# Does all set-up (system packages, build), then kforge's main job on an example: applies a recipe to a
# payload, lowers it to PTX for the H200 (sm_90), and prints the PTX and ptxas's resource use.
# Usage: scripts/demo.sh [PAYLOAD.mlir] [RECIPE.mlir]  (default: the fused gemm+bias+relu example)
set -euo pipefail
cd "$(dirname "$0")/.."

payload="${1:-examples/gemm_bias_relu.mlir}"
recipe="${2:-recipes/gemm_fused_epilogue.mlir}"

scripts/install-deps.sh
scripts/build.sh

out="$(mktemp -d "${TMPDIR:-/tmp}/kforge-demo.XXXXXX")"
scripts/kforge-ptx.sh "$payload" "$recipe" "$out" > /dev/null
for ptx in "$out"/*.ptx; do
  echo "===== $(basename "$ptx") ($payload scheduled by $recipe) ====="
  cat "$ptx"
  echo "===== ptxas -arch=sm_90 -v ====="
  cat "${ptx%.ptx}.ptxas.txt"
done
echo "(scheduled IR, host module, PTX and cubin are in $out)"
