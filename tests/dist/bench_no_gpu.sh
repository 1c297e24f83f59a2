#!/usr/bin/env bash
# `reducelab bench --gpus 2` on a machine without GPUs (or a build without NCCL): one line on
# stderr and a non-zero exit status, no hang. Skips (exit 77) where a GPU is present. In a build
# with NCCL, bad flags are refused first (exit 2), by the parsers every command shares.
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
if [[ $err != *"this build has none"* ]]; then
  refused() {  # FLAGS... WANT: the flags, then what the one line must contain
    local want=${!#} out code
    out=$(timeout 60 "$rl" bench --gpus 2 "${@:1:$#-1}" 2>&1 >/dev/null); code=$?
    [[ $code -eq 2 && $(printf '%s\n' "$out" | grep -c .) -eq 1 && $out == *"$want"* ]] ||
      { echo "FAIL: bench --gpus 2 ${*:1:$#-1}: exit $code, expected 2 and one line with '$want': $out"; exit 1; }
  }
  refused --sizes 2^x "--sizes 2^x: not a size"
  refused --weak 0 "--weak 0: a size must be at least 1"
  refused --dtypes int33 "--dtypes int33: unknown dtype"
  refused --dtypes f32,int8 "--dtypes int8: choose float, double or int32"
  refused --ops mean "--ops mean: unknown op; choose sum, min, max"
fi
echo "ok (exit $rc): $err"
