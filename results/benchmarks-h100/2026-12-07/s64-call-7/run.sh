# from the repository root, results/ held out of the tree, the tuner packed at 9ec64ca (the AVX2 summary, the samples beside the baseline)
PAYLOADS="softmax_4096x393216 gemm_4096" timeout 200 bash scripts/gpu/first_kernel_study.sh gpu-artifacts/tuner /tmp/fk 30 > $OUT/first-kernel.md 2>&1
# then each run's run.json, db.jsonl, baseline run.json, reference-check.json and log into $OUT/runs.tgz
