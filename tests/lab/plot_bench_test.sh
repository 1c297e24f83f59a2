#!/usr/bin/env bash
# plot_bench_test.sh PLOT_BENCH [REDUCELAB]: scripts/plot-bench on a small bench JSON.
#  1. matplotlib hidden: one line on stderr naming it, exit 3, the JSON untouched.
#  2. with matplotlib: a PNG and an SVG are written. Skipped (exit 77) when no python3 here
#     can import matplotlib, and the reason is printed.
#  3. through `reducelab bench --backend cpu --plot` (when the binary has the library): with
#     matplotlib hidden, a non-zero exit, one line, and the JSON still written; with it, plots.
set -u
script=$1 rl=${2:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cat >"$tmp/bench.json" <<'JSON'
{"command": "bench", "backend": "cuda", "device": {"name": "Test GPU"}, "read_ceiling_gbs": 4000.0,
 "empty_launch_us": 4.0, "impls": ["reducelab", "cub"], "l2_modes": ["flushed", "warm"],
 "cases": [{"dtype": "int32", "op": "sum"}, {"dtype": "float", "op": "max"}],
 "rows": [
  {"impl": "reducelab", "dtype": "int32", "op": "sum", "n": 1024, "bytes": 4096, "l2": "flushed", "us_median": 5.0, "gb_per_s": 0.8},
  {"impl": "reducelab", "dtype": "int32", "op": "sum", "n": 1048576, "bytes": 4194304, "l2": "flushed", "us_median": 8.0, "gb_per_s": 524.3},
  {"impl": "cub", "dtype": "int32", "op": "sum", "n": 1024, "bytes": 4096, "l2": "flushed", "us_median": 6.0, "gb_per_s": 0.7},
  {"impl": "cub", "dtype": "int32", "op": "sum", "n": 1048576, "bytes": 4194304, "l2": "warm", "us_median": 9.0, "gb_per_s": 466.0},
  {"impl": "cub", "dtype": "float", "op": "max", "n": 1048576, "bytes": 4194304, "l2": "flushed", "us_median": 9.0, "gb_per_s": 466.0}
 ]}
JSON
cp "$tmp/bench.json" "$tmp/bench.orig"

# A matplotlib that cannot be imported, first on the path.
mkdir -p "$tmp/hide/matplotlib"
echo 'raise ImportError("hidden by plot_bench_test.sh")' >"$tmp/hide/matplotlib/__init__.py"
hidden() { PYTHONPATH="$tmp/hide" PLOT_BENCH_REEXEC=1 "$@"; }

err=$(hidden "$script" "$tmp/bench.json" -o "$tmp/x.png" 2>&1 >/dev/null); rc=$?
[[ $rc -eq 3 ]] || fail "without matplotlib: exit $rc, wanted 3 ($err)"
[[ $(printf '%s\n' "$err" | grep -c .) -eq 1 ]] || fail "without matplotlib: wanted one line, got: $err"
[[ $err == *"cannot import matplotlib"* ]] || fail "without matplotlib: the line does not say so: $err"
[[ ! -e $tmp/x.png ]] || fail "without matplotlib: a plot was written"
cmp -s "$tmp/bench.json" "$tmp/bench.orig" || fail "the JSON changed"
echo "ok: without matplotlib: $err"

have_rl_library=0
if [[ -n $rl ]] && "$rl" bench --backend cpu --sizes 1000 --dtypes float --ops sum --repeat 1 --format json >/dev/null 2>&1; then
  have_rl_library=1
  err=$(hidden "$rl" bench --backend cpu --sizes 1000,4096 --dtypes float --ops sum --repeat 1 --plot "$tmp/cli" 2>&1 >/dev/null); rc=$?
  [[ $rc -ne 0 ]] || fail "reducelab bench --plot without matplotlib exited 0"
  [[ $(printf '%s\n' "$err" | grep -c .) -eq 1 ]] || fail "reducelab bench --plot without matplotlib: wanted one line, got: $err"
  grep -q '"command": "bench"' "$tmp/cli.json" || fail "reducelab bench --plot without matplotlib: no JSON in $tmp/cli.json"
  echo "ok: reducelab bench --plot without matplotlib: exit $rc, JSON kept: $err"
fi

if ! python3 -c 'import matplotlib' 2>/dev/null && ! /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
  echo "SKIPPED: no python3 here can import matplotlib (Debian: python3-matplotlib); the plots were not drawn"
  exit 77
fi
"$script" "$tmp/bench.json" -o "$tmp/p.png" -o "$tmp/p.svg" || fail "plot-bench exited $?"
[[ $(head -c 8 "$tmp/p.png" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] || fail "p.png is not a PNG"
grep -q '<svg' "$tmp/p.svg" || fail "p.svg is not an SVG"
grep -q 'Test GPU' "$tmp/p.svg" || fail "the SVG does not name the device"
"$script" "$tmp/bench.json" || fail "plot-bench without -o exited $?"
[[ -s $tmp/bench.png && -s $tmp/bench.svg ]] || fail "without -o: bench.png and bench.svg not written beside the JSON"
echo "ok: PNG and SVG written"

# The current JSON: rows in three timing modes, each mode with its own floor.
cat >"$tmp/modes.json" <<'JSON'
{"command": "bench", "device": {"name": "Mode GPU", "backend": "cuda"}, "read_ceiling_gb_per_s": 4000.0,
 "modes": [{"mode": "cold", "empty_launch_us": 2.5}, {"mode": "batch", "empty_launch_us": 1.5},
           {"mode": "sync", "empty_launch_us": 6.0}],
 "impls": ["reducelab", "cub"], "cases": [{"dtype": "int32", "op": "sum"}],
 "rows": [
  {"impl": "reducelab", "dtype": "int32", "op": "sum", "n": 1024, "bytes": 4096, "mode": "cold", "median_us": 5.0, "gb_per_s": 0.8},
  {"impl": "reducelab", "dtype": "int32", "op": "sum", "n": 1048576, "bytes": 4194304, "mode": "cold", "median_us": 8.0, "gb_per_s": 524.3},
  {"impl": "cub", "dtype": "int32", "op": "sum", "n": 1048576, "bytes": 4194304, "mode": "batch", "median_us": 9.0, "gb_per_s": 466.0},
  {"impl": "cub", "dtype": "int32", "op": "sum", "n": 1048576, "bytes": 4194304, "mode": "sync", "median_us": 12.0, "gb_per_s": 349.5}
 ]}
JSON
"$script" "$tmp/modes.json" -o "$tmp/m.svg" || fail "plot-bench on the modes JSON exited $?"
for text in "Mode GPU" "reducelab (cold)" "cub (batch)" "cub (sync)" "limit (sync)"; do
  grep -qF "$text" "$tmp/m.svg" || fail "the modes plot does not show '$text'"
done
echo "ok: every timing mode and its limit drawn"

if ((have_rl_library)); then
  "$rl" bench --backend cpu --sizes 1000,4096 --dtypes float --ops sum --repeat 1 --plot "$tmp/cli" >/dev/null \
    || fail "reducelab bench --plot exited $?"
  [[ -s $tmp/cli.png && -s $tmp/cli.svg && -s $tmp/cli.json ]] || fail "reducelab bench --plot FILE: not FILE.png, .svg and .json"
  echo "ok: reducelab bench --plot wrote PNG, SVG and JSON"
fi
echo "all plot checks passed"
