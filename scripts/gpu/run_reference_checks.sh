#!/usr/bin/env bash
# GPU side: checks each example's naive GPU reference against the CPU build of the same payload (one seed;
# kforge-run --check-reference-against), all examples in parallel. Writes reference-checks.md into $2.
set -uo pipefail
dir="$(cd "${1:-gpu-artifacts/runner}" && pwd)"
out="${2:-.}"
export KFORGE_RUNTIME="$dir/libkforge_mgpu.so"
table="$dir/table"
mkdir -p "$out/refcheck"
for cpu in "$table"/*.cpu; do
  example="$(basename "$cpu" .cpu)"
  candidate="$(ls -d "$table/$example".* | grep -v -e '\.naive$' -e '\.cpu$' | head -1)"
  "$dir/kforge-run" --candidate "$candidate" --reference "$table/$example.naive" --check-reference-against "$cpu" \
    --seeds 1 --reps 0 --timeout 420 > "$out/refcheck/$example.json" &
done
wait
{
  echo "| example | naive GPU reference vs CPU build | rel L2 | candidate vs reference (seed 0) |"
  echo "|---|---|---|---|"
  for report in "$out/refcheck"/*.json; do
    python3 - "$report" <<'PY'
import json, os, sys
r = json.load(open(sys.argv[1])); c = r.get("reference_check", {})
print(f"| {os.path.basename(sys.argv[1])[:-5]} | {c.get('status', r.get('reason', ''))} | {c.get('rel_l2_error', float('nan')):.1e} | {r['status']} |")
PY
  done
} | tee "$out/reference-checks.md"
