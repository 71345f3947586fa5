#!/usr/bin/env bash
# Where a kforge-run call's time goes on the GPU machine (docs/perf/search-h200.md, "Throughput"): the CUDA
# start-up of a fresh process (kforge-run --device-info) with and without another process holding a CUDA
# context, and one candidate's verification and timing ($1: a run directory with best/, baseline/ and
# seed-cache/). Prints wall times; changes no device setting.
set -uo pipefail
run=${1:-runs/gemm-evolve}
bin=gpu-artifacts/tuner/bin
wall() { local s r; s=$(date +%s%N); "$@" > /dev/null 2>&1; r=$?; echo "$(( ($(date +%s%N) - s) / 1000000 )) ms (exit $r): ${*: -4}"; }
echo "== fresh process, no other CUDA client"
for i in 1 2; do wall "$bin/kforge-run" --device-info; done
args=(--candidate "$run/best" --reference "$run/baseline" --runtime gpu-artifacts/tuner/lib/libkforge_mgpu.so
      --cache-dir "$run/seed-cache" --output /tmp/probe.json)
echo "== one candidate (seeds reps)"
wall "$bin/kforge-run" "${args[@]}" --seeds 1 --reps 0
wall "$bin/kforge-run" "${args[@]}" --seeds 3 --reps 0
wall "$bin/kforge-run" "${args[@]}" --seeds 3 --reps 20
echo "== the same with another process holding a CUDA context"
python3 -c 'import ctypes, time; c = ctypes.CDLL("libcuda.so.1"); c.cuInit(0); d = ctypes.c_int(); c.cuDeviceGet(ctypes.byref(d), 0); x = ctypes.c_void_p(); c.cuCtxCreate_v2(ctypes.byref(x), 0, d); time.sleep(120)' &
keeper=$!
sleep 3
for i in 1 2; do wall "$bin/kforge-run" --device-info; done
wall "$bin/kforge-run" "${args[@]}" --seeds 1 --reps 0
wall "$bin/kforge-run" "${args[@]}" --seeds 3 --reps 20
kill $keeper
