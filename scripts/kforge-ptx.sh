#!/usr/bin/env bash
# Applies a recipe to a payload and writes the kernel's PTX, cubin and ptxas resource use into a directory.
# Usage: scripts/kforge-ptx.sh PAYLOAD.mlir RECIPE.mlir OUT_DIR [CHIP]
set -euo pipefail

if [ "$#" -lt 3 ] || [ "$#" -gt 4 ]; then
  echo "usage: $0 PAYLOAD.mlir RECIPE.mlir OUT_DIR [CHIP (default sm_90)]" >&2
  exit 2
fi
payload="$1" recipe="$2" out="$3" chip="${4:-sm_90}"
for f in "$payload" "$recipe"; do
  [ -f "$f" ] || { echo "kforge-ptx: error: no such file: $f" >&2; exit 2; }
done

root="$(cd "$(dirname "$0")/.." && pwd)"
opt="${KFORGE_OPT:-$root/${KFORGE_BUILD_DIR:-build}/bin/kforge-opt}"
[ -x "$opt" ] || { echo "kforge-ptx: error: $opt not built (run scripts/build.sh)" >&2; exit 2; }
mkdir -p "$out"

# Scheduled IR, then the host module with its PTX written next to it.
"$opt" "$payload" -transform-preload-library="transform-library-paths=$recipe" -transform-interpreter \
  -o "$out/scheduled.mlir"
"$opt" "$out/scheduled.mlir" --kforge-lower-to-nvvm="format=isa chip=$chip dump-dir=$out" -o "$out/host.mlir"

ptxas="$(command -v ptxas || true)"
[ -z "$ptxas" ] && [ -x /usr/local/cuda/bin/ptxas ] && ptxas=/usr/local/cuda/bin/ptxas
for ptx in "$out"/*.ptx; do
  if [ -n "$ptxas" ]; then
    "$ptxas" -arch="$chip" -v "$ptx" -o "${ptx%.ptx}.cubin" 2> "${ptx%.ptx}.ptxas.txt"
  else
    echo "ptxas not found: no cubin or resource use" > "${ptx%.ptx}.ptxas.txt"
  fi
done
echo "$out"
