#!/usr/bin/env bash
# Device call 6 of session 55 (2026-12-06), repository root on the GPU machine (an H100 was lent), $OUT its output.
# Tuner packed by scripts/gpu/pack_tuner.sh at 985ae3a (cvta-free cp.async sources, unsigned index math, and the
# search's contiguous_copies: three cp.async copy orders proposed for 8x8 a thread), carried. The five
# convolution tasks below the issue's bar in session 54's call 6, tuned 30 s each (20 s then: the heuristic now
# proposes twice as many cp.async schedules per tile), then measured beside PyTorch eager (cuDNN, TF32 off) and
# torch.compile in one process.
set -u; R=$OUT/conv; mkdir -p $R; nvidia-smi --query-gpu=name --format=csv,noheader > $OUT/gpu.txt
BENCH_TIMEOUT=500 scripts/gpu/bench.sh $R --tasks conv_resnet_3x3,conv_resnet_3x3_s2,conv_stem_7x7_s2,conv_unet_3x3,conv_pointwise --time-budget 30
