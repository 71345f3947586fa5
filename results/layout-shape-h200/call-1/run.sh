# Device call of 2026-12-04 (session 41) at 6356fe7 (tuner packed by scripts/gpu/pack_tuner.sh at 7e13dce),
# carrying gpu-artifacts/tuner. The runs' tgz was over the size that comes back; summary.md has every trial.
mkdir -p $OUT/ls && bash scripts/gpu/layout_shape_check.sh gpu-artifacts/tuner $OUT/ls 40 40
