# Session 65, device call 1 (an H100 80GB HBM3; two processes by bench/run, issue 34's TF32 rows)
CALL=2 TASKS=matmul_square_tf32,matmul_8192_tf32,linear_square_tf32,linear_8k_tf32 BUDGET=40 CALL_LIMIT=560 bash scripts/gpu/plans/s63/call.sh
