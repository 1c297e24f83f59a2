#!/usr/bin/env bash
# expect_error.sh STATUS REGEX CMD...: passes when CMD exits with STATUS and its stderr is one
# line matching REGEX.
set -u
want=$1 regex=$2; shift 2
err=$("$@" 2>&1 >/dev/null); got=$?
lines=$(printf '%s\n' "$err" | grep -c .)
if [[ $got -ne $want ]]; then echo "exit status $got, wanted $want; stderr: $err"; exit 1; fi
if [[ $lines -ne 1 ]]; then echo "stderr has $lines lines, wanted 1: $err"; exit 1; fi
if ! printf '%s\n' "$err" | grep -qE -- "$regex"; then echo "stderr does not match '$regex': $err"; exit 1; fi
echo "ok: $err"
