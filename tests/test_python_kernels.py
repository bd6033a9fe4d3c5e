"""Python kernels and fallbacks through the trampoline (PythonKernelHolder):
object identity, argument and result conversion, exceptions, with_keyset
redispatch, backend fallbacks, and Python and C++ kernels of one operator."""
from __future__ import annotations

import traceback

import numpy as np
import pytest

import opdispatch
from opdispatch import _C, ops
from opdispatch.library import Library, fallthrough_kernel
from _helpers import as_numpy, tensor

DK = _C.DispatchKey


def requiring_grad(values) -> opdispatch.Tensor:
    t = tensor(values)
    t.requires_grad = True
    return t


@pytest.fixture
def fallback_lib():
    """A Library("_", "IMPL") for backend fallbacks, destroyed after the test."""
    result = Library("_", "IMPL")
    yield result
    result._destroy()


# --- identity and conversion ---------------------------------------------------------


def test_tensors_keep_their_identity_across_the_trampoline(ns, lib):
    lib.define("ident(Tensor x, Tensor[] xs, Tensor? maybe) -> (Tensor, Tensor[])")
    seen = []

    def kernel(x, xs, maybe):
        seen.append((x, xs, maybe))
        return x, xs

    lib.impl("ident", kernel, "CPU")
    a, b, c = tensor([1.0]), tensor([2.0]), tensor([3.0])
    out, outs = getattr(ops, ns).ident(a, [b, c], None)
    assert seen[0][0] is a and seen[0][1][0] is b and seen[0][1][1] is c and seen[0][2] is None
    assert out is a and outs[0] is b and outs[1] is c
    # A subclass instance comes back as itself, not as a plain Tensor.
    sub = _C._make_subclass(type("MyTensor", (opdispatch.Tensor,), {}), a)
    assert getattr(ops, ns).ident(sub, [], sub)[0] is sub


def test_new_tensors_from_numpy_come_back_with_their_data(ns, lib):
    lib.define("add(Tensor a, Tensor b) -> Tensor")
    lib.impl("add", lambda a, b: opdispatch.from_numpy(a.numpy() + b.numpy()), "CPU")
    out = getattr(ops, ns).add(tensor([1.0, 2.0]), tensor([10.0, 20.0]))
    assert isinstance(out, opdispatch.Tensor)
    np.testing.assert_allclose(out.numpy(), [11.0, 22.0])


def test_non_tensor_arguments_and_results(ns, lib):
    lib.define(
        "info(Tensor x, int n, float f, bool b, str s, int[] sizes, float? maybe, ScalarType dtype) "
        "-> (int, float, bool, str, int[])"
    )
    seen = {}

    def kernel(x, n, f, b, s, sizes, maybe, dtype):
        seen.update(n=n, f=f, b=b, s=s, sizes=sizes, maybe=maybe, dtype=dtype)
        return n + 1, f * 2, not b, s.upper(), [v * 2 for v in sizes]

    lib.impl("info", kernel, "CPU")
    result = getattr(ops, ns).info(tensor([1.0]), 3, 1.5, True, "ab", (1, 2), None, opdispatch.float64)
    assert seen == dict(n=3, f=1.5, b=True, s="ab", sizes=[1, 2], maybe=None, dtype=opdispatch.float64)
    assert result == (4, 3.0, False, "AB", [2, 4])


def test_no_return_and_int_return(ns, lib):
    lib.define("noret(Tensor x) -> ()")
    lib.define("count(Tensor x) -> int")
    lib.impl("noret", lambda x: None, "CPU")
    lib.impl("count", lambda x: x.numel(), "CPU")
    assert getattr(ops, ns).noret(tensor([1.0])) is None
    assert getattr(ops, ns).count(tensor([1.0, 2.0, 3.0])) == 3


def test_keyword_only_arguments_arrive_as_keywords(ns, lib):
    lib.define("kw(Tensor x, int pos=1, *, float alpha=1.0, int beta) -> Tensor")
    calls = []

    def kernel(*args, **kwargs):
        calls.append((args, kwargs))
        return args[0]

    lib.impl("kw", kernel, "CPU")
    x = tensor([1.0])
    op = getattr(ops, ns).kw
    op(x, beta=2)
    op(x, 5, alpha=3.0, beta=2)
    op(x=x, pos=1, beta=7)
    # Keyword-only arguments come as keywords; ones equal to their default are
    # left out, as are trailing positional ones (PyTorch: parseIValuesToPyArgsKwargs).
    assert calls == [
        ((x,), {"beta": 2}),
        ((x, 5), {"alpha": 3.0, "beta": 2}),
        ((x,), {"beta": 7}),
    ]


# --- errors --------------------------------------------------------------------------


class KernelError(Exception):
    pass


def test_kernel_exceptions_pass_through_unchanged(ns, lib):
    lib.define("boom(Tensor x) -> Tensor")
    error = KernelError("from the kernel")

    def exploding_kernel(x):
        raise error

    lib.impl("boom", exploding_kernel, "CPU")
    for call in (getattr(ops, ns).boom, getattr(ops, ns).boom.default):
        with pytest.raises(KernelError) as e:
            call(tensor([1.0]))
        assert e.value is error
        frames = [f.name for f in traceback.extract_tb(e.value.__traceback__)]
        assert frames[-1] == "exploding_kernel"
        assert "test_kernel_exceptions_pass_through_unchanged" in frames


def test_exception_in_a_nested_call_keeps_its_type(ns, lib):
    lib.define("outer(Tensor x) -> Tensor")
    lib.define("inner(Tensor x) -> Tensor")
    lib.impl("inner", lambda x: {}["missing"], "CPU")
    lib.impl("outer", lambda x: getattr(ops, ns).inner(x), "CPU")
    with pytest.raises(KeyError, match="missing"):
        getattr(ops, ns).outer(tensor([1.0]))


def test_wrong_return_values_name_the_operator_and_return_index(ns, lib):
    lib.define("one(Tensor x) -> Tensor")
    lib.define("two(Tensor x) -> (Tensor, Tensor)")
    lib.define("none(Tensor x) -> ()")
    lib.impl("one", lambda x: 3, "CPU")
    lib.impl("none", lambda x: x, "CPU")
    x = tensor([1.0])
    namespace = getattr(ops, ns)
    with pytest.raises(TypeError, match=rf"{ns}::one: the Python kernel registered at CPU returned int for return 0 "
                                        r"but the schema declares Tensor"):
        namespace.one(x)
    with pytest.raises(TypeError, match=rf"{ns}::none: .*returned Tensor but the schema declares no return"):
        namespace.none(x)
    two_lib = Library(ns, "IMPL", "CPU")
    two_lib.impl("two", lambda x: (x, "nope"))
    with pytest.raises(TypeError, match=rf"{ns}::two: .*returned str for return 1 but the schema declares Tensor"):
        namespace.two(x)
    two_lib._destroy()
    two_lib = Library(ns, "IMPL", "CPU")
    two_lib.impl("two", lambda x: x)
    with pytest.raises(TypeError, match=rf"{ns}::two: .*declares 2 returns; return a tuple"):
        namespace.two(x)
    two_lib._destroy()
    lib.impl("two", lambda x: (x, x, x), "CPU")
    with pytest.raises(TypeError, match=rf"{ns}::two: .*returned 3 values but the schema declares 2"):
        namespace.two(x)


# --- with_keyset and redispatch ------------------------------------------------------


def test_autograd_kernel_redispatches_below_autograd(ns, lib):
    lib.define("double(Tensor x) -> Tensor")
    lib.impl("double", lambda x: tensor(as_numpy(x) * 2), "CPU")
    keysets = []

    def autograd_kernel(keyset, x):
        keysets.append(keyset)
        below = getattr(ops, ns).double.default.redispatch(keyset & _C._after_autograd_keyset, x)
        return tensor(below.numpy() + 1)

    lib.impl("double", autograd_kernel, "AutogradCPU", with_keyset=True)
    op = getattr(ops, ns).double
    np.testing.assert_allclose(op(tensor([1.0, 2.0])).numpy(), [2.0, 4.0])  # plain tensors skip autograd
    assert keysets == []
    np.testing.assert_allclose(op(requiring_grad([1.0, 2.0])).numpy(), [3.0, 5.0])
    assert len(keysets) == 1
    assert keysets[0].has(DK.AutogradCPU) and keysets[0].has(DK.CPU)
    with _C._AutoDispatchBelowAutograd():
        np.testing.assert_allclose(op(requiring_grad([1.0])).numpy(), [2.0])
    assert len(keysets) == 1


@pytest.mark.parametrize("keyword", [False, True], ids=["fast_path", "boxed"])
def test_redispatch_below_autograd_masks_the_keyset_and_excludes_autograd(ns, lib, keyword):
    lib.define("probe(Tensor x, float scale=1.0) -> Tensor")
    seen = []

    def cpu(x, scale=1.0):
        seen.append((_C._dispatch_tls_is_dispatch_key_excluded(_C.DispatchKey.AutogradCPU),
                     opdispatch.autograd.is_grad_enabled()))
        return tensor(as_numpy(x) * scale)

    lib.impl("probe", cpu, "CPU")
    op = getattr(ops, ns).probe.default

    def autograd_kernel(keyset, x, scale=1.0):
        return op._redispatch_below_autograd(keyset, x, scale=scale) if keyword else \
            op._redispatch_below_autograd(keyset, x, scale)

    lib.impl("probe", autograd_kernel, "Autograd", with_keyset=True)
    assert op(requiring_grad([2.0]), 3.0).tolist() == [6.0]
    # The autograd keys are excluded for the call only; grad mode, a flag of its own, stays on (as PyTorch).
    assert seen == [(True, True)] and not _C._dispatch_tls_is_dispatch_key_excluded(_C.DispatchKey.AutogradCPU)
    with pytest.raises(TypeError, match="argument 'keyset' must be a DispatchKeySet"):
        op._redispatch_below_autograd("CPU", tensor([1.0]))


def test_python_autograd_kernel_over_a_cpp_kernel(ns, lib):
    lib.define("ident(Tensor x) -> Tensor")
    lib.m.impl_t_t("ident", "CPU")  # C++ identity kernel
    calls = []

    def autograd_kernel(keyset, x):
        calls.append(x)
        return getattr(ops, ns).ident.default.redispatch(keyset & _C._after_autograd_keyset, x)

    lib.impl("ident", autograd_kernel, "AutogradCPU", with_keyset=True)
    x = requiring_grad([1.0])
    assert getattr(ops, ns).ident(x) is x
    assert calls == [x]


def test_python_and_cpp_kernels_chosen_by_the_input_keys(ns, lib):
    lib.define("which(Tensor x) -> Tensor")
    lib.m.impl_t_t("which", "CPU", "cpp_identity")
    lib.impl("which", lambda x: opdispatch.empty(list(x.shape) + [2], device="meta"), "Meta")
    op = getattr(ops, ns).which
    x = tensor([1.0, 2.0])
    assert op(x) is x  # C++ kernel
    m = opdispatch.empty([3], device="meta")
    out = op(m)  # Python kernel
    assert out.is_meta and tuple(out.shape) == (3, 2)
    table = _C._dispatch_dump_table(f"{ns}::which")
    assert "CPU: cpp_identity [kernel]" in table
    assert f"Meta: registered at {__file__}" in table


# --- backend fallbacks ---------------------------------------------------------------


def test_python_fallback_at_privateuse1(ns, lib, fallback_lib):
    lib.define("f(Tensor x, *, int k=0) -> Tensor")
    lib.impl("f", lambda x, *, k=0: tensor(x.numpy() + k), "CPU")
    calls = []

    def fallback(keyset, op, *args, **kwargs):
        calls.append((op, keyset, args, kwargs))
        return op.redispatch(keyset & _C._dispatch_keyset_full_after(DK.PrivateUse1), *args, **kwargs)

    fallback_lib.fallback(fallback, "PrivateUse1", with_keyset=True)
    assert _C._dispatch_has_backend_fallback(DK.PrivateUse1)
    op = getattr(ops, ns).f
    x = tensor([1.0])
    np.testing.assert_allclose(op(x, k=2).numpy(), [3.0])
    assert calls == []  # PrivateUse1 is not in the call's keys
    with _C._IncludeDispatchKeyGuard(_C.DispatchKeySet(DK.PrivateUse1)):
        np.testing.assert_allclose(op(x, k=2).numpy(), [3.0])
    assert len(calls) == 1
    seen_op, keyset, args, kwargs = calls[0]
    assert seen_op is op.default
    assert keyset.has(DK.PrivateUse1) and keyset.has(DK.CPU)
    assert args[0] is x and kwargs == {"k": 2}
    assert f"PrivateUse1: registered at {__file__}" in _C._dispatch_dump_table(f"{ns}::f")
    fallback_lib._destroy()
    assert not _C._dispatch_has_backend_fallback(DK.PrivateUse1)
    with _C._IncludeDispatchKeyGuard(_C.DispatchKeySet(DK.PrivateUse1)):
        with pytest.raises(NotImplementedError, match=rf"{ns}::f.*PrivateUse1"):
            op(x)


def test_python_fallback_for_meta_tensors(ns, lib, fallback_lib):
    lib.define("g(Tensor x) -> Tensor")
    lib.define("h(Tensor x) -> Tensor")
    lib.impl("g", lambda x: x, "CPU")
    lib.impl("h", lambda x: opdispatch.empty([7], device="meta"), "Meta")
    seen = []

    def meta_fallback(op, x):
        seen.append(op)
        return opdispatch.empty(list(x.shape), dtype=x.dtype, device="meta")

    fallback_lib.fallback(meta_fallback, "Meta")
    m = opdispatch.empty([2, 3], dtype=opdispatch.float64, device="meta")
    out = getattr(ops, ns).g(m)
    assert out.is_meta and tuple(out.shape) == (2, 3) and out.dtype == opdispatch.float64
    assert seen == [getattr(ops, ns).g.default]
    assert tuple(getattr(ops, ns).h(m).shape) == (7,)  # a kernel beats the fallback
    assert len(seen) == 1
    x = tensor([1.0])
    assert getattr(ops, ns).g(x) is x  # CPU tensors are untouched


def test_fallthrough_fallback(ns, lib, fallback_lib):
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: x, "CPU")
    fallback_lib.fallback(fallthrough_kernel, "PrivateUse1")
    x = tensor([1.0])
    with _C._IncludeDispatchKeyGuard(_C.DispatchKeySet(DK.PrivateUse1)):
        assert getattr(ops, ns).f(x) is x


def test_fallback_exceptions_pass_through(ns, lib, fallback_lib):
    lib.define("f(Tensor x) -> Tensor")

    def failing_fallback(op, *args, **kwargs):
        raise KernelError(f"no {op}")

    fallback_lib.fallback(failing_fallback, "PrivateUse1")
    with _C._IncludeDispatchKeyGuard(_C.DispatchKeySet(DK.PrivateUse1)):
        with pytest.raises(KernelError, match=rf"no {ns}.f.default"):
            getattr(ops, ns).f(tensor([1.0]))


# --- per-call checks (Note [Post-kernel effects]) -------------------------------------


@pytest.fixture
def checked(ns):
    """A _C library for `ns`: checked(schema, kernel) defines the operator with
    a CPU kernel registered with check_aliasing; returns it."""
    m = _C._dispatch_library("FRAGMENT", ns, "")

    def define(schema, kernel):
        name = m.define(schema)
        m.impl(name, "CPU", kernel, check_aliasing=True)
        return _C._DispatchOperator(f"{ns}::{name}", "")

    yield define
    m.reset()


@pytest.mark.parametrize("keyword", [False, True], ids=["fast_path", "boxed"])
def test_checked_kernel_may_not_return_an_input_or_a_view_of_it(checked, keyword):
    x = tensor([1.0, 2.0, 3.0])
    call = (lambda op, t: op(x=t)) if keyword else (lambda op, t: op(t))
    same = checked("same(Tensor x) -> Tensor", lambda x: x)
    with pytest.raises(RuntimeError, match=r"::same: return 0 of the Python kernel registered at CPU is the same "
                                           r"tensor as argument 'x'.*may not alias.*x\.clone\(\)"):
        call(same, x)
    view = checked("view(Tensor x) -> Tensor", lambda x: x[1:])
    with pytest.raises(RuntimeError, match="return 0 of the Python kernel registered at CPU shares memory with "
                                           "argument 'x'"):
        call(view, x)
    numpy_alias = checked("numpy_alias(Tensor x) -> Tensor", lambda x: opdispatch.from_numpy(x.numpy()[::2]))
    with pytest.raises(RuntimeError, match="shares memory with argument 'x'"):
        call(numpy_alias, x)
    fresh = checked("fresh(Tensor x) -> Tensor", lambda x: x.clone())
    out = call(fresh, x)
    assert out is not x and out.tolist() == [1.0, 2.0, 3.0]


def test_checked_kernel_outputs_may_not_alias_each_other_or_list_inputs(checked):
    x, y = tensor([1.0]), tensor([2.0])
    pair = checked("pair(Tensor x) -> (Tensor, Tensor)", lambda x: (lambda c: (c, c[0:1]))(x.clone()))
    with pytest.raises(RuntimeError, match="return 1 of the Python kernel registered at CPU shares memory with return 0"):
        pair(x)
    pick = checked("pick(Tensor[] xs) -> Tensor", lambda xs: xs[1])
    with pytest.raises(RuntimeError, match="return 0 .* is the same tensor as argument 'xs'"):
        pick([x, y])
    listed = checked("listed(Tensor x) -> Tensor[]", lambda x: [x.clone(), x])
    with pytest.raises(RuntimeError, match="return 0 .* is the same tensor as argument 'x'"):
        listed(x)
    # Returning another operator's output, or a tensor kept elsewhere, is fine.
    kept = tensor([5.0])
    assert checked("kept(Tensor x) -> Tensor", lambda x: kept)(x) is kept


@pytest.mark.parametrize("keyword", [False, True], ids=["fast_path", "boxed"])
def test_the_versions_of_mutable_arguments_are_bumped(checked, keyword):
    # The dispatcher bumps them for every kernel (Note [Post-kernel effects]).
    def scale_(x, y, maybe):
        x.numpy()[:] *= 2

    op = checked("scale_(Tensor(a!) x, Tensor y, Tensor(b!)? maybe) -> ()", scale_)
    x, y, z = tensor([1.0]), tensor([1.0]), tensor([1.0])
    view = x[0:1]
    if keyword:
        op(x, y=y, maybe=z)
    else:
        op(x, y, z)
    assert x.tolist() == [2.0]
    assert (x._version, view._version, y._version, z._version) == (1, 1, 0, 1)
    op(x, y, None)  # an absent optional is skipped
    assert (x._version, z._version) == (2, 1)

    lists = checked("fill_all_(Tensor(a!)[] xs, Tensor(b!)?[] ys) -> ()", lambda xs, ys: None)
    a, b = tensor([0.0]), tensor([0.0])
    lists([a, b], [None, a])
    assert (a._version, b._version) == (2, 1)


def test_a_fallthrough_at_ad_inplace_or_view_leaves_the_versions_alone(ns, lib):
    # PyTorch has an ADInplaceOrView kernel (which bumps) only for in-place and out= operators; an operator
    # without one bumps nothing, whatever it writes. In PyTorch 2.13 the running statistics of
    # torch.ops.aten._native_batch_norm_legit(torch.randn(4, 3), None, None, rm, rv, True, 0.1, 1e-5) keep
    # version 0, and a.add_(1) / torch.atan2(x, x, out=y) bump a / y once.
    lib.define("scale(Tensor(a!) x) -> ()")
    lib.impl("scale", lambda x: None, "CPU")
    x = tensor([1.0])
    getattr(ops, ns).scale(x)
    assert x._version == 1  # the dispatcher bumps (Note [Post-kernel effects])
    unbumped = Library(ns, "FRAGMENT")
    unbumped.impl("scale", fallthrough_kernel, "ADInplaceOrView")
    getattr(ops, ns).scale(x)
    assert x._version == 1
    unbumped._destroy()  # the registration gone, the dispatcher bumps again
    getattr(ops, ns).scale(x)
    assert x._version == 2

    rm, rv = opdispatch.zeros(3), opdispatch.ones(3)
    ops.od._native_batch_norm_legit(opdispatch.randn(4, 3), None, None, rm, rv, True, 0.1, 1e-5)
    assert rm.tolist() != [0.0] * 3 and (rm._version, rv._version) == (0, 0)
    a, y = opdispatch.zeros(2), opdispatch.zeros(2)
    a.add_(1)
    ops.od.atan2.out(a, a, out=y)
    assert (a._version, y._version) == (1, 1)


def test_unchecked_kernels_may_return_an_input(ns, lib):
    lib.define("same(Tensor(a!) x) -> Tensor(a!)")
    lib.impl("same", lambda x: x, "CPU")
    x = tensor([1.0])
    assert getattr(ops, ns).same(x) is x and x._version == 1  # bumped by the dispatcher, not a check


def test_checks_cannot_be_given_to_a_fallthrough(ns):
    m = _C._dispatch_library("FRAGMENT", ns, "")
    m.define("f(Tensor x) -> Tensor")
    with pytest.raises(ValueError, match="fallthrough kernel cannot take check_aliasing"):
        m.impl("f", "CPU", fallthrough_kernel, check_aliasing=True)
    m.reset()


def test_impl_takes_the_registration_site_from_the_caller(ns):
    m = _C._dispatch_library("FRAGMENT", ns, "")
    m.define("f(Tensor x) -> Tensor")
    m.impl("f", "CPU", lambda x: x, False, False, "user.py:7")  # positional, as custom_op calls it
    m.impl("f", "Meta", lambda x: x)
    table = _C._dispatch_dump_table(f"{ns}::f")
    assert "CPU: registered at user.py:7" in table
    assert f"Meta: registered at {__file__}" in table  # without a site: the Python call site
    m.reset()


def test_shares_memory():
    base = np.arange(6.0)
    a = opdispatch.from_numpy(base)
    b = opdispatch.from_numpy(base[3:])
    assert a._shares_memory(b) and not a._shares_storage(b)
    assert not b._shares_memory(opdispatch.from_numpy(base[:3].copy()))
    assert a._shares_memory(a[2:4]) and a._shares_memory(a)
    meta = opdispatch.empty(3, device="meta")
    assert meta._shares_memory(meta.view(3)) and not meta._shares_memory(opdispatch.empty(3, device="meta"))
    with pytest.raises(TypeError, match="expects a tensor"):
        a._shares_memory(3)
