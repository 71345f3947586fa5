#!/usr/bin/env bash
# Device call 4 of session 54 (2026-12-06) ran this folder's modules after the conv tasks: its command, with the
# commits of the tuner and of the payloads, is ../../conv-h100/call-4/run.sh (the KernelBench half is the
# `K=/tmp/kb ...` lines; both halves' outputs were packed into $OUT and unpacked into the two folders).
exec bash "$(dirname "$0")/../../conv-h100/call-4/run.sh"
