"""Autograd through the dispatcher: gradcheck of every differentiable
built-in operator, and the engine (graph sharing, accumulation,
retain_graph, higher order, grad mode, in-place rules, version counters)."""
from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import opdispatch
from opdispatch import _C
from opdispatch.autograd import GradcheckError, gradcheck
from opdispatch.library import Library, _scoped_library
from op_db import OPS, float_arrays, instantiate

GRAD_CASES = [pytest.param(info, sample, id=f"{info.name}-{i}")
              for info in OPS if info.grad for i, sample in enumerate(info.samples) if float_arrays(sample)]


def _leaf(a: np.ndarray) -> opdispatch.Tensor:
    return opdispatch.tensor(a.astype(np.float64), requires_grad=True)


@pytest.mark.parametrize("info,sample", GRAD_CASES)
def test_gradcheck(info, sample):
    leaves = [_leaf(a) for a in float_arrays(sample)]

    def fn(*ts):
        args, kwargs = instantiate(sample, "cpu", leaves=iter(ts))
        if info.inplace:
            args = (args[0].clone(),) + args[1:]
        out = info.op(*args, **kwargs)
        if info.differentiable_outputs is not None:
            return tuple(out[i] for i in info.differentiable_outputs)
        return out

    assert gradcheck(fn, leaves)


#: CompositeImplicitAutograd operators whose decomposition casts a float32 input before the node that records.
_CASTING_DECOMPOSITIONS = {"od::softmax", "od::log_softmax"}


@pytest.mark.parametrize("info,sample", GRAD_CASES)
def test_formulas_give_float32_inputs_float32_gradients(info, sample):
    """Every gradient a formula returns for a float32 input is float32 when the
    operator computed in float32 (an integer operand may promote the output:
    then the engine casts, Note [Gradients of broadcast and promoted inputs]),
    and every leaf's .grad has the leaf's dtype."""
    leaves = [opdispatch.tensor(a.astype(np.float32), requires_grad=True) for a in float_arrays(sample)]
    args, kwargs = instantiate(sample, "cpu", leaves=iter(leaves), float_dtype=np.float32)
    if info.inplace:
        args = (args[0].clone(),) + args[1:]
    result = info.op(*args, **kwargs)
    outs = list(result) if isinstance(result, (tuple, list)) else [result]
    if info.differentiable_outputs is not None:
        outs = [outs[i] for i in info.differentiable_outputs]
    recorded = [o for o in outs if o.grad_fn is not None]
    if not recorded:  # copy_ into an integer tensor, contiguous returning its input: nothing was computed
        assert all(not o.dtype.is_floating_point or any(o is leaf for leaf in leaves) for o in outs)
        return
    outs = recorded
    for out in outs:
        node = out.grad_fn
        grads = [None] * node.num_outputs
        grads[out._autograd_meta.output_nr] = opdispatch.ones_like(out)
        with opdispatch.autograd.no_grad():
            input_grads = node.apply(grads)
        for (nxt, nr), g in zip(node.next_functions, input_grads):
            if g is None or nxt is None:
                continue
            expected = nxt.input_metadata(nr)[1]
            if expected is not opdispatch.float32:  # an intermediate a decomposition cast (softmax.int's dtype=)
                assert info.op._schema.name in _CASTING_DECOMPOSITIONS, f"{node.name()} has a {expected} input"
                continue
            if out.dtype is opdispatch.float32:
                assert g.dtype is opdispatch.float32, f"{node.name()} gives a float32 input a {g.dtype} gradient"
    opdispatch.autograd.backward(outs, [opdispatch.ones_like(o) for o in outs])
    for leaf in leaves:
        assert leaf.grad is None or leaf.grad.dtype is opdispatch.float32


def test_differentiable_ops_are_all_gradchecked():
    checked = {case.values[0].name for case in GRAD_CASES}
    assert checked == {info.name for info in OPS if info.grad}
    assert len(checked) >= 60


def test_gradcheck_catches_a_wrong_formula():
    lib = Library("gradcheck_test", "DEF")
    lib.define("twice(Tensor x) -> Tensor")
    lib.impl("twice", lambda x: opdispatch.from_numpy(x.numpy(force=True) * 2), "CPU")
    op = _C._DispatchOperator("gradcheck_test::twice", "")
    from opdispatch._library.autograd import make_autograd_kernel
    lib.impl("twice", make_autograd_kernel(op, lambda ctx, g: g * 3), "Autograd", with_keyset=True)
    x = opdispatch.ones(2, dtype=opdispatch.float64, requires_grad=True)
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        gradcheck(op, (x,))
    lib._destroy()


# --- integer outputs ------------------------------------------------------------------------

def test_integer_and_bool_outputs_get_no_grad():
    x = opdispatch.randn(2, 3, requires_grad=True)
    assert not (x > 0).requires_grad and (x == x).grad_fn is None
    assert not x.argmax().requires_grad
    values, indices = x.max(1)
    assert values.requires_grad and not indices.requires_grad
    with pytest.raises(RuntimeError, match="only Tensors of floating point"):
        opdispatch.ones(2, dtype=opdispatch.int64).requires_grad_()


# --- the engine -----------------------------------------------------------------------------------

def test_shared_subgraph_gradients_add_up():
    x = opdispatch.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    z = y + y * 3 + y.exp()
    z.sum().backward()
    xs = np.array([1.0, 2.0])
    np.testing.assert_allclose(x.grad.numpy(), 2 * xs * (4 + np.exp(xs ** 2)), rtol=1e-5)


def test_gradients_accumulate_into_grad():
    x = opdispatch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * 2).sum().backward()
    (x * x).sum().backward()
    assert x.grad.tolist() == [4.0, 6.0, 8.0]
    x.grad = None
    (x * 1).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0]


def test_accumulate_grad_names_a_leaf_that_is_not_a_tensor():
    g = opdispatch.tensor([1.0])
    with pytest.raises(TypeError, match=r"_accumulate_grad\(tensor, grad, create_graph: bool\)"):
        _C._accumulate_grad([1.0], g, False)
    leaf = opdispatch.tensor([1.0], requires_grad=True)
    with pytest.raises(TypeError, match="create_graph: bool"):
        _C._accumulate_grad(leaf, g, 0)
    assert leaf.grad is None


def test_second_backward_needs_retain_graph():
    x = opdispatch.tensor(2.0, requires_grad=True)
    y = x * x
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.item() == 8.0
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time.*od::mul.Tensor"):
        y.backward()


def test_double_backward_of_cube():
    x = opdispatch.tensor([2.0, -1.0], dtype=opdispatch.float64, requires_grad=True)
    y = x ** 3
    (g,) = opdispatch.autograd.grad(y.sum(), x, create_graph=True)
    assert g.tolist() == [12.0, 3.0] and g.requires_grad
    (g2,) = opdispatch.autograd.grad(g.sum(), x, create_graph=True)
    assert g2.tolist() == [12.0, -6.0]
    (g3,) = opdispatch.autograd.grad(g2.sum(), x)
    assert g3.tolist() == [6.0, 6.0]


def test_saved_outputs_form_no_reference_cycle():
    """exp, tanh, log_softmax... save their output; the node keeps a detached alias of it, so the output is
    freed by reference counting alone. PyTorch: SavedVariable's is_output."""
    x = opdispatch.tensor([0.5, -1.0], requires_grad=True)
    gc.disable()
    try:
        for make in (lambda t: t.exp(), lambda t: t.tanh(), lambda t: t.log_softmax(0), lambda t: t.sigmoid()):
            out = make(x)
            ref = weakref.ref(out)
            del out
            assert ref() is None
    finally:
        gc.enable()


def test_double_backward_through_a_saved_output():
    x = opdispatch.tensor([0.5, -1.0], dtype=opdispatch.float64, requires_grad=True)
    y = x.exp()  # exp's formula uses its saved output: grad * exp(x)
    (g,) = opdispatch.autograd.grad(y.sum(), x, create_graph=True)
    assert g.requires_grad
    (g2,) = opdispatch.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(g2.numpy(), np.exp([0.5, -1.0]))
    z = x.exp()
    with opdispatch.autograd.no_grad():
        z.mul_(2)  # the alias the node saved shares z's version counter
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_grad_mode_context_managers_and_decorators():
    x = opdispatch.ones(2, requires_grad=True)
    with opdispatch.autograd.no_grad():
        assert not opdispatch.autograd.is_grad_enabled()
        assert not (x * 2).requires_grad
        with opdispatch.autograd.enable_grad():
            assert (x * 2).requires_grad
    assert opdispatch.autograd.is_grad_enabled()
    with opdispatch.autograd.set_grad_enabled(False):
        assert (x * 2).grad_fn is None
    assert (x * 2).grad_fn is not None

    @opdispatch.autograd.no_grad()
    def step():
        return x * 2

    assert not step().requires_grad and opdispatch.autograd.is_grad_enabled()


def test_requires_grad_detach_and_leaves():
    x = opdispatch.ones(3)
    assert x.is_leaf and not x.requires_grad
    assert x.requires_grad_() is x and x.requires_grad
    y = x * 2
    assert not y.is_leaf and y.grad_fn.name() == "od::mul.ScalarBackward"
    with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf tensors"):
        y.requires_grad = False
    d = y.detach()
    assert d.is_leaf and not d.requires_grad and d._shares_storage(y)
    d.fill_(5.0)
    assert y.tolist() == [5.0, 5.0, 5.0] and y._version == 1


def test_retain_grad_keeps_intermediate_gradients():
    x = opdispatch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.retain_grad()
    z = y * y
    z.sum().backward()
    assert y.grad.tolist() == [6.0, 12.0] and x.grad.tolist() == [18.0, 36.0]
    assert z.grad is None


def test_backward_options_and_errors():
    x = opdispatch.tensor([1.0, 2.0], requires_grad=True)
    w = opdispatch.tensor([3.0], requires_grad=True)
    y = x * w
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        y.backward(retain_graph=True)
    y.backward(opdispatch.tensor([1.0, 10.0]), inputs=[w], retain_graph=True)
    assert x.grad is None and w.grad.tolist() == [21.0]
    unused = opdispatch.ones(1, requires_grad=True)
    with pytest.raises(RuntimeError, match="appears to not have been used"):
        opdispatch.autograd.grad(y.sum(), [x, unused], retain_graph=True)
    assert opdispatch.autograd.grad(y.sum(), [x, unused], allow_unused=True)[1] is None
    with pytest.raises(RuntimeError, match="does not require grad"):
        opdispatch.ones(1).backward()


def test_gradients_take_their_inputs_dtype():
    x32 = opdispatch.ones(3, requires_grad=True)
    w64 = opdispatch.ones(3, dtype=opdispatch.float64, requires_grad=True)
    out = x32 * w64
    assert out.dtype is opdispatch.float64
    out.sum().backward()
    assert x32.grad.dtype is opdispatch.float32 and w64.grad.dtype is opdispatch.float64


def test_saved_tensor_modified_in_place_raises_naming_the_op():
    x = opdispatch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    z = y.sin()
    y.add_(opdispatch.ones(2))
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation.*saved by od::sin .*version 1; "
                                           r"expected version 0"):
        z.sum().backward()


def test_missing_derivative_warns_at_backward_naming_the_op():
    # PyTorch 2.13's autograd fallback ("warn", the default): the output requires grad, backward warns and
    # passes no gradient to the operator's inputs (x.grad gets only the other path's 2 * 9 here).
    lib = Library("noderiv", "DEF")
    lib.define("square(Tensor x) -> Tensor")
    lib.impl("square", lambda x: opdispatch.from_numpy(x.numpy(force=True) ** 2), "CPU")
    op = _C._DispatchOperator("noderiv::square", "")
    x = opdispatch.tensor([3.0], requires_grad=True)
    y = op(x)
    assert y.requires_grad and y.tolist() == [9.0]
    y2 = op(x.detach())
    assert not y2.requires_grad
    with pytest.warns(UserWarning, match="noderiv::square: an autograd kernel was not registered"):
        (y * 2).sum().backward()
    assert x.grad is None
    with pytest.warns(UserWarning, match="noderiv::square"):
        (op(x) * x).sum().backward()
    assert x.grad.tolist() == [9.0]
    lib._destroy()


def test_autograd_fallback_mode_nothing_gives_no_grad_fn():
    # PyTorch 2.13: torch._C._set_autograd_fallback_mode("nothing") leaves the outputs without history;
    # "error" is not implemented there (RuntimeError 'NYI') nor here; the default is "warn".
    assert _C._get_autograd_fallback_mode() == "warn"
    with _scoped_library("noderiv2", "DEF") as lib:
        lib.define("square(Tensor x) -> Tensor")
        lib.impl("square", lambda x: opdispatch.from_numpy(x.numpy(force=True) ** 2), "CPU")
        x = opdispatch.tensor([3.0], requires_grad=True)
        _C._set_autograd_fallback_mode("nothing")
        try:
            y = opdispatch.ops.noderiv2.square(x)
            assert not y.requires_grad and y.grad_fn is None
            assert _C._get_autograd_fallback_mode() == "nothing"
        finally:
            _C._set_autograd_fallback_mode("warn")
        assert opdispatch.ops.noderiv2.square(x).requires_grad
    with pytest.raises(NotImplementedError, match="mode 'error' is not implemented"):
        _C._set_autograd_fallback_mode("error")
    with pytest.raises(ValueError, match="unsupported mode 'bogus'"):
        _C._set_autograd_fallback_mode("bogus")
    assert _C._get_autograd_fallback_mode() == "warn"


def test_inplace_on_a_leaf_that_requires_grad_raises():
    w = opdispatch.ones(3, requires_grad=True)
    for call in (lambda: w.add_(opdispatch.ones(3)), lambda: w.zero_(), lambda: w.fill_(1.0),
                 lambda: w.copy_(opdispatch.zeros(3)), lambda: w.mul_(opdispatch.ones(3))):
        with pytest.raises(RuntimeError, match="a leaf tensor that requires grad is being used in an in-place"):
            call()
    assert w._version == 0


def test_inplace_under_no_grad_is_an_sgd_step():
    opdispatch.manual_seed(0)
    w = opdispatch.randn(3, dtype=opdispatch.float64, requires_grad=True)
    target = opdispatch.tensor([1.0, -2.0, 0.5], dtype=opdispatch.float64)
    for _ in range(100):
        loss = ((w - target) ** 2).sum()
        loss.backward()
        with opdispatch.autograd.no_grad():
            w.sub_(w.grad * 0.1)
        w.grad = None
    assert w.is_leaf and w.requires_grad
    np.testing.assert_allclose(w.detach().numpy(), target.numpy(), atol=1e-6)


def test_inplace_on_a_computed_tensor_is_differentiated():
    x = opdispatch.tensor([1.0, 2.0], dtype=opdispatch.float64, requires_grad=True)
    w = opdispatch.tensor([3.0, 4.0], dtype=opdispatch.float64, requires_grad=True)
    y = x * 1
    y.mul_(w).add_(x, alpha=2).div_(w)
    assert y.grad_fn.name() == "od::copy_Backward" and y._version == 3
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1 + 2 / 3, 1 + 2 / 4])
    np.testing.assert_allclose(w.grad.numpy(), [-2 * 1 / 9, -2 * 2 / 16])
    z = opdispatch.zeros(2, dtype=opdispatch.float64)
    z.add_(w)  # a tensor that did not require grad now does
    assert z.requires_grad and not z.is_leaf
    assert gradcheck(lambda a, b: (a * 1).mul_(b).sub_(a), (x, w))


def test_inplace_on_a_recorded_view_rebases_the_base_and_the_view():
    # Expected values and node names from PyTorch 2.13 (CopySlices / AsStridedBackward0).
    x = opdispatch.ones(2, 3, requires_grad=True)
    w = opdispatch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    v = y[0]
    v.mul_(w)
    assert (y.grad_fn.name(), v.grad_fn.name()) == ("CopySlices", "AsStridedBackward0")
    assert y._version == v._version == 1
    (y * opdispatch.arange(6.0).reshape(2, 3)).sum().backward()
    assert x.grad.tolist() == [[0, 4, 12], [6, 8, 10]] and w.grad.tolist() == [0, 2, 4]
    x.grad = None
    y = x * 2
    v = y[0]
    v.mul_(w)
    (v * opdispatch.arange(3.0)).sum().backward()  # through the view: the rest of the base gets zeros
    assert x.grad.tolist() == [[0, 4, 12], [0, 0, 0]]
    assert gradcheck(lambda a, b: _select_mul_(a * 1, b), (x.double(), w.double()))


def _select_mul_(a, b):
    a[:, 1].t().mul_(b[:2])
    return a


def test_function_marking_a_recorded_view_dirty_is_refused():
    class MulTwo(opdispatch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.mark_dirty(t)
            return t.mul_(2)

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    y = opdispatch.ones(2, 3, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match=r"in-place update of a view \(an output of od::select.int\)"):
        MulTwo.apply(y[0])
    y[0].detach().zero_()
    assert y.tolist() == [[0, 0, 0], [2, 2, 2]]


def test_zero_fill_and_copy_send_no_gradient_to_overwritten_values():
    x = opdispatch.ones(3, requires_grad=True)
    src = opdispatch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    y.copy_(src * src)
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0] and src.grad.tolist() == [2.0, 4.0, 6.0]
    y2 = x * 2
    y2.zero_()
    (y2 + x).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0]


def test_a_gradient_of_the_wrong_shape_is_reported():
    lib = Library("badgrad", "DEF")
    lib.define("ident(Tensor x) -> Tensor")
    lib.impl("ident", lambda x: opdispatch.from_numpy(x.numpy(force=True).copy()), "CPU")
    op = _C._DispatchOperator("badgrad::ident", "")
    from opdispatch._library.autograd import make_autograd_kernel
    lib.impl("ident", make_autograd_kernel(op, lambda ctx, g: g.sum()), "Autograd", with_keyset=True)
    x = opdispatch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"badgrad::identBackward returned an invalid gradient at index 0 - got \[\] but expected shape compatible with \[3\]"):
        op(x).sum().backward()
    lib._destroy()


def test_a_gradient_of_a_broadcast_input_is_summed_to_its_shape(formula_op):
    # The formula returns grad * other unreduced, as PyTorch's engine allows (validate_outputs).
    op = formula_op("bmul(Tensor x, Tensor y) -> Tensor",
                    lambda x, y: opdispatch.from_numpy(x.numpy() * y.numpy()),
                    lambda ctx, g: (g * 2.0, g * 3.0))
    x = opdispatch.ones(1, 3, requires_grad=True)
    y = opdispatch.ones(2, 2, 1, requires_grad=True)
    op(x, y).sum().backward()
    assert x.grad.shape == (1, 3) and x.grad.tolist() == [[8.0, 8.0, 8.0]]
    assert y.grad.shape == (2, 2, 1) and y.grad.tolist() == [[[9.0], [9.0]], [[9.0], [9.0]]]


# --- formulas of Python operators (opdispatch._library.autograd) --------------------------------

@pytest.fixture
def formula_op(ns, lib):
    """formula_op(schema, kernel, backward, setup_context=None): defines ns::<name>
    with a CPU kernel and an Autograd kernel from the formula; returns the operator."""
    from opdispatch._library.autograd import make_autograd_kernel

    def define(schema, kernel, backward, setup_context=None):
        name = lib.define(schema).split("::")[1]
        lib.impl(name, kernel, "CPU")
        op = _C._DispatchOperator(f"{ns}::{name}", "")
        lib.impl(name, make_autograd_kernel(op, backward, setup_context), "Autograd", with_keyset=True)
        return op

    return define


def test_backward_gets_one_gradient_per_output_lists_and_nones(formula_op):
    seen = []

    def backward(ctx, grad_parts, grad_total, grad_count):
        seen.append((grad_parts, grad_total, grad_count))
        return opdispatch.cat(grad_parts) + grad_total

    def kernel(x):
        a = x.numpy()
        return [opdispatch.from_numpy(a[i:i + 1].copy()) for i in range(3)], opdispatch.from_numpy(a.copy()), 3

    op = formula_op("split3(Tensor x) -> (Tensor[], Tensor, int)", kernel, backward)
    x = opdispatch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    parts, total, count = op(x)
    assert count == 3 and all(p.requires_grad for p in parts)
    (parts[1] * 2).sum().backward()
    grad_parts, grad_total, grad_count = seen[0]
    assert [g.tolist() for g in grad_parts] == [[0.0], [2.0], [0.0]]  # missing gradients arrive as zeros
    assert grad_total.tolist() == [0.0, 0.0, 0.0] and grad_count is None
    assert x.grad.tolist() == [0.0, 2.0, 0.0]


def test_backward_may_return_gradients_only_for_the_positional_inputs_passed(formula_op):
    op = formula_op("scale(Tensor x, float factor=2.0) -> Tensor",
                    lambda x, factor=2.0: opdispatch.from_numpy(x.numpy() * factor),
                    lambda ctx, grad: grad * 2)
    x = opdispatch.tensor([1.0], requires_grad=True)
    op(x).sum().backward()  # factor not passed: one gradient is enough
    assert x.grad.tolist() == [2.0]


def test_backward_result_errors_name_the_operator_and_input(ns, formula_op):
    def kernel(x, n):
        return x.clone()

    cases = [
        (lambda ctx, g: (g, None, None), r"returned an incorrect number of gradients \(expected 2, got 3\)"),
        (lambda ctx, g: (g, g), r"returned a gradient for input 'n', which is not a Tensor"),
        (lambda ctx, g: ([g], None), r"returned list as the gradient of input 'x'; expected a Tensor or None"),
    ]
    for i, (backward, message) in enumerate(cases):
        op = formula_op(f"f{i}(Tensor x, int n) -> Tensor", kernel, backward)
        y = op(opdispatch.tensor([1.0], requires_grad=True), 3)
        with pytest.raises(RuntimeError, match=rf"The backward formula for {ns}::f{i} {message}"):
            y.sum().backward()


def test_tensor_list_input_gradients_are_checked(ns, formula_op):
    op = formula_op("total(Tensor[] xs) -> Tensor", lambda xs: xs[0].clone(), lambda ctx, g: ([g],))
    xs = [opdispatch.tensor([1.0], requires_grad=True) for _ in range(2)]
    with pytest.raises(RuntimeError, match=rf"{ns}::total must return a list of 2 gradients \(or None\) for the "
                                           r"Tensor\[\] input 'xs', got list of length 1"):
        op(xs).sum().backward()


def test_mark_non_differentiable_outputs_do_not_require_grad(formula_op):
    received = []

    def setup_context(ctx, inputs, output):
        ctx.mark_non_differentiable(output[1])

    def backward(ctx, grad_a, grad_b):
        received.append(grad_b)
        return grad_a

    op = formula_op("pair(Tensor x) -> (Tensor, Tensor)", lambda x: (x.clone(), x.clone()), backward, setup_context)
    x = opdispatch.tensor([1.0, 2.0], requires_grad=True)
    a, b = op(x)
    assert a.requires_grad and not b.requires_grad and b.grad_fn is None
    a.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0] and received[0].tolist() == [0.0, 0.0]



def test_roots_that_share_a_node_count_its_edges_once():
    # Two outputs of one node as roots: the node's next edges must be counted
    # once, or the leaves behind it never become ready (PyTorch: one graph
    # task, each node's dependencies counted once).
    class TwoOutputs(opdispatch.autograd.Function):
        @staticmethod
        def forward(ctx, a, c):
            return a * 2, c * 3

        @staticmethod
        def backward(ctx, ga, gc):
            return ga * 2, gc * 3

    a = opdispatch.randn(3, requires_grad=True)
    c = opdispatch.randn(3, requires_grad=True)
    x, y = TwoOutputs.apply(a, c)
    ga, gc = opdispatch.autograd.grad([x, y], (a, c), [opdispatch.ones_like(x), opdispatch.ones_like(y)])
    np.testing.assert_array_equal(ga.numpy(), np.full(3, 2.0))
    np.testing.assert_array_equal(gc.numpy(), np.full(3, 3.0))


def test_broadcast_gradients_are_summed_by_sum_dim_through_the_dispatcher():
    # PyTorch 2.13: a logging TorchDispatchMode around backward of (x + b + c).sum(), x (2, 3), b (3,),
    # c (2, 1), sees aten.sum.dim_IntList once per broadcast input; b.grad = [2, 2, 2], c.grad = [[3], [3]].
    from opdispatch.utils._python_dispatch import TorchDispatchMode

    class Log(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.ops: list[str] = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(str(func))
            return func(*args, **(kwargs or {}))

    x = opdispatch.ones(2, 3, requires_grad=True)
    b = opdispatch.zeros(3, requires_grad=True)
    c = opdispatch.zeros(2, 1, requires_grad=True)
    y = (x + b + c).sum()
    with Log() as mode:
        y.backward()
    assert mode.ops.count("od.sum.dim_IntList") == 2
    assert b.grad.tolist() == [2.0, 2.0, 2.0]
    assert c.grad.tolist() == [[3.0], [3.0]]


def test_broadcast_gradient_sum_is_recorded_with_create_graph():
    # PyTorch 2.13: grad((x * x * b).sum(), b, create_graph=True) = [2, 2, 2] with a grad_fn, and the
    # gradient of its sum with respect to x is 2 everywhere.
    x = opdispatch.ones(2, 3, requires_grad=True)
    b = opdispatch.ones(3, requires_grad=True)
    (g,) = opdispatch.autograd.grad((x * x * b).sum(), b, create_graph=True)
    assert g.tolist() == [2.0, 2.0, 2.0] and g.grad_fn is not None
    (gg,) = opdispatch.autograd.grad(g.sum(), x)
    assert gg.tolist() == [[2.0] * 3] * 2


def test_op_node_apply_is_callable_from_python():
    # A node's apply stays callable (CopySlices calls its wrapped node's), as PyTorch's grad_fn(...) is:
    # sin's node maps a gradient of ones to cos(x).
    x = opdispatch.ones(3, requires_grad=True)
    (g,) = x.sin().grad_fn.apply([opdispatch.ones(3)])
    assert np.allclose(g.detach().numpy(), np.cos(np.ones(3)))
