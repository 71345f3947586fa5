LIMIT=90 TASKS="matmul_square_bf16 linear_square_tf32" FORMS="Q N P M" bash scripts/gpu/plans/multicast/run.sh
