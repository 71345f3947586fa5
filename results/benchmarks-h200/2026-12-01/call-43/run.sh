#!/usr/bin/env bash
# Call 43 (nvidia-h200, tools packed by scripts/gpu/pack_tuner.sh at 4868774, as call 41's): the norms tuned
# under the flush that leaves L2 clean (kforge-tune --l2-flush clean), 60 s each (layernorm_plain resumes call
# 41's 40 s run), plus two trials shaped like torch.compile's Triton kernels (call 42: 512 threads, two 16-byte
# loads per thread, evict-last loads), then measured against torch.compile in three processes: two with the
# clean flush, one with the dirty flush (shared/MEASURE.md's protocol).
N=layernorm,layernorm_plain,rms_norm
T=$(mktemp -d); L=$(mktemp -d)
BENCH_PREVIOUS=results/benchmarks-h200/2026-12-01/call-41/bench-runs.tgz BENCH_TIMEOUT=260 \
  scripts/gpu/bench.sh "$T" --tune-only --tasks $N --time-budget 60 --l2 clean
cp "$T/bench.log" "$L/tune.log"
head='{"kind":"tile","params":{"level":"block","sizes":[1,0]}},{"kind":"fuse","params":{"into":"block"}},{"kind":"tile","params":{"level":"thread","sizes":[1,0]}},{"kind":"fuse","params":{"into":"thread"}},{"kind":"lanes","params":{"count":512}},{"kind":"lane_vector","params":{"width":4}},{"kind":"vectorize","params":{}}'
echo "[$head,{\"kind\":\"loads_evict_last\",\"params\":{}}]" > "$L/t512.json"
echo "[$head,{\"kind\":\"streaming_stores\",\"params\":{}},{\"kind\":\"loads_evict_last\",\"params\":{}}]" > "$L/t512s.json"
for t in ${N//,/ }; do
  for s in t512 t512s; do
    timeout 60 gpu-artifacts/tuner/bin/kforge-tune --target gpu --l2-flush clean \
      --runtime gpu-artifacts/tuner/lib/libkforge_mgpu.so --try "$L/$s.json" -o bench-out/tune/$t \
      bench-out/tune/$t/payload.mlir --quiet >> "$L/tries.log" 2>&1
  done
done
tar czf "$OUT/bench-runs.tgz" --exclude='candidates' --exclude='cache' --exclude='seed-cache' --exclude='baseline' \
  --exclude='best' bench-out
python3 - <<'PY' | tee "$OUT/trials.txt"
import json
for t in ("layernorm", "layernorm_plain", "rms_norm"):
    rows = [json.loads(l) for l in open(f"bench-out/tune/{t}/db.jsonl")]
    ok = sorted((r for r in rows if r.get("status") == "correct" and r.get("time_ms")), key=lambda r: r["time_ms"])
    print(t, len(rows), "trials,", len(ok), "correct; flushes:", sorted({r.get("l2_flush") for r in rows if r.get("kind") == "candidate"}))
    for r in ok[:6] + [r for r in ok if r.get("policy") == "user"]:
        print(" ", r["id"], round(r["time_ms"], 5), r.get("policy"), r.get("description", "").split("fuse(thread); ")[-1])
PY
for p in c1:clean d1:dirty c2:clean; do
  l2=${p#*:}; p=${p%:*}
  mkdir -p "$L/$p"
  BENCH_TIMEOUT=$(( 560 - SECONDS )) scripts/gpu/bench.sh "$L/$p" --no-tune --tasks $N --l2 $l2
  cp "$L/$p/h200.json" "$OUT/$p.json"
done
cat "$L/c1/h200.md"
tar czf "$OUT/logs.tgz" -C "$L" .
