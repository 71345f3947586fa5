#!/usr/bin/env bash
# Fixed kernels of conv_depthwise_3x3 (its loops in the output's order: n, c, oh, ow, then the window), for the
# next device session (scripts/gpu/plans/next-device-session.txt, step D). CPU side, from the repository root
# with a numpy python3 on PATH: compiles each schedule here (A: the heuristic's first, the batch over the
# threads' z with the thread's loops reordered; B: the same without the reorder and occupancy; C, D: 2 and 4
# columns a thread, 28-column blocks, read-only loads; E: the ranked 4x4x32 tiles; F: them with 28-column
# blocks and read-only loads; G, H: 2 and 4 columns a thread over whole 56-column rows) and the naive kernel
# into OUT (default gpu-artifacts/dw) with kforge-run, the mgpu runtime and run.sh beside them.
set -eu
out=${1:-gpu-artifacts/dw}
here=$(dirname "$0")
mkdir -p "$out/payloads"
python3 bench/tasks/tasks.py --write "$out/payloads" > /dev/null
P=$out/payloads/conv_depthwise_3x3.mlir
for k in A B C D E F G H; do
  build/bin/kforge-tune "$P" --target gpu --render "$here/$k.json" > "$out/$k.mlir"
  build/bin/kforge-compile "$P" --target gpu --chip sm_90a --recipe "$out/$k.mlir" -o "$out/$k" > /dev/null
done
build/bin/kforge-compile "$P" --target gpu --chip sm_90a --naive -o "$out/ref" > /dev/null
cp build/bin/kforge-run build/lib/libkforge_mgpu.so "$here/run.sh" "$out/"
rm -rf "$out/payloads"
echo "carry $out; on the device: bash $out/run.sh"
