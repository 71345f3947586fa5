#!/usr/bin/env bash
# Call 32 (nvidia-h200, the tools of call 31): call 31's tuned kernels (its bench-runs.tgz, no tuning) measured with
# PyTorch in three more separate processes (p1, p2, p3): is the 0.6-1.3% by which kforge's norms beat torch.compile
# in call 31 there in every process?
R=softmax,softmax_wide,layernorm,layernorm_plain,rms_norm,row_sum
L=$(mktemp -d)
for p in p1:190 p2:380 p3:570; do
  limit=${p#*:}; p=${p%:*}
  mkdir -p "$L/$p"
  BENCH_PREVIOUS=results/benchmarks-h200/2026-12-01/call-31/bench-runs.tgz BENCH_TIMEOUT=$(( limit - SECONDS )) \
    scripts/gpu/bench.sh "$L/$p" --no-tune --tasks $R
  cp "$L/$p/h200.md" "$OUT/$p.md"; cp "$L/$p/h200.json" "$OUT/$p.json"
done
cat "$OUT/p1.md"
tar czf "$OUT/logs.tgz" -C "$L" .
