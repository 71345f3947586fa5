#!/usr/bin/env bash
# Call 22 (nvidia-h200, tools packed at 0982e8e): ncu on call 20's row_sum kernel and on torch.compile's, the
# task where the two tie at 91% of copy bandwidth (a read-only kernel: what holds each below DRAM's peak).
tar xzf results/benchmarks-h200/2026-11-30/call-20/bench-runs.tgz || exit 1
P=$(mktemp -d)
timeout 90 scripts/gpu/profile.sh bench-out/tune/row_sum $P/kforge > /dev/null 2>&1
timeout 150 python3 scripts/gpu/profile_torch.py row_sum compile --ncu $P/torch > /dev/null 2>&1
find $P -name '*.ncu-rep' -delete; tar czf $OUT/profile.tgz -C $P .
for f in $P/kforge/details.txt $P/torch/*details.txt; do echo "== $f"; grep -E "^  [a-z_]+.*\(|Duration|DRAM Throughput|Memory Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Size|Grid Size|Warp Cycles Per Issued|Executed Instructions  |L2 Hit|Mem Busy|Max Bandwidth" $f; grep -A3 "spends" $f | head -4; done
