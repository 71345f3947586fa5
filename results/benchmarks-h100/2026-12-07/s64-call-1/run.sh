# device call 1 of session 64 (an H100 80GB HBM3), from the repository root, results/ held out of the tree:
CALL=1 CALL_LIMIT=560 MC_TASKS="matmul_8192_bf16 gemm_bias_relu_bf16" bash scripts/gpu/plans/s63/call.sh > $OUT/call.log 2>&1
# (fk.tgz, the study's runs, exceeded what a call may bring back and was left out)
