# Session 67, device call 6 (an H100 80GB HBM3): failed at once (4 s, no data): softmax_rows is no bench task, and
# bench/run's error went to /tmp/rows/bench.log, which the command did not copy (bench.log here is the tar's).
# Call 7 is this call with the task list mended.
mkdir -p /tmp/rows; BENCH_TIMEOUT=420 bash scripts/gpu/bench.sh /tmp/rows --tasks softmax_vocab,softmax_wide,softmax_rows,layernorm,rms_norm,row_sum --time-budget 30 > $OUT/bench.log 2>&1
