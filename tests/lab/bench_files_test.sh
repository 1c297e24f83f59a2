#!/usr/bin/env bash
# bench_files_test.sh REDUCELAB: `reducelab bench --out FILE --json FILE` on the CPU backend writes
# the formatted output to FILE (nothing on stdout) and the JSON beside it, with the run's rows
# verified; the JSON carries the CPU backend's one timing mode.
set -u
rl=$1
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
stdout=$("$rl" bench --backend cpu --sizes 4096 --repeats 2 --dtypes float --ops sum --format csv \
         --out "$dir/bench.csv" --json "$dir/bench.json"); rc=$?
((rc == 0)) || { echo "exit status $rc"; exit 1; }
[[ -z $stdout ]] || { echo "stdout not empty (--out should take it): $stdout"; exit 1; }
head -1 "$dir/bench.csv" | grep -q '^impl,dtype,op,n,' || { echo "CSV header: $(head -1 "$dir/bench.csv")"; exit 1; }
python3 - "$dir/bench.json" <<'PY' || exit 1
import json, sys
j = json.load(open(sys.argv[1]))
assert len(j["rows"]) == 1, j["rows"]
assert j["all_verified"] is True
assert j["rows"][0]["mode"] == "wall", j["rows"][0]["mode"]
assert j["device"]["backend"] == "cpu"
assert j["params"]["sizes"] == [4096] and j["params"]["repeats"] == 2, j["params"]
PY
echo ok
