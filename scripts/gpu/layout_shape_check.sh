#!/usr/bin/env bash
# GPU side of the transposed-operand and ragged-row check (issues 26 and 27): a kforge-tune run (default policy,
# a trial and time budget) on each payload of scripts/gpu/layout_shape_payloads.py, then a table per payload of
# every trial (schedule, status, ms) and a summary (correct / trials, best vs the naive baseline). Every trial is
# verified by kforge-run against the naive reference (and the reference once against the CPU build where the
# problem is small enough), so a miscompiled layout or a lane that reads past its row shows as incorrect.
#   bash scripts/gpu/layout_shape_check.sh TUNER_DIR OUT [TIME_BUDGET_S] [TRIALS]
# ONLY=GLOB (e.g. ONLY='bias_relu_*', or ONLY='@(bias_relu_*|tc_*)': extended globs) tunes only the payloads
# whose names match.
set -uo pipefail
shopt -s extglob
tuner="$(cd "${1:?usage: layout_shape_check.sh TUNER_DIR OUT [TIME_BUDGET_S] [TRIALS]}" && pwd)"
out="${2:?}"
budget="${3:-40}"
trials="${4:-40}"
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$out/payloads" "$out/runs"
bash "$here/unpack_tuner.sh" "$tuner" > "$out/device-info.json"
python3 "$here/layout_shape_payloads.py" "$out/payloads"
for payload in "$out"/payloads/*.mlir; do
  name="$(basename "$payload" .mlir)"
  # shellcheck disable=SC2053
  [[ -n "${ONLY:-}" && $name != $ONLY ]] && continue
  start=$(date +%s.%N)
  "$tuner/bin/kforge-tune" "$payload" --target gpu -o "$out/runs/$name" --time-budget "$budget" --trials "$trials" \
    > "$out/runs/$name.log" 2>&1
  echo "$name: exit $? after $(python3 -c "print(round($(date +%s.%N) - $start, 1))") s" >> "$out/exits.txt"
done
python3 "$here/summarize_trials.py" "$out" > "$out/summary.md"
cat "$out/summary.md"
