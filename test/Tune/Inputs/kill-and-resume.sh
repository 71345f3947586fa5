#!/bin/bash
# Kills a tuning run with SIGKILL after some trials have finished, plants a half-written record (what a kill
# during a write leaves), resumes, and checks that no finished record was lost or changed and that the
# resumed run continued where the killed one stopped.
set -eu
run=$1 payload=$2
rm -rf "$run"
kforge-tune "$payload" --target cpu --policy heuristic+evolve --trials 40 --jobs 1 --seeds 1 --reps 10 \
  -o "$run" --quiet &
pid=$!
for _ in $(seq 600); do
  [ -f "$run/db.jsonl" ] && [ "$(wc -l < "$run/db.jsonl")" -ge 4 ] && break
  sleep 0.1
done
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
cp "$run/db.jsonl" "$run/killed.jsonl"
before=$(wc -l < "$run/killed.jsonl")
[ "$before" -ge 4 ] || { echo "the run did not get far enough before the kill"; exit 1; }
printf '{"format":"kforge-tune-record/1","id":999,"kind":"cand' >> "$run/db.jsonl"
# As if only the database had been carried to another machine: the baseline is rebuilt on resume.
rm -rf "$run/baseline" "$run/seed-cache" "$run/cache"
trials=$((before - 1 + 3))
kforge-tune "$payload" --target cpu --policy heuristic+evolve --trials "$trials" --jobs 1 --seeds 1 --reps 10 \
  -o "$run" --resume 2> "$run/resume.log"
grep -q "dropped an unfinished last record" "$run/resume.log"
grep -q "resuming after $((before - 1)) finished trials" "$run/resume.log"
grep -q "rebuilt the baseline artifact" "$run/resume.log"
python3 - "$run" "$before" "$trials" <<'PY'
import json, sys
run, before, trials = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
killed = open(run + "/killed.jsonl").read().splitlines()
now = open(run + "/db.jsonl").read().splitlines()
assert now[:before] == killed[:before], "a finished record was lost or changed"
records = [json.loads(line) for line in now]
ids = [r["id"] for r in records]
assert ids == list(range(len(ids))), ids
assert len([r for r in records if r["kind"] == "candidate"]) == trials, len(records)
hashes = [r["schedule_hash"] for r in records if r["kind"] == "candidate"]
assert len(set(hashes)) == len(hashes), "a schedule was tried twice"
resumed = [r for r in records[before:] if r["kind"] == "candidate"]
assert any(r["status"] == "correct" for r in resumed), "nothing verified after the resume"
print("resume ok: %d records before the kill, %d after resuming" % (before, len(records)))
PY
