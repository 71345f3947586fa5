# Session 49 (2026-12-05), device call 1; the machine lent was an H100 (device.json), not the H200.
# Tuner packed at 8bef705 (scripts/gpu/pack_tuner.sh), blocks prepared here at the same commit:
#   build/venv/bin/python bench/models/run --prepare --workdir gpu-artifacts/models-work
# carried: gpu-artifacts/tuner gpu-artifacts/models-work
MODELS_TIMEOUT=540 scripts/gpu/models.sh $OUT --configs decoder-bf16 --tune-seconds 6
