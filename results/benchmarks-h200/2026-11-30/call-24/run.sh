#!/usr/bin/env bash
# Call 24 (nvidia-h200, tools packed at dd950ae): call 23's reduction kernels (softmax_wide's with pipeline_rows)
# measured again in a second process, no tuning, with PyTorch alongside.
BENCH_PREVIOUS=results/benchmarks-h200/2026-11-30/call-23/bench-runs.tgz BENCH_TIMEOUT=300 scripts/gpu/bench.sh "$OUT" \
  --no-tune --tasks softmax,softmax_wide,layernorm,layernorm_plain,rms_norm,row_sum
cat "$OUT/h200.md"
