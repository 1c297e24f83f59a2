#!/usr/bin/env python3
"""NumPy (and math.fsum) as an oracle for reducelab's operations.

Generates edge cases for every element type x operation (empty input, integer overflow, mean
rounding, signed zeros, NaN and infinities, the largest finite values, one element, sizes around
the library's tiles, random data), runs `reducelab reduce` on each through the CPU backend and
the library's kernel on the SIMT emulator, and compares with NumPy. Where reducelab deliberately
differs from NumPy, the rule is one function below, named for it.

usage: oracle_test.py REDUCELAB TMPDIR        exit 0: all cases agree; 1: a case differs;
                                               77: NumPy is missing (skipped, says why)
"""
import json
import math
import os
import subprocess
import sys
from fractions import Fraction

try:
    import numpy as np
except ImportError:
    print("oracle: skipped: NumPy is not installed (Debian: python3-numpy, see scripts/deps)")
    sys.exit(77)

OPS = ["sum", "prod", "min", "max", "mean", "argmin", "argmax"]
INT_TYPES = {"int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
             "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64}
FLOAT_TYPES = {"half": np.float16, "bf16": None, "float": np.float32, "double": np.float64}


# --- the rules where reducelab deliberately differs from NumPy ------------------------------

def rule_wider_result_type(dtype, op):
    """Integer sums and products are returned in 64 bits (signed or unsigned as the input), and
    wrap modulo 2^64; half, bf16 and float sums and products are returned as float; means are
    double. NumPy keeps int8..int32 sums in the platform's int64 too, but float16 sums in
    float16."""
    if op in ("sum", "prod"):
        if dtype in INT_TYPES:
            return "int64" if dtype.startswith("int") else "uint64"
        return "double" if dtype == "double" else "float"
    if op == "mean":
        return "double"
    return dtype


def wrap64(v, signed):
    v %= 1 << 64
    if signed and v >= 1 << 63:
        v -= 1 << 64
    return v


def rule_signed_zero_order(values, op, numpy_index):
    """-0 orders below +0 for min, max, argmin and argmax alike (NumPy treats them as equal and
    returns whichever comes first). So min of zeros is -0 when there is one, max is +0 when there
    is one, and argmin/argmax name the first such zero: the element min/max return."""
    best = values[numpy_index]
    if best != 0 or math.isnan(best):
        return numpy_index
    zeros = [i for i, v in enumerate(values) if v == 0]
    want_negative = op in ("min", "argmin")
    signed = [i for i in zeros if math.copysign(1.0, values[i]) < 0] if want_negative else \
             [i for i in zeros if math.copysign(1.0, values[i]) > 0]
    return signed[0] if signed else zeros[0]


CANONICAL_NAN_BITS = {"half": "0x7e00", "bf16": "0x7fc0", "float": "0x7fc00000", "double": "0x7ff8000000000000"}


def rule_canonical_nan(dtype, out):
    """Any NaN in the input makes min/max NaN, as in NumPy, but the NaN reported is the canonical
    quiet NaN (positive, no payload) rather than whichever of the input's NaNs NumPy returns."""
    want = CANONICAL_NAN_BITS[dtype]
    return None if out.get("bits") == want else f"want the canonical NaN {want}, got {out.get('bits')}"


def rule_empty_input(op):
    """n == 0: sum is 0, prod is 1, mean is NaN (NumPy: 0, 1, NaN with a warning); min, max,
    argmin and argmax have no value: reducelab reports Errc::empty_input and the CLI exits 1
    (NumPy raises ValueError)."""
    return {"sum": 0, "prod": 1, "mean": math.nan}.get(op)


def correctly_rounded(q, result_type):
    """The exact rational q rounded once to nearest, ties to even, as float32 or float64 (a
    Python float holding that value); overflow gives an infinity."""
    if result_type == "double":
        try:
            return float(q)  # int / int true division: correctly rounded
        except OverflowError:
            return math.inf if q > 0 else -math.inf
    f32max = Fraction(float(np.finfo(np.float32).max))
    if abs(q) >= f32max + Fraction(2) ** 103:  # at or past the midpoint to 2^128: ties to even -> inf
        return math.inf if q > 0 else -math.inf
    try:
        guess = np.float32(float(q))
    except OverflowError:
        guess = np.float32(math.copysign(float(np.finfo(np.float32).max), q))
    best = None
    with np.errstate(over="ignore"):
        neighbours = (np.nextafter(guess, np.float32(-np.inf)), guess, np.nextafter(guess, np.float32(np.inf)))
    for c in neighbours:
        if not np.isfinite(c):
            continue
        d = abs(Fraction(float(c)) - q)
        even = int(np.array(c, dtype=np.float32).view(np.uint32)) & 1 == 0
        if best is None or d < best[0] or (d == best[0] and even):
            best = (d, float(c))
    return best[1]


def rule_exact_float_sum(got, values, op, result_type):
    """Floating-point sums and means are exact: the real sum (a Fraction) rounded once to the
    result type, the mean the exact sum / n rounded once to double. NumPy's pairwise sum (and
    math.fsum, rounded to double and then to float) can differ in the last bits; this does not.
    NaN anywhere, or both infinities, gives NaN; otherwise an infinity wins; an exact zero is +0
    unless every element is -0."""
    n = len(values)
    if any(math.isnan(v) for v in values):
        return math.isnan(got)
    if any(math.isinf(v) for v in values):
        signs = {math.copysign(1, v) for v in values if math.isinf(v)}
        return math.isnan(got) if len(signs) == 2 else got == math.copysign(math.inf, signs.pop())
    q = sum((Fraction(v) for v in values), Fraction(0))
    if op == "mean":
        q = q / n
        rtype = "double"
    else:
        rtype = result_type
    want = correctly_rounded(q, rtype)
    if want == 0:
        all_negative_zero = all(v == 0 and math.copysign(1, v) < 0 for v in values)
        return got == 0 and (math.copysign(1, got) < 0) == all_negative_zero
    return got == want


def float_sum_or_mean_close(got, values, op, result_type):
    """Floating-point sums and means: exact (rule_exact_float_sum). Products: within a tolerance
    of the exact product, since their order of combination differs from NumPy's."""
    if op in ("sum", "mean"):
        return rule_exact_float_sum(got, values, op, result_type)
    if any(math.isnan(v) for v in values):
        return math.isnan(got)
    # prod
    if any(math.isinf(v) or math.isnan(v) for v in values):
        return True  # covered by the NaN/inf cases of sums; products of infinities are IEEE's
    if any(v == 0 for v in values):
        return got == 0
    magnitude = math.fsum(math.log2(abs(v)) for v in values)
    sign = -1 if sum(v < 0 for v in values) % 2 else 1
    limit = 128 if result_type == "float" else 1024
    if magnitude > limit + 1:
        return got == math.copysign(math.inf, sign)
    if magnitude < -1000:
        return abs(got) < 1e-300 if result_type == "double" else got == 0
    num, shift = 1, 0
    for v in values:  # exact: the product of the integer ratios (denominators are powers of 2)
        a, b = v.as_integer_ratio()
        num *= a
        shift += b.bit_length() - 1
    want = float(Fraction(num, 1 << shift))
    if result_type == "float" and abs(want) > float(np.finfo(np.float32).max):
        return math.isinf(got)
    return math.isclose(got, want, rel_tol=1e-5 if result_type == "float" else 1e-12, abs_tol=1e-300)


# --- inputs ---------------------------------------------------------------------------------

def bf16_round(a):
    """float32 values rounded to bfloat16 (nearest, ties to even), as float32 and as raw bits."""
    bits = np.asarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    nan = np.isnan(np.asarray(a, dtype=np.float32))
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    rounded[nan] = 0x7FC0
    return (rounded.astype(np.uint32) << 16).view(np.float32), rounded


def cases_for(dtype, rng):
    """(name, list of Python numbers) for one element type."""
    out = [("empty", []), ("one", [5]), ("one-negative" if dtype[0] != "u" else "one-max", [-3 if dtype[0] != "u" else 255])]
    if dtype in INT_TYPES:
        info = np.iinfo(INT_TYPES[dtype])
        lo, hi = int(info.min), int(info.max)
        out += [("extremes", [lo, hi, lo, hi, 0]),
                ("overflow", [hi] * 1000 + [lo // 2] * 7),
                ("all-max", [hi] * 70001),
                ("all-min", [lo] * 3001)]
        if dtype == "int64":
            p53 = 1 << 53
            out += [("mean-rounding", [p53 + 1, p53 + 2, 3]), ("mean-wrap", [1 << 62, 1 << 62])]
        if dtype == "uint64":
            out += [("mean-wrap", [1 << 63, 1 << 63]), ("sticky", [(1 << 54) + 2, 1])]
        for n in (31, 257, 8193, 20011):
            out.append((f"random-{n}", [int(v) for v in rng.integers(lo, hi, size=n, endpoint=True, dtype=np.int64 if lo < 0 else np.uint64)]))
        out.append(("small-prod", [int(v) for v in rng.integers(1, 3, size=40)]))
    else:
        big = {"half": 65504.0, "bf16": 3.3895313892515355e38, "float": float(np.finfo(np.float32).max),
               "double": sys.float_info.max}[dtype]
        nan, inf = math.nan, math.inf
        out += [("signed-zeros-up", [-0.0, 0.0]), ("signed-zeros-down", [0.0, -0.0]),
                ("zeros-mixed", [0.0, 0.0, -0.0, 0.0, -0.0]), ("negative-zeros", [-0.0, -0.0]),
                ("nan-first", [nan, 1.0, -2.0]), ("nan-later", [1.0, -2.0, nan, 3.0, nan]),
                ("infinities", [1.0, inf, -5.0]), ("both-infinities", [inf, -inf, 2.0]),
                ("largest", [big, big]), ("largest-and-negative", [big, -big, big]),
                ("ties", [3.0, 1.0, 3.0, 1.0]), ("negative-nan", [2.0, -nan, 1.0])]
        for n in (33, 1000, 8195, 20011):
            out.append((f"random-{n}", [float(v) for v in rng.standard_normal(n) * 100]))
        out.append(("near-one-prod", [float(v) for v in 1 + rng.standard_normal(50) / 64]))
        z = [0.0] * 9000
        z[8999] = -0.0
        z[4100] = -0.0
        out.append(("zeros-far-apart", z))
    return out


def as_array(dtype, values):
    """The file's array, and the values as the library sees them (rounded to the type)."""
    if dtype == "bf16":
        f32, bits = bf16_round(np.array(values, dtype=np.float64).astype(np.float32))
        return bits, [float(v) for v in f32]
    if dtype in INT_TYPES:
        a = np.array(values, dtype=object).astype(INT_TYPES[dtype])
        return a, [int(v) for v in a]
    a = np.array(values, dtype=np.float64).astype(FLOAT_TYPES[dtype])
    return a, [float(v) for v in a]


# --- expected values -------------------------------------------------------------------------

def parse_value(text, result_type):
    if isinstance(text, int):
        return text
    if result_type in ("half", "bf16", "float"):
        return float(np.float32(text))
    return float(text)


def same_float(a, b):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1, a) == math.copysign(1, b)


def check(dtype, op, values, arr, out):
    """None when reducelab's answer `out` (a JSON object) is right; else what is wrong."""
    n = len(values)
    rtype = rule_wider_result_type(dtype, op)
    if n == 0:
        want = rule_empty_input(op)
        if want is None:
            return None if "empty input" in out.get("error", "") else f"want empty_input, got {out}"
        got = parse_value(out["value"], rtype)
        return None if (math.isnan(want) and math.isnan(got)) or got == want else f"want {want}, got {got}"
    if "error" in out:
        return f"unexpected error {out['error']}"
    got = parse_value(out["value"], rtype)
    integer = dtype in INT_TYPES
    if op in ("sum", "prod"):
        if integer:
            exact = sum(values)
            if op == "prod":  # modulo 2^64 as it goes: the full product can have millions of bits
                exact = 1
                for v in values:
                    exact = exact * v % (1 << 64)
            want = wrap64(exact, rtype == "int64")
            return None if got == want else f"want {want}, got {got}"
        return None if float_sum_or_mean_close(got, values, op, rtype) else f"got {got!r}"
    if op == "mean":
        if integer:
            want = float(Fraction(sum(values), n))  # the exact quotient, rounded once
            return None if got == want else f"want {want!r}, got {got!r}"
        return None if float_sum_or_mean_close(got, values, op, rtype) else f"got {got!r}"
    # min, max, argmin, argmax against NumPy (first NaN wins, first occurrence on ties)
    npf = {"min": np.min, "max": np.max, "argmin": np.argmin, "argmax": np.argmax}[op]
    data = np.array(values, dtype=object if integer else np.float64)
    if op.startswith("arg"):
        idx = int(npf(data)) if not integer else int(np.argmin(data) if op == "argmin" else np.argmax(data))
        if not integer:
            idx = rule_signed_zero_order(values, op, idx)
        want_value = values[idx]
        got_index = out.get("index")
        if got_index != idx:
            return f"want index {idx}, got {got_index}"
        ok = got == want_value if integer else same_float(got, float(want_value))
        return None if ok else f"want value {want_value}, got {got}"
    if integer:
        want = int(npf(data))
        return None if got == want else f"want {want}, got {got}"
    i = int(np.argmin(data) if op == "min" else np.argmax(data))
    if math.isnan(values[i]) or any(math.isnan(v) for v in values):
        return rule_canonical_nan(dtype, out)
    want = values[rule_signed_zero_order(values, op, i)]
    return None if same_float(got, want) else f"want {want!r}, got {got!r}"


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    reducelab, tmp = sys.argv[1], sys.argv[2]
    os.makedirs(tmp, exist_ok=True)
    rng = np.random.default_rng(20261123)
    cases = failures = 0
    for dtype in list(INT_TYPES) + list(FLOAT_TYPES):
        for name, raw in cases_for(dtype, rng):
            arr, values = as_array(dtype, raw)
            if dtype == "bf16":
                path = os.path.join(tmp, f"{dtype}-{name}.raw")
                arr.tofile(path)
                extra = ["--dtype", "bf16"]
            else:
                path = os.path.join(tmp, f"{dtype}-{name}.npy")
                np.save(path, arr)
                extra = []
            for backend in ("cpu", "simt"):
                if backend == "simt" and len(values) > 10000 and name != "zeros-far-apart":
                    continue  # the emulator is slow; the CPU backend covers the large sizes
                cmd = [reducelab, "--backend", backend, "reduce", "--input", path, "--op", ",".join(OPS),
                       "--format", "json"] + extra
                p = subprocess.run(cmd, capture_output=True, text=True)
                outs = []
                for line in p.stdout.splitlines():
                    try:
                        outs.append(json.loads(line))
                    except ValueError:
                        pass
                errors = [l for l in p.stderr.splitlines() if l.startswith("reducelab: error:")]
                for k, op in enumerate(OPS):
                    cases += 1
                    out = outs[k] if k < len(outs) and outs[k].get("op") == op else None
                    if out is None:
                        problem = f"no JSON line (exit {p.returncode}): {p.stderr.strip()}"
                    elif "error" in out and (p.returncode != 1 or not any(out["error"] in e for e in errors)):
                        problem = f"an error without exit 1 and its line on stderr: exit {p.returncode}, {out}"
                    else:
                        problem = check(dtype, op, values, arr, out)
                    if problem:
                        failures += 1
                        print(f"DIFFERS {dtype} {op} {backend} {name} (n = {len(values)}): {problem}")
                if p.returncode != (1 if any("error" in o for o in outs) else 0):
                    failures += 1
                    print(f"DIFFERS {dtype} {backend} {name}: exit {p.returncode} does not match the results")
    print(f"oracle: {cases} cases, {failures} differ from NumPy/fsum beyond the named rules")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
