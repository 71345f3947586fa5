#!/bin/sh
# A stand-in for build/venv/bin/python in install-python-deps.test: `-m pip install -r FILE` fails as pip does
# on a full disk, any other pip install succeeds; the script's platform check answers $FAKE_SUPPORTED (1: a
# Python torch-mlir has wheels for) and its description prints a platform without them.
case "$*" in
  *"-m pip install"*"-r"*) echo "ERROR: Could not install packages due to an OSError: [Errno 28] No space left on device" >&2; exit 1 ;;
  *"-m pip install"*) exit 0 ;;
  *"sys.exit(0 if"*) [ "${FAKE_SUPPORTED:-0}" = 1 ] && exit 0 || exit 1 ;;
  *"print("*) echo "Python 3.12 on linux aarch64" ;;
  *) exit 2 ;;
esac
