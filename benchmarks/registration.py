"""Registration cost, run in a fresh process: N operators made by define +
impl, or by custom_op (time and resident-memory growth per operator). Prints
one JSON object: ``ns_per_op``, the registering thread's CPU time
(time.thread_time: registration never waits, so on a shared machine this is
what it costs, while the wall time grows with the load), ``wall_ns_per_op``
and ``bytes_per_op``.

An editable opdispatch is measured as a wheel lays it out (staged as
import_time.py stages it, run with ``-S``): the editable import hook leaves
free heap behind that registrations then fill without growing the resident
set, which showed ~1.4 KiB per operator where a wheel install grows by ~2.3.

Usage: python registration.py {opdispatch|torch} [N] [define_impl|custom_op]
"""
# (No `from __future__ import annotations`: the custom_op bodies' annotations
# name a local, which only evaluated annotations can carry to infer_schema.)
import json
import os
import site
import subprocess
import sys
import time

import import_time


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def _rerun_as_wheel() -> bool:
    """Runs this script again on opdispatch staged as a wheel lays it out, if
    it is an editable install (see the module docstring); whether it did."""
    if sys.flags.no_site:  # already the staged run
        return False
    with import_time._wheel_layout("opdispatch") as staged:
        if not staged:
            return False
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([*staged, *site.getsitepackages()])}
        out = subprocess.run([sys.executable, "-S", __file__, *sys.argv[1:]], env=env, check=True,
                             capture_output=True, text=True).stdout
    print(out, end="")
    return True


def main() -> None:
    which = sys.argv[1]
    if which != "torch" and _rerun_as_wheel():
        return
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    kind = sys.argv[3] if len(sys.argv) > 3 else "define_impl"
    if which == "torch":
        import torch

        Library, custom_op, Tensor = torch.library.Library, torch.library.custom_op, torch.Tensor
    else:
        import opdispatch
        from opdispatch.library import Library, custom_op

        Tensor = opdispatch.Tensor

    def kernel(x):
        return x

    def register(i: int) -> None:
        if kind == "custom_op":
            def body(x: Tensor) -> Tensor:
                return x.clone()

            custom_op(f"bench_reg::op{i}", body, mutates_args=())
        else:
            lib.define(f"op{i}(Tensor x) -> Tensor")
            lib.impl(f"op{i}", kernel, "CPU")

    lib = Library("bench_reg", "FRAGMENT")
    lib.define("warmup(Tensor x) -> Tensor")
    lib.impl("warmup", kernel, "CPU")
    register(n)  # warm up
    before = rss_bytes()
    start, wall_start = time.thread_time(), time.perf_counter()
    for i in range(n):
        register(i)
    elapsed, wall = time.thread_time() - start, time.perf_counter() - wall_start
    after = rss_bytes()
    print(json.dumps({"ns_per_op": elapsed / n * 1e9, "wall_ns_per_op": wall / n * 1e9,
                      "bytes_per_op": (after - before) / n}))


if __name__ == "__main__":
    main()
