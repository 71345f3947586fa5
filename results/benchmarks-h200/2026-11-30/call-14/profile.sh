#!/usr/bin/env bash
# ncu on call 13's best kernels (softmax_wide, layernorm_plain with lane_vector) and torch.compile's layernorm_plain.
tar xzf results/benchmarks-h200/2026-11-30/call-13/bench-runs.tgz || exit 1
P=$(mktemp -d)
for t in softmax_wide layernorm_plain; do timeout 40 scripts/gpu/profile.sh bench-out/tune/$t $P/$t > /dev/null 2>&1; done
timeout 60 python3 scripts/gpu/profile_torch.py layernorm_plain compile --ncu $P/torch > /dev/null 2>&1
find $P -name '*.ncu-rep' -delete; tar czf $OUT/profile.tgz -C $P .
for f in $P/*/details.txt $P/torch/*.details.txt; do echo "== $f"; grep -E "^  [a-z_]+.*\(|Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Block Size|Warp Cycles Per Issued|Executed Instructions  " $f; grep -A3 "spends" $f | head -4; done
