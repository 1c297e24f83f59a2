#!/usr/bin/env python3
"""The tables of docs/performance.md from the JSON of `reducelab bench` (whole arrays): per
timing mode, one row per case (dtype and op) and one column per size, each cell reducelab's
median in us and CUB's median over it (above 1: reducelab faster), from the same run.

    python3 bench/perf_tables.py FILE.json [--modes cold,batch]

A row that did not verify shows '?' after its time. Python's standard library only.
"""
import json
import sys


def fmt_us(us):
    return f"{us:.3g}" if us < 100 else f"{us:.0f}"


def size_label(n):
    k = n.bit_length() - 1
    return f"2^{k}" if n == 1 << k else str(n)


def main(argv):
    modes = ["cold", "batch"]
    paths = []
    i = 0
    while i < len(argv):
        if argv[i] == "--modes" and i + 1 < len(argv):
            modes = argv[i + 1].split(",")
            i += 2
        else:
            paths.append(argv[i])
            i += 1
    if len(paths) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    with open(paths[0]) as f:
        j = json.load(f)
    device = j.get("device", {}).get("name", "?")
    cells = {}  # (mode, case) -> {n: row}
    cases, sizes = [], set()
    for r in j["rows"]:
        if r["impl"] != "reducelab":
            continue
        mode = r["mode"].split("/")[0]
        case = f'{r["dtype"]} {r["op"]}'
        if case not in cases:
            cases.append(case)
        sizes.add(r["n"])
        cells.setdefault((mode, case), {})[r["n"]] = r
    sizes = sorted(sizes)
    for mode in modes:
        print(f"**{mode.capitalize()}, {device}**\n")
        print("| case | " + " | ".join(size_label(n) for n in sizes) + " |")
        print("|---|" + "---|" * len(sizes))
        for case in cases:
            row = cells.get((mode, case), {})
            out = []
            for n in sizes:
                r = row.get(n)
                if r is None:
                    out.append("")
                    continue
                mark = "" if r.get("verified") else " ?"
                ratio = r.get("ratio_to_cub")
                rtext = f" ({ratio:.2f}×)" if ratio else ""
                out.append(f"{fmt_us(r['median_us'])}{rtext}{mark}")
            print(f"| {case} | " + " | ".join(out) + " |")
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
