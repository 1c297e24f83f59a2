#!/usr/bin/env bash
# bench_no_gpu.sh EXPECT_ERROR REDUCELAB: without a GPU, `reducelab bench` says so in one line
# and exits 1. Skipped (exit 77) where a GPU is present: there it would run the sweep.
set -u
if nvidia-smi -L >/dev/null 2>&1; then echo "skipped: a GPU is present"; exit 77; fi
exec "$1" 1 "bench needs a GPU \(pass --backend cpu" "$2" bench --sizes 2^10 --repeat 1
