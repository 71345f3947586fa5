# Session 49 (2026-12-05), device call 3, on the same (warm) H100 as call 2. Tuner packed at 8bef705.
# carried: gpu-artifacts/tuner. Call 2 had run the same check into $OUT, whose payload and run folders overran
# the 8 files a call brings back, so only its exits.txt returned; call 3 kept only the summary (the packing of
# the run folders after it ran past the call's limit and nothing of it came back).
mkdir -p /tmp/ls && ONLY='@(bias_relu_*|tc_*|softmax_*|layernorm_8192x4095|row_sum_*)' \
  timeout 420 bash scripts/gpu/layout_shape_check.sh gpu-artifacts/tuner /tmp/ls 25 20 > $OUT/stdout.txt 2>&1
find /tmp/ls -maxdepth 1 -type f -exec cp {} $OUT/ \;
