#!/usr/bin/env bash
# Device call 3 of session 50 (2026-12-05, H100), tuner packed at 46bffcd (kforge-split-naive-reductions, the
# carried partition used: d039e21). Tuned l1_mse_loss and l1_huber_loss (each as its one kernel), then ran out of
# its 470 s in l1_cosine_similarity_loss: no report; the runs hold the trials.
KERNELBENCH_TIMEOUT=470 bash scripts/gpu/kernelbench.sh $OUT --time-budget 10 bench/kernelbench/modules/l1_{mse,huber,cosine_similarity}_loss.py bench/kernelbench/modules/l1_{frobenius_norm,group_norm}.py
