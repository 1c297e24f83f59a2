#!/usr/bin/env bash
# The whole gallery on the SIMT emulator at n = 2^20, block 512, with the race checks off and on:
# the figure docs/simt.md reports. Each kernel runs a verified warm-up and one timed repeat.
#   bench/simt_gallery.sh [path/to/reducelab]
set -euo pipefail
rl=${1:-build/release/src/cli/reducelab}
for checks in off on; do
  start=$(date +%s.%N)
  "$rl" run --backend simt --kernels all --n 2^20 --block 512 --repeats 1 --simt-checks "$checks" --format json \
    >/tmp/simt_gallery_$checks.json
  end=$(date +%s.%N)
  python3 - "$checks" "$start" "$end" /tmp/simt_gallery_$checks.json <<'PY'
import json, sys
checks, start, end, path = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
d = json.load(open(path))
timed = sum(r["us_median"] for r in d["rows"]) / 1e6
print(f"checks {checks:3}: whole command {end - start:5.1f} s, timed repeats {timed:5.2f} s, all verified {d['all_verified']}")
PY
done
