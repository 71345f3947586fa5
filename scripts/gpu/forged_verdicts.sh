#!/usr/bin/env bash
# The forged-verdict kernels of test/Runner/forged-verdict-cpu.test (issue 36) on the GPU machine.
#
#   scripts/gpu/forged_verdicts.sh build [OUT]          # here (kforge-compile, cc): OUT defaults to gpu-artifacts/forged
#   bash scripts/gpu/forged_verdicts.sh run DIR [OUT]   # there (the device tool, carrying DIR): kforge-run on the H200
#
# build: the naive GPU reference of test/Runner/Inputs/reference.mlir (y = x @ w + 1, 64x64 fp32), every forged
# kernel of test/Runner/Inputs/forged.c built against that GPU manifest (its host code copies the device buffers
# through libcuda's cuMemcpy, so the kernels that compute do so), kforge-run, the mgpu runtime and the session
# driver (~1 MB). run: forged_session.py single and serve against the real GPU reference and driver; writes
# single.txt and serve.txt into OUT and checks them with the CHECK lines of forged-verdict-cpu.test (prefixes
# SINGLE and SERVE,SERVE-GPU), printing OK/UNEXPECTED per expectation; the exit status is 1 if any is unexpected.
#
# What this exercises on a GPU and what it does not: the forged kernels are host code, as a CPU artifact is, but
# they run in the GPU executor (CUDA initialised, the device's files opened, the containment that must allow CUDA
# and stop the attacks), against a naive GPU kernel as the reference, with CUDA-event timing and, in --serve, the
# seeds' inputs kept on the device. Attacks from device code (a kernel writing out of bounds into the pristine seed
# copies, or leaving state in device memory for a later candidate) need CUDA kernels and are not covered here.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
mode="${1:-}"
case "$mode" in
build)
  out="${2:-$root/gpu-artifacts/forged}"
  build="$root/${KFORGE_BUILD_DIR:-build}"
  inputs="$root/test/Runner/Inputs"
  rm -rf "$out" && mkdir -p "$out/tools"
  "$build/bin/kforge-compile" "$inputs/reference.mlir" --naive -o "$out/reference"
  python3 "$inputs/forged_session.py" build "$out/reference" "$out/forged"
  cp "$build/bin/kforge-run" "$build/lib/libkforge_mgpu.so" "$out/"
  cp "$inputs/forged_session.py" "$inputs/forge.py" "$inputs/swap_compile.py" "$root/test/Runner/forged-verdict-cpu.test" \
    "$out/tools/"
  du -sh "$out"
  ;;
run)
  dir="$(cd "${2:?usage: forged_verdicts.sh run DIR [OUT]}" && pwd)"
  out="${3:-.}"
  mkdir -p "$out"
  out="$(cd "$out" && pwd)"
  export KFORGE_RUNTIME="$dir/libkforge_mgpu.so"
  tools="$dir/tools"
  status=0
  python3 "$tools/forged_session.py" single "$dir/kforge-run" "$dir/reference" "$dir/forged" "$out/work-single" \
    --runtime "$dir/libkforge_mgpu.so" > "$out/single.txt" || status=1
  python3 "$tools/forged_session.py" serve "$dir/kforge-run" "$dir/reference" "$dir/forged" "$out/work-serve" \
    --runtime "$dir/libkforge_mgpu.so" > "$out/serve.txt" || status=1
  {
    echo "## kforge-run alone"
    python3 "$tools/forged_session.py" check "$tools/forged-verdict-cpu.test" SINGLE "$out/single.txt" || status=1
    echo
    echo "## kforge-run --serve"
    python3 "$tools/forged_session.py" check "$tools/forged-verdict-cpu.test" SERVE,SERVE-GPU "$out/serve.txt" || status=1
  } | tee "$out/forged-verdicts.md"
  # `tee` hides the checks' status: the file says whether anything was unexpected.
  grep -q '^UNEXPECTED' "$out/forged-verdicts.md" && status=1
  exit "$status"
  ;;
*)
  sed -n '2,6p' "$0"
  exit 2
  ;;
esac
