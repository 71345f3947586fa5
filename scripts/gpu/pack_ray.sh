#!/usr/bin/env bash
# Packs Ray (the version pinned in python/requirements-distributed.txt) for the GPU machine, which has Python 3.12
# and no Ray, and takes at most 64 MiB a call with the working tree: the wheel is 79 MB. Ray's Java support
# (ray/jars, 34 MB), RLlib and the dashboard's source maps are dropped (kforge.distributed uses Ray core from
# Python only) and the three native binaries stripped; the rest travels as one .tar.xz (~21 MB) with the
# dependencies' wheels. Writes gpu-artifacts/ray/{ray.tar.xz,wheels/}; the GPU side is scripts/gpu/distributed.sh.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="$root/gpu-artifacts/ray"
pin=$(grep -E '^ray==' "$root/python/requirements-distributed.txt")
python="$root/build/venv/bin/python"
[ -x "$python" ] || python=python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$python" -m pip download -q "$pin" --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 \
  --platform manylinux1_x86_64 --platform manylinux_2_5_x86_64 -d "$work/wheels"
mkdir -p "$work/site"
(cd "$work/site" && unzip -q "$work"/wheels/ray-*.whl)
rm -f "$work"/wheels/ray-*.whl
rm -rf "$work/site/ray/jars" "$work/site/ray/rllib"
find "$work/site/ray/dashboard" -name '*.map' -delete
strip --strip-unneeded "$work/site/ray/_raylet.so" "$work/site/ray/core/src/ray/gcs/gcs_server" \
  "$work/site/ray/core/src/ray/raylet/raylet"
rm -rf "$out" && mkdir -p "$out"
tar cf - -C "$work/site" . | xz -9 -T2 > "$out/ray.tar.xz"
mv "$work/wheels" "$out/wheels"
du -sh "$out"
