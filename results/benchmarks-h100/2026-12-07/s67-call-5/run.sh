# Session 67, device call 5 (an H100 80GB HBM3): issue 27's prime-shaped gemms (fp32, bf16 and TF32) at 40 s a task.
mkdir -p /tmp/irr; BENCH_TIMEOUT=450 bash scripts/gpu/bench.sh /tmp/irr --tasks linear_prime_tf32,linear_prime,linear_prime_bf16,matmul_prime,matmul_prime_8k --time-budget 40 > $OUT/bench.log 2>&1
cp /tmp/irr/h200.md /tmp/irr/h200.json /tmp/irr/bench-runs.tgz $OUT/
