#!/usr/bin/env bash
# Device call of session 53 (2026-12-06); tuner packed at 5334780 by scripts/gpu/pack_tuner.sh (the tree at ce147f9). Issue 34's TF32
# paths, first time on a GPU, fp32 with TF32 allowed to kforge (--allow-tf32) and to PyTorch (allow_tf32) alike,
# judged at TF32's tolerance (2^-9): nn.Linear (x @ W^T: the wgmma form) at 4096^3 and 8192^3, and a plain
# A @ B (B as K x N: mma.sync's form) at 4096^3. The report keeps bench/run's h200.* names.
BENCH_TIMEOUT=420 scripts/gpu/bench.sh $OUT --tasks linear_square_tf32,matmul_square_tf32,linear_8k_tf32 --time-budget 35
