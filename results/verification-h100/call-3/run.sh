#!/usr/bin/env bash
# Device call 5 of session 52 (2026-12-05, an H100 80GB HBM3), repository root on the GPU machine, $OUT its output.
# Issue 28's time-to-first-kernel study, tuner packed by scripts/gpu/pack_tuner.sh at 6ab2199 (the
# commit "--sample-outputs draws only the input blocks..."): the reference checked against 512 output elements
# computed in float64 on the host, inputs drawn with xoshiro256** and a ziggurat, the serve cache adopting seeds,
# a run compared with itself skipping the error pass, the baseline's timed run verifying every seed.
set -u; W=/tmp/fk; rm -rf $W; mkdir -p $W
bash scripts/gpu/first_kernel_study.sh gpu-artifacts/tuner $W/first-kernel 30 > $OUT/first-kernel.md 2> $OUT/first-kernel.log
(cd $W && tar czf $OUT/first-kernel.tgz first-kernel/runs/*/run.json first-kernel/runs/*/db.jsonl first-kernel/runs/*.log first-kernel/runs/*/reference-check/samples.log first-kernel/runs/*/reference-check/samples.json first-kernel/runs/*/baseline/first-run.json first-kernel/runs/*/baseline/run.json first-kernel/exits.txt first-kernel/device-info.json 2>/dev/null)
