#!/usr/bin/env bash
# `reducelab bench --gpus 2` on a machine without GPUs (or a build without NCCL): one line on
# stderr and a non-zero exit status, no hang. Skips (exit 77) where a GPU is present.
set -uo pipefail
rl=$1
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  echo "SKIPPED: a GPU is present (scripts/gpu-dist runs the benchmark there)"
  exit 77
fi
err=$(timeout 120 "$rl" bench --gpus 2 2>&1 >/dev/null); rc=$?
[[ $rc -ne 0 && $rc -ne 124 ]] || { echo "FAIL: exit status $rc (expected a non-zero status, no timeout)"; exit 1; }
lines=$(printf '%s\n' "$err" | grep -c .)
[[ $lines -eq 1 ]] || { echo "FAIL: expected one line on stderr, got $lines:"; echo "$err"; exit 1; }
[[ $err == *GPU* || $err == *NCCL* ]] || { echo "FAIL: the line does not say what is missing: $err"; exit 1; }
echo "ok (exit $rc): $err"
