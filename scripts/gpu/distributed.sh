#!/usr/bin/env bash
# GPU side of issue 31's throughput table (docs/perf/distributed.md): the same payloads tuned (a) by one
# kforge-tune per payload, one after another (each compiles its batches on every core and measures on the GPU),
# and (b) by kforge.distributed on a local Ray (one GPU measurer, compile tasks on every core), each arm with the
# same trial budget and options, each bounded by ARM_SECONDS (what an arm finished by then is what it reports).
#   scripts/gpu/distributed.sh OUT TRIALS ARM_SECONDS PAYLOADS...
# Needs gpu-artifacts/tuner (scripts/gpu/pack_tuner.sh) and gpu-artifacts/ray (scripts/gpu/pack_ray.sh) on the
# machine; they may come in separate calls (each is kept between calls of a warm machine).
set -uo pipefail
out=$1 trials=$2 arm=$3
shift 3
[ -x gpu-artifacts/tuner/bin/kforge-tune ] && [ -f gpu-artifacts/ray/ray.tar.xz ] ||
  { echo "distributed.sh: gpu-artifacts/tuner and gpu-artifacts/ray are needed" >&2; exit 2; }
scripts/gpu/unpack_tuner.sh gpu-artifacts/tuner > "$out/device.json" || exit 1
site=/tmp/kforge-ray-site
if [ ! -d "$site/ray" ]; then
  mkdir -p "$site" && tar xJf gpu-artifacts/ray/ray.tar.xz -C "$site" &&
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$site" \
      gpu-artifacts/ray/wheels/*.whl || exit 1
fi
export PYTHONPATH="$site:$PWD/python"
python3 -c 'import ray; print("ray", ray.__version__)' > "$out/ray.txt" 2>&1 || { cat "$out/ray.txt"; exit 1; }
nproc > "$out/nproc.txt"
tools=gpu-artifacts/tuner/bin
# Seconds since $1 (a `date +%s.%N`); the GPU machine has no bc.
elapsed() { python3 -c 'import sys, time; print(round(time.time() - float(sys.argv[1]), 1))' "$1"; }

# (a) one kforge-tune per payload
start=$(date +%s.%N)
timeout "$arm" bash -c 'for p in "$@"; do
    '"$tools"'/kforge-tune "$p" --target gpu --trials '"$trials"' --quiet -o '"$out"'/sequential/$(basename "$p" .mlir) ||
      echo "kforge-tune $p: exit $?"
  done' _ "$@" > "$out/sequential.log" 2>&1
echo "exit $? wall_s $(elapsed "$start")" >> "$out/sequential.log"

# (b) kforge.distributed, one GPU measurer
start=$(date +%s.%N)
timeout "$arm" python3 -c 'import sys; from kforge.distributed import main; sys.exit(main(sys.argv[1:]))' \
  "$@" -o "$out/many" --target gpu --trials "$trials" --measurers 1 --tools-dir "$tools" > "$out/many.log" 2>&1
echo "exit $? wall_s $(elapsed "$start")" >> "$out/many.log"

# Trials each arm finished (records of candidates in every run's db.jsonl), for the table.
python3 - "$out" <<'PY' > "$out/throughput.json"
import glob, json, os, sys
out = sys.argv[1]
result = {}
for arm in ("sequential", "many"):
    wall = float(open(os.path.join(out, arm + ".log")).read().split("wall_s")[-1].split()[0])
    trials = correct = 0
    best = {}
    for db in glob.glob(os.path.join(out, arm, "*", "db.jsonl")):
        name = os.path.basename(os.path.dirname(db))
        for line in open(db):
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if r.get("kind") == "candidate":
                trials += 1
                if r.get("status") == "correct":
                    correct += 1
                    best[name] = min(best.get(name, float("inf")), r["time_ms"])
            elif r.get("kind") == "baseline":
                best.setdefault(name + " (baseline)", r.get("time_ms"))
    result[arm] = {"wall_s": wall, "trials": trials, "correct": correct,
                   "trials_per_min": trials * 60 / wall if wall else None, "best_ms": best}
print(json.dumps(result, indent=2))
PY
cat "$out/throughput.json"
# The run directories without compiled kernels, for results/.
tar czf "$out/runs.tgz" --exclude='candidates' --exclude='cache' --exclude='seed-cache' --exclude='baseline' \
  --exclude='best' -C "$out" sequential many 2>/dev/null
rm -rf "$out/sequential" "$out/many"
