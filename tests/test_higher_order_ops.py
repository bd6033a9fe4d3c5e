"""Higher-order operators: HigherOrderOperator's dispatch (per key, per mode
class, per tensor subclass), and the built-in cond and map — eager, autograd,
make_fx (one node with subgraphs, replayed on new inputs) and FakeTensorMode.
Behaviours of PyTorch's torch/_ops.py HigherOrderOperator,
test/test_python_dispatch.py (higher-order operators and modes) and
test/functorch/test_control_flow.py (the eager and make_fx cond tests that do
not need torch.compile), checked against PyTorch 2.13 with
torch.ops.higher_order.cond called directly. Deviations are noted."""
from __future__ import annotations

import numpy as np
import pytest

import opdispatch
from opdispatch import Tensor, _C, autograd, ops
from opdispatch._higher_order_ops import cond, map, map_impl
from opdispatch._ops import HigherOrderOperator
from opdispatch._subclasses.fake_tensor import FakeTensor, FakeTensorMode
from opdispatch.tracing import GraphModule, make_fx
from opdispatch.utils._python_dispatch import TorchDispatchMode

from _helpers import as_numpy, tensor

K = _C.DispatchKey


def close(a, b):
    value = lambda t: as_numpy(t) if isinstance(t, Tensor) else np.asarray(t)  # noqa: E731
    np.testing.assert_allclose(value(a), value(b), rtol=1e-5, atol=1e-6)


def grad_of(x):
    x = x.detach()
    x.requires_grad_(True)
    return x


_names = iter(range(10**6))


@pytest.fixture
def hop():
    """A new HigherOrderOperator with a CompositeExplicitAutograd kernel logging 'cea'."""
    op = HigherOrderOperator(f"test_hop_{next(_names)}")
    op.log = []
    op.py_impl(K.CompositeExplicitAutograd)(lambda x: op.log.append("cea") or opdispatch.add(x, 1.0))
    return op


# =====================================================================================
# HigherOrderOperator
# =====================================================================================


def test_a_higher_order_operator_is_found_in_ops_higher_order(hop):
    assert getattr(ops.higher_order, hop.name()) is hop
    assert hop.namespace == "higher_order" and str(hop) == hop.name() == hop.__name__
    assert hop.__module__ == "opdispatch.ops.higher_order"
    assert repr(hop) == f"opdispatch.ops.higher_order.{hop.name()}"
    assert hop.name() in list(ops.higher_order) and {"cond", "map_impl"} <= set(ops.higher_order)
    assert ops.higher_order.cond is cond.__globals__["cond_op"]
    with pytest.raises(AttributeError, match="no HigherOrderOperator of that name"):
        ops.higher_order.no_such_hop
    with pytest.raises(ValueError, match="Python identifier"):
        HigherOrderOperator("not a name")


def test_kernels_are_chosen_per_key(hop):
    close(hop(tensor([1.0])), [2.0])
    assert hop(opdispatch.ones(2, device="meta")).is_meta  # CompositeExplicitAutograd serves every backend
    hop.py_impl(K.Meta)(lambda x: hop.log.append("meta") or x)
    hop(opdispatch.ones(2, device="meta"))
    assert hop.log == ["cea", "cea", "meta"]


def test_the_key_set_comes_from_the_flattened_arguments_and_the_tls():
    hop = HigherOrderOperator(f"test_hop_{next(_names)}")
    hop.py_impl(K.CompositeExplicitAutograd)(lambda d: "cea")
    hop.py_impl(K.Meta)(lambda d: "meta")
    assert hop({"a": [opdispatch.ones(1, device="meta")]}) == "meta"  # a tensor deep in a pytree
    assert hop({"a": [tensor([1.0])]}) == "cea"
    with _C._IncludeDispatchKeyGuard(_C.DispatchKeySet(K.Meta)):
        assert hop({"a": [tensor([1.0])]}) == "meta"
    with _C._ExcludeDispatchKeyGuard(_C.DispatchKeySet(K.Meta)):
        assert hop({"a": [opdispatch.ones(1, device="meta")]}) == "cea"
    assert hop(None) == "cea" and hop(3) == "cea"  # no tensor: Undefined, served by CompositeExplicitAutograd


def test_autograd_kernel_and_fallthrough(hop):
    hop.py_impl(K.Autograd)(lambda x: hop.log.append("autograd") or opdispatch.mul(x, 10.0))
    close(hop(tensor([1.0])), [2.0])  # deviation: no autograd key on a tensor that needs no grad
    x = grad_of(tensor([1.0]))
    y = hop(x)
    close(y, [10.0])
    assert y.grad_fn is not None
    assert hop.log == ["cea", "autograd"]
    hop.fallthrough(K.AutogradCPU)  # PyTorch: skipped, the CompositeExplicitAutograd kernel runs
    y = hop(x)
    close(y, [2.0])
    assert y.grad_fn is not None and hop.log[-1] == "cea"
    assert not hop.non_fallthrough_keys.has(K.ADInplaceOrView)  # the default fallthroughs
    assert not hop.non_fallthrough_keys.has(K.PythonDispatcher)
    hop.py_impl(K.ADInplaceOrView)(lambda x: "inplace-or-view")
    assert hop.non_fallthrough_keys.has(K.ADInplaceOrView)
    with pytest.raises(ValueError, match="Autograd is an alias key"):
        hop.fallthrough(K.Autograd)


def test_a_missing_kernel_names_the_operator_and_key():
    hop = HigherOrderOperator(f"test_hop_{next(_names)}")
    hop.py_impl(K.Meta)(lambda x: x)
    with pytest.raises(NotImplementedError, match=rf"HigherOrderOperator {hop.name()} at dispatch key CPU"):
        hop(tensor([1.0]))


def test_dispatch_runs_a_given_key(hop):
    hop.py_impl(K.Autograd)(lambda x: "autograd")
    assert hop.dispatch(K.AutogradCPU, tensor([1.0])) == "autograd"
    close(hop.dispatch(K.CPU, tensor([1.0])), [2.0])


def test_py_impl_errors(hop, ns, lib):
    with pytest.raises(RuntimeError, match=rf"Trying to override a python impl for CompositeExplicitAutograd on "
                                           rf"operator {hop.name()}"):
        hop.py_impl(K.CompositeExplicitAutograd)(lambda x: x)
    with pytest.raises(ValueError, match="register a mode"):
        hop.py_impl(K.Python)(lambda x: x)
    with pytest.raises(TypeError, match="Input function is required to be a callable"):
        hop.py_impl(K.CPU)(3)
    with pytest.raises(TypeError, match="expected an opdispatch._C.DispatchKey or a TorchDispatchMode subclass"):
        hop.py_impl("CPU")(lambda x: x)
    lib.define("f(Tensor x) -> Tensor")
    with pytest.raises(TypeError, match="per-tensor-subclass kernels are for HigherOrderOperator.*"
                                        "register_torch_dispatch"):
        getattr(ops, ns).f.default.py_impl(Subclass)(lambda x: x)
    assert hop.non_fallthrough_keys.has(K.CPU)  # failed registrations change nothing


# --- the Python key: modes and subclasses ---------------------------------------------------


class Passthrough(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


class Subclass(Tensor):
    """A _make_subclass tensor with __torch_dispatch__ (carries the Python key)."""

    @staticmethod
    def __new__(cls, elem):
        return Tensor._make_subclass(cls, elem)

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        return NotImplemented


def test_a_mode_without_a_rule_is_an_error(hop):
    x = tensor([1.0])
    with Passthrough(), pytest.raises(NotImplementedError,
                                      match=rf"There was no rule registered for HigherOrderOperator {hop.name()} "
                                            r"and mode .*Passthrough"):
        hop(x)


def test_a_mode_rule_runs_with_the_mode_popped(hop):
    @hop.py_impl(Passthrough)
    def in_mode(mode, x):
        hop.log.append(("mode", type(mode).__name__, _C._len_torch_dispatch_stack()))
        return opdispatch.mul(hop(x), 2.0)

    x = tensor([1.0])
    with Passthrough():
        close(hop(x), [4.0])
    # PyTorch: the rule gets the mode ("natural" convention), with the stack empty inside.
    assert hop.log == [("mode", "Passthrough", 0), "cea"]


def test_supports_higher_order_operators_sends_the_call_to_torch_dispatch():
    # PyTorch's test_custom_dispatch_mode_(not_)supports_higher_order_operators.
    seen = []

    class Mode(TorchDispatchMode):
        supports_higher_order_operators = True

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append((func, types, len(args)))
            if func is ops.higher_order.cond:
                return opdispatch.ones(3, 3)
            return NotImplemented

    class NotSupporting(Mode):
        supports_higher_order_operators = False

    pred = opdispatch.tensor(True)
    x = opdispatch.randn(1, 1)
    with Mode():
        out = cond(pred, lambda x: x.sin(), lambda x: x.cos(), (x,))
    close(out, np.ones((3, 3)))
    assert seen == [(ops.higher_order.cond, (), 4)]
    with pytest.raises(NotImplementedError, match="There was no rule registered for HigherOrderOperator cond and mode"):
        with NotSupporting():
            cond(pred, lambda x: x.sin(), lambda x: x.cos(), (x,))


def test_subclass_rules(hop):
    s = Subclass(tensor([1.0]))
    with pytest.raises(NotImplementedError, match=rf"no rule registered for HigherOrderOperator {hop.name()} and "
                                                  r"tensor subclass Subclass"):
        hop(s)
    hop.py_impl(Subclass)(lambda x: ("subclass", type(x).__name__))
    assert hop(s) == ("subclass", "Subclass")  # natural calling convention: no mode argument

    @hop.py_impl(Passthrough)
    def mode_passes(mode, x):
        return NotImplemented

    with Passthrough():
        assert hop(s) == ("subclass", "Subclass")  # the mode passed: the subclass gets it
    hop.python_key_table[Subclass] = lambda x: NotImplemented
    hop._dispatch_cache.clear()
    with pytest.raises(TypeError, match=rf"HigherOrderOperator '{hop.name()}' is not supported for the given input "
                                        r"types.*Subclass"):
        hop(s)


def test_a_fake_tensor_outside_its_mode_uses_the_modes_rule():
    mode = FakeTensorMode()
    fake = mode.from_tensor(opdispatch.randn(3))
    out = cond(opdispatch.tensor(True), lambda x: x + 1, lambda x: x * 2, (fake,))
    assert isinstance(out, FakeTensor) and out.fake_mode is mode and tuple(out.shape) == (3,)


# =====================================================================================
# cond: eager
# =====================================================================================


def test_cond_no_trace():
    x = opdispatch.randn(4)
    close(cond(False, lambda x: x.sin(), lambda x: x.cos(), [x]), x.cos())
    close(cond(opdispatch.tensor(True), lambda x: x.sin(), lambda x: x.cos(), [x]), x.sin())
    close(cond(opdispatch.tensor(0.0), lambda x: x + 1, lambda x: x - 1, (x,)), x - 1)  # any one-element tensor


def test_cond_validates_its_arguments():
    x = opdispatch.randn(4)
    with pytest.raises(RuntimeError, match="Expected pred to be bool or single-element tensor"):
        cond(opdispatch.tensor([True, False]), lambda x: x, lambda x: x, (x,))
    with pytest.raises(RuntimeError, match="Expected pred to be bool or tensor, but got str"):
        cond("yes", lambda x: x, lambda x: x, (x,))
    with pytest.raises(RuntimeError, match="Expect both branches to be callable"):
        cond(True, lambda x: x, 3, (x,))
    with pytest.raises(RuntimeError, match="Expect operands to be a tuple of possibly nested dict/list/tuple that "
                                           "only consists of tensor leaves"):
        cond(True, lambda x, y: x, lambda x, y: x, (x, 3))
    with pytest.raises(RuntimeError, match="Expect operands to be a tuple"):
        cond(True, lambda x: x, lambda x: x, x)


@pytest.mark.parametrize("pred", [False, True])
def test_cond_autograd_simple(pred):
    def true_fn(x):
        return x.sin()

    def false_fn(x):
        return x.cos()

    fn = true_fn if pred else false_fn
    x = grad_of(opdispatch.randn(4))
    result = cond(opdispatch.tensor(pred), true_fn, false_fn, (x,))
    close(result, fn(x))
    assert type(result.grad_fn).__name__ == "_CondAutogradBackward"
    grads = autograd.grad(result, (x,), opdispatch.ones_like(result))
    expected = autograd.grad(fn(x), (x,), opdispatch.ones_like(result))
    close(grads[0], expected[0])


@pytest.mark.parametrize("pred", [False, True])
def test_cond_autograd_complex(pred):
    def true_fn(x):
        return ((x ** 2).sin()).abs()

    def false_fn(x):
        return (x + 42).cos()

    fn = true_fn if pred else false_fn
    x = grad_of(opdispatch.randn(4))
    result = cond(opdispatch.tensor(pred), true_fn, false_fn, (x,))
    close(result, fn(x))
    close(autograd.grad(result, (x,), opdispatch.ones_like(result))[0],
          autograd.grad(fn(x), (x,), opdispatch.ones_like(result))[0])


def test_cond_autograd_nested():
    def nested(p0, p1, p2, a, b, c):
        def true_fn(x0, y0, z0):
            def true_true_fn(x1, y1, z1):
                return (x1 - y1 * z1) * 3.14

            def true_false_fn(x1, y1, z1):
                return cond(p2, lambda x2, y2, z2: (x2 * y2 * z2) / 2.71,
                            lambda x2, y2, z2: (x2 + y2 + z2) * 1.23, [x1, y1, z1])

            return cond(p1, true_true_fn, true_false_fn, [x0, y0, z0])

        def false_fn(x0, y0, z0):
            def false_true_fn(x1, y1, z1):
                return cond(p2, lambda x2, y2, z2: (x2 - y2 - z2) + 1.23,
                            lambda x2, y2, z2: (x2 / y2 / z2) - 3.14, [x1, y1, z1])

            return cond(p1, false_true_fn, lambda x1, y1, z1: (x1 - y1 * z1) / 2.71, [x0, y0, z0])

        return cond(p0, true_fn, false_fn, [a, b, c])

    T, F = opdispatch.tensor(True), opdispatch.tensor(False)

    def true_fn(x):
        return nested(F, T, F, x, x, x)

    def false_fn(x):
        return nested(T, F, T, x, x, x)

    x = grad_of(opdispatch.randn(4))
    for pred, fn in [(F, false_fn), (T, true_fn)]:
        result = cond(pred, true_fn, false_fn, (x,))
        close(result, fn(x))
        close(autograd.grad(result, (x,), opdispatch.ones_like(result))[0],
              autograd.grad(fn(x), (x,), opdispatch.ones_like(result))[0])


@pytest.mark.parametrize("pred", [False, True])
def test_cond_autograd_mixed_require_grad(pred):
    def true_fn(x, y, z):
        return x * y * z

    def false_fn(x, y, z):
        return x + y + z

    fn = true_fn if pred else false_fn
    x = grad_of(opdispatch.randn(4))
    y = opdispatch.randn(4)
    result = cond(opdispatch.tensor(pred), true_fn, false_fn, (x, y, x))
    close(result, fn(x, y, x))
    close(autograd.grad(result, (x,), opdispatch.ones_like(result))[0],
          autograd.grad(fn(x, y, x), (x,), opdispatch.ones_like(result))[0])


def test_cond_autograd_pytree_operands_and_unused_inputs():
    # PyTorch 2.13 (torch.ops.higher_order.cond on the flattened operands): an operand the taken
    # branch does not use gets a zero gradient.
    def true_fn(x):
        return x["t"][0] + x["t"][1]["b"]

    def false_fn(x):
        return x["t"][0] * (x["t"][2][0] / x["t"][1]["b"])

    a, b, c = (grad_of(opdispatch.randn(4)) for _ in range(3))
    for pred, fn in [(True, true_fn), (False, false_fn)]:
        operands = ({"t": [a, {"b": b}, (c,)]},)
        result = cond(opdispatch.tensor(pred), true_fn, false_fn, operands)
        close(result, fn(*operands))
        grads = autograd.grad(result, (a, b, c), opdispatch.ones_like(result))
        if pred:
            close(grads[0], np.ones(4))
            close(grads[1], np.ones(4))
            close(grads[2], np.zeros(4))
        else:
            expected = autograd.grad(fn(*operands), (a, b, c), opdispatch.ones_like(result))
            for g, e in zip(grads, expected):
                close(g, e)


def test_cond_autograd_same_pytree_output():
    def true_fn(x):
        return {"res": [x["t"][0], (x["t"][2][0],)]}

    def false_fn(x):
        return {"res": [x["t"][1]["b"], (x["t"][2][0],)]}

    a, b, c = (grad_of(opdispatch.randn(4)) for _ in range(3))
    for pred, fn in [(False, false_fn), (True, true_fn)]:
        operands = ({"t": [a, {"b": b}, (c,)]},)
        result = cond(opdispatch.tensor(pred), true_fn, false_fn, operands)
        assert list(result) == ["res"] and isinstance(result["res"][1], tuple)
        expected = fn(*operands)
        close(result["res"][0], expected["res"][0])
        leaves = [result["res"][0], result["res"][1][0]]
        grads = autograd.grad(leaves, (c,), [opdispatch.ones_like(t) for t in leaves])
        close(grads[0], np.ones(4))


def test_cond_identity_branch_and_no_grad():
    x = grad_of(opdispatch.randn(3))
    r = cond(opdispatch.tensor(True), lambda x: x, lambda x: x * 2, (x,))
    close(autograd.grad(r, (x,), opdispatch.ones_like(r))[0], np.ones(3))
    with opdispatch.no_grad():
        r = cond(opdispatch.tensor(True), lambda x: x.sin(), lambda x: x.cos(), (x,))
    assert not r.requires_grad


def test_cond_in_forloop():
    x = grad_of(opdispatch.ones(4))
    z = x
    for i in range(3):
        z = cond(opdispatch.tensor(i < 3), lambda z: z * z + 1, lambda z: z, (z,))
    # PyTorch 2.13: [26, 26, 26, 26] and gradient 80 everywhere.
    close(z, np.full(4, 26.0))
    close(autograd.grad(z, (x,), opdispatch.ones_like(z))[0], np.full(4, 80.0))


# =====================================================================================
# cond: make_fx
# =====================================================================================


@pytest.mark.parametrize("tracing_mode", ["real", "fake"])
def test_cond_traced_not_nested(tracing_mode):
    def f(x, y):
        return cond(y, lambda x: x.sin(), lambda x: x.cos(), [x])

    x = opdispatch.randn(4)
    graph = make_fx(f, tracing_mode=tracing_mode)(x, opdispatch.tensor(False))
    close(graph(x, opdispatch.tensor(True)), x.sin())
    close(graph(x, opdispatch.tensor(False)), x.cos())
    assert graph.code == """\
def forward(self, x_1, y_1):
    true_graph_0 = self.true_graph_0
    false_graph_0 = self.false_graph_0
    cond = opdispatch.ops.higher_order.cond(y_1, true_graph_0, false_graph_0, (x_1,))
    return cond"""
    assert isinstance(graph.true_graph_0, GraphModule)
    assert graph.true_graph_0.code == """\
def forward(self, x_1):
    sin = opdispatch.ops.od.sin.default(x_1)
    return sin"""
    assert [n.op for n in graph.nodes] == ["placeholder", "placeholder", "get_attr", "get_attr", "call_function",
                                           "output"]


@pytest.mark.parametrize("tracing_mode", ["real", "fake"])
def test_cond_nested_traced(tracing_mode):
    def true_fn(x, pred2):
        z = cond(pred2, lambda y: y * y, lambda y: y + y, [x])
        return x + z

    def f(x, pred, pred2):
        return cond(pred, true_fn, lambda x, _: x.cos(), [x, pred2])

    T, F = opdispatch.tensor(True), opdispatch.tensor(False)
    x = opdispatch.randn(4)
    # Two tensors: the trace tells inputs apart by identity (as PyTorch's does).
    graph = make_fx(f, tracing_mode=tracing_mode)(x, opdispatch.tensor(False), opdispatch.tensor(False))
    close(graph(x, T, T), x * x + x)
    close(graph(x, T, F), x + x + x)
    close(graph(x, F, T), x.cos())
    close(graph(x, F, F), x.cos())
    assert "cond = opdispatch.ops.higher_order.cond(pred2_1, true_graph_0, false_graph_0, (x_1,))" in \
        graph.true_graph_0.code  # the nested cond: a node of the true branch's subgraph


@pytest.mark.parametrize("tracing_mode", ["real", "fake"])
def test_cond_nested_traced_other_inputs(tracing_mode):
    def true_fn(k, pred2):
        z = cond(pred2, lambda y: y * y, lambda y: y + y, [k])
        return opdispatch.add(opdispatch.tensor([0.25, 0.25]), z)

    def f(k, pred, pred2):
        return cond(pred, true_fn, lambda k, _: k.cos(), [k, pred2])

    T, F = opdispatch.tensor(True), opdispatch.tensor(False)
    graph = make_fx(f, tracing_mode=tracing_mode)(opdispatch.tensor([0.5, 0.5]), F, F)
    for v in (1.0, 2.0):
        a = opdispatch.tensor([v, v])
        close(graph(a, T, T), a * a + 0.25)


@pytest.mark.parametrize("tracing_mode", ["real", "fake"])
def test_cond_nested_traced_multi(tracing_mode):
    def f(x, pred, pred2):
        a_out = cond(pred, lambda y: y * y, lambda y: y + y, [x])
        b_out = cond(pred2, lambda y, z: y + z, lambda y, z: y * z, [x, x])
        return a_out + b_out

    x = opdispatch.randn(4)
    graph = make_fx(f, tracing_mode=tracing_mode)(x, opdispatch.tensor(False), opdispatch.tensor(False))
    assert graph.code == """\
def forward(self, x_1, pred_1, pred2_1):
    true_graph_0 = self.true_graph_0
    false_graph_0 = self.false_graph_0
    cond = opdispatch.ops.higher_order.cond(pred_1, true_graph_0, false_graph_0, (x_1,))
    true_graph_1 = self.true_graph_1
    false_graph_1 = self.false_graph_1
    cond_1 = opdispatch.ops.higher_order.cond(pred2_1, true_graph_1, false_graph_1, (x_1, x_1))
    add = opdispatch.ops.od.add.Tensor(cond, cond_1)
    return add"""
    assert graph.true_graph_0.code == """\
def forward(self, y_1):
    mul = opdispatch.ops.od.mul.Tensor(y_1, y_1)
    return mul"""
    close(graph(x, opdispatch.tensor(True), opdispatch.tensor(True)), x * x + x + x)


@pytest.mark.parametrize("tracing_mode", ["real", "fake"])
def test_cond_branches_returning_different_structures_are_an_error(tracing_mode):
    # PyTorch's test_assert_on_mismatch_type_size(_fake_tensor) (CondOpArgsMismatchError there).
    def f(x, y):
        return cond(y, lambda x: x.sin(), lambda x: (x, x), [x])

    with pytest.raises(RuntimeError, match="cond: the branches return different structures"):
        make_fx(f, tracing_mode=tracing_mode)(opdispatch.randn(4), opdispatch.tensor(False))


def test_cond_branches_with_different_metadata():
    def f(x, y):
        return cond(y, lambda x: x.sin(), lambda x: opdispatch.zeros(10, 10), [x])

    # PyTorch 2.13: the real trace (through torch.compile there) requires the same dim and dtype
    # ("When merging two branches' output in torch.cond,  expected same dim but got 1 and 2."), not the same
    # sizes; the fake one compares all metadata here (a documented difference: PyTorch makes sizes symbols).
    with pytest.raises(RuntimeError, match="When merging two branches' output in cond, expected same dim but got "
                                           "1 and 2"):
        make_fx(f)(opdispatch.randn(4), opdispatch.tensor(False))
    with pytest.raises(RuntimeError, match="expected same dtype but got opdispatch.float32 and opdispatch.float64"):
        make_fx(lambda x, y: cond(y, lambda x: x.sin(), lambda x: x.double(), [x]))(
            opdispatch.randn(4), opdispatch.tensor(False))

    def g(x, y):
        return cond(y, lambda x: x.sin(), lambda x: opdispatch.zeros(5), [x])

    graph = make_fx(g)(opdispatch.randn(4), opdispatch.tensor(False))
    assert tuple(graph(opdispatch.randn(4), opdispatch.tensor(True)).shape) == (4,)
    with pytest.raises(RuntimeError, match=r"output 0 has shape \(4,\) in true_fn and \(10, 10\) in false_fn"):
        make_fx(f, tracing_mode="fake")(opdispatch.randn(4), opdispatch.tensor(False))


def test_cond_closures_are_lifted_into_the_subgraphs():
    def f(x, y, pred):
        return cond(pred, lambda x: x * y, lambda x: x - y.sin(), (x,))

    x, y = opdispatch.randn(3), opdispatch.randn(3)
    for tracing_mode in ("real", "fake"):
        graph = make_fx(f, tracing_mode=tracing_mode)(x, y, opdispatch.tensor(True))
        assert "cond(pred_1, true_graph_0, false_graph_0, (x_1, y_1))" in graph.code
        assert graph.false_graph_0.code.startswith("def forward(self, x_1, y_1):")
        x2, y2 = opdispatch.randn(3), opdispatch.randn(3)  # new values, also for the closed-over y
        close(graph(x2, y2, opdispatch.tensor(True)), x2 * y2)
        close(graph(x2, y2, opdispatch.tensor(False)), x2 - y2.sin())


def test_cond_pytree_operands_and_outputs_replay():
    def f(a, b, pred):
        return cond(pred, lambda d: {"s": d["a"] + d["b"], "l": [d["a"]]},
                    lambda d: {"s": d["a"] * d["b"], "l": [d["b"]]}, ({"a": a, "b": b},))

    a, b = opdispatch.randn(2), opdispatch.randn(2)
    graph = make_fx(f)(a, b, opdispatch.tensor(True))
    out = graph(a, b, opdispatch.tensor(False))
    assert list(out) == ["s", "l"]
    close(out["s"], a * b)
    close(out["l"][0], b)
    assert "operator.getitem(cond, 's')" in graph.code


@pytest.mark.parametrize("tracing_mode", ["real", "fake"])
def test_cond_autograd_traced(tracing_mode):
    # PyTorch's test_cond_autograd_simple under make_fx: the forward and the backward are each
    # one cond node, so the graph computes the gradient of whichever branch the new pred picks.
    def f(pred, x):
        result = cond(pred, lambda x: x.sin(), lambda x: x.cos(), (x,))
        return autograd.grad(result, (x,), opdispatch.ones_like(result))

    x = grad_of(opdispatch.randn(4))
    graph = make_fx(f, tracing_mode=tracing_mode)(opdispatch.tensor(False), x)
    assert graph.code.count("opdispatch.ops.higher_order.cond(") == 2
    x2 = opdispatch.randn(4)
    close(graph(opdispatch.tensor(True), x2)[0], x2.cos())
    close(graph(opdispatch.tensor(False), x2)[0], -x2.sin())


# =====================================================================================
# cond: FakeTensorMode
# =====================================================================================


@pytest.mark.parametrize("false_fn, message", [
    (lambda x: x.double(), "output 0 has dtype opdispatch.float32 in true_fn and opdispatch.float64 in false_fn"),
    (lambda x: x.sum(), r"output 0 has shape \(3,\) in true_fn and \(\) in false_fn"),
    (lambda x: opdispatch.zeros(3, device="cuda"), "output 0 has device cpu in true_fn and cuda in false_fn"),
    (lambda x: (x, x), "the branches return different structures"),
    (lambda x: opdispatch.zeros(3, 2).transpose(0, 1)[0], r"output 0 has stride \(1,\) in true_fn and \(2,\) in "
                                                          r"false_fn"),
])
def test_cond_under_fake_tensor_mode_requires_the_branches_to_agree(false_fn, message):
    mode = FakeTensorMode()
    x = mode.from_tensor(opdispatch.randn(3))
    with mode, pytest.raises(RuntimeError, match="cond: " + ".*" + message):
        cond(opdispatch.tensor(True), lambda x: x + 1, false_fn, (x,))


def test_cond_under_fake_tensor_mode_returns_fakes():
    with FakeTensorMode() as mode:
        x = mode.from_tensor(opdispatch.randn(3, 2))
        out = cond(opdispatch.tensor(True), lambda x: x.sin(), lambda x: x * 2, (x,))
    assert isinstance(out, FakeTensor) and tuple(out.shape) == (3, 2)


# =====================================================================================
# map
# =====================================================================================


def test_map_eager():
    xs = opdispatch.randn(4, 3)
    w = opdispatch.randn(3)
    close(map(lambda x, w: x * w + 1, xs, w), xs * w + 1)
    out = map(lambda d, w: {"sum": d["a"] + d["b"][0], "w": [w]}, {"a": xs, "b": [xs * 2]}, w)
    close(out["sum"], xs * 3)
    assert tuple(out["w"][0].shape) == (4, 3)
    close(map_impl(lambda x: x.sum(), [xs], []), xs.sum(1))


def test_map_validates_its_arguments():
    with pytest.raises(RuntimeError, match="leading dimensions of mapped xs cannot be 0"):
        map(lambda x: x, opdispatch.zeros(0, 2))
    with pytest.raises(RuntimeError, match="must be consistent"):
        map(lambda x, y: x, [opdispatch.zeros(2), opdispatch.zeros(3)])
    with pytest.raises(RuntimeError, match="can only consist of tensors"):
        map(lambda x: x, [opdispatch.zeros(2), 3])
    with pytest.raises(RuntimeError, match="must return tensors only"):
        map(lambda x: 3, opdispatch.zeros(2))


def test_map_autograd_matches_the_unrolled_loop():
    xs = grad_of(opdispatch.randn(4, 3))
    w = grad_of(opdispatch.randn(3))
    out = map(lambda x, w: (x * w).sin(), xs, w)
    unrolled = opdispatch.stack([(xs.select(0, i) * w).sin() for i in range(4)])
    close(out, unrolled)
    g = opdispatch.randn(4, 3)
    got = autograd.grad(out, (xs, w), g)
    expected = autograd.grad(unrolled, (xs, w), g)
    close(got[0], expected[0])
    close(got[1], expected[1])  # the argument's gradient sums the steps'


@pytest.mark.parametrize("tracing_mode", ["real", "fake"])
def test_map_traced(tracing_mode):
    def f(xs, w):
        return map(lambda x, w: x * w + 1, xs, w)

    graph = make_fx(f, tracing_mode=tracing_mode)(opdispatch.randn(4, 3), opdispatch.randn(3))
    assert graph.code == """\
def forward(self, xs_1, w_1):
    body_graph_0 = self.body_graph_0
    map_impl = opdispatch.ops.higher_order.map_impl(body_graph_0, [xs_1], [w_1])
    return map_impl"""
    assert graph.body_graph_0.code == """\
def forward(self, arg0_1, arg1_1):
    mul = opdispatch.ops.od.mul.Tensor(arg0_1, arg1_1)
    add = opdispatch.ops.od.add.Scalar(mul, 1)
    return add"""
    xs, w = opdispatch.randn(6, 3), opdispatch.randn(3)  # another leading size replays too
    close(graph(xs, w), xs * w + 1)


def test_map_under_fake_tensor_mode():
    with FakeTensorMode() as mode:
        xs = mode.from_tensor(opdispatch.randn(5, 2, 3))
        out = map(lambda x: x.transpose(0, 1), xs)
    assert isinstance(out, FakeTensor) and tuple(out.shape) == (5, 3, 2) and out.is_contiguous()


def test_map_autograd_traced():
    def f(xs, w):
        out = map(lambda x, w: (x * w).sin(), xs, w)
        return autograd.grad(out, (xs, w), opdispatch.ones_like(out))

    xs, w = grad_of(opdispatch.randn(4, 3)), grad_of(opdispatch.randn(3))
    graph = make_fx(f, tracing_mode="fake")(xs, w)
    assert graph.code.count("map_impl(") == 2
    xs2, w2 = grad_of(opdispatch.randn(4, 3)), grad_of(opdispatch.randn(3))
    got = graph(xs2, w2)
    unrolled = opdispatch.stack([(xs2.select(0, i) * w2).sin() for i in range(4)])
    expected = autograd.grad(unrolled, (xs2, w2), opdispatch.ones_like(unrolled))
    close(got[0], expected[0])
    close(got[1], expected[1])

