#!/usr/bin/env bash
# Creates or updates the project's Python environment, $BUILD_DIR/venv: NumPy and pytest for the Python
# package's tests, plus torch and torch-mlir (pinned in python/requirements-import.txt) for the PyTorch
# importer, and Ray (pinned in python/requirements-distributed.txt) for kforge.distributed. Idempotent: a stamp
# records what was installed, so a rerun with nothing changed costs nothing.
# pip's cache (~/.cache/pip, or $PIP_CACHE_DIR) is kept, so a fresh venv reinstalls from local wheels.
# KFORGE_NO_TORCH=1 skips torch and torch-mlir (the importer's tests are then skipped); KFORGE_NO_RAY=1 skips
# Ray (kforge.distributed's tests are then skipped). The C++ build
# never uses this environment.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR="${KFORGE_BUILD_DIR:-build}"
VENV="$BUILD_DIR/venv"
REQUIREMENTS=python/requirements-import.txt
DISTRIBUTED=python/requirements-distributed.txt
STAMP="$VENV/.kforge-python-deps"

want="base: numpy pytest"
if [ "${KFORGE_NO_TORCH:-0}" != 1 ]; then
  want+=$'\n'"$(grep -v '^#' "$REQUIREMENTS")"
fi
if [ "${KFORGE_NO_RAY:-0}" != 1 ]; then
  want+=$'\n'"$(grep -v '^#' "$DISTRIBUTED")"
fi
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; then
  echo "kforge: Python environment $VENV up to date"
  exit 0
fi

[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
PIP=("$VENV/bin/python" -m pip install --quiet --disable-pip-version-check)
"${PIP[@]}" numpy pytest
if [ "${KFORGE_NO_TORCH:-0}" != 1 ]; then
  echo "kforge: installing torch and torch-mlir into $VENV ($REQUIREMENTS; minutes on a first run)"
  if ! "${PIP[@]}" -r "$REQUIREMENTS"; then
    # torch-mlir ships wheels for one Python and platform; elsewhere the importer's tests skip. Where it has
    # wheels, a failure is pip's (disk full, no network, a broken cache): an error, not a skip that would
    # leave the importer's tests unrun and the suite green.
    if "$VENV/bin/python" -c 'import platform, sys; sys.exit(0 if sys.version_info[:2] == (3, 11) and
        sys.platform == "linux" and platform.machine() == "x86_64" else 1)'; then
      echo "kforge: error: could not install $REQUIREMENTS although torch-mlir has wheels for this Python" \
           "(3.11, x86_64 Linux): see pip's error above (disk space? network? the pip cache?)" >&2
      exit 1
    fi
    echo "kforge: warning: could not install $REQUIREMENTS: torch-mlir has cp311 x86_64 Linux wheels only, and" \
         "this is $("$VENV/bin/python" -c 'import platform, sys; print("Python %d.%d on %s %s" % (sys.version_info[:2] + (sys.platform, platform.machine())))');" \
         "the PyTorch importer's tests will be skipped" >&2
    want="$(printf '%s' "$want" | grep -vxF -f <(grep -v '^#' "$REQUIREMENTS"))"
  fi
fi
if [ "${KFORGE_NO_RAY:-0}" != 1 ]; then
  echo "kforge: installing Ray into $VENV ($DISTRIBUTED)"
  if ! "${PIP[@]}" -r "$DISTRIBUTED"; then
    echo "kforge: warning: could not install $DISTRIBUTED; kforge.distributed's tests will be skipped" >&2
    want="$(printf '%s' "$want" | grep -vxF -f <(grep -v '^#' "$DISTRIBUTED"))"
  fi
fi
rm -f "$VENV/.kforge-ready"  # the stamp of the earlier inline set-up in scripts/test.sh
printf '%s' "$want" > "$STAMP"
