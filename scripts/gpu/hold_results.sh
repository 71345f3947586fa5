#!/usr/bin/env bash
# The device tool copies the whole working tree (64 MiB at most with what it carries), and results/ (raw data of
# earlier device runs, ~31 MB) plus the packed tuner (~30 MB) no longer fit. No device command reads results/,
# so it leaves the tree for the call and comes back from git afterwards:
#   bash scripts/gpu/hold_results.sh hold      # before a device call: refuses if results/ has uncommitted work
#   bash scripts/gpu/hold_results.sh restore   # after it (git checkout of the committed results/)
set -euo pipefail
cd "$(dirname "$0")/../.."
case "${1:-}" in
  hold)
    if [ -n "$(git status --porcelain -- results)" ]; then
      echo "hold_results: results/ has uncommitted changes; commit them first" >&2
      exit 1
    fi
    rm -rf results ;;
  restore)
    git checkout -- results ;;
  *)
    echo "usage: hold_results.sh hold|restore" >&2
    exit 2 ;;
esac
