#!/usr/bin/env bash
# Call 25 (nvidia-h200): an experiment, not a benchmark of record. Call 23's best kernels of five row-reduction
# tasks (their PTX in ptx/), rewritten with PTX cache qualifiers on their global loads and stores, verified and
# timed interleaved with PyTorch eager and torch.compile in one process (cache_hints.py says how).
D=results/benchmarks-h200/2026-12-01/call-25
PYTHONUNBUFFERED=1 python3 $D/cache_hints.py --ptx-dir $D/ptx --out "$OUT/results.json" 2>&1 | tee "$OUT/log.txt"
# Second run (the same call's script, after the first showed launch latency in its times): no synchronisation
# between the L2 flush and the start event, so the host's launch overlaps the flush as in bench/run; 5 rounds.
