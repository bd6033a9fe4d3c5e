"""opdispatch._ops.resolve_key: the dispatch table's precedence computed in
Python (PyTorch: torch._ops.resolve_key). For every registered operator and
every runtime key it names the key whose kernel the C++ table chose; py_impl
kernels count as registrations."""
from __future__ import annotations

import itertools

import pytest

import opdispatch
from opdispatch import _C, library
from opdispatch._ops import OperatorBase, resolve_key

K = _C.DispatchKey
RUNTIME_KEYS = [K.Undefined, *_C._dispatch_keyset_full()]

#: The rule computeDispatchTableEntryWithDebug gives -> the alias key resolve_key names (None: the key itself).
_ALIAS_OF_RULE = {"math kernel": K.CompositeImplicitAutograd, "autograd kernel": K.Autograd,
                  "batched kernel": K.FuncTorchBatchedDecomposition}


class _ByName(OperatorBase):
    """An operator known by name only (a dangling impl has no OpOverload)."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self._name = name

    def name(self) -> str:
        return self._name

    def has_kernel_for_dispatch_key(self, k):
        return _C._dispatch_has_kernel_for_dispatch_key(self._name, k)

    def has_kernel_for_any_dispatch_key(self, ks):
        return _C._dispatch_has_kernel_for_any_dispatch_key(self._name, ks)


def _expected(qualname: str, key: str, rule: str):
    """What resolve_key must give for a table entry: a key, or the exception type."""
    if rule == "missing":
        return NotImplementedError
    if rule == "ambiguous autogradother":
        return RuntimeError
    if rule == "default backend kernel":
        return next(a for a in (K.CompositeExplicitAutogradNonFunctional, K.CompositeExplicitAutograd)
                    if _C._dispatch_has_kernel_for_dispatch_key(qualname, a))
    return _ALIAS_OF_RULE.get(rule, getattr(K, key))


def _resolved(op: OperatorBase, key):
    try:
        return resolve_key(op, key)
    except (NotImplementedError, RuntimeError) as e:
        return type(e)


def _operator(qualname: str) -> OperatorBase:
    name, overload = _C._parse_name(qualname)
    ns, op = name.split("::", 1)
    if qualname in _C._dispatch_get_defined_op_names():
        return getattr(getattr(getattr(opdispatch.ops, ns), op), overload or "default")
    return _ByName(qualname)


def _mismatches(qualnames) -> list[str]:
    out = []
    for qualname in qualnames:
        op = _operator(qualname)
        for key, _, rule, _, _ in _C._dispatch_table_entries(qualname):
            want, got = _expected(qualname, key, rule), _resolved(op, getattr(K, key))
            if want != got:
                out.append(f"{qualname} at {key} ({rule}): table {want}, resolve_key {got}")
    return out


# Registrations covering every rule of the table: each list is one operator.
REGISTRATIONS = [
    ["CPU"],
    ["CPU", "CompositeImplicitAutograd"],
    ["CompositeImplicitAutograd"],
    ["CompositeExplicitAutograd"],
    ["CompositeExplicitAutogradNonFunctional", "CompositeExplicitAutograd"],
    ["CompositeExplicitAutograd", "CompositeImplicitAutograd"],
    ["Autograd", "CPU"],
    ["QuantizedCPU", "CompositeImplicitAutograd"],
    ["AutogradCPU", "CompositeImplicitAutograd"],
    ["FuncTorchBatchedDecomposition", "CPU"],
    ["SparseCPU", "Autograd", "CompositeImplicitAutograd"],
    ["XLA", "Meta", "AutogradXLA"],
]


@pytest.fixture
def registered(ns):
    """The operators of REGISTRATIONS (C++ identity kernels), a dangling impl,
    a fallthrough kernel and an XLA backend fallback; yields their names."""
    lib = _C._dispatch_library("FRAGMENT", ns, "", "/dev/null", 0)
    names = []
    for i, keys in enumerate(REGISTRATIONS):
        lib.define(f"op{i}(Tensor x) -> Tensor")
        for key in keys:
            lib.impl_t_t(f"op{i}", key)
        names.append(f"{ns}::op{i}")
    lib.impl_t_t("dangling", "CPU")
    names.append(f"{ns}::dangling")
    lib.define("skips(Tensor x) -> Tensor")
    lib.impl_t_t("skips", "CompositeImplicitAutograd")
    fallthrough = library.Library(ns, "FRAGMENT")
    fallthrough.impl("skips", library.fallthrough_kernel, "AutogradCPU")
    names.append(f"{ns}::skips")
    fallback = _C._dispatch_library("IMPL", "_", "XLA", "/dev/null", 0)
    fallback.fallback_fallthrough()
    yield names
    fallback.reset()
    fallthrough._destroy()
    lib.reset()


def test_resolve_key_agrees_with_the_computed_table_for_every_operator_and_key(registered):
    every = [n for n in _C._dispatch_get_all_op_names()]
    assert set(registered) <= set(every)
    assert _mismatches(every) == []


def test_resolve_key_agrees_with_the_table_with_a_backend_fallback(ns):
    lib = _C._dispatch_library("FRAGMENT", ns, "", "/dev/null", 0)
    lib.define("f(Tensor x) -> Tensor")
    lib.impl_t_t("f", "CompositeImplicitAutograd")
    fallback = _C._dispatch_library("IMPL", "_", "XLA", "/dev/null", 0)
    fallback.fallback_fallthrough()
    try:
        assert _resolved(getattr(opdispatch.ops, ns).f.default, K.XLA) == K.CompositeImplicitAutograd
        bare = _C._dispatch_library("FRAGMENT", ns, "", "/dev/null", 0)
        bare.define("g(Tensor x) -> Tensor")
        assert _resolved(getattr(opdispatch.ops, ns).g.default, K.XLA) == K.XLA  # 6. the fallback
        assert _mismatches([f"{ns}::f", f"{ns}::g"]) == []
        bare.reset()
    finally:
        fallback.reset()
        lib.reset()


# What PyTorch 2.13's torch._ops.resolve_key gives for the same registrations (keys whose backend
# fallbacks are the same in both: CPU, CUDA, QuantizedCPU none; the autograd keys, Python and
# BackendSelect one each).
PYTORCH = {
    ("CPU",): dict(CPU="CPU", CUDA=NotImplementedError, QuantizedCPU=NotImplementedError,
                   AutogradCPU="AutogradCPU", AutogradCUDA="AutogradCUDA", AutogradOther="AutogradOther",
                   Undefined=NotImplementedError, Python="Python", BackendSelect="BackendSelect"),
    ("CPU", "CompositeImplicitAutograd"): dict(
        CPU="CPU", CUDA="CompositeImplicitAutograd", QuantizedCPU="CompositeImplicitAutograd",
        AutogradCPU="AutogradCPU", AutogradCUDA="CompositeImplicitAutograd",
        AutogradOther="CompositeImplicitAutograd", Undefined="CompositeImplicitAutograd", Python="Python"),
    ("CompositeExplicitAutograd",): dict(
        CPU="CompositeExplicitAutograd", CUDA="CompositeExplicitAutograd", AutogradCPU="AutogradCPU",
        Undefined="CompositeExplicitAutograd"),
    ("CompositeExplicitAutogradNonFunctional", "CompositeExplicitAutograd"): dict(
        CPU="CompositeExplicitAutogradNonFunctional", Undefined="CompositeExplicitAutogradNonFunctional",
        AutogradCUDA="AutogradCUDA"),
    ("CompositeExplicitAutograd", "CompositeImplicitAutograd"): dict(
        CUDA="CompositeExplicitAutograd", AutogradCUDA="AutogradCUDA", AutogradOther="AutogradOther"),
    ("Autograd", "CPU"): dict(CPU="CPU", CUDA=NotImplementedError, AutogradCPU="Autograd",
                              AutogradCUDA="Autograd", AutogradOther="Autograd", Undefined=NotImplementedError),
    ("QuantizedCPU", "CompositeImplicitAutograd"): dict(
        CPU="CompositeImplicitAutograd", QuantizedCPU="QuantizedCPU", AutogradCPU="CompositeImplicitAutograd",
        AutogradOther=RuntimeError, Undefined="CompositeImplicitAutograd"),
    ("AutogradCPU", "CompositeImplicitAutograd"): dict(
        CPU="CompositeImplicitAutograd", AutogradCPU="AutogradCPU", AutogradCUDA="CompositeImplicitAutograd"),
}


@pytest.mark.parametrize("registrations", list(PYTORCH), ids="+".join)
@pytest.mark.parametrize("as_py_impl", [False, True], ids=["cpp", "py_impl"])
def test_resolve_key_matches_pytorch(ns, registrations, as_py_impl):
    lib = _C._dispatch_library("FRAGMENT", ns, "", "/dev/null", 0)
    lib.define("f(Tensor x) -> Tensor")
    op = getattr(opdispatch.ops, ns).f.default
    for key in registrations:
        if as_py_impl:  # py_impl kernels count as registrations
            op.py_impl(getattr(K, key))(lambda x: x)
        else:
            lib.impl_t_t("f", key)
    try:
        got = {key: _resolved(op, getattr(K, key)) for key in PYTORCH[registrations]}
        want = {key: v if isinstance(v, type) else getattr(K, v) for key, v in PYTORCH[registrations].items()}
        assert got == want
    finally:
        lib.reset()


def test_resolve_key_errors_name_the_operator_and_key(ns):
    lib = _C._dispatch_library("FRAGMENT", ns, "", "/dev/null", 0)
    lib.define("f(Tensor x) -> Tensor")
    lib.impl_t_t("f", "CPU")
    op = getattr(opdispatch.ops, ns).f.default
    try:
        with pytest.raises(NotImplementedError, match=rf"could not find kernel for {ns}::f at dispatch key CUDA"):
            resolve_key(op, K.CUDA)
        lib.impl_t_t("f", "CompositeImplicitAutograd")
        lib.impl_t_t("f", "SparseCPU")
        with pytest.raises(RuntimeError, match=rf"ambiguous autogradother kernel for {ns}::f"):
            resolve_key(op, K.AutogradOther)
    finally:
        lib.reset()


@pytest.mark.parametrize("key", ["CPU", "AutogradCPU", "Undefined", "XLA", "AutogradOther"])
def test_py_impl_counts_like_the_same_registration_in_cpp(ns, key):
    """An operator with py_impl kernels resolves as its twin with the same C++ registrations."""
    lib = _C._dispatch_library("FRAGMENT", ns, "", "/dev/null", 0)
    try:
        for regs in itertools.combinations(["CPU", "CompositeImplicitAutograd", "CompositeExplicitAutograd",
                                            "Autograd", "SparseCPU"], 2):
            name = "_".join(r.lower() for r in regs)
            lib.define(f"py_{name}(Tensor x) -> Tensor")
            lib.define(f"cpp_{name}(Tensor x) -> Tensor")
            py_op = getattr(getattr(opdispatch.ops, ns), f"py_{name}").default
            for r in regs:
                lib.impl_t_t(f"cpp_{name}", r)
                py_op.py_impl(getattr(K, r))(lambda x: x)
            cpp_op = getattr(getattr(opdispatch.ops, ns), f"cpp_{name}").default
            assert _resolved(py_op, getattr(K, key)) == _resolved(cpp_op, getattr(K, key)), regs
    finally:
        lib.reset()
