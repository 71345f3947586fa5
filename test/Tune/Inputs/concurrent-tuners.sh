#!/bin/bash
# Two tuners on one run directory: while the first runs, a second (--resume, --try or --replay) is refused
# and the first goes on alone; the database it leaves has one record per id.
set -eu
run=$1 payload=$2
schedule=$(dirname "$0")/cpu-block-tile.json
rm -rf "$run"
kforge-tune "$payload" --target cpu --policy heuristic+evolve --trials 12 --jobs 1 --seeds 1 --reps 10 \
  -o "$run" --quiet &
first=$!
for _ in $(seq 600); do
  [ -f "$run/db.jsonl" ] && [ "$(wc -l < "$run/db.jsonl")" -ge 2 ] && break
  sleep 0.1
done
for mode in resume try replay; do
  case $mode in
    resume) args=("$payload" --target cpu --trials 12 --jobs 1 --seeds 1 --reps 10 -o "$run" --resume) ;;
    try) args=("$payload" --target cpu --seeds 1 --reps 10 -o "$run" --try "$schedule") ;;
    replay) args=(--replay "$run") ;;
  esac
  if kforge-tune "${args[@]}" 2> "$run.$mode.err"; then
    echo "a second tuner ($mode) ran beside the first"
    exit 1
  fi
  grep -q "is in use by another kforge-tune" "$run.$mode.err" || { cat "$run.$mode.err"; exit 1; }
done
wait "$first"
python3 - "$run" <<'PY'
import json, sys
records = [json.loads(line) for line in open(sys.argv[1] + "/db.jsonl")]
ids = [r["id"] for r in records]
assert ids == list(range(len(ids))), ids
assert len([r for r in records if r["kind"] == "candidate"]) == 12, len(records)
assert json.load(open(sys.argv[1] + "/best.json"))["id"] in ids
print("one tuner per run directory: %d records" % len(records))
PY
