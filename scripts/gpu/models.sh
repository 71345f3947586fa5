#!/usr/bin/env bash
# Whole models through torch.compile(backend=kforge) on the GPU machine, one device call: unpacks the tuner packed
# here by scripts/gpu/pack_tuner.sh (carried as gpu-artifacts/tuner), then bench/models/run compiles each block
# from the imports and plans prepared here (the GPU machine has neither torch-mlir nor kforge-opt):
#   build/venv/bin/python bench/models/run --prepare --workdir gpu-artifacts/models-work      # here
#   scripts/gpu/models.sh OUT [bench/models/run flags, e.g. --configs mlp-f32 --tune-seconds 10]   # there
# (the device call carries gpu-artifacts/tuner and gpu-artifacts/models-work). Writes OUT/models.{json,md}, the
# log, and the tuning database's records and best schedules (no kernels or caches) as OUT/models-db.tgz.
set -uo pipefail
out=$1
shift
# The database under gpu-artifacts/ (ignored by git): a later call on the same (warm) machine finds it again.
db=${MODELS_DB:-gpu-artifacts/models-db}
scripts/gpu/unpack_tuner.sh gpu-artifacts/tuner > "$out/device.json" || exit 1
export TORCHINDUCTOR_COMPILE_THREADS=${TORCHINDUCTOR_COMPILE_THREADS:-$(nproc)}
PYTHONUNBUFFERED=1 timeout "${MODELS_TIMEOUT:-0}" python3 bench/models/run --workdir gpu-artifacts/models-work \
  --tools gpu-artifacts/tuner/bin --runtime gpu-artifacts/tuner/lib/libkforge_mgpu.so --db "$db" \
  --out "$out" "$@" 2> "$out/models.log"
status=$?
tar czf "$out/models-db.tgz" --exclude='candidates' --exclude='cache' --exclude='seed-cache' --exclude='baseline' \
  --exclude='best' -C "$(dirname "$db")" "$(basename "$db")"
exit $status
