"""Registration cost, run in a fresh process: define + impl of N operators
(time and resident-memory growth per operator). Prints one JSON object.

Usage: python registration.py {opdispatch|torch} [N]
"""
from __future__ import annotations

import json
import sys
import time


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def main() -> None:
    which = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    if which == "torch":
        import torch

        Library = torch.library.Library
    else:
        import opdispatch  # noqa: F401
        from opdispatch.library import Library

    def kernel(x):
        return x

    lib = Library("bench_reg", "DEF")
    lib.define("warmup(Tensor x) -> Tensor")
    lib.impl("warmup", kernel, "CPU")
    before = rss_bytes()
    start = time.perf_counter()
    for i in range(n):
        lib.define(f"op{i}(Tensor x) -> Tensor")
        lib.impl(f"op{i}", kernel, "CPU")
    elapsed = time.perf_counter() - start
    after = rss_bytes()
    print(json.dumps({"ns_per_op": elapsed / n * 1e9, "bytes_per_op": (after - before) / n}))


if __name__ == "__main__":
    main()
