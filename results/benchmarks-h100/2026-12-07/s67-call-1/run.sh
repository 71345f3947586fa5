# Session 67, device call 1 (an H100 80GB HBM3): swap_ab's five fixed forms on matmul_square_tf32 (4096^3), the
# first GPU run since the in-flight wait (fb348d1): all five correct (3 seeds) in both rounds; A (256 x 128, TMA,
# overlap, stage_epilogue) 0.355 ms, D / E (warp-specialized, producer warpgroup, multicast) 0.360 / 0.361 ms,
# B / C (no overlap) 0.431-0.439 ms. swapab-summary.txt; swapab-runs.tgz every form's records.
TASKS=matmul_square_tf32 FORMS="A B C D E" LIMIT=260 bash scripts/gpu/plans/swapab/run.sh
