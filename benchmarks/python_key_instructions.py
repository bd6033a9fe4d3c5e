"""Instructions per call of the two Python-key rows of run.py (case 8: an
identity TorchDispatchMode and an identity wrapper subclass), for opdispatch
and PyTorch, counted by valgrind's callgrind: unlike the timings of run.py they
do not move with the machine's load, so a change to the Python-key path can be
compared with its base in any minute.

    python benchmarks/python_key_instructions.py [--calls N] [--torch-python PATH]

Each count is (instructions of a process making N calls - instructions of the
same process making none) / N, so imports and set-up cancel out. Both processes
make one call first, outside the count (see the warm-up in CHILD). The cases are
the ones run.py times (cases._python_key_peers). Needs valgrind; PyTorch's row
is skipped if the interpreter given cannot import torch.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Optional

HERE = Path(__file__).resolve().parent

#: Run in a child process: argv = lib ("opdispatch" | "torch"), case ("mode" | "wrapper"), calls.
CHILD = """
import sys
sys.path.insert(0, {here!r})
lib_name, case, calls = sys.argv[1], sys.argv[2], int(sys.argv[3])
from cases import CALLS_PER_STMT, _python_key_peers
if lib_name == "opdispatch":
    import numpy as np
    import opdispatch as lib
    from opdispatch.library import Library
    from opdispatch.utils._python_dispatch import TorchDispatchMode
    x = lib.from_numpy(np.ones(3, dtype=np.float32))
    disabled = None
else:
    import torch as lib
    from torch.library import Library
    from torch.utils._python_dispatch import TorchDispatchMode
    x = lib.ones(3)
    disabled = lib._C._disabled_torch_function_impl
keep = Library("bench", "DEF")
keep.define("ident(Tensor x) -> Tensor")
keep.impl("ident", lambda x: x, "CPU")
op = lib.ops.bench.ident.default
mode, Wrapper = _python_key_peers(lib, TorchDispatchMode, disabled)
w = Wrapper(x)
# Warm-up, made by the N-call and the 0-call process alike: PyTorch's first
# call through a wrapper subclass sets up torch internals lazily (~2e9
# instructions), which (N - 0) / N would otherwise spread over the N calls.
if case == "wrapper":
    op(w)
    for _ in range(calls):
        op(w)
else:
    with mode:
        op(x)
    for _ in range(calls // CALLS_PER_STMT):
        with mode:
            for _ in range(CALLS_PER_STMT):
                op(x)
"""


#: callgrind counts every thread: NumPy's OpenBLAS and PyTorch's OpenMP pools spin for a varying
#: while (two runs of this script once differed by ~6k instructions per call in each case, at
#: --calls 2000), so the children run with one thread each and a fixed string hash.
CHILD_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "PYTHONHASHSEED": "0"}


def count_instructions(python: str, code: str, argv: list[str]) -> int:
    """Instructions callgrind counts for ``python -c code *argv`` (with CHILD_ENV)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        proc = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", python, "-c", code,
                               *argv], capture_output=True, text=True, env={**os.environ, **CHILD_ENV})
        if proc.returncode != 0:
            raise RuntimeError(f"{python} {' '.join(argv)}: exit {proc.returncode}\n{proc.stderr[-2000:]}")
        match = re.search(r"Collected : (\d+)", proc.stderr)
        if match is None:
            raise RuntimeError(f"no callgrind total in:\n{proc.stderr[-2000:]}")
        return int(match.group(1))


def _instructions(python: str, lib: str, case: str, calls: int) -> int:
    return count_instructions(python, CHILD.format(here=str(HERE)), [lib, case, str(calls)])


def per_call(python: str, lib: str, case: str, calls: int) -> float:
    """Instructions per call of `case` for `lib`, run by the interpreter `python`."""
    return (_instructions(python, lib, case, calls) - _instructions(python, lib, case, 0)) / calls


def _imports_torch(python: str) -> bool:
    return subprocess.run([python, "-c", "import torch"], capture_output=True).returncode == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5000, help="calls per count (a multiple of 100)")
    parser.add_argument("--torch-python", default=sys.executable, help="the interpreter that imports torch")
    args = parser.parse_args()
    print(f"{'case':<32}  {'opdispatch':>12}  {'PyTorch':>12}  {'ours fewer':>10}")
    for case in ("mode", "wrapper"):
        ours = per_call(sys.executable, "opdispatch", case, args.calls)
        theirs: Optional[float] = None
        if _imports_torch(args.torch_python):
            theirs = per_call(args.torch_python, "torch", case, args.calls)
        ratio = f"{theirs / ours:.2f}x" if theirs else "-"
        name = f"8. identity {'TorchDispatchMode' if case == 'mode' else 'wrapper subclass'}"
        print(f"{name:<32}  {ours:>12.0f}  {(f'{theirs:.0f}' if theirs else '-'):>12}  {ratio:>10}")


if __name__ == "__main__":
    main()
