#!/usr/bin/env bash
# group_blocks (session 67: the grid's blocks in groups of N block rows, clusters kept whole; never run on a GPU)
# as fixed kernels: correct, and faster? schedules/TASK-F.json, from session 67's searches on an H100:
#   matmul_8192_tf32, matmul_square_tf32: A swap_ab 256 x 128 without a producer (the 4096^3 search's best form),
#     B A + group_blocks(8), C A + group_blocks(16), D swap_ab warp-specialized, producer warpgroup, multicast
#     (the 8192^3 search's best), E D + group_blocks(8).
#   matmul_8192_bf16, matmul_8192_f16: A the 8192^3 search's best, B A + group_blocks(8), C A + group_blocks(16).
# Each compiled by the packed tuner, verified against the naive kernel on 3 seeds and timed (30 repetitions) by
# kforge-run, in two rounds (the forms' order, then reversed). scripts/gpu/plans/fixed_kernels.sh.
#   TASKS="matmul_8192_tf32 matmul_8192_bf16 matmul_square_tf32" FORMS="A B C D E" LIMIT=400 \
#     bash scripts/gpu/plans/grouped/run.sh
FORMS=${FORMS:-A B C D E} PLAN_DIR=scripts/gpu/plans/grouped NAME=grouped exec bash scripts/gpu/plans/fixed_kernels.sh
