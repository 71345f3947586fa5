#!/usr/bin/env bash
# Issue 34's clusters with TMA multicast (the multicast action, built in session 63, never run on a GPU before
# this), as fixed kernels beside the forms they grow from. For each task, schedules/TASK-{P,M,Q,N}.json: P the
# heuristic's first proposal (warp-specialized, stage_epilogue; 256 x 128 blocks for the 16-bit tasks, 128 x 256
# for TF32), M P with multicast (pairs of blocks sharing the larger operand tile: A's on 256 x 128, B's on
# 128 x 256), Q P on 128 x 256 blocks and N Q with multicast (16-bit tasks only). Each is compiled by the packed
# tuner (re-pack it first: scripts/gpu/pack_tuner.sh), verified against the naive kernel on 3 seeds and timed
# (30 repetitions) by kforge-run, in two rounds (the forms' order, then reversed); a hang is cut at 120 s.
# Writes $OUT/multicast-summary.txt and $OUT/multicast-runs.tgz.
#   TASKS="matmul_square_bf16 linear_square_tf32" FORMS="P M" LIMIT=300 bash scripts/gpu/plans/multicast/run.sh
PLAN_DIR=scripts/gpu/plans/multicast NAME=multicast exec bash scripts/gpu/plans/fixed_kernels.sh
