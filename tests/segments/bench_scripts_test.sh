#!/usr/bin/env bash
# bench/axis_torch_cupy.py and bench/shapes_table.py without a GPU: the segment lengths follow
# reducelab bench's rules (sum n, every eighth empty with :zeros), the shapes parse, and the table
# joins a `reducelab bench --shape` JSON with the script's JSON by layout, dtype, op and axis.
set -euo pipefail
src=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$src/bench/axis_torch_cupy.py" <<'PY'
import importlib.util, sys
spec = importlib.util.spec_from_file_location("atc", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
shapes = m.parse_shapes(m.SHAPES)
assert (16384, 16384) in shapes and (1, 1 << 28) in shapes and (1 << 26, 4) in shapes and len(shapes) == 7, shapes
for spec_ in m.SEGMENTS.split(","):
    lengths = m.segment_lengths(spec_, 100000)
    assert sum(lengths) == 100000, (spec_, sum(lengths))
    assert all(lengths[i] == 0 for i in range(7, len(lengths), 8)), spec_
    assert all(l > 0 for i, l in enumerate(lengths) if i % 8 != 7 and i != len(lengths) - 1), spec_
assert max(m.segment_lengths("uniform:1..64", 100000)) <= 64
try:
    m.segment_lengths("gauss:3", 10)
    raise SystemExit("a bad DIST was accepted")
except ValueError:
    pass
print("axis_torch_cupy.py: ok")
PY
cat >"$work/reducelab.json" <<'JSON'
{"device": {"name": "Test GPU"}, "read_ceiling_gb_per_s": 4000, "copy_ceiling_gb_per_s": 3600, "layout": "16777216x16",
 "rows": [{"impl": "reducelab", "dtype": "float", "op": "sum", "layout": "16777216x16", "axis": 1, "median_us": 100.0,
           "gb_per_s": 2684.4, "pct_of_read_ceiling": 67.1, "pct_of_floor": 70.2, "status": "ok"},
          {"impl": "cub-segmented", "dtype": "float", "op": "sum", "layout": "16777216x16", "axis": 1, "median_us": 400.0,
           "status": "ok"}]}
JSON
cat >"$work/torch.json" <<'JSON'
{"device": {"name": "Test GPU"}, "rows": [
 {"impl": "torch 2.5.0", "dtype": "float", "op": "sum", "layout": "16777216x16", "axis": 1, "median_us": 250.0, "status": "ok"},
 {"impl": "cupy 13.3.0", "dtype": "float", "op": "sum", "layout": "16777216x16", "axis": 1, "median_us": 300.0, "status": "MISMATCH"}]}
JSON
python3 "$src/bench/shapes_table.py" "$work/reducelab.json" "$work/torch.json" --markdown >"$work/table.md"
cat "$work/table.md"
grep -q '^Test GPU, read ceiling 4000 GB/s, copy ceiling 3600 GB/s moved$' "$work/table.md"
grep -q '| 16777216x16 | float | sum | 1 | 100.0 | 2684 | 67.1 | 70.2 | 400.0 | 250.0 | 300.0? | 2.50 |' "$work/table.md"
echo "shapes_table.py: ok"
