"""The benchmark cases: each builds what it needs and returns timeit
statements for opdispatch and, when PyTorch is installed, for PyTorch."""
from __future__ import annotations

import dataclasses
from typing import Any, Optional


@dataclasses.dataclass
class Case:
    """One row: ``stmt`` is timed with ``globals``; ``torch_stmt`` likewise
    (None when PyTorch has no equivalent or is absent). ``target`` is the
    required ratio PyTorch / opdispatch (None: informational)."""

    name: str
    stmt: str
    globals: dict[str, Any]
    torch_stmt: Optional[str] = None
    torch_globals: Optional[dict[str, Any]] = None
    target: Optional[float] = None
    number: int = 20000
    calls: int = 1  # operator calls one run of ``stmt`` makes (a loop inside a ``with`` block)

    @property
    def target_text(self) -> Optional[str]:
        """The target as stated: ">= 7x" (PyTorch that many times slower), or
        "<= 1.2x PyTorch" for a target below 1 (opdispatch at most that many times slower)."""
        if self.target is None:
            return None
        return f">= {self.target:g}x" if self.target >= 1 else f"<= {1 / self.target:.3g}x PyTorch"


# The rows run.py compares with each other (a custom_op call may cost at most
# RELATIVE_TARGET times the same op made by define + impl).
CUSTOM_OP = "3. custom_op, no grad"
DEFINE_IMPL = "3. define+impl, same body, no grad"
RELATIVE_TARGET = 1.5


def python_cases(torch: Any) -> list[Case]:
    import numpy as np

    import opdispatch
    from opdispatch import _C
    from opdispatch.library import Library, custom_op, register_autograd

    lib = Library("bench", "DEF")
    lib.define("ident(Tensor x) -> Tensor")
    lib.impl("ident", lambda x: x, "CPU")
    lib.define("ident8(Tensor a, Tensor b, Tensor c, Tensor d, int i, int j, float f, bool g) -> Tensor")
    lib.impl("ident8", lambda a, b, c, d, i, j, f, g: a, "CPU")
    cpp = _C._dispatch_library("DEF", "bench_cpp_kernel", "")
    cpp.def_schema_t_t("bench_cpp_kernel::ident(Tensor x) -> Tensor", "CPU", "", "identity")
    x = opdispatch.from_numpy(np.ones(3, dtype=np.float32))
    xg = opdispatch.from_numpy(np.ones(3, dtype=np.float32))
    xg.requires_grad = True

    def floor(x: Any) -> Any:
        return x

    from opdispatch.utils._python_dispatch import TorchDispatchMode

    identity_mode, Wrapper = _python_key_peers(opdispatch, TorchDispatchMode, None)

    # Case 3: the same operator made by custom_op and by define + impl: its
    # body returns a preallocated tensor; the "_grad" variants have an
    # autograd formula, so a call with an input that requires grad records a node.
    out = opdispatch.from_numpy(np.ones(3, dtype=np.float32))

    def body(x: opdispatch.Tensor) -> opdispatch.Tensor:
        return out

    def backward(ctx: Any, grad: Any) -> Any:
        return grad

    cop = custom_op("bench::cop", body, mutates_args=())
    cop_grad = custom_op("bench::cop_grad", body, mutates_args=())
    cop_grad.register_autograd(backward)
    for name in ("dop", "dop_grad"):
        lib.define(f"{name}(Tensor x) -> Tensor")
        lib.impl(name, body, "CPU")
    register_autograd("bench::dop_grad", backward, lib=lib)

    g = {
        "opdispatch": opdispatch, "floor": floor, "x": x,
        "op": opdispatch.ops.bench.ident.default, "packet": opdispatch.ops.bench.ident,
        "op8": opdispatch.ops.bench.ident8.default, "cpp_op": opdispatch.ops.bench_cpp_kernel.ident.default,
        "cop": cop, "cop_grad": cop_grad, "dop": opdispatch.ops.bench.dop.default,
        "dop_grad": opdispatch.ops.bench.dop_grad.default, "xg": xg,
        "mode": identity_mode, "w": Wrapper(x), "calls": range(CALLS_PER_STMT),
        "_keep": (lib, cpp),
    }
    tg: Optional[dict[str, Any]] = None
    if torch is not None:
        tlib = torch.library.Library("bench", "DEF")
        tlib.define("ident(Tensor x) -> Tensor")
        tlib.impl("ident", lambda x: x, "CPU")
        tlib.define("ident8(Tensor a, Tensor b, Tensor c, Tensor d, int i, int j, float f, bool g) -> Tensor")
        tlib.impl("ident8", lambda a, b, c, d, i, j, f, g: a, "CPU")
        tcpp = torch._C._dispatch_library("DEF", "bench_cpp_kernel", "")
        tcpp.def_schema_t_t("bench_cpp_kernel::ident(Tensor x) -> Tensor", "CPU", "", "identity")
        tout = torch.ones(3)

        def tbody(x: Any) -> Any:
            return tout

        # (PyTorch evaluates this module's string annotations in its globals,
        # where torch is not: the schema is given instead of inferred.)
        tcop = torch.library.custom_op("bench::cop", tbody, mutates_args=(), schema="(Tensor x) -> Tensor")
        tcop_grad = torch.library.custom_op("bench::cop_grad", tbody, mutates_args=(), schema="(Tensor x) -> Tensor")
        tcop_grad.register_autograd(backward)
        for name in ("dop", "dop_grad"):
            tlib.define(f"{name}(Tensor x) -> Tensor")
            tlib.impl(name, tbody, "CPU")
        torch.library.register_autograd("bench::dop_grad", backward, lib=tlib)
        tg = {
            "torch": torch, "floor": floor, "x": torch.ones(3),
            "op": torch.ops.bench.ident.default, "packet": torch.ops.bench.ident,
            "op8": torch.ops.bench.ident8.default, "cpp_op": torch.ops.bench_cpp_kernel.ident.default,
            "cop": tcop, "cop_grad": tcop_grad, "dop": torch.ops.bench.dop.default,
            "dop_grad": torch.ops.bench.dop_grad.default, "xg": torch.ones(3, requires_grad=True),
            "_keep": (tlib, tcpp),
        }
        tmode, TWrapper = _python_key_peers(torch, torch.utils._python_dispatch.TorchDispatchMode,
                                            torch._C._disabled_torch_function_impl)
        tg.update({"mode": tmode, "w": TWrapper(tg["x"]), "calls": range(CALLS_PER_STMT)})

    def both(name: str, stmt: str, torch_stmt: Optional[str] = None, target: Optional[float] = None,
             number: int = 20000, calls: int = 1) -> Case:
        ts = (torch_stmt or stmt) if tg is not None else None
        return Case(name, stmt, g, ts, tg, target, number, calls)

    return [
        both("1. Python floor: f(x)", "floor(x)", number=200000),
        both("2. define+impl, bound OpOverload, 1 tensor", "op(x)", target=7.0),
        both("2. define+impl, packet, 1 tensor", "packet(x)"),
        both("2. define+impl, ops.ns.op.default(x)", "opdispatch.ops.bench.ident.default(x)",
             "torch.ops.bench.ident.default(x)"),
        both("2. define+impl, bound OpOverload, 8 args", "op8(x, x, x, x, 1, 2, 3.0, True)", target=8.0),
        both(CUSTOM_OP, "cop(x)", target=30.0),
        both(DEFINE_IMPL, "dop(x)"),
        both("3. custom_op + formula, input requires grad", "cop_grad(xg)", target=7.0, number=5000),
        both("3. define+impl + register_autograd, input requires grad", "dop_grad(xg)", number=5000),
        both("4. Python -> C++ kernel", "cpp_op(x)", target=5.0),
        both("8. identity TorchDispatchMode, define+impl op, 1 tensor", "with mode:\n for _ in calls: op(x)",
             target=5.0, number=2000 // CALLS_PER_STMT * 10, calls=CALLS_PER_STMT),
        both("8. identity wrapper subclass, define+impl op, 1 tensor", "op(w)", target=5.0, number=5000),
    ]


# Case 8 runs this many calls per `with mode:` block, so entering the mode is not what is timed.
CALLS_PER_STMT = 100


def _python_key_peers(lib: Any, mode_base: type, disabled_torch_function: Any) -> tuple[Any, type]:
    """An identity dispatch mode and an identity wrapper subclass for ``lib``
    (opdispatch or torch), written the same way for both."""

    class IdentityMode(mode_base):  # type: ignore[misc, valid-type]
        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            return func(*args, **(kwargs or {}))

    class Wrapper(lib.Tensor):  # type: ignore[misc, name-defined]
        if disabled_torch_function is not None:
            __torch_function__ = disabled_torch_function

        @staticmethod
        def __new__(cls, elem: Any) -> Any:
            r = lib.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype)
            r.elem = elem
            return r

        def __init__(self, elem: Any) -> None:
            pass

        @classmethod
        def __torch_dispatch__(cls, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            args = [a.elem if isinstance(a, Wrapper) else a for a in args]
            return Wrapper(func(*args, **(kwargs or {})))

    return IdentityMode(), Wrapper


def numpy_cases() -> list[Case]:
    """Built-in operators against calling NumPy directly (the kernel library):
    the ``torch_*`` fields hold the NumPy peer here."""
    import numpy as np

    import opdispatch

    a10 = np.random.default_rng(0).random(10, dtype=np.float32)
    b10 = np.random.default_rng(1).random(10, dtype=np.float32)
    a256 = np.random.default_rng(2).random((256, 256), dtype=np.float32)
    b256 = np.random.default_rng(3).random((256, 256), dtype=np.float32)
    g = {"x": opdispatch.from_numpy(a10), "y": opdispatch.from_numpy(b10),
         "m": opdispatch.from_numpy(a256), "n": opdispatch.from_numpy(b256), "opdispatch": opdispatch}
    peer = {"x": a10, "y": b10, "m": a256, "n": b256, "np": np}
    return [
        Case("add, 10 elements (x + y)", "x + y", g, "np.add(x, y)", peer, number=20000),
        Case("matmul, 256x256 (m @ n)", "m @ n", g, "np.matmul(m, n)", peer, number=200),
    ]


#: Ratios opdispatch may be slower than PyTorch on the built-in operators'
#: tiny-tensor rows: without grad, and with an input that requires grad.
BUILTIN_TARGET, BUILTIN_GRAD_TARGET = 1.2, 1.5


def builtin_cases(torch: Any) -> list[Case]:
    """The built-in operators on tiny tensors (10 elements; 4x4 for mm), as
    Tensor methods, against the same PyTorch methods: without grad, and with
    an input that requires grad (a graph node is recorded and dropped)."""
    import numpy as np

    import opdispatch

    rng = np.random.default_rng(0)

    def arrays() -> dict[str, np.ndarray]:
        return {"x": rng.random(10, dtype=np.float32), "y": rng.random(10, dtype=np.float32),
                "m": rng.random((4, 4), dtype=np.float32), "w": rng.random((4, 4), dtype=np.float32)}

    plain = {k: opdispatch.from_numpy(v) for k, v in arrays().items()}
    grad = {k: opdispatch.from_numpy(v) for k, v in arrays().items()}
    grad["x"].requires_grad_()
    grad["m"].requires_grad_()
    tplain = tgrad = None
    if torch is not None:
        torch.set_num_threads(1)
        tplain = {k: torch.from_numpy(v) for k, v in arrays().items()}
        tgrad = {k: torch.from_numpy(v) for k, v in arrays().items()}
        tgrad["x"].requires_grad_()
        tgrad["m"].requires_grad_()
    rows = []
    for stmt in ("x + y", "x.sum()", "m.mm(w)", "x.relu()", "x.sin()"):
        for label, g, tg, target in (("no grad", plain, tplain, BUILTIN_TARGET),
                                     ("input requires grad", grad, tgrad, BUILTIN_GRAD_TARGET)):
            rows.append(Case(f"9. built-in `{stmt}`, {label}", stmt, g, stmt if tg is not None else None, tg,
                             1 / target, number=5000))
    return rows
