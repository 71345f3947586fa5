PAYLOADS="batch_matmul_128x512x1024x2048 matvec_2048x1048576" timeout 110 bash scripts/gpu/first_kernel_study.sh gpu-artifacts/tuner /tmp/fk2 25 > $OUT/first-kernel.md 2>&1
