"""Instructions per main-job training step, and per ``loss.backward()`` of
its graph alone (forward excluded), for opdispatch, counted by valgrind's
callgrind (issue 33): unlike run.py's timings they do not move with the
machine's load, so a change to the autograd path can be compared with its
base in any minute.

    python benchmarks/main_job_instructions.py [--steps N]

Each count is (instructions of a process running N - instructions of the
same process running none) / N, so imports and set-up cancel out: "step"
runs N steps of main_job.py's opdispatch step after one outside the count;
"backward" records the same N + 1 graphs in both processes and runs backward
through N + 1 of them in one and through 1 in the other.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from python_key_instructions import count_instructions

HERE = Path(__file__).resolve().parent

#: Run in a child process: argv = case ("step" | "backward"), n (counted), total (N of the run).
CHILD = """
import sys
sys.path.insert(0, {here!r})
case, n, total = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
import main_job
if case == "step":
    step = main_job.opdispatch_step()
    for _ in range(n + 1):
        step()
else:
    import opdispatch
    from opdispatch.demo import model
    opdispatch.manual_seed(0)
    mlp = model.MLP.create(main_job.N_IN, main_job.N_HIDDEN, main_job.N_CLASSES, opdispatch.Tensor.relu)
    x, labels = (opdispatch.from_numpy(a) for a in main_job._data())
    losses = [model.cross_entropy(mlp(x), labels) for _ in range(total + 1)]
    for loss in losses[:n + 1]:
        loss.backward()
"""


def per_step(case: str, steps: int) -> float:
    """Instructions per step of ``case`` ("step" or "backward")."""
    code = CHILD.format(here=str(HERE))
    counted = count_instructions(sys.executable, code, [case, str(steps), str(steps)])
    base = count_instructions(sys.executable, code, [case, "0", str(steps)])
    return (counted - base) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200, help="steps per count")
    args = parser.parse_args()
    for case, name in (("step", "10. main job: training step"), ("backward", "10. main job: loss.backward() alone")):
        print(f"{name:<40}  {per_step(case, args.steps):>12.0f} instructions")


if __name__ == "__main__":
    main()
