#!/usr/bin/env bash
# GPU side: kforge-run on the artifacts build_runner_artifacts.sh made. Writes runner.md and runner.json
# into $2 (default .): the adversarial checks (each must be caught with the right reason), every example x
# recipe verified against the naive GPU reference and timed, a repeatability check and the runner's
# overhead per candidate.
set -uo pipefail
dir="$(cd "${1:-gpu-artifacts/runner}" && pwd)"
out="${2:-.}"
run="$dir/kforge-run"
export KFORGE_RUNTIME="$dir/libkforge_mgpu.so"
mkdir -p "$out/json"

adv="$dir/adversarial"
check() { # name candidate reference expected-status expected-reason-substring [extra args]
  local name="$1" cand="$2" ref="$3" status="$4" reason="$5"; shift 5
  "$run" --candidate "$adv/$cand" --reference "$adv/$ref" --reps 0 --timeout 20 "$@" > "$out/json/adv-$name.json"
  python3 - "$out/json/adv-$name.json" "$name" "$status" "$reason" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); name, status, reason = sys.argv[2:5]
ok = r["status"] == status and reason in r.get("reason", "")
print(f"| {name} | {r['status']} | {r.get('reason', '')[:110]} | {'caught as expected' if ok else 'UNEXPECTED'} |")
PY
}
{
  echo "## Adversarial kernels (64x64 matmul + 1 payload; reference: naive GPU kernel)"
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
} | tee "$out/adversarial.md"

table="$dir/table"
{
  echo
  echo "## Examples x recipes (reference: the naive GPU kernel of the same payload)"
  echo
  echo "| kernel | status | worst rel L2 | median ms | p10-p90 ms | GB/s (bytes once) | again: median ms | registers | local bytes | static smem |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  for cand in "$table"/*.*; do
    name="$(basename "$cand")"
    case "$name" in *.naive) continue ;; esac
    example="${name%%.*}"
    start=$(date +%s.%N)
    "$run" --candidate "$cand" --reference "$table/$example.naive" --reps 20 --timeout 300 > "$out/json/$name.json"
    end=$(date +%s.%N)
    "$run" --candidate "$cand" --reference "$table/$example.naive" --seeds 1 --reps 20 --timeout 300 > "$out/json/$name.again.json"
    python3 - "$out/json/$name.json" "$out/json/$name.again.json" "$name" "$start" "$end" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); again = json.load(open(sys.argv[2])); name = sys.argv[3]
if r["status"] in ("failed",):
    print(f"| {name} | failed: {r.get('reason','')[:80]} |||||||||"); sys.exit()
t = r.get("timing", {}); res = (r.get("resources") or [{}])[0]
l2 = max(s["rel_l2_error"] for s in r.get("seeds", [{"rel_l2_error": float('nan')}]))
ta = again.get("timing", {})
print(f"| {name} | {r['status']} | {l2:.1e} | {t.get('median_ms', 0):.3f} | {t.get('p10_ms', 0):.3f}-{t.get('p90_ms', 0):.3f} | "
      f"{t.get('gbps_once', 0):.0f} | {ta.get('median_ms', 0):.3f} | {res.get('registers', '')} | "
      f"{res.get('local_bytes_per_thread', '')} | {res.get('static_shared_bytes', '')} |")
print(f"runner wall time for {name} (load, 5 seeds with reference, 3+20 timed runs): {float(sys.argv[5]) - float(sys.argv[4]):.2f} s", file=sys.stderr)
PY
  done
} 2> "$out/overhead.txt" | tee "$out/table.md"
cat "$out/overhead.txt"
