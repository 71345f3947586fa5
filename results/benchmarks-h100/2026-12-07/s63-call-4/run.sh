LIMIT=100 TASKS="matmul_square_f16" FORMS="Q N" bash scripts/gpu/plans/multicast/run.sh
