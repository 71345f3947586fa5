# Session 62, device call 1 (an H100 80GB HBM3; the tuner packed at e73c0d9):
CALL_LIMIT=360 BENCH_BUDGET=30 BENCH_TASKS=matmul_square_bf16,linear_square_tf32,matmul_square_tf32 bash scripts/gpu/plans/s62/call1.sh
