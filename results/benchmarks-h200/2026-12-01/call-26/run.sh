#!/usr/bin/env bash
# Call 26 (nvidia-h200): call 25's experiment again in a fresh process, with the kernels also assembled offline
# by ptxas (-O3, as in kforge's artifacts) besides the driver's JIT, and the PTX of torch.compile's Triton kernels
# for the same tasks kept (triton-ptx.tgz) to compare their loads and stores with kforge's.
D=results/benchmarks-h200/2026-12-01/call-25
export TRITON_CACHE_DIR=$(mktemp -d)
PYTHONUNBUFFERED=1 python3 $D/cache_hints.py --ptx-dir $D/ptx --out "$OUT/results.json" \
  --variants base,ld.nc,st.cs,ld.nc+st.cs,ld.L2::128B+st.cs --cubin base,st.cs,ld.nc+st.cs 2>&1 | tee "$OUT/log.txt"
find "$TRITON_CACHE_DIR" -name '*.ptx' | tar czf "$OUT/triton-ptx.tgz" -T -
for f in $(find "$TRITON_CACHE_DIR" -name '*.ptx'); do
  echo "== $(basename $f)"; grep -E "^\s*(ld|st)\.global" $f | awk '{print $1}' | sort | uniq -c
done
