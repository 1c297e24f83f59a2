#!/usr/bin/env python3
"""Times torch.sum/amax(dim=...) and cupy.sum/max(axis=...) on the GPU over the shapes that
reduce_axis is measured at, the same way reducelab bench times (CUDA events around one call, a
warm-up, the median and spread of the repeats, L2 flushed by writing a buffer twice its size
before each repeat), and the ragged segment sums through torch.segment_reduce where torch has it.

    python3 bench/axis_torch_cupy.py [--json OUT.json] [--repeats 20] [--shapes 2^14x2^14,...]
                                     [--dtypes int32,float,half,double] [--ops sum,max]

Prints one row per library x dtype x op x shape x axis: median us, GB/s of the bytes that must
be read (rows x cols x element size), and the min..max of the repeats; --json writes the rows.
A library that is not installed is reported and skipped. Needs a GPU.
"""
import argparse
import json
import statistics
import sys

SHAPES = "1x2^28,2^28x1,2^14x2^14,2^20x2^8,2^8x2^20,2^24x16,2^26x4"
DTYPES = "int32,float,half,double"
OPS = "sum,max"
SIZES = {"int32": 4, "float": 4, "half": 2, "double": 8}


def count(text):
    text = text.strip()
    if "^" in text:
        base, exp = text.split("^")
        return int(base) ** int(exp)
    return int(text)


def parse_shapes(text):
    shapes = []
    for item in text.split(","):
        r, c = item.lower().split("x")
        shapes.append((count(r), count(c)))
    return shapes


def timer_for(torch_like):
    """CUDA-event timing for torch (cupy has the same calls under cupy.cuda)."""
    def time_us(fn, flush, repeats):
        fn()
        torch_like.synchronize()
        samples = []
        for _ in range(repeats):
            flush()
            start, stop = torch_like.event(), torch_like.event()
            start.record()
            fn()
            stop.record()
            stop.synchronize()
            samples.append(torch_like.elapsed_ms(start, stop) * 1e3)
        return samples
    return time_us


def torch_rows(args, shapes):
    try:
        import torch
    except ImportError as e:
        print(f"torch: skipped ({e})", file=sys.stderr)
        return []
    if not torch.cuda.is_available():
        print("torch: skipped (no CUDA device)", file=sys.stderr)
        return []
    dev = torch.device("cuda")
    dtypes = {"int32": torch.int32, "float": torch.float32, "half": torch.float16, "double": torch.float64}
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    scratch = torch.empty(2 * l2 // 4 + 1, dtype=torch.int32, device=dev)

    class T:
        synchronize = staticmethod(torch.cuda.synchronize)
        event = staticmethod(lambda: torch.cuda.Event(enable_timing=True))
        elapsed_ms = staticmethod(lambda a, b: a.elapsed_time(b))

    time_us = timer_for(T)
    rows = []
    for dname in args.dtypes.split(","):
        for rows_n, cols_n in shapes:
            n = rows_n * cols_n
            if dname == "int32":
                x = torch.randint(-1000, 1000, (rows_n, cols_n), dtype=torch.int32, device=dev)
            else:
                x = torch.rand((rows_n, cols_n), dtype=dtypes[dname], device=dev) * 2 - 1
            for op in args.ops.split(","):
                for axis in (0, 1):
                    if op == "sum":
                        fn = lambda: torch.sum(x, dim=axis)  # noqa: E731
                    else:
                        fn = lambda: torch.amax(x, dim=axis)  # noqa: E731
                    samples = time_us(fn, lambda: scratch.fill_(1), args.repeats)
                    rows.append(row("torch " + torch.__version__, dname, op, rows_n, cols_n, axis, n, samples))
            del x
    torch.cuda.empty_cache()
    return rows


def cupy_rows(args, shapes):
    try:
        import cupy
    except ImportError as e:
        print(f"cupy: skipped ({e})", file=sys.stderr)
        return []
    dtypes = {"int32": cupy.int32, "float": cupy.float32, "half": cupy.float16, "double": cupy.float64}
    l2 = cupy.cuda.runtime.getDeviceProperties(0)["l2CacheSize"]
    scratch = cupy.empty(2 * l2 // 4 + 1, dtype=cupy.int32)

    class C:
        synchronize = staticmethod(cupy.cuda.runtime.deviceSynchronize)
        event = staticmethod(cupy.cuda.Event)
        elapsed_ms = staticmethod(cupy.cuda.get_elapsed_time)

    time_us = timer_for(C)
    rows = []
    for dname in args.dtypes.split(","):
        for rows_n, cols_n in shapes:
            n = rows_n * cols_n
            if dname == "int32":
                x = cupy.random.randint(-1000, 1000, (rows_n, cols_n), dtype=cupy.int32)
            else:
                x = (cupy.random.random((rows_n, cols_n)) * 2 - 1).astype(dtypes[dname])
            for op in args.ops.split(","):
                for axis in (0, 1):
                    if op == "sum":
                        fn = lambda: x.sum(axis=axis)  # noqa: E731
                    else:
                        fn = lambda: x.max(axis=axis)  # noqa: E731
                    samples = time_us(fn, lambda: scratch.fill(1), args.repeats)
                    rows.append(row("cupy " + cupy.__version__, dname, op, rows_n, cols_n, axis, n, samples))
            del x
    cupy.get_default_memory_pool().free_all_blocks()
    return rows


def row(lib, dtype, op, rows_n, cols_n, axis, n, samples):
    med = statistics.median(samples)
    nbytes = n * SIZES[dtype]
    return {"impl": lib, "dtype": dtype, "op": op, "rows": rows_n, "cols": cols_n, "axis": axis,
            "bytes": nbytes, "us_median": med, "us_min": min(samples), "us_max": max(samples),
            "gb_per_s": nbytes / med / 1e3, "repeats": len(samples), "l2": "flushed"}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shapes", default=SHAPES)
    p.add_argument("--dtypes", default=DTYPES)
    p.add_argument("--ops", default=OPS)
    p.add_argument("--repeats", type=int, default=20)
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
    rows = torch_rows(args, shapes) + cupy_rows(args, shapes)
    print(f"{'impl':<18} {'dtype':<7} {'op':<4} {'shape':>16} {'axis':>4} {'us':>10} {'GB/s':>8}  min..max us")
    for r in rows:
        shape = f"{r['rows']}x{r['cols']}"
        print(f"{r['impl']:<18} {r['dtype']:<7} {r['op']:<4} {shape:>16} {r['axis']:>4} {r['us_median']:>10.1f} "
              f"{r['gb_per_s']:>8.0f}  {r['us_min']:.1f}..{r['us_max']:.1f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows}, f, indent=1)
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())
