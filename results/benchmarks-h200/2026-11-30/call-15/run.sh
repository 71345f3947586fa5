#!/usr/bin/env bash
# Call 15: the first GPU run of prefetch_rows, the one-barrier block reductions (kforge-lower-subgroup-reduce) and
# pipeline(2) on the staged SGEMM. Reductions tuned 12 s each, the fp32 gemms 25 s (pipeline(2) is the sixth
# heuristic proposal), then all measured with PyTorch in one process; ncu on kforge's layernorm_plain and
# softmax_wide kernels last, if time is left.
R=softmax,softmax_wide,layernorm,layernorm_plain,rms_norm,row_sum
G=matmul_square,gemm_bias_relu,gemm_scale_gelu,gemm_bias_residual
T=$(mktemp -d)
BENCH_TIMEOUT=130 scripts/gpu/bench.sh $T --tune-only --tasks $R --time-budget 12; cp $T/bench.log $OUT/tune-reductions.log
BENCH_TIMEOUT=170 scripts/gpu/bench.sh $T --tune-only --tasks $G --time-budget 25; cp $T/bench.log $OUT/tune-gemms.log
BENCH_TIMEOUT=170 scripts/gpu/bench.sh $OUT --no-tune --tasks $R,$G
P=$(mktemp -d)
for t in layernorm_plain softmax_wide; do timeout 40 scripts/gpu/profile.sh bench-out/tune/$t $P/$t > /dev/null 2>&1; done
find $P -name '*.ncu-rep' -delete; tar czf $OUT/profile.tgz -C $P .
for f in $P/*/details.txt; do echo "== $f"; grep -E "Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Block Size|Warp Cycles Per Issued" $f; done
cat $OUT/h200.md
