#!/usr/bin/env bash
# The benchmark on the GPU machine, one command (docs/benchmarks/h200.md, bench/README.md; the records of its calls
# are kept in results/benchmarks-h200/): unpacks the tuner packed here by scripts/gpu/pack_tuner.sh (carried as
# gpu-artifacts/tuner), then bench/run tunes every task with kforge and measures kforge, PyTorch eager and
# torch.compile in one process. Writes $1/h200.{md,json,svg} and packs the
# tuning runs (records, best schedules; no artifacts or caches) into $1/bench-runs.tgz.
#   scripts/gpu/bench.sh OUT [bench/run flags, e.g. --level 2 --time-budget 30]
#   BENCH_PREVIOUS=previous/bench-runs.tgz scripts/gpu/bench.sh OUT --no-tune
# A run split over device calls: call 1 (and 2) with --tune-only, the last with --no-tune, each carrying the
# previous call's bench-runs.tgz, unpacked into bench-out/ first when $BENCH_PREVIOUS names it.
# BENCH_TIMEOUT=SECONDS stops bench/run after that long, so the tuning runs are still packed before the device
# call's own limit (tuning resumes where it stopped in the next call).
set -uo pipefail
out=$1
shift
scripts/gpu/unpack_tuner.sh gpu-artifacts/tuner > "$out/device.json" || exit 1
if [ -n "${BENCH_PREVIOUS:-}" ]; then
  tar xzf "$BENCH_PREVIOUS" || exit 1
fi
# torch.compile of ~30 small graphs dominates the measuring call: compile with every core.
export TORCHINDUCTOR_COMPILE_THREADS=${TORCHINDUCTOR_COMPILE_THREADS:-$(nproc)}
timeout "${BENCH_TIMEOUT:-0}" python3 bench/run --backend cuda --tools gpu-artifacts/tuner/bin --runtime gpu-artifacts/tuner/lib/libkforge_mgpu.so \
  --out bench-out --report "$out/h200" "$@" 2> "$out/bench.log"
status=$?
tar czf "$out/bench-runs.tgz" --exclude='candidates' --exclude='cache' --exclude='seed-cache' --exclude='baseline' \
  --exclude='best' bench-out
exit $status
