#!/usr/bin/env bash
# Does all set-up (system packages, build), then kforge's main job on an example: kforge-tune searches for the
# fastest schedule of a fused gemm+bias+relu, verifying every candidate against the untransformed payload, and
# prints the report, the best schedule (a transform library kforge-opt replays) and where the kernel is.
# On a machine with an NVIDIA GPU it tunes the 4096^3 example for the GPU; without one, a 128x256x256 version
# for the CPU (the 4096^3 one would take hours to verify on a CPU).
# Usage: scripts/demo.sh [PAYLOAD.mlir] [extra kforge-tune flags]
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
scripts/build.sh

if [ $# -ge 1 ]; then
  payload=$1
  shift
elif build/bin/kforge-run --device-info > /dev/null 2>&1; then
  payload=examples/gemm_bias_relu.mlir
  set -- --trials 24 "$@"
else
  payload=examples/cpu/gemm_bias_relu.mlir
  set -- --trials 16 "$@"
fi

run="$(mktemp -d "${TMPDIR:-/tmp}/kforge-demo.XXXXXX")/run"
build/bin/kforge-tune "$payload" -o "$run" "$@"
echo
cat "$run/report.md"
echo
echo "===== best schedule ($run/best.mlir) ====="
cat "$run/best.mlir"
echo
echo "Replay it:  build/bin/kforge-opt $payload -transform-preload-library=transform-library-paths=$run/best.mlir -transform-interpreter"
echo "Rebuild and re-verify the kernel:  build/bin/kforge-tune --replay $run"
