#!/usr/bin/env bash
# Device call 1 of session 52 (2026-12-05, an H100 80GB HBM3), repository root on the GPU machine, $OUT its output.
# Issue 28's time-to-first-kernel study with the runner of e301133 (phases_ms per run, the judge's copies on all
# cores, the baseline through the serve runner); tuner packed by scripts/gpu/pack_tuner.sh at e301133 and carried
# as gpu-artifacts/tuner. Budget 30 s of search per payload.
set -u; W=/tmp/fk; mkdir -p $W
bash scripts/gpu/first_kernel_study.sh gpu-artifacts/tuner $W/first-kernel 30 > $OUT/first-kernel.md 2> $OUT/first-kernel.log
(cd $W && tar czf $OUT/first-kernel.tgz first-kernel/runs/*/run.json first-kernel/runs/*/db.jsonl first-kernel/runs/*.log first-kernel/exits.txt first-kernel/device-info.json 2>/dev/null)
