"""Reference outputs of numpy's legacy generator for the tests of package data/nprand.

Usage: numpy_permutation.py SEED:N [SEED:N ...]
Prints one JSON object: {"numpy": VERSION, "cases": [{"seed": S, "n": N, "permutation": [...]}, ...]},
where permutation is numpy.random.RandomState(S).permutation(N).

numpy_permutation.py --golden writes the committed reference file (golden.json) to standard output: full
permutations for small n, and for large n the SHA-256 of the permutation as little-endian int64 values with
its first and last 50 entries; also raw 32-bit outputs, tomaxint outputs and an array-seeded stream.
"""
import hashlib
import json
import sys

import numpy as np

FULL = [(0, 0), (0, 1), (0, 2), (0, 3), (0, 5), (0, 10), (0, 17), (0, 100), (0, 1000), (1, 10), (1, 257),
        (42, 100), (4294967295, 64), (123456789, 33)]
HASHED = [(0, 8156), (0, 10000), (1, 8156), (0, 65537), (7, 100000)]


def perm(seed, n):
    return np.random.RandomState(seed).permutation(n)


def golden():
    out = {"numpy": np.__version__, "full": [], "hashed": [], "uint32": [], "tomaxint": [], "by_array": []}
    for s, n in FULL:
        out["full"].append({"seed": s, "n": n, "permutation": perm(s, n).tolist()})
    for s, n in HASHED:
        p = perm(s, n)
        out["hashed"].append({"seed": s, "n": n, "sha256": hashlib.sha256(p.astype("<i8").tobytes()).hexdigest(),
                              "head": p[:50].tolist(), "tail": p[-50:].tolist()})
    for s in (0, 5489, 4294967295):
        # randint over the full 32-bit range returns the raw outputs, one per value.
        v = np.random.RandomState(s).randint(0, 2**32, size=1300, dtype=np.uint32)
        out["uint32"].append({"seed": s, "first": v[:20].tolist(), "at_1248": v[1248:1252].tolist()})
    for s in (0, 3):
        out["tomaxint"].append({"seed": s, "values": np.random.RandomState(s).tomaxint(5).tolist()})
    key = [0x123, 0x234, 0x345, 0x456]
    v = np.random.RandomState(key).randint(0, 2**32, size=10, dtype=np.uint32)
    out["by_array"].append({"key": key, "first": v.tolist()})
    return out


def main(argv):
    if argv == ["--golden"]:
        json.dump(golden(), sys.stdout, separators=(",", ":"))
        sys.stdout.write("\n")
        return 0
    cases = []
    for a in argv:
        s, n = a.split(":")
        cases.append({"seed": int(s), "n": int(n), "permutation": perm(int(s), int(n)).tolist()})
    json.dump({"numpy": np.__version__, "cases": cases}, sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
