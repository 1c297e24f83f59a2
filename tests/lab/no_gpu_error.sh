#!/usr/bin/env bash
# no_gpu_error.sh EXPECT_ERROR STATUS REGEX CMD...: where there is no GPU, CMD fails with STATUS
# and one line matching REGEX (expect_error.sh). Skipped (exit 77) where a GPU is present: there
# the command would run.
set -u
if nvidia-smi -L >/dev/null 2>&1; then echo "skipped: a GPU is present"; exit 77; fi
exec "$@"
