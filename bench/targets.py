#!/usr/bin/env python3
"""Reads `reducelab bench --format json` and checks issue 5's targets for the reducelab rows.

    python3 bench/targets.py BENCH.json

One line per dtype/op and L2 mode: the worst ratio to CUB over every n (target >= 1.0) and over
2^14 <= n <= 2^22 (>= 1.3), the worst % of the limit over every n (>= 85) and for n >= 2^26
(>= 97), for half/bf16 sums the % of the read ceiling at the largest n (>= 95 at 2^30), and
the deterministic/nondeterministic time ratio (order costs nothing: about 1.00). A figure
that misses its target is marked with '!'. Python's standard library only.
"""
import json
import sys


def worst(values):
    return min(values) if values else None


def fmt(v, target, digits=2, suffix=""):
    if v is None:
        return "-"
    return f"{v:.{digits}f}{suffix}{'' if v >= target else '!'}"


def main(path):
    with open(path) as f:
        bench = json.load(f)
    rows = [r for r in bench["rows"] if r.get("us_median", 0) > 0]
    mine = [r for r in rows if r["impl"] == "reducelab"]
    if not mine:
        print("targets: no reducelab rows in", path)
        return 1
    print(f"targets on {bench['device'].get('name', '?')}: read ceiling {bench['read_ceiling_gbs']:.0f} GB/s, "
          f"empty launch {bench['empty_launch_us']:.2f} us ('!' = target missed)")
    header = f"{'case':<14} {'L2':<8} {'xCUB all':>9} {'xCUB 2^14-22':>12} {'%limit all':>10} {'%limit>=2^26':>12} " \
             f"{'%ceil max n':>11} {'det/nondet':>10}"
    print(header)
    missed = 0
    for case in bench["cases"]:
        for l2 in bench.get("l2_modes") or ["n/a"]:
            sel = [r for r in mine if r["dtype"] == case["dtype"] and r["op"] == case["op"] and r["l2"] == l2]
            if not sel:
                continue
            ratio_all = worst([r["ratio_to_cub"] for r in sel if r["ratio_to_cub"] > 0])
            ratio_mid = worst([r["ratio_to_cub"] for r in sel if r["ratio_to_cub"] > 0 and 2**14 <= r["n"] <= 2**22])
            limit_all = worst([r["pct_of_limit"] for r in sel if r["pct_of_limit"] > 0])
            limit_big = worst([r["pct_of_limit"] for r in sel if r["pct_of_limit"] > 0 and r["n"] >= 2**26])
            ceil_max = None
            if case["dtype"] in ("half", "bf16"):
                big = max(sel, key=lambda r: r["n"])
                ceil_max = big["pct_of_read_ceiling"] if big["n"] >= 2**30 else None
            nondet = {r["n"]: r["us_median"] for r in rows if r["impl"] == "reducelab-nondet"
                      and r["dtype"] == case["dtype"] and r["op"] == case["op"] and r["l2"] == l2}
            det_ratio = max([r["us_median"] / nondet[r["n"]] for r in sel if r["n"] in nondet], default=None)
            cells = [fmt(ratio_all, 1.0, suffix="x"), fmt(ratio_mid, 1.3, suffix="x"), fmt(limit_all, 85, 1),
                     fmt(limit_big, 97, 1), fmt(ceil_max, 95, 1),
                     "-" if det_ratio is None else f"{det_ratio:.2f}"]
            missed += sum(c.endswith("!") for c in cells)
            print(f"{case['dtype'] + ' ' + case['op']:<14} {l2:<8} {cells[0]:>9} {cells[1]:>12} {cells[2]:>10} "
                  f"{cells[3]:>12} {cells[4]:>11} {cells[5]:>10}")
    bad = [r for r in bench["rows"] if not r.get("verified")]
    print(f"{missed} figure(s) miss their target; {len(bad)} row(s) not verified")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip())
    sys.exit(main(sys.argv[1]))
