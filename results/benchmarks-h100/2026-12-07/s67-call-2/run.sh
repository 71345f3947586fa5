# Session 67, device call 2 (an H100 80GB HBM3): the TF32 A @ B rows in two processes (swap_ab correct now), then
# the 4096 x 393216 softmax's first kernel. tf32/first-process.md, second-process.* and summary.txt did not come
# back (the call's file count); both processes' tables are in tf32.log and first-process.json.
CALL_LIMIT=570 bash scripts/gpu/plans/s66/call.sh
