#!/usr/bin/env bash
# Call 19 (nvidia-h200, tools packed at 13b748f, carried as gpu-artifacts/tuner-study6): study-6 call 2
# (softmax-evolve's last trials), then issue 8's whole table in one process: the fp32 gemms and chains tuned in
# calls 16 and 18 (their records; the best kernels rebuilt) and matmul_irregular tuned here, measured with
# cuBLAS and PyTorch; ncu on the gemm+bias+residual kernel (achieved occupancy) last.
mkdir -p "$OUT/study"
TUNER=gpu-artifacts/tuner-study6 scripts/gpu/tune_study.sh scripts/gpu/plans/study-6.txt "$OUT/study" \
  gpu-artifacts/study-6/runs
echo "study done after $SECONDS s"
cp -r gpu-artifacts/tuner-study6 gpu-artifacts/tuner
tar xzf results/benchmarks-h200/2026-11-30/call-16/bench-runs.tgz || exit 1
export BENCH_PREVIOUS=results/benchmarks-h200/2026-11-30/call-18/bench-runs.tgz
G=matmul_square,matmul_2048,matmul_8192,matmul_irregular,batch_matmul,gemm_bias_relu,gemm_scale_gelu,gemm_bias_residual
T=$(mktemp -d)
BENCH_TIMEOUT=60 scripts/gpu/bench.sh "$T" --tune-only --tasks matmul_irregular --time-budget 30
cp "$T/bench.log" "$OUT/tune.log"
BENCH_TIMEOUT=$(( 520 - SECONDS )) scripts/gpu/bench.sh "$OUT" --no-tune --tasks $G
echo "bench done after $SECONDS s"
P=$(mktemp -d)
timeout $(( 585 - SECONDS )) scripts/gpu/profile.sh bench-out/tune/gemm_bias_residual $P/gemm_bias_residual > /dev/null 2>&1
find $P -name '*.ncu-rep' -delete; tar czf "$OUT/profile.tgz" -C $P .
grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Size|Shared Memory Config|Static Shared" $P/*/details.txt
cat "$OUT/study/summary.txt" "$OUT/h200.md"
tar czf "$OUT/extras.tgz" -C "$OUT" tune.log bench.log device.json h200.svg study/device.json && rm -f "$OUT"/{tune.log,bench.log,device.json,h200.svg} "$OUT/study/device.json"
