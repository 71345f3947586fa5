#!/usr/bin/env bash
# CPU side of tuning on the GPU machine (which has no LLVM/MLIR): builds a statically linked kforge-compile
# and kforge-tune (cmake -DKFORGE_STATIC_TOOLS=ON), and packs them with kforge-run and the mgpu runtime into
# $1 (default gpu-artifacts/tuner) as bin/ and lib/, the layout kforge-tune expects. kforge-compile travels
# xz-compressed (it is ~140 MB); scripts/gpu/unpack_tuner.sh restores it there.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${1:-$root/gpu-artifacts/tuner}"
build="$root/${KFORGE_BUILD_DIR:-build}"
cmake -S "$root" -B "$build" -DKFORGE_STATIC_TOOLS=ON > /dev/null
ninja -C "$build" -j2 kforge-compile-static kforge-tune-static kforge-run kforge_mgpu > /dev/null
rm -rf "$out" && mkdir -p "$out/bin" "$out/lib"
cp "$build/bin/static/kforge-tune" "$build/bin/kforge-run" "$out/bin/"
cp "$build/lib/libkforge_mgpu.so" "$out/lib/"
xz -T2 -6 -c "$build/bin/static/kforge-compile" > "$out/bin/kforge-compile.xz"
du -sh "$out"
