#!/usr/bin/env bash
# Device call 5 of session 54 (2026-12-06), repository root on the GPU machine (an H100 was lent), $OUT its output.
# Which way a thread's 4 elements of a tile copy should run: along M/N (the operand's contiguous loop) or along K
# (consecutive channels: the window's padding check shared). Built here, at d5b2401 plus a copies_along_k option
# of transform.kforge.implicit_gemm_to_simt_staged (since folded into async_copies), with
#   kforge-tune TASK.mlir --target gpu --render S.json  (recipes/: the best schedules of call 4, async or not,
#   with and without copies_along_k added to the op), kforge-compile TASK.mlir --target gpu --recipe R -o art/R,
#   and --naive for the references; carried as gpu-artifacts/exp with the tuner packed at 68abac4 (kforge-run and
#   the runtime only). exp.txt: status and median ms of each (2 seeds verified, 30 timed repetitions).
set -u; T=gpu-artifacts/tuner; bash scripts/gpu/unpack_tuner.sh $T > /dev/null
nvidia-smi --query-gpu=name --format=csv,noheader > $OUT/gpu.txt; E=gpu-artifacts/exp
for v in r_reg r_regk r_async r_asynck u_async u_asynck u_reg u_regk; do
  case $v in r_*) ref=$E/conv_resnet_3x3.naive;; *) ref=$E/conv_unet_3x3.naive;; esac
  $T/bin/kforge-run --candidate $E/$v --reference $ref --seeds 2 --reps 30 --runtime $T/lib/libkforge_mgpu.so \
    --output /tmp/$v.json > /dev/null 2>&1
  python3 -c "import json; d=json.load(open('/tmp/$v.json')); t=d.get('timing') or {}; print('$v', d.get('status'), t.get('median_ms', d.get('median_ms')))"
done | tee $OUT/exp.txt
