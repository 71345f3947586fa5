# Session 66, device call 1 (an H100 80GB HBM3): the TF32 A @ B rows in two processes (swap_ab's first run on a
# GPU: every swap_ab trial incorrect, relative L2 0.49, the best kernel transpose_b's), then the softmax's first
# kernel. first-process.md, second-process.* and summary.txt did not come back (the call's file count); both
# processes' tables are in tf32.log (the script prints them) and first-process.json.
CALL_LIMIT=560 bash scripts/gpu/plans/s66/call.sh
