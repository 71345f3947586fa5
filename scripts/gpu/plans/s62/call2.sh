#!/usr/bin/env bash
# Session 62's second device call, if the machine is still held after call1.sh: issue 34's other rows (f16
# 4096^3, bf16 8192^3, the bf16 gemm + bias + relu) and the 8192^3 TF32 Linear, bench/run's protocol. TASKS
# (comma-separated) and BUDGET (seconds a task) choose.
set -u
mkdir -p /tmp/b2
BENCH_TIMEOUT=${LIMIT:-550} scripts/gpu/bench.sh /tmp/b2 --tasks ${TASKS} --time-budget ${BUDGET:-40}
echo "bench exit $?" >> /tmp/b2/bench.log
nvidia-smi --query-gpu=name --format=csv >> /tmp/b2/bench.log
cp /tmp/b2/h200.md /tmp/b2/h200.json /tmp/b2/bench-runs.tgz /tmp/b2/bench.log /tmp/b2/device.json $OUT/ 2>/dev/null
cat /tmp/b2/h200.md; tail -3 /tmp/b2/bench.log
