#!/usr/bin/env python3
"""Random reducelab invocations, valid and invalid (a fixed seed, a bounded count), checking what
every invocation must do whatever its arguments:
  - it ends by exiting, never by a signal;
  - exit 0 <-> no "reducelab: error:" line on stderr; a non-zero exit <-> such a line;
  - a file named by --out/--json exists only after exit 0 (nothing half written on failure).

usage: cli_property_test.py REDUCELAB TMPDIR [COUNT]
"""
import os
import random
import subprocess
import sys

GOOD_SIZES = ["1", "33", "1000", "2^10", "1<<9", "4k"]
BAD_SIZES = ["", "0", "-1", "12x", "2^99", "abc", "1<<70", "3^4"]


def invocation(rng, tmp, i):
    """argv (after the binary) and the files it may write. Half the invocations draw only valid
    values; the other half may draw a bad one for any option."""
    valid = rng.random() < 0.5

    def choose(good, bad=()):
        return rng.choice(list(bad)) if bad and not valid and rng.random() < 0.35 else rng.choice(list(good))

    kind = rng.choice(["run", "run", "reduce", "reduce", "bench", "divergence", "explain", "list"])
    files = []
    if kind == "run":
        argv = ["--backend", "simt", "run", "--kernels",
                choose(["all", "neighbored", "interleaved,unroll8", "pmpp-simple"], ["nope", "all,all", ",", "neighbored,neighbored"]),
                "--n", choose(GOOD_SIZES, BAD_SIZES), "--block", choose(["32", "64", "128", "256"], ["96", "16", "2048", "x"]),
                "--repeats", choose(["1", "2"], ["0", "-3"]), "--seed", choose(["1", "7"], ["-1", "", "18446744073709551616"]),
                "--format", choose(["table", "json", "csv"], ["xml"]), "--no-ceiling"]
        if rng.random() < 0.3:
            argv += ["--param", choose(["0"], ["2", "5"])]
        if rng.random() < 0.3:
            argv += ["--simt-checks", choose(["on", "off"], ["maybe"])]
        if rng.random() < 0.3:
            argv += ["--simt-schedule", choose(["reverse", "random:3", "in-order"], ["random:abc", "random:", "sideways"])]
    elif kind == "reduce":
        path = os.path.join(tmp, f"in{i}.raw")
        with open(path, "wb") as f:
            f.write(os.urandom(rng.choice([0, 8, 64, 4096])))
        argv = ["--backend", choose(["cpu", "simt", "auto"], ["tpu"]), "reduce", "--input",
                choose([path], [os.path.join(tmp, "missing.npy")]), "--op",
                choose(["sum", "prod", "min", "max", "mean", "argmin", "argmax"], ["avg"]),
                "--dtype", choose(["int8", "int32", "uint64", "half", "bf16", "float", "double"], ["int7", ""]),
                "--format", choose(["text", "json"], ["xml"])]
    elif kind == "bench":
        out = os.path.join(tmp, f"bench{i}.txt")
        json_path = choose([os.path.join(tmp, f"bench{i}.json")], [out, os.path.join(tmp, "no/such/dir.json")])
        files = [out, json_path]
        argv = ["bench", "--backend", choose(["cpu"], ["simt", "tpu"]), "--sizes",
                choose(["2^10", "1000,2^12"], ["2^40", "0", "", "2^12..2^10"]), "--dtypes",
                choose(["int8", "float"], ["int7", ""]), "--ops", choose(["sum", "max"], ["avg"]),
                "--repeat", choose(["1", "2"], ["0"]), "--out", out]
        if rng.random() < 0.5:
            argv += ["--json", json_path]
        if rng.random() < 0.2:
            argv += ["--impls", choose(["reducelab"], ["", "cub"])]
    elif kind == "divergence":
        argv = ["divergence", "--extent", choose(["62x76", "100"], ["0", "0x5", "x", "5x"]),
                "--block", choose(["16x16", "32"], ["64x32", "0"])]
    elif kind == "explain":
        argv = ["explain", choose(["pmpp-simple", "neighbored"], ["nosuch", "all"]), "--n",
                choose(["256", "1000"], BAD_SIZES), "--block", choose(["128"], ["96", "16"])]
    else:
        argv = ["list", "--format", choose(["table", "json", "csv"], ["xml"])]
    return argv, files


def main():
    reducelab, tmp = sys.argv[1], sys.argv[2]
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 120
    os.makedirs(tmp, exist_ok=True)
    rng = random.Random(20261123)
    bad = 0
    exits = {}
    for i in range(count):
        argv, files = invocation(rng, tmp, i)
        for f in files:
            if os.path.exists(f):
                os.remove(f)
        p = subprocess.run([reducelab] + argv, capture_output=True, text=True, timeout=300)
        exits[p.returncode] = exits.get(p.returncode, 0) + 1
        errors = [l for l in p.stderr.splitlines() if l.startswith("reducelab: error:")]
        problem = None
        if p.returncode < 0:
            problem = f"killed by signal {-p.returncode}"
        elif p.returncode == 0 and errors:
            problem = f"exit 0 with an error line: {errors[0]}"
        elif p.returncode != 0 and not errors:
            problem = f"exit {p.returncode} without a 'reducelab: error:' line (stderr: {p.stderr.strip()[:200]!r})"
        elif p.returncode != 0 and p.returncode != 1 and p.returncode != 2:
            problem = f"exit {p.returncode}"
        elif p.returncode == 2 and any(os.path.exists(f) for f in files):
            problem = "a usage error left a file behind: " + ", ".join(f for f in files if os.path.exists(f))
        if problem:
            bad += 1
            print(f"FAILS reducelab {' '.join(repr(a) if a == '' else a for a in argv)}: {problem}")
    tally = ", ".join(f"{n} exited {rc}" for rc, n in sorted(exits.items()))
    print(f"cli property: {count} invocations ({tally}), {bad} broke a property")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
