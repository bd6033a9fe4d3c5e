"""Stores PyTorch 2.13's results of every OpInfo case (op_db.OPS: each
sample and its dtype and non-contiguous variants) in
tests/data/opinfo/<family>.json, which tests/test_opinfo.py compares
opdispatch with when no PyTorch venv is given. Run it from opdispatch's venv
after adding or changing samples:

    python tests/opinfo/make_references.py --torch-python /path/to/torch-venv/bin/python [--family NAME ...]

Each family's file is rewritten whole (cases no longer in op_db dropped); a
family whose samples did not change gets the same bytes again."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from op_db import OPS  # noqa: E402
from opinfo import family_names  # noqa: E402
from opinfo._cases import cases  # noqa: E402
from opinfo._references import ENV, load, run_live, write  # noqa: E402


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--torch-python", default=os.environ.get(ENV),
                        help=f"the python of a venv with PyTorch 2.13 (default: ${ENV})")
    parser.add_argument("--family", action="append", choices=["op_db", *family_names()],
                        help="only this family's file (repeatable; default: all)")
    args = parser.parse_args(argv)
    if not args.torch_python:
        parser.error(f"give --torch-python PATH (or set {ENV})")
    families = args.family or ["op_db", *family_names()]
    todo = [c for info in OPS if info.family in families for c in cases(info)]
    version, results = run_live(args.torch_python, todo)
    if not version.startswith("2.13."):
        print(f"warning: the references are PyTorch 2.13's; {args.torch_python} has PyTorch {version}",
              file=sys.stderr)
    for family in families:
        entries = {c.key: {"case": c.id, "result": r} for c, r in zip(todo, results) if c.info.family == family}
        old = load(family)["cases"]
        changed = sum(1 for k in entries if k in old and old[k]["result"] != entries[k]["result"])
        write(family, version, entries)
        print(f"{family}: {len(entries)} cases ({len(entries.keys() - old.keys())} new, "
              f"{len(old.keys() - entries.keys())} dropped, {changed} changed)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
