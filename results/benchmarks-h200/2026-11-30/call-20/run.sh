#!/usr/bin/env bash
# Call 20 (nvidia-h200, tools packed at the commit that adds this script): the first GPU run of `stash` (part of
# each lane's row in shared memory, two blocks per multiprocessor; the heuristic proposes stash(3) and stash(2)
# with max_registers(40) for softmax 1024 x 32000), then issue 9's six reduction tasks measured with PyTorch in
# one process; ncu on the best softmax_wide kernel last.
R=softmax,softmax_wide,layernorm,layernorm_plain,rms_norm,row_sum
T=$(mktemp -d)
BENCH_TIMEOUT=60 scripts/gpu/bench.sh "$T" --tune-only --tasks softmax_wide --time-budget 30
cp "$T/bench.log" "$OUT/tune.log"
BENCH_TIMEOUT=120 scripts/gpu/bench.sh "$T" --tune-only --tasks softmax,layernorm,layernorm_plain,rms_norm,row_sum --time-budget 12
cat "$T/bench.log" >> "$OUT/tune.log"
python3 - bench-out/tune/softmax_wide/db.jsonl <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    res = (r.get("resources") or [{}])[0]
    print(r["id"], r["status"], r.get("time_ms"), res.get("registers"), res.get("local_bytes_per_thread"),
          res.get("active_blocks_per_sm"), res.get("dynamic_shared_bytes"), r.get("description", "")[60:], r.get("reason", "")[:200])
PY
BENCH_TIMEOUT=$(( 500 - SECONDS )) scripts/gpu/bench.sh "$OUT" --no-tune --tasks $R
P=$(mktemp -d)
timeout $(( 580 - SECONDS )) scripts/gpu/profile.sh bench-out/tune/softmax_wide $P/softmax_wide > /dev/null 2>&1
find $P -name '*.ncu-rep' -delete; tar czf "$OUT/profile.tgz" -C $P .
grep -E "Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit|Dynamic Shared|Shared Memory Configuration" $P/*/details.txt
cat "$OUT/h200.md"
tar czf "$OUT/extras.tgz" -C "$OUT" tune.log bench.log device.json h200.svg && rm -f "$OUT"/{tune.log,bench.log,device.json,h200.svg}
