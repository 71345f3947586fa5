#!/usr/bin/env bash
# Call 39 (nvidia-h200, call 36's tools; bench/run with the new --l2 option): under ncu (call 38, caches flushed
# clean) torch.compile's layernorm_plain kernel took 60.1 us and kforge's 62.0, while bench/run (its flush writes
# 256 MiB, leaving L2 full of dirty lines) measures kforge 0.1-0.5% faster. Call 37's kernels measured with the
# flush leaving L2 clean (--l2 clean) in two processes, and as before (--l2 dirty) in a third.
R=softmax,softmax_wide,layernorm,layernorm_plain,rms_norm,row_sum
L=$(mktemp -d)
for p in c1:clean c2:clean d1:dirty; do
  l2=${p#*:}; p=${p%:*}
  mkdir -p "$L/$p"
  BENCH_PREVIOUS=results/benchmarks-h200/2026-12-01/call-37/bench-runs.tgz BENCH_TIMEOUT=$(( 560 - SECONDS )) \
    scripts/gpu/bench.sh "$L/$p" --no-tune --tasks $R --l2 $l2
  cp "$L/$p/h200.json" "$OUT/$p.json"
done
cat "$L/c1/h200.md"
tar czf "$OUT/logs.tgz" -C "$L" .
