#!/usr/bin/env bash
# CPU side of the runner's GPU checks: compiles (with kforge-compile) every example x recipe candidate, a
# naive GPU reference per example, the adversarial kernels, and copies kforge-run and the mgpu runtime, into
# $1 (default gpu-artifacts/runner). run_runner.sh runs them on the GPU machine.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${1:-$root/gpu-artifacts/runner}"
build="$root/${KFORGE_BUILD_DIR:-build}"
compile="$build/bin/kforge-compile"
rm -rf "$out" && mkdir -p "$out/table" "$out/adversarial"

# KFORGE_ADVERSARIAL_ONLY=1: only the adversarial kernels (scripts/gpu/run_adversarial.sh), not the table.
if [ "${KFORGE_ADVERSARIAL_ONLY:-0}" = 1 ]; then
  combos=()
else
  mapfile -t combos < <(grep -v -e '^#' -e '^$' "$(dirname "$0")/combos.txt")
fi
for combo in "${combos[@]}"; do
  read -r example recipe <<< "$combo"
  "$compile" "$root/examples/$example.mlir" --recipe "$root/recipes/$recipe.mlir" -o "$out/table/$example.$recipe"
  [ -d "$out/table/$example.naive" ] || "$compile" "$root/examples/$example.mlir" --naive -o "$out/table/$example.naive"
done

# CPU builds: the independent computation each naive GPU reference is checked against once.
for example in $([ "${KFORGE_ADVERSARIAL_ONLY:-0}" = 1 ] || echo elementwise_chain softmax layernorm row_sum conv2d_nhwc batch_matmul gemm_bias_relu); do
  "$compile" "$root/examples/$example.mlir" --target cpu -o "$out/table/$example.cpu"
done

inputs="$root/test/Runner/Inputs"
for kernel in reference correct partial-write zeros off-by-1e-3; do
  "$compile" "$inputs/$kernel.mlir" --naive -o "$out/adversarial/$kernel"
done
for kernel in gpu-out-of-bounds gpu-hang; do
  "$compile" "$inputs/$kernel.mlir" -o "$out/adversarial/$kernel"
done
"$compile" "$inputs/reference.mlir" --target cpu -o "$out/adversarial/reference-cpu"
# Precision faults the f16/bf16 rules must catch (docs/runner.md), on the naive GPU mapping: an f16 product
# accumulated in f16, and a bf16 product with one K tile dropped from 1 of 512 output tiles; their honest twins.
for kernel in matmul-f16-accumulate-f16 matmul-f16-accumulate-f32 matmul-bf16-honest matmul-bf16-dropped-tile \
              tiny-after tiny-before huge-after huge-before; do
  "$compile" "$inputs/$kernel.mlir" --naive -o "$out/adversarial/$kernel"
done

cp "$build/bin/kforge-run" "$build/lib/libkforge_mgpu.so" "$out/"
du -sh "$out"
