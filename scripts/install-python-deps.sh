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
    # torch-mlir ships wheels for one Python and platform; elsewhere the importer's tests skip.
    echo "kforge: warning: could not install $REQUIREMENTS (torch-mlir has cp311 x86_64 Linux wheels only);" \
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
