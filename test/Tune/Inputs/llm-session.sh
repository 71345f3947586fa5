#!/bin/bash
# Runs kforge-tune --policy llm against the scripted mock endpoint (mock_llm.py) on the CPU target.
# usage: llm-session.sh SCRIPT.json RUN_DIR PAYLOAD [kforge-tune flags...]
# Leaves RUN_DIR.requests.jsonl (what the endpoint received), RUN_DIR.out and RUN_DIR.err.
set -u
script=$1 run=$2 payload=$3
shift 3
dir=$(dirname "$0")
rm -rf "$run" "$run.port" "$run.requests.jsonl"
python3 "$dir/mock_llm.py" "$script" "$run.port" "$run.requests.jsonl" &
server=$!
trap 'kill $server 2>/dev/null' EXIT
for _ in $(seq 100); do [ -f "$run.port" ] && break; sleep 0.1; done
port=$(cat "$run.port")
kforge-tune "$payload" --target cpu --policy llm --llm-model mock-model \
  --llm-endpoint "http://127.0.0.1:$port/v1" --llm-key-env KFORGE_TEST_LLM_KEY --llm-backoff-ms 10 \
  --llm-timeout 1 --seeds 1 --reps 10 --jobs 2 -o "$run" "$@" > "$run.out" 2> "$run.err"
echo "exit $?"
