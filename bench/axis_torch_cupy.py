#!/usr/bin/env python3
"""Times torch and cupy on the rows, columns and ragged segments that `reducelab bench --shape`
and `--segments` measure, the same way reducelab bench times (CUDA events around one call, one
warm-up, the median and spread of the repeats, L2 flushed by writing a buffer twice its size
before each repeat), and writes JSON in the layout of `reducelab bench --shape` (docs/json.md),
so bench/shapes_table.py puts both in one table.

    python3 bench/axis_torch_cupy.py [--json OUT.json] [--repeats 20] [--shapes 2^14x2^14,...]
        [--segments uniform:1..64:zeros,...] [--n 2^26] [--dtypes int32,float,half,double]
        [--ops sum,max] [--ceiling GB/s]

Matrices: torch.sum/amax(dim=axis) and cupy's sum/max(axis=axis). Segments (torch only):
torch.segment_reduce over lengths drawn as reducelab bench draws them (uniform:A..B, powerlaw:
Pareto 1.2 up to 2^20; ":zeros" makes every eighth segment empty) with Python's generator, so
the lengths follow the same distribution but are not the same list. Every timed call is also
checked once against a float64 (or int64) reduction on the GPU: `status` is "ok" when integers
and maxima are equal and floating-point sums lie within 8 (L + 1) epsilons of the result type
times the sum of magnitudes. A library that is not installed is reported and skipped. Needs a GPU.
"""
import argparse
import json
import random
import statistics
import sys

SHAPES = "1x2^28,2^28x1,2^14x2^14,2^20x2^8,2^8x2^20,2^24x16,2^26x4"
SEGMENTS = "uniform:1..64:zeros,uniform:1..4096:zeros,powerlaw:zeros"
DTYPES = "int32,float,half,double"
OPS = "sum,max"
SIZES = {"int32": 4, "float": 4, "half": 2, "double": 8}
EPS = {"int32": 0.0, "float": 2.0 ** -23, "half": 2.0 ** -10, "double": 2.0 ** -52}


def count(text):
    text = text.strip()
    if "^" in text:
        base, exp = text.split("^")
        return int(base) ** int(exp)
    if text.startswith("1<<"):
        return 1 << int(text[3:])
    return int(text)


def parse_shapes(text):
    shapes = []
    for item in filter(None, text.split(",")):
        r, c = item.lower().split("x")
        shapes.append((count(r), count(c)))
    return shapes


def segment_lengths(spec, n, seed=1):
    """Lengths adding up to n, as reducelab bench --segments DIST draws them."""
    parts = spec.split(":")
    zeros = parts[-1] == "zeros"
    if zeros:
        parts = parts[:-1]
    rng = random.Random(seed)
    if parts[0] == "uniform" and len(parts) == 2 and ".." in parts[1]:
        lo, hi = (count(v) for v in parts[1].split(".."))
        if lo < 1 or hi < lo:
            raise ValueError(f"{spec}: needs 1 <= A <= B")
        draw = lambda: rng.randint(lo, hi)  # noqa: E731
    elif parts[0] == "powerlaw" and len(parts) == 1:
        draw = lambda: int(min((1.0 - rng.random()) ** (-1.0 / 1.2), 1048576.0))  # noqa: E731
    else:
        raise ValueError(f"{spec}: not uniform:A..B or powerlaw (with :zeros)")
    lengths, total = [], 0
    while total < n:
        length = 0 if zeros and len(lengths) % 8 == 7 else min(draw(), n - total)
        lengths.append(length)
        total += length
    return lengths


def timer_for(sync, event, elapsed_ms):
    def time_us(fn, flush, repeats):
        fn()
        sync()
        samples = []
        for _ in range(repeats):
            flush()
            start, stop = event(), event()
            start.record()
            fn()
            stop.record()
            stop.synchronize()
            samples.append(elapsed_ms(start, stop) * 1e3)
        return samples
    return time_us


def row(impl, dtype, op, layout, axis, pieces, nbytes, samples, ceiling, status):
    med = statistics.median(samples)
    gbs = nbytes / med / 1e3
    return {"impl": impl, "dtype": dtype, "op": op, "layout": layout, "axis": axis, "pieces": pieces,
            "bytes": nbytes, "median_us": med, "min_us": min(samples), "max_us": max(samples),
            "gb_per_s": gbs, "pct_of_read_ceiling": 100.0 * gbs / ceiling if ceiling else 0.0,
            "ratio_to_cub": 0, "status": status, "verified": status == "ok", "mismatches": 0 if status == "ok" else -1}


def check(xp, got, ref, magnitude, dtype, op, length):
    """'ok' when got matches the wide reference as the docstring says, else 'MISMATCH'."""
    got = got.astype(xp.float64) if hasattr(got, "astype") else got.double()
    if dtype == "int32" or op == "max":
        good = bool((got == ref).all())
    else:
        tol = 8 * (length + 1) * EPS[dtype] * magnitude
        good = bool((abs(got - ref) <= tol).all())
    return "ok" if good else "MISMATCH"


def torch_rows(args, shapes, segs):
    try:
        import torch
    except ImportError as e:
        print(f"torch: skipped ({e})", file=sys.stderr)
        return [], None
    if not torch.cuda.is_available():
        print("torch: skipped (no CUDA device)", file=sys.stderr)
        return [], None
    dev = torch.device("cuda")
    dtypes = {"int32": torch.int32, "float": torch.float32, "half": torch.float16, "double": torch.float64}
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    scratch = torch.empty(2 * l2 // 4 + 1, dtype=torch.int32, device=dev)
    time_us = timer_for(torch.cuda.synchronize, lambda: torch.cuda.Event(enable_timing=True),
                        lambda a, b: a.elapsed_time(b))
    impl = "torch " + torch.__version__
    rows = []

    def make(shape, dname):
        if dname == "int32":
            return torch.randint(-1000, 1000, shape, dtype=torch.int32, device=dev)
        return torch.rand(shape, dtype=dtypes[dname], device=dev) * 2 - 1

    for dname in args.dtypes.split(","):
        for rows_n, cols_n in shapes:
            x = make((rows_n, cols_n), dname)
            wide = x.double()
            for op in args.ops.split(","):
                for axis in (0, 1):
                    dim = axis  # reducelab's axis 1 (a result per row) is torch's dim=1
                    fn = (lambda: torch.sum(x, dim=dim)) if op == "sum" else (lambda: torch.amax(x, dim=dim))
                    ref = wide.sum(dim=dim) if op == "sum" else wide.amax(dim=dim)
                    status = check(torch, fn(), ref, wide.abs().sum(dim=dim), dname, op, x.shape[dim])
                    samples = time_us(fn, lambda: scratch.fill_(1), args.repeats)
                    rows.append(row(impl, dname, op, f"{rows_n}x{cols_n}", axis, x.shape[1 - dim],
                                    x.numel() * SIZES[dname], samples, args.ceiling, status))
            del x, wide
            torch.cuda.empty_cache()
        if not hasattr(torch, "segment_reduce"):
            continue
        for spec, lengths in segs:
            n = sum(lengths)
            x = make((n,), dname)
            lens = torch.tensor(lengths, dtype=torch.int64, device=dev)
            wide = x.double()
            for op in args.ops.split(","):
                fn = lambda: torch.segment_reduce(x, op, lengths=lens, axis=0, unsafe=True)  # noqa: E731
                try:
                    got = fn()
                except RuntimeError as e:  # not every dtype x op is implemented
                    print(f"torch segment_reduce {dname} {op}: skipped ({e})", file=sys.stderr)
                    continue
                ref = torch.segment_reduce(wide, op, lengths=lens, axis=0, unsafe=True)
                mag = torch.segment_reduce(wide.abs(), "sum", lengths=lens, axis=0, unsafe=True)
                nonempty = lens > 0
                status = check(torch, got[nonempty], ref[nonempty], mag[nonempty], dname, op, max(lengths))
                samples = time_us(fn, lambda: scratch.fill_(1), args.repeats)
                rows.append(row(impl, dname, op, f"segments {spec} ({len(lengths)} of them)", -1, len(lengths),
                                n * SIZES[dname], samples, args.ceiling, status))
            del x, wide
            torch.cuda.empty_cache()
    return rows, torch.cuda.get_device_name(0)


def cupy_rows(args, shapes):
    try:
        import cupy
    except ImportError as e:
        print(f"cupy: skipped ({e})", file=sys.stderr)
        return [], None
    dtypes = {"int32": cupy.int32, "float": cupy.float32, "half": cupy.float16, "double": cupy.float64}
    props = cupy.cuda.runtime.getDeviceProperties(0)
    scratch = cupy.empty(2 * props["l2CacheSize"] // 4 + 1, dtype=cupy.int32)
    time_us = timer_for(cupy.cuda.runtime.deviceSynchronize, cupy.cuda.Event, cupy.cuda.get_elapsed_time)
    impl = "cupy " + cupy.__version__
    rows = []
    for dname in args.dtypes.split(","):
        for rows_n, cols_n in shapes:
            if dname == "int32":
                x = cupy.random.randint(-1000, 1000, (rows_n, cols_n), dtype=cupy.int32)
            else:
                x = (cupy.random.random((rows_n, cols_n)) * 2 - 1).astype(dtypes[dname])
            wide = x.astype(cupy.float64)
            for op in args.ops.split(","):
                for axis in (0, 1):
                    dim = axis
                    fn = (lambda: x.sum(axis=dim)) if op == "sum" else (lambda: x.max(axis=dim))
                    ref = wide.sum(axis=dim) if op == "sum" else wide.max(axis=dim)
                    status = check(cupy, fn(), ref, abs(wide).sum(axis=dim), dname, op, x.shape[dim])
                    samples = time_us(fn, lambda: scratch.fill(1), args.repeats)
                    rows.append(row(impl, dname, op, f"{rows_n}x{cols_n}", axis, x.shape[1 - dim],
                                    x.size * SIZES[dname], samples, args.ceiling, status))
            del x, wide
            cupy.get_default_memory_pool().free_all_blocks()
    name = props["name"]
    return rows, name.decode() if isinstance(name, bytes) else name


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shapes", default=SHAPES, help="RxC,... ('' for none)")
    p.add_argument("--segments", default=SEGMENTS, help="DIST,... ('' for none)")
    p.add_argument("--n", default="2^26", help="elements in all for each segments DIST")
    p.add_argument("--dtypes", default=DTYPES)
    p.add_argument("--ops", default=OPS)
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--ceiling", type=float, default=0.0, help="the read ceiling in GB/s, for pct_of_read_ceiling")
    p.add_argument("--json")
    args = p.parse_args()
    for d in args.dtypes.split(","):
        if d not in SIZES:
            p.error(f"--dtypes: unknown dtype {d!r} (int32, float, half, double)")
    for o in args.ops.split(","):
        if o not in ("sum", "max"):
            p.error(f"--ops: unknown op {o!r} (sum, max)")
    try:
        shapes = parse_shapes(args.shapes)
    except ValueError:
        p.error(f"--shapes: cannot read {args.shapes!r} (RxC,... with 2^k allowed)")
    try:
        n = count(args.n)
        segs = [(s, segment_lengths(s, n)) for s in filter(None, args.segments.split(","))]
    except ValueError as e:
        p.error(f"--segments/--n: {e}")
    trows, tname = torch_rows(args, shapes, segs)
    crows, cname = cupy_rows(args, shapes)
    rows = trows + crows
    print(f"{'impl':<18} {'dtype':<7} {'op':<4} {'layout':>34} {'axis':>4} {'us':>10} {'GB/s':>8}  status")
    for r in rows:
        print(f"{r['impl']:<18} {r['dtype']:<7} {r['op']:<4} {r['layout']:>34} {r['axis']:>4} {r['median_us']:>10.1f} "
              f"{r['gb_per_s']:>8.0f}  {r['status']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"command": "axis_torch_cupy", "device": {"name": tname or cname or "", "backend": "cuda"},
                       "read_ceiling_gb_per_s": args.ceiling, "repeats": args.repeats, "mode": "cold",
                       "rows": rows}, f, indent=1)
    return 0 if rows and all(r["verified"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
