#!/usr/bin/env bash
# Installs every system dependency kforge needs on Debian 12 (bookworm). Idempotent: packages already
# present are skipped, so running it twice costs only the package-list check.
set -euo pipefail

LLVM_VERSION=22
APT_PACKAGES=(
  "libmlir-${LLVM_VERSION}-dev" "mlir-${LLVM_VERSION}-tools" "llvm-${LLVM_VERSION}-dev" "llvm-${LLVM_VERSION}-tools"
  cmake ninja-build gcc g++ python3 python3-pip python3-venv
  libcurl4-openssl-dev nlohmann-json3-dev libgtest-dev
)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  status="$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)"
  if [ "$status" != "install ok installed" ]; then
    missing+=("$pkg")
  fi
done

if [ "${#missing[@]}" -gt 0 ]; then
  echo "kforge: installing ${missing[*]}"
  $SUDO apt-get update -qq
  # TOOLCHAIN.md: the transform ops differ a lot between LLVM versions, so never fall back to an older MLIR.
  policy="$(apt-cache policy "libmlir-${LLVM_VERSION}-dev")"
  if ! grep -q "Candidate: [0-9]" <<<"$policy"; then
    echo "kforge: error: no candidate for libmlir-${LLVM_VERSION}-dev (need bookworm-security); refusing an older MLIR" >&2
    exit 1
  fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "kforge: system packages already installed"
fi

# lit: bookworm has no python3-lit, but llvm-22-tools ships it as /usr/lib/llvm-22/bin/lit.
if [ ! -x "/usr/lib/llvm-${LLVM_VERSION}/bin/lit" ]; then
  echo "kforge: error: /usr/lib/llvm-${LLVM_VERSION}/bin/lit missing (llvm-${LLVM_VERSION}-tools incomplete?)" >&2
  exit 1
fi

# ptxas (CUDA toolkit) is used by the PTX-acceptance tests when present; it is not installable from Debian 12's
# main archive, so its absence only skips those tests.
if [ -x /usr/local/cuda/bin/ptxas ] || command -v ptxas >/dev/null 2>&1; then
  echo "kforge: ptxas found"
else
  echo "kforge: note: ptxas not found; PTX-acceptance tests will be skipped"
fi
