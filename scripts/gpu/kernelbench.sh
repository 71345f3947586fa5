#!/usr/bin/env bash
# The KernelBench-format suite (bench/kernelbench) on the GPU machine, one device call: unpacks the tuner packed
# here by scripts/gpu/pack_tuner.sh (carried as gpu-artifacts/tuner), then bench/kernelbench/run tunes each module
# with kforge-tune and measures kforge's best kernel, the module in eager mode and under torch.compile in one
# process. The GPU machine has no torch-mlir: the payloads are imported here first and carried:
#   build/venv/bin/python bench/kernelbench/run --import-only --out gpu-artifacts/kernelbench   # here
#   scripts/gpu/kernelbench.sh OUT [bench/kernelbench/run flags and modules, e.g. --time-budget 30]   # there
# (the device call carries gpu-artifacts). Writes OUT/kernelbench-h200.{md,json,svg}, the log and the tuning runs
# (records, best schedules; no artifacts or caches) as OUT/kernelbench-runs.tgz.
# The whole suite at 60 s a module does not fit one call: tune a share of the modules per call (--tune-only and
# the module files), each call carrying the runs of the ones before (KERNELBENCH_PREVIOUS: .tgz files, unpacked
# first), then measure in a last call (--no-tune). KERNELBENCH_TIMEOUT=SECONDS stops bench/kernelbench/run
# after that long, so that the runs are still packed before the call's own limit.
set -uo pipefail
out=$1
shift
scripts/gpu/unpack_tuner.sh gpu-artifacts/tuner > "$out/device.json" || exit 1
for previous in ${KERNELBENCH_PREVIOUS:-}; do
  tar xzf "$previous" || exit 1
done
# torch.compile of each module dominates the measurement's host time: compile with every core.
export TORCHINDUCTOR_COMPILE_THREADS=${TORCHINDUCTOR_COMPILE_THREADS:-$(nproc)}
PYTHONUNBUFFERED=1 timeout "${KERNELBENCH_TIMEOUT:-0}" python3 bench/kernelbench/run --backend cuda \
  --tools gpu-artifacts/tuner/bin --runtime gpu-artifacts/tuner/lib/libkforge_mgpu.so \
  --payloads gpu-artifacts/kernelbench/payloads --out kernelbench-out --report "$out/kernelbench-h200" "$@" \
  2> "$out/kernelbench.log"
status=$?
tar czf "$out/kernelbench-runs.tgz" --exclude='candidates' --exclude='cache' --exclude='seed-cache' \
  --exclude='baseline' --exclude='best' kernelbench-out
exit $status
