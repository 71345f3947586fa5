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

# The adversarial kernels: any verdict other than the expected one makes this script exit 1 at the end.
bash "$(dirname "$0")/run_adversarial.sh" "$dir" "$out"
adversarial_status=$?

# Ceilings measured in this run, on this GPU: device copy bandwidth (bytes read + written) and cuBLAS fp32.
python3 - > "$out/ceilings.txt" <<'PY'
import torch
torch.backends.cuda.matmul.allow_tf32 = False
def bench(fn, reps=20):
    fn(); torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); torch.cuda.synchronize(); times.append(s.elapsed_time(e))
    return sorted(times)[len(times) // 2]
src = torch.empty(2**28, device="cuda"); dst = torch.empty_like(src)
copy_gbps = 2 * src.numel() * 4 / (bench(lambda: dst.copy_(src)) * 1e6)
a = torch.randn(8192, 8192, device="cuda"); b = torch.randn(8192, 8192, device="cuda")
sgemm_tflops = 2 * 8192**3 / (bench(lambda: a @ b, 10) * 1e9)
print(f"{copy_gbps:.0f} {sgemm_tflops:.1f}")
PY
read -r copy_gbps sgemm_tflops < "$out/ceilings.txt"
echo "Ceilings measured in this run: device copy ${copy_gbps} GB/s, cuBLAS fp32 8192^3 ${sgemm_tflops} TFLOP/s (TF32 off)" | tee "$out/table.md"

table="$dir/table"
{
  echo
  echo "## Examples x recipes (reference: the naive GPU kernel of the same payload)"
  echo
  echo "| kernel | status | worst rel L2 | median ms | p10-p90 ms | again: median ms | TFLOP/s | GB/s (bytes once) | fraction of ceiling | registers | local (spill) bytes | smem bytes | active warps/SM |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  for cand in "$table"/*.*; do
    name="$(basename "$cand")"
    case "$name" in *.naive | *.cpu) continue ;; esac
    example="${name%%.*}"
    start=$(date +%s.%N)
    "$run" --candidate "$cand" --reference "$table/$example.naive" --reps 20 --timeout 300 \
      --ceiling-gbps "$copy_gbps" --ceiling-tflops "$sgemm_tflops" > "$out/json/$name.json"
    end=$(date +%s.%N)
    "$run" --candidate "$cand" --reference "$table/$example.naive" --seeds 1 --reps 20 --timeout 300 > "$out/json/$name.again.json"
    python3 - "$out/json/$name.json" "$out/json/$name.again.json" "$name" "$start" "$end" "$copy_gbps" "$sgemm_tflops" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); again = json.load(open(sys.argv[2])); name = sys.argv[3]
copy_gbps, sgemm = float(sys.argv[6]), float(sys.argv[7])
if r["status"] in ("failed",):
    print(f"| {name} | failed: {r.get('reason','')[:80]} ||||||||||||"); sys.exit()
t = r.get("timing", {}); res = (r.get("resources") or [{}])[0]
l2 = max(s["rel_l2_error"] for s in r.get("seeds", [{"rel_l2_error": float('nan')}]))
ta = again.get("timing", {})
tf = t.get("tflops", 0); gbps = t.get("gbps_once", 0)
# Arithmetic-bound kernels (more than ~50 FLOP per byte) are held to the cuBLAS rate, others to copy bandwidth.
compute_bound = tf * 1e12 / max(gbps * 1e9, 1) > 50
fraction = f"{tf / sgemm:.0%} of cuBLAS" if compute_bound else f"{gbps / copy_gbps:.0%} of copy"
flags = "; ".join(t.get("flags", []) + r.get("flags", []))
print(f"| {name} | {r['status']} | {l2:.1e} | {t.get('median_ms', 0):.3f} | {t.get('p10_ms', 0):.3f}-{t.get('p90_ms', 0):.3f} | "
      f"{ta.get('median_ms', 0):.3f} | {tf:.1f} | {gbps:.0f} | {fraction}{' FLAG: ' + flags if flags else ''} | "
      f"{res.get('registers', '')} | {res.get('local_bytes_per_thread', '')} | "
      f"{res.get('static_shared_bytes', 0) + res.get('dynamic_shared_bytes', 0)} | {res.get('active_warps_per_sm', '')} |")
print(f"runner wall time for {name} (load, 5 seeds with reference, 3+20 timed runs): {float(sys.argv[5]) - float(sys.argv[4]):.2f} s", file=sys.stderr)
PY
  done
} 2> "$out/overhead.txt" | tee -a "$out/table.md"
cat "$out/overhead.txt"
if [ "$adversarial_status" -ne 0 ]; then
  echo "run_runner.sh: UNEXPECTED adversarial verdicts (see $out/adversarial.md)" >&2
  exit 1
fi
