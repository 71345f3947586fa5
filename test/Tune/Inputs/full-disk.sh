#!/bin/bash
# A full disk is a clear error that leaves the run directory as it was, never an abort. A finished run is
# copied onto a small tmpfs that is then filled to leave only FREE bytes, for FREE from nothing to enough
# for the whole resume, and the run resumed; the disk runs out at a different write each time (a candidate's
# schedule, the compiler's or the runner's files, the database, the exported best, the report). Needs a tmpfs:
# in a private mount namespace (unshare -m as root, or unshare -rm in a user namespace).
#   full-disk.sh WORK PAYLOAD                       the test
#   full-disk.sh --inner WORK PAYLOAD MOUNTPOINT    the part that runs in the mount namespace
set -eu
if [ "$1" = --inner ]; then
  work=$2 payload=$3 mnt=$4
  for free in 0 4096 12288 24576 40960 65536 98304 131072 196608 262144 393216 524288 786432 16777216; do
    mount -t tmpfs -o size=24m tmpfs "$mnt"
    cp -a "$work/run" "$mnt/run"
    avail=$(df --output=avail -B1 "$mnt" | tail -1)
    if [ "$avail" -gt "$free" ]; then fallocate -l $((avail - free)) "$mnt/fill"; fi
    set +e
    kforge-tune "$payload" --target cpu --policy heuristic --trials 5 --jobs 1 --seeds 1 --reps 10 \
      -o "$mnt/run" --resume --quiet > "$work/out.$free" 2> "$work/err.$free"
    rc=$?
    set -e
    python3 "$(dirname "$0")/check_full_disk.py" "$work/run" "$mnt/run" "$rc" "$work/err.$free" "$free"
    umount "$mnt"
  done
  exit 0
fi
work=$1 payload=$2
rm -rf "$work"
mkdir -p "$work/mnt"
kforge-tune "$payload" --target cpu --policy heuristic --trials 2 --jobs 1 --seeds 1 --reps 10 -o "$work/run" --quiet
rm -rf "$work/run/seed-cache" # a cache, not state; rebuilt on demand (and large)
if unshare -m true 2>/dev/null; then
  unshare -m bash "$0" --inner "$work" "$payload" "$work/mnt"
elif unshare -rm true 2>/dev/null; then
  unshare -rm bash "$0" --inner "$work" "$payload" "$work/mnt"
else
  echo "full disk: no tmpfs (neither unshare -m nor unshare -rm works here)"
  exit 1
fi
echo "full disk ok"
