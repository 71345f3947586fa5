#!/bin/bash
# Runs kforge-tune --policy llm against the real local model (scripts/llm-local.sh) on the CPU target: a
# server of its own on a free loopback port (its PID file and log under RUN_DIR.server), stopped on exit.
# usage: llm-local-session.sh SRC_ROOT BUILD_DIR RUN_DIR PAYLOAD [kforge-tune flags...]
set -u
src=$1 build=$2 run=$3 payload=$4
shift 4
rm -rf "$run" "$run.server"
port=$(python3 -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
export KFORGE_BUILD_DIR=$build KFORGE_LLM_PORT=$port KFORGE_LLM_RUN_DIR=$run.server KFORGE_LLM_CTX=8192
trap 'bash "$src/scripts/llm-local.sh" stop 2>/dev/null' EXIT
bash "$src/scripts/llm-local.sh" start 2> "$run.server.err" || { cat "$run.server.err"; exit 1; }
kforge-tune "$payload" --target cpu --policy llm --llm-model local --llm-endpoint "http://127.0.0.1:$port/v1" \
  --llm-json-schema --llm-timeout 600 --llm-retries 0 --llm-max-tokens 768 --seeds 1 --reps 10 --jobs 2 \
  -o "$run" "$@" > "$run.out" 2> "$run.err"
echo "exit $?"
