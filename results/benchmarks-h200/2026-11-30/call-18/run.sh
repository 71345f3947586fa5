#!/usr/bin/env bash
# Call 18 (nvidia-h200-x2, tools packed at 13b748f): study-6 call 1 (softmax, scripts/gpu/plans/study-6.txt:
# evolve on GPU 0, random on GPU 1); once the random line is done, the benchmark on GPU 1: the fp32 gemms the
# 16x8-per-thread staged SGEMM has not been measured on (2048^3, 8192^3, batch_matmul) and gemm+bias+residual
# with a longer tuning budget, then all measured with cuBLAS and PyTorch in one process.
scripts/gpu/unpack_tuner.sh gpu-artifacts/tuner > /dev/null || exit 1
mkdir -p "$OUT/study"
GPUS=2 scripts/gpu/tune_study.sh scripts/gpu/plans/study-6.txt "$OUT/study" &
study=$!
while ! grep -q "^softmax-random" "$OUT/study/summary.txt" 2> /dev/null && kill -0 $study 2> /dev/null; do sleep 5; done
echo "study's random line done after $SECONDS s"
export CUDA_VISIBLE_DEVICES=1
G=matmul_2048,matmul_8192,batch_matmul,gemm_bias_residual
T=$(mktemp -d)
BENCH_TIMEOUT=80 scripts/gpu/bench.sh "$T" --tune-only --tasks matmul_2048,batch_matmul --time-budget 20
cp "$T/bench.log" "$OUT/tune.log"
BENCH_TIMEOUT=170 scripts/gpu/bench.sh "$T" --tune-only --tasks matmul_8192,gemm_bias_residual --time-budget 60
cat "$T/bench.log" >> "$OUT/tune.log"
BENCH_TIMEOUT=$(( 555 - SECONDS )) scripts/gpu/bench.sh "$OUT" --no-tune --tasks $G
wait $study
cat "$OUT/study/summary.txt" "$OUT/h200.md"
tar czf "$OUT/extras.tgz" -C "$OUT" tune.log bench.log device.json h200.svg study/device.json && rm -f "$OUT"/{tune.log,bench.log,device.json,h200.svg}
