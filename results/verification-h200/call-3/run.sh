#!/usr/bin/env bash
# Device call 3 of 2026-12-04 (repository root on the GPU machine, $OUT its output), at the runner of 1d7bf5d:
# the adversarial suite and the forged-verdict kernels again (executor per candidate, judge's clock, signed seed
# cache, mixed-device verification), then issue 28's time-to-first-kernel study with the packed tuner.
# Artifacts: KFORGE_ADVERSARIAL_ONLY=1 scripts/gpu/build_runner_artifacts.sh; scripts/gpu/forged_verdicts.sh
# build; scripts/gpu/pack_tuner.sh (kforge-run and the runtime then copied from build/ at 1d7bf5d).
set -u
status=0
bash scripts/gpu/run_adversarial.sh gpu-artifacts/runner "$OUT/adversarial" > "$OUT/adversarial.log" 2>&1 || status=1
bash scripts/gpu/forged_verdicts.sh run gpu-artifacts/forged "$OUT/forged" > "$OUT/forged.log" 2>&1 || status=$((status | 2))
(cd "$OUT" && tar czf verification.tgz adversarial forged/*.md forged/*.txt && rm -rf adversarial/json forged/work-*)
cat "$OUT/adversarial/adversarial.md"; grep -h "expectations met\|^UNEXPECTED" "$OUT/forged/forged-verdicts.md"
bash scripts/gpu/first_kernel_study.sh gpu-artifacts/tuner "$OUT/first-kernel" "${BUDGET:-40}" > "$OUT/first-kernel.md" 2> "$OUT/first-kernel.log"
(cd "$OUT" && tar czf first-kernel.tgz first-kernel/runs/*/run.json first-kernel/runs/*/db.jsonl first-kernel/runs/*.log first-kernel/exits.txt first-kernel/device-info.json 2>/dev/null)
cat "$OUT/first-kernel.md"
echo "status $status"
