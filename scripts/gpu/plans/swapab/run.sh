#!/usr/bin/env bash
# swap_ab (TF32 A @ B with B as it lies, C^T = B^T A^T: session 66) as fixed kernels: which forms are correct on
# the GPU. schedules/TASK-F.json: A 256 x 128, TMA, overlap (one tile's wgmma in flight: waited for before the
# next tile's fragment loads), stage_epilogue; B A without overlap; C B without stage_epilogue (direct stores);
# D warp-specialized with a producer warpgroup, multicast, stage_epilogue; E D with overlap. Each compiled by
# the packed tuner, verified against the naive kernel on 3 seeds and timed (30 repetitions) by kforge-run, in two
# rounds (the forms' order, then reversed). scripts/gpu/plans/fixed_kernels.sh on these schedules.
#   TASKS=matmul_square_tf32 FORMS="A B C D E" LIMIT=300 bash scripts/gpu/plans/swapab/run.sh
FORMS=${FORMS:-A B C D E} PLAN_DIR=scripts/gpu/plans/swapab NAME=swapab exec bash scripts/gpu/plans/fixed_kernels.sh
