"""Runs one coverage-guided fuzz target (atheris, libFuzzer's engine) for a bounded time.

    python tests/fuzz/run.py <name> --seconds N [--corpus DIR] [--random]

Targets are tests/fuzz/fuzz_<name>.py. Each defines
  - test_one_input(data: bytes) -> None: runs one input; raises only for a real bug
    (an exception, a wrong result or a crash of the process is a finding);
  - seed_corpus() -> list[bytes]: inputs to start from.
The corpus directory (a fresh temporary one unless --corpus is given) is seeded with
seed_corpus() when empty and grows with the inputs that reach new coverage; findings
are written to tests/fuzz/artifacts/ (crash-*, timeout-*, oom-*) and make the command
exit non-zero. The target's Python code is instrumented for coverage; opdispatch's C++
is not (see tests/fuzz/README.md). atheris is in the test extras (pip install ".[test]").
"""
from __future__ import annotations

import argparse
import hashlib
import importlib
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def targets() -> list[str]:
    return sorted(p.stem[len("fuzz_"):] for p in HERE.glob("fuzz_*.py"))


def run_random(name: str, seconds: int) -> None:
    """Runs target ``name``'s seeds, then random inputs (64 to 4096 bytes, from a seed printed first) for
    ``seconds``; an input that raises is written to tests/fuzz/artifacts/ and ends the run with exit status 1
    (a crash ends it anyway). Coverage-free: what a sanitizer build can run (see tests/fuzz/README.md)."""
    import random
    import time
    import traceback

    sys.path.insert(0, str(HERE))
    target = importlib.import_module(f"fuzz_{name}")
    seed = random.SystemRandom().randrange(2**32)
    rng = random.Random(seed)
    print(f"random inputs to {name} for {seconds} s (seed {seed})", flush=True)
    inputs = iter(target.seed_corpus())
    runs = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        data = next(inputs, None)
        if data is None:
            data = rng.randbytes(rng.randrange(64, 4097))
        try:
            target.test_one_input(data)
        except BaseException:
            artifacts = HERE / "artifacts"
            artifacts.mkdir(exist_ok=True)
            path = artifacts / f"crash-{hashlib.sha1(data).hexdigest()}"
            path.write_bytes(data)
            traceback.print_exc()
            print(f"finding after {runs} inputs: written to {path}", flush=True)
            sys.exit(1)
        runs += 1
    print(f"done: {runs} inputs, no finding", flush=True)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("name", choices=targets(), help="the target: tests/fuzz/fuzz_<name>.py")
    parser.add_argument("--seconds", type=int, default=60, help="how long to fuzz (default 60)")
    parser.add_argument("--corpus", type=Path, help="corpus directory to use and grow (default: a temporary one)")
    parser.add_argument("--random", action="store_true",
                        help="no coverage guidance: run the seeds, then random inputs (for sanitizer builds, where "
                             "the preloaded sanitizer runtime takes libFuzzer's coverage hooks)")
    args = parser.parse_args(argv)
    if args.random:
        run_random(args.name, args.seconds)
        return

    import atheris

    sys.path.insert(0, str(HERE))
    with atheris.instrument_imports(include=[f"fuzz_{args.name}"]):
        target = importlib.import_module(f"fuzz_{args.name}")

    corpus = args.corpus or Path(tempfile.mkdtemp(prefix=f"fuzz_{args.name}_"))
    corpus.mkdir(parents=True, exist_ok=True)
    if not any(corpus.iterdir()):
        for seed in target.seed_corpus():
            (corpus / hashlib.sha1(seed).hexdigest()).write_bytes(seed)
    artifacts = HERE / "artifacts"
    artifacts.mkdir(exist_ok=True)
    print(f"fuzzing {args.name} for {args.seconds} s; corpus {corpus} ({sum(1 for _ in corpus.iterdir())} "
          f"inputs); findings go to {artifacts}/", flush=True)
    atheris.Setup(
        [sys.argv[0], str(corpus), f"-max_total_time={args.seconds}", "-timeout=30", "-rss_limit_mb=4096",
         "-max_len=4096", "-print_final_stats=1", f"-artifact_prefix={artifacts}/"],
        target.test_one_input,
    )
    atheris.Fuzz()


if __name__ == "__main__":
    main(sys.argv[1:])
