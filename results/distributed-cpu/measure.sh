#!/usr/bin/env bash
# Throughput of kforge-tune-many against one kforge-tune per payload, CPU target, on this machine
# (docs/perf/distributed.md). Usage: results/distributed-cpu/measure.sh OUT [TRIALS]
# Writes OUT/sequential.txt, OUT/many-m1.txt, OUT/many-m2.txt (stderr of each, with `time`) and the run dirs.
set -euo pipefail
cd "$(dirname "$0")/../.."
out="$1"; trials="${2:-6}"
payloads=(examples/cpu/gemm.mlir examples/cpu/gemm_bias_relu.mlir examples/cpu/softmax.mlir examples/cpu/row_sum.mlir)
rm -rf "$out" && mkdir -p "$out"
nproc > "$out/nproc.txt"
{
  start=$(date +%s.%N)
  for p in "${payloads[@]}"; do
    build/bin/kforge-tune "$p" --target cpu --trials "$trials" -o "$out/sequential/$(basename "$p" .mlir)" 2>&1 | grep -E "baseline|trials in|stopped"
  done
  end=$(date +%s.%N)
  echo "sequential wall_s $(echo "$end - $start" | bc)"
} > "$out/sequential.txt" 2>&1
for m in 1 2; do
  { /usr/bin/time -f "many-m$m wall_s %e" scripts/kforge-tune-many "${payloads[@]}" -o "$out/many-m$m" --target cpu \
      --trials "$trials" --measurers "$m" --num-cpus "$(nproc)" 2>&1 | grep -v "WARNING\|INFO"; } > "$out/many-m$m.txt" 2>&1
done
