#!/usr/bin/env bash
# Does all set-up (system packages, build) and runs kforge's whole test suite (lit + FileCheck).
# Tests that need a GPU or ptxas are marked and skipped cleanly where those are missing.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
scripts/build.sh
BUILD_DIR="${KFORGE_BUILD_DIR:-build}"

# NumPy, pytest, torch and torch-mlir for the Python package's tests, in a virtual environment inside the
# build directory (~2.5 min and 5.7 GB the first time; a no-op after).
scripts/install-python-deps.sh

results="$BUILD_DIR/test-results.json"
status=0
/usr/lib/llvm-22/bin/lit -sv --output "$results" "$BUILD_DIR/test" || status=$?

# One closing line in the form CI reads: "N passed, N failed, N skipped".
python3 - "$results" <<'PY'
import json, sys
tests = json.load(open(sys.argv[1]))["tests"]
count = lambda *codes: sum(t["code"] in codes for t in tests)
print(f"{count('PASS', 'XFAIL')} passed, {count('FAIL', 'XPASS', 'UNRESOLVED', 'TIMEOUT')} failed, "
      f"{count('UNSUPPORTED', 'SKIPPED', 'EXCLUDED')} skipped")
PY
exit "$status"
