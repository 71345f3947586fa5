#!/bin/bash
# Runs kforge-tune --policy llm against the hostile mock endpoint (hostile_llm.py) on the CPU target.
# usage: hostile-session.sh SCRIPT.json RUN_DIR PAYLOAD [kforge-tune flags...]
# $KFORGE_TUNE names the kforge-tune to run (default: the one on PATH). Leaves RUN_DIR.requests.jsonl (what the
# endpoint received), RUN_DIR.out and RUN_DIR.err.
set -u
script=$1 run=$2 payload=$3
shift 3
dir=$(dirname "$0")
rm -rf "$run" "$run.port" "$run.requests.jsonl" "$run.requests.jsonl.drip"
python3 "$dir/hostile_llm.py" "$script" "$run.port" "$run.requests.jsonl" &
server=$!
trap 'kill $server 2>/dev/null' EXIT
for _ in $(seq 100); do [ -f "$run.port" ] && break; sleep 0.1; done
port=$(cat "$run.port")
"${KFORGE_TUNE:-kforge-tune}" "$payload" --target cpu --policy llm --llm-model mock-model \
  --llm-endpoint "http://127.0.0.1:$port/v1" --llm-key-env KFORGE_TEST_LLM_KEY --llm-backoff-ms 10 \
  --seeds 1 --reps 10 --jobs 2 -o "$run" "$@" > "$run.out" 2> "$run.err"
echo "exit $?"
