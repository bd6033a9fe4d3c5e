"""The command line, ``python -m opdispatch <command>``:

  ops [NAMESPACE]          the registered operators and their schemas
  table NS::OP[.OVERLOAD]  an operator's registered kernels and computed dispatch table
  demo [OPTIONS]           train a small MLP on handwritten digits through the dispatcher
                           (opdispatch.demo; needs scikit-learn: pip install "opdispatch[demo]")

For ops and table, ``--load PATH`` (a shared library, e.g. a C++ extension)
and ``--import MODULE`` (a Python module that registers operators) run first,
in the order given; both can be repeated.
"""
from __future__ import annotations

import argparse
import difflib
import importlib
import re
import sys
from typing import Callable, Sequence

from . import _C
from ._ops import ops as _ops

_REGISTERED_AT = re.compile(r"registered at (.+?):(\d+)(?=\s|$)")
_CPP_SUFFIXES = (".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hh", ".cu")


def _origin(match: re.Match) -> str:
    """'registered at FILE:LINE' -> 'C++ FILE:LINE' or 'Python FILE:LINE' (by the file's suffix)."""
    file, line = match.group(1), match.group(2)
    if file.endswith((".py", ".pyx")) or file.startswith("<"):
        lang = "Python"
    elif file.endswith(_CPP_SUFFIXES):
        lang = "C++"
    else:
        return match.group(0)
    return f"{lang} {file}:{line}"


def _with_origins(text: str) -> str:
    return _REGISTERED_AT.sub(_origin, text)


def _split_name(qualified: str) -> tuple[str, str]:
    """'ns::op.overload' -> ('ns::op', 'overload'); the overload 'default' is ''."""
    ns, sep, rest = qualified.partition("::")
    op, _, overload = rest.partition(".")
    if overload == "default":
        overload = ""
    return ns + sep + op, overload


def _schema_text(qualified: str) -> str | None:
    name, overload = _split_name(qualified)
    try:
        return str(_C._dispatch_find_schema_or_throw(name, overload).schema)
    except RuntimeError:
        return None  # kernels registered without a def


def _all_ops() -> list[str]:
    return sorted(_C._dispatch_get_all_op_names())


def _preload(args: argparse.Namespace) -> int:
    """Runs the --load / --import options in order; returns an exit code (0 = fine)."""
    for kind, target in args.preload or []:
        try:
            if kind == "load":
                _ops.load_library(target)
            else:
                importlib.import_module(target)
        except Exception as e:  # report any failure of user code as a command-line error
            print(f"error: --{kind} {target} failed: {type(e).__name__}: {e}", file=sys.stderr)
            return 1
    return 0


def _cmd_ops(args: argparse.Namespace) -> int:
    names = _all_ops()
    if args.namespace:
        names = [n for n in names if n.split("::", 1)[0] == args.namespace]
        if not names:
            known = sorted({n.split("::", 1)[0] for n in _all_ops()})
            print(
                f"error: no operators in namespace {args.namespace!r}; namespaces: {', '.join(known) or '(none)'}."
                " Use --load PATH or --import MODULE to register more.",
                file=sys.stderr,
            )
            return 2
    for n in names:
        schema = _schema_text(n)
        print(schema if schema is not None else f"{n}  (no schema: kernels registered without a definition)")
    return 0


def _cmd_table(args: argparse.Namespace) -> int:
    name, overload = _split_name(args.op)
    full = name + ("." + overload if overload else "")
    try:
        state = _C._dispatch_dump(full)
    except ValueError as e:  # a malformed name
        print(f"error: {args.op!r} is not an operator name ({e}); expected NS::OP[.OVERLOAD]", file=sys.stderr)
        return 2
    if not state:
        close = difflib.get_close_matches(full, _all_ops(), n=3)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        print(
            f"error: operator {full!r} is not registered.{hint} List the operators with "
            "'python -m opdispatch ops [NAMESPACE]' (use --load PATH / --import MODULE for extensions).",
            file=sys.stderr,
        )
        return 2
    header, kernels = [], []
    for line in state.splitlines():
        if line.startswith("name: ") or line.startswith("alias analysis kind: "):
            continue
        if line.startswith("schema: "):
            header.append(line[len("schema: "):])
        elif line.startswith("debug: "):
            header.append("  defined: " + _with_origins(line[len("debug: "):]))
        else:
            kernels.append("  " + _with_origins(line))
    print("\n".join(header))
    print("\nRegistered kernels (key: origin :: inferred C++ signature [kernel kind]):")
    print("\n".join(kernels) if kernels else "  (none)")
    table = _C._dispatch_dump_table(full)
    print("\nComputed dispatch table (runtime key: origin [why it was chosen]):")
    print("\n".join("  " + _with_origins(line) for line in table.splitlines()) or "  (no key has a kernel)")
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from . import demo

    return demo.run(epochs=args.epochs, seed=args.seed, batch_size=args.batch_size, lr=args.lr,
                    hidden=args.hidden, progress=not args.no_progress, quiet=args.quiet,
                    extension_namespace=args.extension_namespace)


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text}")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text}")
    return value


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m opdispatch", description="Inspect the opdispatch operator registry, or run the demo."
    )
    # --load / --import, shared by the subcommands; one list keeps their order.
    preload = argparse.ArgumentParser(add_help=False)
    preload.add_argument(
        "--load", dest="preload", action="append", metavar="PATH", type=lambda p: ("load", p),
        help="load a shared library that registers operators first (repeatable)",
    )
    preload.add_argument(
        "--import", dest="preload", action="append", metavar="MODULE", type=lambda m: ("import", m),
        help="import a Python module that registers operators first (repeatable)",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("ops", parents=[preload], help="list the operators and their schemas")
    p.add_argument("namespace", nargs="?", help="only this namespace (e.g. myext)")
    p.set_defaults(handler=_cmd_ops)

    p = sub.add_parser(
        "table", parents=[preload], help="show an operator's kernels and dispatch table, with their origins"
    )
    p.add_argument("op", metavar="NS::OP[.OVERLOAD]", help="the operator, e.g. myext::fma")
    p.set_defaults(handler=_cmd_table)

    p = sub.add_parser(
        "demo", help="train a 2-layer MLP on handwritten digits through the dispatcher",
        description="Trains a 2-layer MLP on scikit-learn's handwritten digits: every forward and backward step "
        "is an operator call through the dispatcher (od operators and myext::relu from the example C++ "
        "extension, compiled on the first run). Prints the held-out accuracy, the operator calls counted "
        "inside the dispatcher with their times, and the model's shapes from a pass on meta tensors. "
        "Exit codes: 0 success, 1 accuracy below 90% or the extension failed to build, 2 scikit-learn missing.",
    )
    p.add_argument("--epochs", type=_positive_int, default=20, help="passes over the training set (default 20)")
    p.add_argument("--seed", type=int, default=0, help="seeds the split, the initialisation and the batches "
                   "(default 0)")
    p.add_argument("--batch-size", type=_positive_int, default=32, help="mini-batch size (default 32)")
    p.add_argument("--lr", type=_positive_float, default=0.1, help="SGD learning rate (default 0.1)")
    p.add_argument("--hidden", type=_positive_int, default=64, help="hidden layer width (default 64)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar; one line per epoch")
    p.add_argument("--quiet", action="store_true", help="no progress bar and no per-epoch lines")
    p.add_argument("--extension-namespace", default="myext", metavar="NS",
                   help="operator namespace of the C++ extension (default myext)")
    p.set_defaults(handler=_cmd_demo, preload=None)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line with `argv` (default: sys.argv[1:]); returns the exit code.

    Exit codes: 0 success; 1 a --load / --import failed (or, for demo, see
    opdispatch.demo.run); 2 usage errors, including an unknown operator or
    namespace, and scikit-learn missing for demo.
    """
    args = _build_parser().parse_args(argv)
    code = _preload(args)
    if code:
        return code
    handler: Callable[[argparse.Namespace], int] = args.handler
    return handler(args)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # the reader went away (`... | head`): not an error
        sys.stdout = None
        sys.exit(0)
