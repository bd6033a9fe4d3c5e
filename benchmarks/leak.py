"""Leak benchmark: resident-memory growth and time per define + impl + call +
destroy cycle of the Python Library API, over many cycles, with the same
operator name every cycle and with a new name every cycle. Run in a fresh
process; prints one JSON object (or a table with --table).

Time is the process's CPU time (time.process_time), which a machine shared
with other jobs disturbs less than wall time. A process that loads and unloads libraries for ever must stay flat: RSS
growth < 200 bytes per cycle, and a unique-name cycle no slower than a
same-name one (issue 9, item 7).

The two kinds differ only in whether the name is new: both build their names
the same way, of the same length (a namespace of 10 characters, an operator
name of 9), so a longer string or its formatting does not count as the cost
of a fresh operator.

Usage: python benchmarks/leak.py [--cycles N] [--table]
"""
from __future__ import annotations

import argparse
import gc
import json
import time
from typing import Any

#: Cycles run (and discarded) first, so that caches and allocator pools are warm.
WARMUP = 2000


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def measure(cycles: int, unique: bool) -> dict[str, float]:
    """RSS growth (bytes) and CPU time (us) per cycle over ``cycles`` cycles."""
    import opdispatch
    from opdispatch.library import Library

    x = opdispatch.ones(2)
    namespace = "leak_fresh" if unique else "leak_fixed"
    ns = getattr(opdispatch.ops, namespace)

    def kernel(t):
        return t

    def cycle(i: int) -> None:
        name = f"op{i if unique else 0:07d}"
        lib = Library(namespace, "DEF")
        lib.define(f"{name}(Tensor x) -> Tensor")
        lib.impl(name, kernel, "CPU")
        getattr(ns, name).default(x)
        lib._destroy()

    for i in range(WARMUP):
        cycle(cycles + i)
    gc.collect()
    before = rss_bytes()
    start = time.process_time()
    for i in range(cycles):
        cycle(i)
    elapsed = time.process_time() - start
    gc.collect()
    after = rss_bytes()
    return {"bytes_per_cycle": (after - before) / cycles, "us_per_cycle": elapsed / cycles * 1e6}


def run(cycles: int) -> dict[str, Any]:
    same = measure(cycles, unique=False)
    unique = measure(cycles, unique=True)
    return {"cycles": cycles, "same_name": same, "unique_name": unique,
            "unique_over_same_time": unique["us_per_cycle"] / same["us_per_cycle"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=100000)
    parser.add_argument("--table", action="store_true", help="print a table instead of JSON")
    args = parser.parse_args()
    result = run(args.cycles)
    if not args.table:
        print(json.dumps(result))
        return
    print(f"{args.cycles} define + impl + call + destroy cycles")
    for kind in ("same_name", "unique_name"):
        r = result[kind]
        print(f"  {kind:<12} {r['bytes_per_cycle']:8.1f} B/cycle {r['us_per_cycle']:8.2f} us/cycle")
    print(f"  unique / same time per cycle: {result['unique_over_same_time']:.2f}x")


if __name__ == "__main__":
    main()
