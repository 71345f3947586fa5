#!/usr/bin/env bash
# Hardware counters for the best kernel of a tuning run, on the GPU machine (Nsight Compute):
#   scripts/gpu/profile.sh RUN_DIR OUT
# RUN_DIR is a kforge-tune run directory (e.g. bench-out/tune/matmul_square_bf16 after
# `scripts/gpu/bench.sh $T --tune-only --tasks matmul_square_bf16`); its best schedule is rebuilt from the
# database (kforge-tune --replay --build-only, so a run carried without its artifacts works), then kforge-run
# launches it under ncu (the clocks left alone: --clock-control none) and one launch after the first is
# profiled: speed of light, warp stall reasons, scheduler and instruction statistics, occupancy, memory.
# Writes OUT/replay.json, OUT/ncu.txt (ncu's log), OUT/details.txt (the sections as text) and
# OUT/profile.ncu-rep. Profiling only: the kernel
# is its own reference here (kforge-tune --replay verifies it against the naive kernel).
set -uo pipefail
if [ $# -ne 2 ] || [ ! -f "$1/db.jsonl" ]; then
  echo "usage: scripts/gpu/profile.sh RUN_DIR OUT (RUN_DIR: a kforge-tune run directory with db.jsonl)" >&2
  exit 2
fi
run=$1
out=$2
mkdir -p "$out"
tools=gpu-artifacts/tuner
scripts/gpu/unpack_tuner.sh "$tools" > "$out/device.json" || exit 1
"$tools/bin/kforge-tune" --replay "$run" --build-only > "$out/replay.json" || exit 1
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
if [ -z "$ncu" ]; then
  echo "profile.sh: no ncu on this machine" | tee "$out/ncu.txt" >&2
  exit 1
fi
"$ncu" --clock-control none --target-processes all --kernel-name regex:_kernel --launch-skip 1 --launch-count 1 \
  --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section InstructionStats \
  --section Occupancy --section LaunchStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
  --export "$out/profile" --force-overwrite \
  "$tools/bin/kforge-run" --candidate "$run/best" --reference "$run/best" --runtime "$tools/lib/libkforge_mgpu.so" \
  --seeds 1 --reps 10 --warmup 1 > "$out/ncu.txt" 2>&1
status=$?
[ $status -eq 0 ] || echo "profile.sh: ncu exited with $status (see $out/ncu.txt)" >&2
# The sections as text (an exported run prints none): the report read back, every metric of the sections.
"$ncu" --import "$out/profile.ncu-rep" --page details > "$out/details.txt" 2>&1 || status=$?
exit $status
