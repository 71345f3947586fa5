# Device call of 2026-12-04 (session 41): where a multi-GB module's set-up goes, and the judge's clock check on
# layernorm's naive reference (docs/perf/kernelbench-h200.md). The naive references were compiled here with
#   build/bin/kforge-compile gpu-artifacts/kernelbench/payloads/$m.mlir --target gpu --naive -o gpu-artifacts/diag/$m
# for m in l1_layer_norm (65536 x 8192 fp32) and l1_gelu_tanh (16384 x 32768 fp32), and carried with the tuner.
R=gpu-artifacts/tuner/bin/kforge-run; L=gpu-artifacts/tuner/lib/libkforge_mgpu.so; D=gpu-artifacts/diag
$R --candidate $D/l1_layer_norm --reference $D/l1_layer_norm --seeds 1 --reps 10 --runtime $L --output $OUT/ln-seeds1.json
$R --candidate $D/l1_layer_norm --reference $D/l1_layer_norm --seeds 1 --reps 10 --warmup 1 --runtime $L --output $OUT/ln-seeds1-w1.json
$R --candidate $D/l1_gelu_tanh --reference $D/l1_gelu_tanh --seeds 3 --reps 10 --runtime $L --output $OUT/gelu-nocache.json
$R ... --cache-dir /tmp/cache --output $OUT/gelu-cache-cold.json   # then again: gelu-cache-warm.json
# times.txt: each command's exit status and wall time.
