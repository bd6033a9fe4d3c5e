"""Operator lookup with many operators defined, run in a fresh process: the
first access of ``ops.<ns>.<op>.default`` (the packet and overload objects
made on the way) and a packet call right after a registration (the packet
rereads its overloads). Both should cost the same at any number of
operators. Prints one JSON object (ns per lookup / call, medians).

Usage: python lookup.py {opdispatch|torch} N_OPERATORS
"""
import json
import statistics
import sys
import time

SAMPLES = 200


def main() -> None:
    which, n = sys.argv[1], int(sys.argv[2])
    if which == "torch":
        import torch

        Library, ops, x = torch.library.Library, torch.ops, torch.ones(3)
    else:
        import opdispatch
        from opdispatch.library import Library

        ops, x = opdispatch.ops, opdispatch.ones(3)
    lib = Library("bench_lookup", "DEF")
    for i in range(n):
        lib.define(f"op{i}(Tensor x) -> Tensor")
    lib.impl("op0", lambda t: t, "CPU")
    namespace = ops.bench_lookup
    first_access = []
    for i in range(1, SAMPLES + 1):  # operators not looked up before
        name = f"op{i * (n // (SAMPLES + 1))}"
        start = time.perf_counter()
        getattr(namespace, name).default
        first_access.append(time.perf_counter() - start)
    packet = namespace.op0
    packet(x)
    call_after_registration = []
    for i in range(SAMPLES):
        lib.define(f"extra{i}(Tensor x) -> Tensor")
        start = time.perf_counter()
        packet(x)
        call_after_registration.append(time.perf_counter() - start)
    print(json.dumps({"first_access_ns": statistics.median(first_access) * 1e9,
                      "packet_call_after_registration_ns": statistics.median(call_after_registration) * 1e9}))


if __name__ == "__main__":
    main()
