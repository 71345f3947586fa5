#!/usr/bin/env bash
# Call 28 (nvidia-h200; Python, PyTorch and the driver, no kforge binary): call 25's cache-qualifier experiment in
# a fresh process, with L2 cache policies on the loads (createpolicy + .L2::cache_hint, as torch.compile's Triton
# kernels load) added, and on layernorm and rms_norm with read_only_inputs (call-27/ptx/: gamma and beta by
# ld.global.nc, x plain), x's loads kept out of L1 (.cg, .L1::no_allocate) so that gamma and beta stay there.
D=results/benchmarks-h200/2026-12-01/call-25
PYTHONUNBUFFERED=1 python3 $D/cache_hints.py --ptx-dir $D/ptx:results/benchmarks-h200/2026-12-01/call-27/ptx \
  --out "$OUT/results.json" \
  --variants 'base,st.cs,ld.nc+st.cs,ld.L2[evict_first]+st.cs,ld.L1::evict_first.L2[evict_first]+st.cs,ld.L2[evict_last]+st.cs,st.L2[evict_first],ld.nc.L2[evict_first]+st.cs,ld.cg+st.cs,ld.L1::no_allocate+st.cs' \
  --tasks layernorm_plain,rms_norm,layernorm,row_sum,softmax,layernorm_ro,rms_norm_ro 2>&1 | tee "$OUT/log.txt"
