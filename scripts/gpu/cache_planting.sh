#!/usr/bin/env bash
# GPU side of test/Tune/cache-planting.test (issue 36): planted caches on the H200.
#   bash scripts/gpu/cache_planting.sh FORGED_DIR TUNER_DIR OUT
# FORGED_DIR: scripts/gpu/forged_verdicts.sh build's output (the naive GPU reference of y = x @ w + 1 and the
# forged kernels, PLANTED computing x @ w + 2); TUNER_DIR: scripts/gpu/pack_tuner.sh's (the static
# kforge-compile). Prints OK or UNEXPECTED per check; exit 1 if any is unexpected.
#  1. seed cache: PLANTED is judged against the GPU reference with --cache-dir (filling it), the cached reference
#     outputs are rewritten as x @ w + 2 (plant_cache.py seeds), and PLANTED judged again: still incorrect.
#  2. artifact cache: kforge-compile --naive --cache-dir builds the GPU reference, every entry's library is
#     replaced by PLANTED's, the compile runs again: the planted library is not handed back (plant_cache.py
#     used), and the result verifies against the first build.
set -uo pipefail
forged="$(cd "${1:?}" && pwd)"; tuner="$(cd "${2:?}" && pwd)"; out="${3:?}"
mkdir -p "$out"; out="$(cd "$out" && pwd)"
tools="$(cd "$(dirname "$0")/../../test" && pwd)"
export KFORGE_RUNTIME="$forged/libkforge_mgpu.so" HOME="$out/home"
mkdir -p "$HOME"
run="$forged/kforge-run"
status=0
expect() { # description, command's output file, python condition on the report r
  if python3 -c "import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if ($3) else 1)" "$2" 2>/dev/null; then
    echo "OK: $1"
  else
    echo "UNEXPECTED: $1 ($(head -c 300 "$2"))"; status=1
  fi
}
"$run" --candidate "$forged/forged/PLANTED" --reference "$forged/reference" --cache-dir "$out/seeds" --reps 0 \
  > "$out/seed-1.json"
expect "PLANTED is incorrect against the GPU reference" "$out/seed-1.json" 'r["status"] == "incorrect"'
python3 "$tools/Tune/Inputs/plant_cache.py" seeds "$out/seeds" > "$out/plant-seeds.txt" 2>&1
cat "$out/plant-seeds.txt"
"$run" --candidate "$forged/forged/PLANTED" --reference "$forged/reference" --cache-dir "$out/seeds" --reps 0 \
  > "$out/seed-2.json"
expect "planted reference outputs do not make PLANTED correct" "$out/seed-2.json" 'r["status"] == "incorrect"'

bash "$(dirname "$0")/unpack_tuner.sh" "$tuner" > /dev/null
compile="$tuner/bin/kforge-compile"
"$compile" "$tools/Runner/Inputs/reference.mlir" --naive --cache-dir "$out/cache" -o "$out/first" > "$out/compile-1.log" 2>&1
python3 "$tools/Tune/Inputs/plant_cache.py" library "$out/cache" "$forged/forged/PLANTED/kernel.so"
"$compile" "$tools/Runner/Inputs/reference.mlir" --naive --cache-dir "$out/cache" -o "$out/second" > "$out/compile-2.log" 2>&1
cat "$out/compile-2.log"
if python3 "$tools/Tune/Inputs/plant_cache.py" used "$out/second" "$forged/forged/PLANTED/kernel.so" | grep -q "used: False"; then
  echo "OK: the planted GPU artifact was not handed back"
else
  echo "UNEXPECTED: the planted GPU artifact was handed back"; status=1
fi
"$run" --candidate "$out/second" --reference "$out/first" --reps 0 > "$out/rebuilt.json"
expect "the rebuilt GPU artifact verifies against the first build" "$out/rebuilt.json" 'r["status"] == "correct"'
exit $status
