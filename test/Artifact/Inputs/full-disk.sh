#!/bin/bash
# kforge-compile on a full disk: an output directory on a small tmpfs holding an earlier artifact (a stand-in
# kernel.json saying "old"); the compile runs with each size from nearly nothing to enough. At each size it
# either succeeds or fails with a clear error; never an abort, never a file cut short under its final name.
#   full-disk.sh WORK PAYLOAD                      the test
#   full-disk.sh --inner WORK PAYLOAD MOUNTPOINT   the part in a private mount namespace
set -eu
if [ "$1" = --inner ]; then
  work=$2 payload=$3 mnt=$4
  for size in 8k 16k 24k 32k 48k 64k 100k; do
    mount -t tmpfs -o size=$size tmpfs "$mnt"
    mkdir -p "$mnt/out"
    echo old > "$mnt/out/kernel.json"
    set +e
    kforge-compile "$payload" --target cpu -o "$mnt/out" > "$work/log.$size" 2>&1
    rc=$?
    set -e
    if grep -q "LLVM ERROR\|Stack dump\|PLEASE submit" "$work/log.$size"; then echo "size $size: crashed"; exit 1; fi
    if [ $rc -ne 0 ] && ! grep -q "No space left on device\|failed (exit" "$work/log.$size"; then
      echo "size $size: exit $rc without saying why"; cat "$work/log.$size"; exit 1
    fi
    # The manifest is the old one or a whole new one; every file under its final name is whole.
    if [ $rc -ne 0 ]; then
      [ "$(cat "$mnt/out/kernel.json")" = old ] || { echo "size $size: the old manifest was replaced by a failed compile"; exit 1; }
    else
      python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$mnt/out/kernel.json"
      cmp "$mnt/out/kernel.host.mlir" "$work/reference/kernel.host.mlir"
      cmp "$mnt/out/kernel.so" "$work/reference/kernel.so"
    fi
    for f in "$mnt"/out/*; do
      case "$f" in *.tmp-*|*.linking|*.o) echo "size $size: left a temporary file $f"; exit 1;; esac
    done
    echo "size $size: exit $rc"
    umount "$mnt"
  done
  exit 0
fi
work=$1 payload=$2
rm -rf "$work" && mkdir -p "$work/mnt"
kforge-compile "$payload" --target cpu -o "$work/reference"
if unshare -m true 2>/dev/null; then
  unshare -m bash "$0" --inner "$work" "$payload" "$work/mnt"
elif unshare -rm true 2>/dev/null; then
  unshare -rm bash "$0" --inner "$work" "$payload" "$work/mnt"
else
  echo "full disk: no tmpfs (neither unshare -m nor unshare -rm works here)"
  exit 1
fi
echo "full disk ok"
