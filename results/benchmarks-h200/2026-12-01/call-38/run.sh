#!/usr/bin/env bash
# Call 38 (nvidia-h200, call 36's tools): ncu on layernorm_plain, the norm where kforge leads torch.compile by
# only 0.1-0.5% (call 37): kforge's best kernel after call 37's tuning, and torch.compile's; what holds each
# below DRAM's peak.
tar xzf results/benchmarks-h200/2026-12-01/call-37/bench-runs.tgz || exit 1
P=$(mktemp -d)
timeout 120 scripts/gpu/profile.sh bench-out/tune/layernorm_plain $P/kforge > /dev/null 2>&1
timeout 200 python3 scripts/gpu/profile_torch.py layernorm_plain compile --ncu $P/torch > /dev/null 2>&1
find $P -name '*.ncu-rep' -delete; tar czf $OUT/profile.tgz -C $P .
for f in $P/kforge/details.txt $P/torch/*details.txt; do echo "== $f"; grep -E "^  [a-z_]+.*\(|Duration|DRAM Throughput|Memory Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Size|Grid Size|Warp Cycles Per Issued|Executed Instructions  |L2 Hit|Mem Busy|Max Bandwidth" $f; done
