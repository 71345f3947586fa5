#!/usr/bin/env bash
# GPU side: the runner's adversarial kernels (build_runner_artifacts.sh compiles them). Each must be caught
# with the right reason, and each honest kernel must pass; any other verdict is UNEXPECTED and the script
# exits 1. Writes adversarial.md and json/adv-*.json into $2 (default .).
#   run_adversarial.sh [ARTIFACTS_DIR] [OUT]
set -uo pipefail
dir="$(cd "${1:-gpu-artifacts/runner}" && pwd)"
out="${2:-.}"
run="$dir/kforge-run"
export KFORGE_RUNTIME="$dir/libkforge_mgpu.so"
mkdir -p "$out/json"
adv="$dir/adversarial"
unexpected=0

check() { # name candidate reference expected-status expected-reason-substring [extra kforge-run args]
  local name="$1" cand="$2" ref="$3" status="$4" reason="$5"; shift 5
  "$run" --candidate "$adv/$cand" --reference "$adv/$ref" --reps 0 --timeout 20 "$@" > "$out/json/adv-$name.json"
  if ! python3 - "$out/json/adv-$name.json" "$name" "$status" "$reason" <<'PY'
import json, sys
name, status, reason = sys.argv[2:5]
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:  # no report at all is a verdict too
    r = {"status": "no report", "reason": str(e)}
ok = r.get("status") == status and reason in r.get("reason", "")
print(f"| {name} | {r.get('status')} | {r.get('reason', '')[:110]} | {'as expected' if ok else 'UNEXPECTED'} |")
sys.exit(0 if ok else 1)
PY
  then
    unexpected=$((unexpected + 1))
  fi
}

{
  echo "## Adversarial kernels (reference: the naive GPU kernel unless named)"
  echo
  echo "| kernel | status | reason | verdict |"
  echo "|---|---|---|---|"
  check correct correct reference correct ""
  check partial-write partial-write reference incorrect "unwritten"
  check zeros zeros reference incorrect "relative L2 error 1.0"
  check off-by-1e-3 off-by-1e-3 reference incorrect "relative L2 error 0.001"
  check out-of-bounds gpu-out-of-bounds reference failed "CUDA_ERROR_ILLEGAL_ADDRESS"
  check hang gpu-hang reference failed "timed out"
  check naive-gpu-vs-cpu reference reference-cpu correct ""
  check f16-accumulation matmul-f16-accumulate-f16 matmul-f16-accumulate-f32 incorrect "above tolerance 0.000488"
  check f16-honest matmul-f16-accumulate-f32 matmul-f16-accumulate-f32 correct ""
  check bf16-dropped-tile matmul-bf16-dropped-tile matmul-bf16-honest incorrect "above tolerance 0.003906"
  check bf16-honest matmul-bf16-honest matmul-bf16-honest correct ""
  check tiny-honest tiny-before tiny-after correct ""
  check huge-honest huge-before huge-after correct ""
  check zeros-vs-tiny zeros tiny-after incorrect "relative L2 error 1.0"
  echo
  echo "unexpected verdicts: $unexpected"
} | tee "$out/adversarial.md"
# The table goes through tee (a subshell): read the count back from it.
grep -q "^unexpected verdicts: 0$" "$out/adversarial.md"
