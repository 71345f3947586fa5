#!/usr/bin/env bash
# The LLM comparison on the CPU target (docs/perf/llm-cpu.md): each payload tuned by random,
# heuristic+evolve, llm and llm+evolve with the same trial budget, the LLM policies against the local model
# (scripts/llm-local.sh start). The run directories go to $WORK (outside the repository: they hold
# kernels); their records, transcripts and reports are copied to OUT/runs/<payload>/<policy>/, then
# scripts/llm/summarize.py tabulates them.
#
# usage: scripts/llm/compare_cpu.sh OUT [PAYLOAD...]      (payload names under examples/cpu/, default: all)
# env:   TRIALS (10), JOBS (2: the batch size, so the model is asked for 2 schedules a request),
#        POLICIES ("random heuristic+evolve llm llm+evolve"), LLM_FLAGS (extra kforge-tune flags for the LLM
#        policies), KFORGE_LLM_PORT (8088), WORK (/tmp/kforge-llm-cpu)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: compare_cpu.sh OUT [PAYLOAD...]}
shift
payloads=("$@")
[ ${#payloads[@]} -gt 0 ] || payloads=(gemm_bias_relu gemm softmax row_sum)
trials=${TRIALS:-10}
jobs=${JOBS:-2}
policies=${POLICIES:-random heuristic+evolve llm llm+evolve}
work=${WORK:-/tmp/kforge-llm-cpu}
endpoint="http://127.0.0.1:${KFORGE_LLM_PORT:-8088}/v1"
# The model answers in 20-120 s on 2 cores (docs/perf/llm-cpu.md): a generous timeout, no retry of a slow
# answer (the server would still be busy with the first attempt).
llm_flags=(--llm-endpoint "$endpoint" --llm-model local --llm-timeout 600 --llm-retries 1 --llm-max-tokens 768
  --llm-json-schema ${LLM_FLAGS:-})

mkdir -p "$out/runs" "$work"
for payload in "${payloads[@]}"; do
  for policy in $policies; do
    run="$work/$payload/$policy"
    dest="$out/runs/$payload/$policy"
    rm -rf "$run" "$dest"
    mkdir -p "$dest" "$(dirname "$run")"
    flags=(--target cpu --policy "$policy" --trials "$trials" --jobs "$jobs" --seed 1 -o "$run")
    case $policy in llm*) flags+=("${llm_flags[@]}") ;; esac
    echo "== $payload $policy: kforge-tune examples/cpu/$payload.mlir ${flags[*]}" >&2
    start=$(date +%s)
    build/bin/kforge-tune "examples/cpu/$payload.mlir" "${flags[@]}" > "$dest/stdout.txt" 2> "$dest/stderr.txt" ||
      echo "kforge-tune exited $? (see $dest/stderr.txt)" >&2
    echo "$(( $(date +%s) - start ))" > "$dest/wall_seconds.txt"
    for f in db.jsonl run.json report.md best.mlir llm-transcript.jsonl; do
      [ -f "$run/$f" ] && cp "$run/$f" "$dest/"
    done
    printf '%s\n' "kforge-tune examples/cpu/$payload.mlir ${flags[*]}" > "$dest/command.txt"
  done
done
python3 scripts/llm/summarize.py "$out"
