#!/usr/bin/env bash
# Call 40 (nvidia-h200, call 36's tools): with the flush leaving L2 clean (call 39), torch.compile led kforge's
# norms by 1-2%. Are the L2 load policies' gains (loads_evict_last with prefetch_rows(264), tuned with a dirty
# flush) part of that? The norms and row_sum with --l2 clean in three processes, each with another call's
# kernels: call 37's (with the policies), call 27's (prefetch_rows(660), no policy), call 23's (before
# streaming_stores and the policies).
R=layernorm,layernorm_plain,rms_norm,row_sum
L=$(mktemp -d)
for p in k37:2026-12-01/call-37 k27:2026-12-01/call-27 k23:2026-11-30/call-23; do
  runs=${p#*:}; p=${p%:*}
  mkdir -p "$L/$p"; rm -rf bench-out
  BENCH_PREVIOUS=results/benchmarks-h200/$runs/bench-runs.tgz BENCH_TIMEOUT=$(( 500 - SECONDS )) \
    scripts/gpu/bench.sh "$L/$p" --no-tune --tasks $R --l2 clean
  cp "$L/$p/h200.json" "$OUT/$p.json"
done
for p in k37 k27 k23; do grep -E "^\| (layernorm|rms|row)" "$L/$p/h200.md"; done
tar czf "$OUT/logs.tgz" -C "$L" .
