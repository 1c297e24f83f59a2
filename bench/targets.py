#!/usr/bin/env python3
"""Reads `reducelab bench --format json` and checks the library's performance targets on the
reducelab rows, per dtype/op and timing mode.

    python3 bench/targets.py BENCH.json

Columns, each the worst value over the sizes named ('!' marks a figure that misses its target):
  xCUB all        ratio to CUB (same mode) over every n: >= 1.0 in every mode
  xCUB 2^14-20    over 2^14 <= n <= 2^20, cold mode: >= 1.3 for int32 and float sums, >= 1.2 otherwise;
                  batch mode: >= 2.0 (where CUB launches twice)
  xCUB 2^22       at n = 2^22, cold mode: >= 1.15 for int32 and float sums, >= 1.1 otherwise
  %ceil>=2^26     % of the read ceiling for n >= 2^26, cold mode: >= 97
  %limit max      the largest % of the limit (the mode's empty launch + bytes / the row's ceiling:
                  the L2's for batch and sync rows whose input fits in L2, else the read ceiling):
                  at or below 100 up to the run's noise (> 105 is marked)
  det/nondet      deterministic / nondeterministic time, worst n (the order costs nothing: about 1.00)
Python's standard library only. Also reads the JSON of earlier versions (l2 flushed/warm rows).
"""
import json
import sys

STRICT = {("int32", "sum"), ("float", "sum")}


def median_us(r):
    return r.get("median_us", r.get("us_median", 0))


def mode_of(r):
    m = r.get("mode")
    if m is not None:
        return m
    return {"flushed": "cold", "warm": "warm"}.get(r.get("l2"), r.get("l2", "?"))


def worst(values):
    return min(values) if values else None


def cell(v, target, digits=2, suffix="", above=True):
    if v is None:
        return "-"
    ok = v >= target if above else v <= target
    return f"{v:.{digits}f}{suffix}{'' if ok else '!'}"


def main(path):
    with open(path) as f:
        bench = json.load(f)
    rows = [r for r in bench["rows"] if median_us(r) > 0]
    mine = [r for r in rows if r["impl"] == "reducelab"]
    if not mine:
        print("targets: no reducelab rows in", path)
        return 1
    ceiling = bench.get("read_ceiling_gb_per_s", bench.get("read_ceiling_gbs", 0))
    floors = {m["mode"]: m.get("empty_launch_us", 0) for m in bench.get("modes", [])}
    floor_text = ", ".join(f"{k} {v:.2f} us" for k, v in floors.items()) or f"{bench.get('empty_launch_us', 0):.2f} us"
    print(f"targets on {bench['device'].get('name', '?')}: read ceiling {ceiling:.0f} GB/s, empty launch {floor_text} "
          f"('!' = target missed)")
    print(f"{'case':<14} {'mode':<6} {'xCUB all':>9} {'xCUB 2^14-20':>12} {'xCUB 2^22':>9} {'%ceil>=2^26':>11} "
          f"{'%limit max':>10} {'det/nondet':>10}")
    modes = []
    for r in mine:
        if mode_of(r) not in modes:
            modes.append(mode_of(r))
    missed = 0
    for case in bench["cases"]:
        key = (case["dtype"], case["op"])
        for mode in modes:
            sel = [r for r in mine if (r["dtype"], r["op"]) == key and mode_of(r) == mode]
            if not sel:
                continue
            ratios = [r for r in sel if r.get("ratio_to_cub", 0) > 0]
            ratio_all = worst([r["ratio_to_cub"] for r in ratios])
            ratio_mid = worst([r["ratio_to_cub"] for r in ratios if 2**14 <= r["n"] <= 2**20])
            ratio_22 = worst([r["ratio_to_cub"] for r in ratios if r["n"] == 2**22])
            mid_target = 2.0 if mode == "batch" else 1.3 if key in STRICT else 1.2
            at22_target = 1.15 if key in STRICT else 1.1
            ceil_big = worst([r["pct_of_read_ceiling"] for r in sel if r["n"] >= 2**26])
            limit_max = max([r["pct_of_limit"] for r in sel if r.get("pct_of_limit", 0) > 0], default=None)
            nondet = {r["n"]: median_us(r) for r in rows if r["impl"] == "reducelab-nondet"
                      and (r["dtype"], r["op"]) == key and mode_of(r) == mode}
            det_ratio = max([median_us(r) / nondet[r["n"]] for r in sel if r["n"] in nondet], default=None)
            cold = mode == "cold"
            cells = [cell(ratio_all, 1.0, suffix="x"),
                     cell(ratio_mid, mid_target, suffix="x") if mode in ("cold", "batch") else "-",
                     cell(ratio_22, at22_target, suffix="x") if cold else "-",
                     cell(ceil_big, 97, 1) if cold else "-",
                     cell(limit_max, 105, 1, above=False),
                     "-" if det_ratio is None else f"{det_ratio:.2f}"]
            missed += sum(c.endswith("!") for c in cells)
            print(f"{key[0] + ' ' + key[1]:<14} {mode:<6} {cells[0]:>9} {cells[1]:>12} {cells[2]:>9} {cells[3]:>11} "
                  f"{cells[4]:>10} {cells[5]:>10}")
    bad = [r for r in bench["rows"] if not r.get("verified")]
    print(f"{missed} figure(s) miss their target; {len(bad)} row(s) not verified")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip())
    sys.exit(main(sys.argv[1]))
