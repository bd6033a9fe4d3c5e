"""The command line, ``python -m opdispatch <command>``:

  ops [NAMESPACE]             the registered operators and their schemas
  table NS::OP[.OVERLOAD]     an operator's registered kernels and computed dispatch table
  explain NS::OP[.OVERLOAD] [ARG ...]
                              how a call with these arguments would dispatch, step by step
                              (ARG: a Python expression such as "randn(2, requires_grad=True)",
                              or NAME=EXPRESSION for a keyword argument; higher_order::NAME
                              for a higher-order operator; --fake, --python-dispatcher)
  coverage [NAMESPACE] [--html FILE]
                              operators x dispatch keys: what serves each key (and the
                              higher-order operators': NAMESPACE higher_order, or none)
  cache [list | clear [NAME]]  the compiled C++ extensions opdispatch.cpp_extension.load keeps
  --version                   print opdispatch's version
  demo [OPTIONS]              train a small MLP (--model cnn: a CNN) on handwritten digits through the dispatcher
                              (opdispatch.demo; needs scikit-learn: pip install "opdispatch[demo]")

For ops, table, explain and coverage, ``--load PATH`` (a shared library, e.g. a
C++ extension) and ``--import MODULE`` (a Python module that registers
operators) run first, in the order given; both can be repeated.
"""
from __future__ import annotations

import argparse
import contextlib
import difflib
import importlib
import math
import re
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

from . import _C
from ._introspection import with_origins as _with_origins
from ._ops import ops as _ops

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
        return str(_C._dispatch_find_schema_or_throw(name, overload).schema())
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


def _close_operators(full: str) -> list[str]:
    """Up to three registered operators (without overloads) whose names are
    close to ``full`` ('ns::op'), those of its namespace first."""
    ns, _, op = full.partition("::")
    packets = sorted({n.split(".", 1)[0] for n in _all_ops()})
    same_ns = [p.split("::", 1)[1] for p in packets if p.startswith(ns + "::")]
    close = [f"{ns}::{name}" for name in difflib.get_close_matches(op, same_ns, n=3)]
    return close or difflib.get_close_matches(full, packets, n=3)


def _unknown_operator(full: str) -> int:
    """Reports that operator ``full`` is not registered: lists its overloads
    if ``full`` names an operator without its overload, else close names. Returns 2."""
    overloads = [n for n in _all_ops() if n.startswith(full + ".")]
    if overloads:
        listing = "\n".join(f"  {n}" + (f"  {_schema_text(n)}" if _schema_text(n) else "") for n in overloads)
        print(f"error: {full!r} has no default overload; name one of its overloads, "
              f"e.g. {overloads[0]}:\n{listing}", file=sys.stderr)
        return 2
    close = _close_operators(full)
    hint = f" Did you mean {', '.join(close)}?" if close else ""
    print(
        f"error: operator {full!r} is not registered.{hint} List the operators with "
        "'python -m opdispatch ops [NAMESPACE]' (use --load PATH / --import MODULE for extensions).",
        file=sys.stderr,
    )
    return 2


def _cmd_table(args: argparse.Namespace) -> int:
    name, overload = _split_name(args.op)
    full = name + ("." + overload if overload else "")
    try:
        state = _C._dispatch_dump(full)
    except ValueError as e:  # a malformed name
        print(f"error: {args.op!r} is not an operator name ({e}); expected NS::OP[.OVERLOAD]", file=sys.stderr)
        return 2
    if not state:
        return _unknown_operator(full)
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
    table = [_with_origins(line) for line in _C._dispatch_dump_table(full).splitlines()]
    print("\nComputed dispatch table (runtime keys: origin [why it was chosen]; keys served alike on one line):")
    print("\n".join("  " + line for line in _join_alike_keys(table)) or "  (no key has a kernel)")
    return 0


def _join_alike_keys(lines: list[str]) -> list[str]:
    """Table lines ``'Key: what'`` with consecutive keys served alike (the
    same ``what``) joined into one ``'Key1, Key2, ...: what'`` line: the
    Autograd* keys of an operator with one autograd kernel, say."""
    joined: list[tuple[list[str], str]] = []
    for line in lines:
        key, _, what = line.partition(": ")
        if joined and joined[-1][1] == what:
            joined[-1][0].append(key)
        else:
            joined.append(([key], what))
    return [f"{', '.join(keys)}: {what}" for keys, what in joined]


_KEYWORD = re.compile(r"([A-Za-z_]\w*)=(?!=)(.*)", re.S)


def _call_arguments(texts: list[str]) -> tuple[list[Any], dict[str, Any]]:
    """Evaluates the explain command's ARGs: Python expressions over opdispatch's
    public names (``randn(2)``, ``empty(3, device="meta")``, ``float64``; those
    that share a builtin's name, such as ``bool``, as ``opdispatch.bool``),
    ``NAME=EXPRESSION`` for keyword arguments. Raises ValueError naming a bad one."""
    import builtins

    import opdispatch

    # opdispatch's names, except those that would hide a builtin (opdispatch.bool is a dtype; bool stays bool).
    names = {name: getattr(opdispatch, name) for name in opdispatch.__all__ if not hasattr(builtins, name)}
    names["opdispatch"] = opdispatch
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for text in texts:
        keyword = _KEYWORD.fullmatch(text)
        try:
            value = eval(keyword.group(2) if keyword else text, dict(names))  # the user's own expressions
        except Exception as e:  # report any failure of the expression as a usage error
            raise ValueError(f"argument {text!r} is not a Python expression opdispatch can evaluate: "
                             f"{type(e).__name__}: {e}") from None
        if keyword:
            kwargs[keyword.group(1)] = value
        else:
            args.append(value)
    return args, kwargs


def _cmd_explain(args: argparse.Namespace) -> int:
    from ._explain import explain

    name, overload = _split_name(args.op)
    full = name + ("." + overload if overload else "")
    if name.startswith("higher_order::"):
        if name.split("::", 1)[1] not in list(_ops.higher_order):
            print(f"error: no higher-order operator {name!r}; known: "
                  f"{', '.join('higher_order::' + n for n in _ops.higher_order)}", file=sys.stderr)
            return 2
    elif not _C._dispatch_has_kernel(full) and not any(n.startswith(name + ".") for n in _all_ops()):
        return _unknown_operator(full)
    with contextlib.ExitStack() as stack:
        # --fake: the ARGs are made inside the mode (fake tensors); --include/--exclude apply to the call only.
        if args.fake:
            from ._subclasses.fake_tensor import FakeTensorMode

            stack.enter_context(FakeTensorMode())
        if args.python_dispatcher:
            from ._dispatch.python import enable_python_dispatcher

            stack.enter_context(enable_python_dispatcher())
        try:
            call_args, call_kwargs = _call_arguments(args.args)
            stack.enter_context(_C._IncludeDispatchKeyGuard(_keyset(args.include)))
            stack.enter_context(_C._ExcludeDispatchKeyGuard(_keyset(args.exclude)))
            report = explain(args.op if overload else name, *call_args, **call_kwargs)
        except (ValueError, TypeError, RuntimeError) as e:  # a bad ARG, arguments that do not bind, no such overload
            print(f"error: {e}", file=sys.stderr)
            return 2
    print(report)
    return 0


def _keyset(names: list[str] | None) -> _C.DispatchKeySet:
    keyset = _C.DispatchKeySet(_C.DispatchKey.Undefined)
    for name in names or []:
        keyset = keyset | _C.DispatchKeySet(name)
    return keyset


def _runtime_key(text: str) -> Any:
    key = _C._parse_dispatch_key(text)
    if key is None or _C._dispatch_is_alias_key(key) or key == _C.DispatchKey.Undefined:
        raise argparse.ArgumentTypeError(f"{text!r} is not a runtime dispatch key (e.g. CPU, AutogradCPU, Python)")
    return key


def _cmd_coverage(args: argparse.Namespace) -> int:
    from . import _coverage
    from ._core_aten import CORE_ATEN

    try:
        cov = _coverage.coverage(args.namespace)
    except ValueError as e:
        known = sorted({n.split("::", 1)[0] for n in _all_ops()})
        print(f"error: {e}; namespaces: {', '.join(known)}. Use --load PATH or --import MODULE to register more.",
              file=sys.stderr)
        return 2
    if args.html is None:
        print(_coverage.render_text(cov))
        return 0
    title = f"opdispatch coverage: {args.namespace + '::' if args.namespace else 'all operators'}"
    try:
        Path(args.html).write_text(_coverage.render_html(cov, title), encoding="utf-8")
    except OSError as e:
        print(f"error: cannot write --html {args.html}: {e.strerror or e}. Give a file in an existing, writable "
              "folder (e.g. --html coverage.html).", file=sys.stderr)
        return 2
    hops = f", {len(cov.hops)} higher-order operators x {len(cov.hop_keys)} keys" if cov.hops else ""
    missing = _coverage.core_aten_missing(cov)
    core = "" if missing is None else \
        f"; Core ATen: {len(CORE_ATEN) - len(missing)} of {len(CORE_ATEN)} overloads in {_coverage.CORE_NAMESPACE}"
    print(f"wrote {args.html}: {len(cov.ops)} operators x {len(cov.keys)} dispatch keys{hops}{core}")
    return 0


def _cmd_cache(args: argparse.Namespace) -> int:
    from . import cpp_extension

    if args.action == "clear":
        try:
            removed = cpp_extension.clear_cache(args.name)
        except ValueError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        print(f"removed {len(removed)} cached extension{'s' * (len(removed) != 1)} from "
              f"{cpp_extension.extensions_dir()}")
        return 0
    entries = cpp_extension.cached_extensions()
    print(f"{cpp_extension.extensions_dir()}: {len(entries)} extension{'s' * (len(entries) != 1)}")
    for entry in entries:
        builds = ", ".join(p.name for p in entry.libraries) or "no build"
        print(f"  {entry.name}  {entry.size / 1024:.0f} KiB  {builds}")
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from . import demo

    return demo.run(model_name=args.model, epochs=args.epochs, seed=args.seed, batch_size=args.batch_size, lr=args.lr,
                    hidden=args.hidden, progress=not args.no_progress, quiet=args.quiet,
                    extension_namespace=args.extension_namespace)


def _positive_int(text: str) -> int:
    """argparse type: an integer >= 1 (ArgumentTypeError names what was expected, never this function)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _positive_float(text: str) -> float:
    """argparse type: a number > 0 (ArgumentTypeError names what was expected, never this function)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not value > 0 or math.isinf(value):
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def _version() -> str:
    from . import __version__

    return __version__


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m opdispatch", description="Inspect the opdispatch operator registry, or run the demo."
    )
    parser.add_argument("--version", action="version", version=f"opdispatch {_version()}")
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
        "explain", parents=[preload], help="show how a call would dispatch, step by step",
        description="Shows how calling the operator with the given arguments would dispatch, without calling it: "
        "the dispatch keys and where each came from, each hop (the kernel chosen, the precedence rule that chose "
        "it, where it was registered), and for a call that would fail, why and what registration would serve it. "
        "Example: python -m opdispatch explain od::add \"randn(2, requires_grad=True)\" \"randn(2)\" alpha=2",
    )
    p.add_argument("op", metavar="NS::OP[.OVERLOAD]",
                   help="the operator (without an overload, the call picks one), or higher_order::NAME")
    p.add_argument("args", nargs="*", metavar="ARG",
                   help="a Python expression over opdispatch's names (randn(2), empty(2, 3, device='meta'), 1.5), "
                        "or NAME=EXPRESSION for a keyword argument")
    p.add_argument("--include", action="append", type=_runtime_key, metavar="KEY",
                   help="add KEY to the thread-local include set first (repeatable)")
    p.add_argument("--exclude", action="append", type=_runtime_key, metavar="KEY",
                   help="add KEY to the thread-local exclude set first (repeatable)")
    p.add_argument("--fake", action="store_true",
                   help="explain the call inside FakeTensorMode (the ARGs become fake tensors)")
    p.add_argument("--python-dispatcher", action="store_true",
                   help="explain the call with the Python dispatcher on (py_impl kernels count)")
    p.set_defaults(handler=_cmd_explain)

    p = sub.add_parser(
        "coverage", parents=[preload], help="operators x dispatch keys: what serves each key",
        description="For each operator and dispatch key: a kernel registered at the key, an alias-key kernel "
        "(CompositeExplicitAutograd, CompositeImplicitAutograd, Autograd, ...), a backend fallback, a fallthrough, "
        "or nothing; marked where a py_impl kernel would run instead while the Python dispatcher is on. Then the "
        "higher-order operators (without NAMESPACE, or with higher_order): their py_impl kernels per key and per "
        "mode or subclass, and their fallthroughs. Then, per operator, what serves CPU, Meta and AutogradCPU, "
        "whether it has a decomposition (a CompositeImplicitAutograd kernel) and whether it is in PyTorch's Core "
        "ATen opset, and how many of the opset's overloads od defines. Text by default; --html FILE writes a page "
        "with the registration sites on hover.",
    )
    p.add_argument("namespace", nargs="?", help="only this namespace (e.g. myext; higher_order for the higher-order "
                                                "operators)")
    p.add_argument("--html", metavar="FILE", help="write an HTML page to FILE instead of printing text")
    p.set_defaults(handler=_cmd_coverage)

    p = sub.add_parser(
        "cache", help="list or clear the C++ extensions opdispatch.cpp_extension.load has compiled",
        description="The extension cache ($OPDISPATCH_EXTENSIONS_DIR, else ~/.cache/opdispatch/extensions): "
        "'list' (the default) shows each extension's builds and size; 'clear [NAME]' deletes one extension's "
        "builds, or all, so the next load compiles again.",
    )
    p.add_argument("action", nargs="?", choices=("list", "clear"), default="list")
    p.add_argument("name", nargs="?", help="with clear: only this extension")
    p.set_defaults(handler=_cmd_cache, preload=None)

    p = sub.add_parser(
        "demo", help="train a 2-layer MLP (or --model cnn) on handwritten digits through the dispatcher",
        description="Trains a 2-layer MLP (--model cnn: a convolutional network with batch norm, max pooling and "
        "dropout) on scikit-learn's handwritten digits: every forward and backward step is an operator call "
        "through the dispatcher (od operators, and in the MLP myext::relu from the example C++ extension, "
        "compiled on the first run). Prints the held-out accuracy, the operator calls counted inside the "
        "dispatcher with their times, and the model's shapes from a pass on meta tensors. Exit codes: 0 success, "
        "1 accuracy below 90% (CNN: 97%) or the extension failed to build, 2 scikit-learn missing.",
    )
    p.add_argument("--model", choices=("mlp", "cnn"), default="mlp",
                   help="mlp (default): 64 -> hidden -> 10 with the C++ extension's relu; cnn: two conv / batch "
                   "norm / relu / max pool blocks, dropout and a linear layer, through opdispatch.nn.functional")
    p.add_argument("--epochs", type=_positive_int, default=None, help="passes over the training set (default "
                   "20 for the MLP, 12 for the CNN)")
    p.add_argument("--seed", type=int, default=0, help="seeds the split, the initialisation and the batches "
                   "(default 0)")
    p.add_argument("--batch-size", type=_positive_int, default=32, help="mini-batch size (default 32)")
    p.add_argument("--lr", type=_positive_float, default=None, help="SGD learning rate (default 0.1 for the MLP, "
                   "0.05 for the CNN)")
    p.add_argument("--hidden", type=_positive_int, default=64, help="the MLP's hidden layer width (default 64)")
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
