# Session 62, device call 2 (the same H100, warm; the tuner packed at e73c0d9):
LIMIT=330 TASKS=matmul_8192_bf16,linear_8k_tf32,matmul_square_f16 BUDGET=30 bash scripts/gpu/plans/s62/call2.sh
