nvidia-smi --query-gpu=name --format=csv,noheader > $OUT/card.txt; LIMIT=100 TASKS="matmul_square_bf16" FORMS="P M" bash scripts/gpu/plans/multicast/run.sh
