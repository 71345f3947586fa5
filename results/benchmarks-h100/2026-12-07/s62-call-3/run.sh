# Session 62, device call 3 (the same H100, warm; the tuner packed at e73c0d9):
LIMIT=170 TASKS=gemm_bias_relu_bf16,matmul_8192_f16 BUDGET=20 bash scripts/gpu/plans/s62/call2.sh
