#!/usr/bin/env bash
# Fixed depthwise kernels (conv_depthwise_3x3, loops in the output's order), each verified on 3 seeds against
# the naive kernel and timed (30 repetitions); the naive kernel timed against itself.
cd "$(dirname "$0")"
for k in ref A B C D E F G H; do
  timeout 60 ./kforge-run --candidate $k --reference ref --seeds 3 --reps 30 --runtime ./libkforge_mgpu.so --output $OUT/$k.json > /dev/null 2>&1
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[2], r.get('status'), r.get('timing',{}).get('median_ms'), r.get('why',''))" $OUT/$k.json $k 2>/dev/null || echo "$k no report"
done | tee $OUT/summary.txt
cd $OUT && tar czf reports.tgz *.json && rm -f *.json
