#!/usr/bin/env bash
# GPU side: restores the packed tuner (scripts/gpu/pack_tuner.sh) in place; then
#   gpu-artifacts/tuner/bin/kforge-tune PAYLOAD --target gpu -o RUN_DIR ...
set -euo pipefail
dir="${1:-gpu-artifacts/tuner}"
if [ ! -x "$dir/bin/kforge-compile" ]; then
  python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
    "$dir/bin/kforge-compile.xz" "$dir/bin/kforge-compile"
  chmod +x "$dir/bin/kforge-compile"
fi
"$dir/bin/kforge-run" --device-info
