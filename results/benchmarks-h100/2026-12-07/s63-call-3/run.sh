LIMIT=75 TASKS="linear_8k_tf32" FORMS="P M" bash scripts/gpu/plans/multicast/run.sh
