CALL=2 CALL_LIMIT=560 TASKS=linear_square_tf32,linear_8k_tf32,matmul_square_tf32 BUDGET=30 bash scripts/gpu/plans/s63/call.sh > $OUT/call.log 2>&1
