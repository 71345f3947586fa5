#!/usr/bin/env bash
# Call 16, on the two-GPU machine (nvidia-h200-x2), carrying gpu-artifacts/tuner, gpu-artifacts/tuner-study5 and
# gpu-artifacts/study-5/runs: study-5's call 5 on both GPUs (scripts/gpu/plans/study-5.txt), and on GPU 1, once
# its study lines are done, the benchmark of the fp32 gemms with the 16x8-per-thread staged SGEMM (tuned 28 s
# each, then measured with PyTorch in one process). The two GPUs share the host's cores, so compiles are slower;
# each GPU's timings are its own (CUDA events on that GPU).
start=$(date +%s)
TUNER=gpu-artifacts/tuner-study5 GPUS=2 scripts/gpu/tune_study.sh scripts/gpu/plans/study-5.txt $OUT \
  gpu-artifacts/study-5/runs > $OUT/study.log 2>&1 &
study=$!
until grep -q "softmax-random (GPU 1)" $OUT/summary.txt 2>/dev/null || ! kill -0 $study 2>/dev/null; do sleep 5; done
echo "GPU 1's study lines done after $(( $(date +%s) - start )) s"
G=matmul_square,gemm_bias_relu,gemm_scale_gelu,gemm_bias_residual
T=$(mktemp -d) B=$(mktemp -d)
export CUDA_VISIBLE_DEVICES=1
left=$(( 560 - ($(date +%s) - start) ))
BENCH_TIMEOUT=$(( left * 55 / 100 )) scripts/gpu/bench.sh $T --tune-only --tasks $G --time-budget 28
cp $T/bench.log $B/tune.log
left=$(( 570 - ($(date +%s) - start) ))
BENCH_TIMEOUT=$left scripts/gpu/bench.sh $B --no-tune --tasks $G
tar czf $OUT/bench.tgz -C $B .
cat $B/h200.md
wait $study
cat $OUT/summary.txt
