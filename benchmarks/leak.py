"""Leak benchmark: resident-memory growth and time per define + impl + call +
destroy cycle of the Python Library API, over many cycles, with the same
operator name every cycle and with a new name every cycle. Prints one JSON
object (or a table with --table).

A process that loads and unloads libraries for ever must stay flat: RSS
growth < 200 bytes per cycle, and a unique-name cycle no slower than a
same-name one (issue 9, item 7).

Method. Each measurement runs in a fresh process (``--one same|unique``):
``WARMUP`` cycles first (discarded: caches, allocator pools and the
interpreter warm up), then ``--cycles`` cycles
timed in process CPU time (time.process_time, which other jobs on a shared
machine disturb less than wall time), RSS read before and after. So every
process runs the full count of one kind, and a cost that grows with the
operators defined before (a registry walked per definition, an entry kept per
cycle) shows in that kind's time and RSS as it would in a long-running
program: running both kinds in one process would let the unique names slow
the same-name cycles too and hide the growth in the ratio.

The processes come in ``--rounds`` rounds; each round runs one process of
each kind back to back, the order alternating from round to round (same
first, then unique first), so a change of machine load hits both kinds of a
round alike. The ratio unique / same is taken per round, and the reported
ratio is the median of the rounds' ratios (as run.py does for call rows);
the per-kind numbers are the medians over the rounds.

The two kinds differ only in whether the name is new: both build their names
the same way, of the same length (a namespace of 10 characters, an operator
name of 9), so a longer string or its formatting does not count as the cost
of a fresh operator.

Usage: python benchmarks/leak.py [--cycles N] [--rounds R] [--table]
"""
from __future__ import annotations

import argparse
import gc
import json
import statistics
import subprocess
import sys
import time
from typing import Any

#: Cycles run (and discarded) first, so that caches and allocator pools are warm.
#: (A same-name cycle costs the same from the first cycle on: callgrind counted
#: 165.8k instructions per cycle over cycles 1-100, 162.6k over 101-300, 163.0k
#: over 1001-2000, 164.5k and 163.8k in cycles 1-500 and 4001-4500, at 0467d2f.)
WARMUP = 2000
KINDS = ("same", "unique")


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def measure(cycles: int, unique: bool) -> dict[str, float]:
    """RSS growth (bytes) and CPU time (us) per cycle over ``cycles`` cycles, in this process."""
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


def measure_in_fresh_process(cycles: int, kind: str) -> dict[str, float]:
    out = subprocess.run([sys.executable, __file__, "--one", kind, "--cycles", str(cycles)], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def run(cycles: int, rounds: int) -> dict[str, Any]:
    """Per kind, the medians over ``rounds`` fresh processes of RSS growth and
    CPU time per cycle; the median of the rounds' unique / same time ratios."""
    results: dict[str, list[dict[str, float]]] = {kind: [] for kind in KINDS}
    ratios = []
    for r in range(rounds):
        order = KINDS if r % 2 == 0 else KINDS[::-1]
        this_round = {kind: measure_in_fresh_process(cycles, kind) for kind in order}
        for kind in KINDS:
            results[kind].append(this_round[kind])
        ratios.append(this_round["unique"]["us_per_cycle"] / this_round["same"]["us_per_cycle"])

    def medians(kind: str) -> dict[str, float]:
        return {key: statistics.median(m[key] for m in results[kind]) for key in ("bytes_per_cycle", "us_per_cycle")}

    return {"cycles": cycles, "rounds": rounds, "same_name": medians("same"), "unique_name": medians("unique"),
            "unique_over_same_time": statistics.median(ratios), "round_ratios": ratios}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=100000, help="timed cycles per process")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of one fresh process per kind")
    parser.add_argument("--one", choices=KINDS, help="measure one kind in this process (what each round runs)")
    parser.add_argument("--table", action="store_true", help="print a table instead of JSON")
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.cycles, unique=args.one == "unique")))
        return
    result = run(args.cycles, args.rounds)
    if not args.table:
        print(json.dumps(result))
        return
    print(f"{args.cycles} define + impl + call + destroy cycles per process, {args.rounds} rounds (medians)")
    for kind in ("same_name", "unique_name"):
        r = result[kind]
        print(f"  {kind:<12} {r['bytes_per_cycle']:8.1f} B/cycle {r['us_per_cycle']:8.2f} us/cycle")
    rounds = ", ".join(f"{x:.3f}" for x in result["round_ratios"])
    print(f"  unique / same time per cycle: {result['unique_over_same_time']:.3f}x (rounds: {rounds})")


if __name__ == "__main__":
    main()
