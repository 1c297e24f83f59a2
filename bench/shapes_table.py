#!/usr/bin/env python3
"""One table from the JSON of `reducelab bench --shape/--segments` (reducelab and CUB in one
process) and of bench/axis_torch_cupy.py (torch, cupy on the same GPU): per layout, dtype, op
and axis, each implementation's median time, and reducelab's GB/s, % of the read ceiling, % of
the floor that also counts what it writes (each byte written at a copy's cost), and speed-up over
the fastest other implementation.

    python3 bench/shapes_table.py FILE.json [FILE.json ...] [--markdown]

Rows whose status is not "ok" are marked '?'. Python's standard library only.
"""
import json
import sys


def short(impl):
    return impl.split()[0]


def layout_key(layout):
    # bench --shape writes "16384x16384"; the same text from the python script.
    return layout


def main(argv):
    markdown = "--markdown" in argv
    paths = [a for a in argv if a != "--markdown"]
    if not paths:
        print(__doc__, file=sys.stderr)
        return 2
    cells = {}  # (layout, dtype, op, axis) -> {impl: (us, row)}
    impls = []
    device = ""
    ceiling = 0.0
    copy = 0.0
    for path in paths:
        with open(path) as f:
            j = json.load(f)
        device = device or j.get("device", {}).get("name", "")
        ceiling = ceiling or j.get("read_ceiling_gb_per_s", 0.0)
        copy = copy or j.get("copy_ceiling_gb_per_s", 0.0)
        for r in j.get("rows", []):
            impl = short(r["impl"])
            if impl not in impls:
                impls.append(impl)
            key = (layout_key(r["layout"]), r["dtype"], r["op"], r["axis"])
            cells.setdefault(key, {})[impl] = (r.get("median_us", r.get("us_median", 0)), r)
    others = [i for i in impls if i != "reducelab"]
    head = ["layout", "dtype", "op", "axis", "reducelab us", "GB/s", "%ceil", "%floor"] + [f"{i} us" for i in others] + ["x best other"]
    lines = []
    for key in sorted(cells, key=lambda k: (k[0], k[1], k[2], -k[3])):
        c = cells[key]
        mine = c.get("reducelab")
        us = mine[0] if mine else 0
        cols = [key[0], key[1], key[2], str(key[3]) if key[3] >= 0 else "-"]
        if mine:
            mark = "" if mine[1].get("status", "ok") == "ok" else "?"
            cols += [f"{us:.1f}{mark}", f"{mine[1].get('gb_per_s', 0):.0f}", f"{mine[1].get('pct_of_read_ceiling', 0):.1f}",
                     f"{mine[1]['pct_of_floor']:.1f}" if "pct_of_floor" in mine[1] else "-"]
        else:
            cols += ["-", "-", "-", "-"]
        best = 0
        for i in others:
            if i in c:
                t, r = c[i]
                cols.append(f"{t:.1f}" + ("" if r.get("status", "ok") == "ok" else "?"))
                best = t if best == 0 else min(best, t)
            else:
                cols.append("-")
        cols.append(f"{best / us:.2f}" if us and best else "-")
        lines.append(cols)
    head_line = f"{device}, read ceiling {ceiling:.0f} GB/s" if ceiling else device
    if copy:
        head_line += f", copy ceiling {copy:.0f} GB/s moved"
    print(head_line)
    if markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for cols in lines:
            print("| " + " | ".join(cols) + " |")
    else:
        widths = [max(len(h), *(len(c[i]) for c in lines)) if lines else len(h) for i, h in enumerate(head)]
        print("  ".join(h.rjust(w) for h, w in zip(head, widths)))
        for cols in lines:
            print("  ".join(c.rjust(w) for c, w in zip(cols, widths)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
