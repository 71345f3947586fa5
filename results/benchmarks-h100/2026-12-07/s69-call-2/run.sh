# Session 69, device call 2 (an H100 80GB HBM3): issue 27's row kernels at 25 s a task (rows/), then issue 34's
# group_blocks as fixed kernels on the 8192^3 TF32 and bf16 gemms (grouped/grouped-summary.txt).
mkdir -p /tmp/o2 && OUT=/tmp/o2 CALL=2 CALL_LIMIT=545 bash scripts/gpu/plans/s69/call.sh; tar czf $OUT/call2.tgz -C /tmp/o2 .
