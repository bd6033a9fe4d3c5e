"""opdispatch.autograd.Function: behaviours of PyTorch's test/test_autograd.py
(test_function, test_once_differentiable, test_function_returns_input,
test_mark_non_differentiable*, test_return_duplicate*, test_materialize_grads,
test_invalid_gradients, test_setup_context_*, ...), each checked against
PyTorch 2.13 (the expected values in comments are what PyTorch gives), and
register_autograd's needs_input_grad (issue 13 item 6)."""
from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import opdispatch
from opdispatch import library
from opdispatch.autograd import Function, gradcheck
from opdispatch.autograd.function import FunctionCtx, once_differentiable

from _helpers import as_numpy, tensor


def leaf(values, dtype=np.float64):
    return tensor(values, dtype).requires_grad_()


class MulAdd(Function):
    """x + k * y + x * y, with a Python scalar between two tensors (PyTorch's test_function)."""

    @staticmethod
    def forward(ctx, x, k, y):
        ctx.k = k
        ctx.save_for_backward(x, y)
        return x + k * y + x * y

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        return grad + grad * y, None, grad * ctx.k + grad * x


# --- forward, backward, apply, the graph -------------------------------------------------------


def test_function_gradients_and_graph():
    x, y = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    out = MulAdd.apply(x, 2, y)
    np.testing.assert_allclose(as_numpy(out), [1 + 6 + 3, 2 + 8 + 8])
    assert type(out.grad_fn).__name__ == "MulAddBackward" and out.grad_fn.name() == "MulAddBackward"
    assert isinstance(out.grad_fn, FunctionCtx) and out.grad_fn._forward_cls is MulAdd
    # One edge per tensor input (the int has none), as PyTorch's next_functions.
    assert [type(n).__name__ for n, _ in out.grad_fn.next_functions] == ["AccumulateGrad", "AccumulateGrad"]
    out.sum().backward()
    np.testing.assert_allclose(as_numpy(x.grad), [4.0, 5.0])
    np.testing.assert_allclose(as_numpy(y.grad), [3.0, 4.0])


def test_function_backward_is_differentiable_with_create_graph():
    # PyTorch's _function_test: backward(create_graph=True) gives grads with a grad_fn.
    x, y = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    MulAdd.apply(x, 2, y).sum().backward(create_graph=True)
    assert x.grad.grad_fn is not None and y.grad.grad_fn is not None
    x.grad.sum().backward()  # d/dy of sum(1 + y) = 1
    np.testing.assert_allclose(as_numpy(y.grad), [3 + 1, 4 + 1])


def test_function_composes_with_operator_formulas():
    x = leaf([0.5, -1.0, 2.0])
    y = MulAdd.apply(x.sin(), 3, x * 2).exp().sum()
    y.backward()
    xs = np.array([0.5, -1.0, 2.0])
    inner = np.sin(xs) + 3 * 2 * xs + np.sin(xs) * 2 * xs
    d_inner = np.cos(xs) + 6 + 2 * (np.cos(xs) * xs + np.sin(xs))
    np.testing.assert_allclose(as_numpy(x.grad), np.exp(inner) * d_inner, rtol=1e-12)


def test_function_passes_gradcheck():
    x, y = leaf([0.3, -0.7]), leaf([1.1, 0.2])
    assert gradcheck(lambda a, b: MulAdd.apply(a, 2.5, b), (x, y))


def test_forward_runs_without_grad_and_sees_needs_input_grad():
    seen = {}

    class Probe(Function):
        @staticmethod
        def forward(ctx, x, n, y):
            seen["grad"] = opdispatch.is_grad_enabled()
            seen["needs"] = ctx.needs_input_grad
            return x * n + y

        @staticmethod
        def backward(ctx, g):
            return g, None, g

    out = Probe.apply(leaf([1.0]), 2, tensor([1.0], np.float64))
    assert seen == {"grad": False, "needs": (True, False, False)}  # PyTorch: False, (True, False, False)
    assert out.requires_grad
    # needs_input_grad reflects requires_grad even under no_grad (PyTorch too); nothing is recorded.
    with opdispatch.no_grad():
        out = Probe.apply(leaf([1.0]), 2, leaf([1.0]))
    assert seen["needs"] == (True, False, True) and not out.requires_grad and out.grad_fn is None


def test_no_input_requires_grad_records_nothing():
    out = MulAdd.apply(tensor([1.0]), 2, tensor([2.0]))
    assert not out.requires_grad and out.grad_fn is None


def test_apply_binds_keyword_arguments_as_inputs():
    # PyTorch: Id.apply(x, n=3) and Id.apply(n=3, x=x) give needs_input_grad (True, False).
    seen = []

    class Scale(Function):
        @staticmethod
        def forward(ctx, x, n=2):
            seen.append(ctx.needs_input_grad)
            return x * n

        @staticmethod
        def backward(ctx, g):
            return g * 3, None

    x = leaf([1.0])
    Scale.apply(x)
    Scale.apply(x, n=3)
    Scale.apply(n=3, x=x).sum().backward()
    assert seen == [(True,), (True, False), (True, False)]
    np.testing.assert_allclose(as_numpy(x.grad), [3.0])
    with pytest.raises(TypeError):
        Scale.apply(x, m=1)


def test_tensor_passed_by_keyword_gets_a_gradient():
    class W(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return g, g * 2

    x, y = leaf([1.0]), leaf([1.0])
    W.apply(x, y=y).sum().backward()
    assert as_numpy(x.grad).tolist() == [1.0] and as_numpy(y.grad).tolist() == [2.0]


# --- setup_context style -----------------------------------------------------------------------


class ScaleSC(Function):
    @staticmethod
    def forward(x, k=2.0):
        return x * k

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, k = inputs
        ctx.k = k
        ctx.save_for_backward(output)
        ctx.record = (opdispatch.is_grad_enabled(), ctx.needs_input_grad, type(output).__name__)

    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        return g * ctx.k, None


def test_setup_context_gets_inputs_with_defaults_and_output():
    x = leaf([1.0, 2.0])
    out = ScaleSC.apply(x)
    assert out.grad_fn.k == 2.0 and out.grad_fn.record == (False, (True, False), "Tensor")
    # A saved output comes back as a new tensor over its memory with its grad_fn, as in PyTorch
    # (SavedVariable saves an output without its grad_fn, so no output -> node -> output cycle).
    saved = out.grad_fn.saved_tensors[0]
    assert saved is not out and saved.grad_fn is out.grad_fn and saved.data_ptr() == out.data_ptr()
    out.sum().backward()
    np.testing.assert_allclose(as_numpy(x.grad), [2.0, 2.0])
    out = ScaleSC.apply(x, k=3.0)
    assert out.grad_fn.k == 3.0


def test_setup_context_style_forward_can_be_called_directly():
    # PyTorch: SC.forward(a) runs with grad mode on and records the operators it calls.
    x = leaf([1.0])
    out = ScaleSC.forward(x)
    assert out.grad_fn is not None and out.grad_fn.name() != "ScaleSCBackward"


def test_setup_context_with_ctx_forward_is_a_binding_error():
    class Both(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

    with pytest.raises(TypeError, match="missing a required argument: 'x'"):  # PyTorch's message too
        Both.apply(leaf([1.0]))


# --- outputs -------------------------------------------------------------------------------------


def test_function_returns_input():
    # PyTorch: a new tensor viewing the input; the input keeps its own history.
    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    for shape in [(1,), ()]:
        v = opdispatch.ones(shape, dtype=opdispatch.float64, requires_grad=True)
        out = Identity.apply(v)
        assert out is not v and out._shares_memory(v) and v.is_leaf and out.grad_fn.name() == "IdentityBackward"
        out.backward()
        assert as_numpy(v.grad).tolist() == np.full(shape, 2.0).tolist()
        v.grad = None
        Identity.apply(v.clone()).backward()
        assert as_numpy(v.grad).tolist() == np.full(shape, 2.0).tolist()
    plain = tensor([1.0])
    out = Identity.apply(plain)
    assert out is not plain and out._shares_memory(plain) and not out.requires_grad


def test_non_tensor_outputs_pass_through_and_get_no_gradient():
    seen = []

    class Mixed(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, 5, [x]

        @staticmethod
        def backward(ctx, g, g_int, g_list):
            seen.append((g_int, g_list))
            return g

    x = leaf([1.0])
    out = Mixed.apply(x)
    assert out[1] == 5 and out[2][0] is x  # the list is returned as it was, not tracked
    out[0].sum().backward()
    assert seen == [(None, None)]


def test_function_returning_no_tensor():
    class Count(Function):
        @staticmethod
        def forward(ctx, x):
            return 3

        @staticmethod
        def backward(ctx, g):
            return None

    assert Count.apply(leaf([1.0])) == 3


def test_mark_non_differentiable_mixed():
    class MyFunction(Function):
        @staticmethod
        def forward(ctx, x):
            a = x + 1
            b = x + 2
            ctx.mark_non_differentiable(a)
            return a, b

        @staticmethod
        def backward(ctx, grad_a, grad_b):
            assert as_numpy(grad_a).tolist() == [0.0, 0.0]
            assert as_numpy(grad_b).tolist() == [1.0, 1.0]
            return grad_b

    x = leaf([1.0, 2.0])
    a, b = MyFunction.apply(x)
    assert not a.requires_grad and b.requires_grad
    b.sum().backward()
    assert as_numpy(x.grad).tolist() == [1.0, 1.0]


def test_mark_non_differentiable_none_gradient():
    class MyFunction(Function):
        @staticmethod
        def forward(ctx, x):
            out = x.clone()
            ctx.mark_non_differentiable(out)
            return out

        @staticmethod
        def backward(ctx, grad):
            return None

    x = leaf([1.0, 2.0])
    r = MyFunction.apply(x * x)
    (r * x).sum().backward()
    assert as_numpy(x.grad).tolist() == [1.0, 4.0]


def test_integer_outputs_are_not_differentiable_and_get_zero_gradients():
    seen = []

    class WithIndex(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, opdispatch.tensor([1, 0])

        @staticmethod
        def backward(ctx, g, g_idx):
            seen.append((g_idx.dtype, as_numpy(g_idx).tolist()))
            return g

    out, idx = WithIndex.apply(leaf([1.0, 2.0]))
    assert out.requires_grad and not idx.requires_grad
    out.sum().backward()
    assert seen == [(opdispatch.int64, [0, 0])]  # PyTorch: tensor([0, 0])


def test_return_duplicate():
    class DoubleDuplicate(Function):
        @staticmethod
        def forward(ctx, x):
            output = x * 2
            return output, output

        @staticmethod
        def backward(ctx, grad1, grad2):
            return grad1 * 2 + grad2 * 2

    def fn(x):
        a, b = DoubleDuplicate.apply(x)
        assert a is b
        return a + b

    assert gradcheck(fn, (leaf([0.5, 1.5]),))


# --- materialize_grads ---------------------------------------------------------------------------


class TwoOutputs(Function):
    materialize = True
    seen: list = []

    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(TwoOutputs.materialize)
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, g1, g2):
        TwoOutputs.seen.append(None if g2 is None else as_numpy(g2).tolist())
        return None if g1 is None else g1 * 2


@pytest.mark.parametrize("materialize, expected", [(True, [0.0, 0.0]), (False, None)])
def test_materialize_grads(materialize, expected, monkeypatch):
    monkeypatch.setattr(TwoOutputs, "materialize", materialize)
    monkeypatch.setattr(TwoOutputs, "seen", [])
    x = leaf([1.0, 2.0])
    a, _ = TwoOutputs.apply(x)
    a.sum().backward()
    assert TwoOutputs.seen == [expected] and as_numpy(x.grad).tolist() == [2.0, 2.0]


class Blocker(Function):
    """Passes no gradient back: what arrives at the node before it is None."""

    @staticmethod
    def forward(ctx, x):
        return x * 3

    @staticmethod
    def backward(ctx, grad):
        return None


@pytest.mark.parametrize("materialize, seen, x_grad", [(True, [[0.0, 0.0]], [0.0, 0.0]), (False, [None], None)])
def test_backward_runs_when_no_gradient_arrives(materialize, seen, x_grad, monkeypatch):
    # PyTorch 2.13 calls a Function's backward although every incoming gradient is None: with zeros (which
    # then reach x.grad), or with None after set_materialize_grads(False).
    monkeypatch.setattr(TwoOutputs, "materialize", materialize)
    monkeypatch.setattr(TwoOutputs, "seen", [])
    x = leaf([1.0, 2.0])
    Blocker.apply(TwoOutputs.apply(x)[0]).sum().backward()
    assert TwoOutputs.seen == seen
    assert (None if x.grad is None else as_numpy(x.grad).tolist()) == x_grad


def test_register_autograd_backward_runs_with_zeros_when_no_gradient_arrives(ns):
    # PyTorch 2.13: a custom op's backward gets zeros for an output that got no gradient, even when none did.
    seen = []

    @library.custom_op(f"{ns}::double", mutates_args=())
    def double(x: opdispatch.Tensor) -> opdispatch.Tensor:
        return x * 2

    def backward(ctx, g):
        seen.append(as_numpy(g).tolist())
        return g * 2

    double.register_autograd(backward)
    x = leaf([1.0, 2.0])
    Blocker.apply(double(x)).sum().backward()
    assert seen == [[0.0, 0.0]] and as_numpy(x.grad).tolist() == [0.0, 0.0]


def test_backward_returning_none_leaves_grad_unset():
    # PyTorch's test_function_returns_undefined_tensor.
    x = leaf([1.0])
    Blocker.apply(x).backward()
    assert x.grad is None
    Blocker.apply(x ** 2).sum().backward()
    assert x.grad is None
    assert opdispatch.autograd.grad(Blocker.apply(x), x, allow_unused=True)[0] is None


# --- saved tensors ----------------------------------------------------------------------------------


def test_saved_tensors_version_check():
    x, y = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    out = MulAdd.apply(x, 2, y)
    with opdispatch.no_grad():
        x.add_(1)
    # PyTorch: "one of the variables needed for gradient computation has been modified by an inplace operation"
    with pytest.raises(RuntimeError, match="modified by an inplace operation.*MulAddBackward.*version 1; expected "
                                           "version 0"):
        out.sum().backward()


def test_saved_output_modified_after_forward_raises():
    x = leaf([1.0])
    out = ScaleSC.apply(x)
    with opdispatch.no_grad():
        out.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_saved_tensors_freed_after_backward():
    x, y = leaf([1.0]), leaf([2.0])
    out = MulAdd.apply(x, 2, y)
    out.sum().backward(retain_graph=True)
    out.sum().backward()
    assert as_numpy(x.grad).tolist() == [6.0]
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        out.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        out.grad_fn.saved_tensors


def test_saved_tensors_in_forward_are_empty_and_none_is_saved():
    seen = []

    class Saver(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, None)
            seen.append(ctx.saved_tensors)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            x, none = ctx.saved_tensors
            seen.append(none)
            return g * 2

    Saver.apply(leaf([1.0])).sum().backward()
    assert seen == [(), None]  # PyTorch: () inside forward


def test_save_for_backward_refuses_non_tensors():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 3)
            return x

    # PyTorch: TypeError "save_for_backward can only save variables, but argument 1 is of type int"
    with pytest.raises(TypeError, match="argument 1 is of type int"):
        Bad.apply(leaf([1.0]))


# --- mark_dirty ----------------------------------------------------------------------------------------


class InplaceDouble(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        x.mul_(2)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors  # saved after forward: its in-place update is not an error
        return grad * 2


def test_mark_dirty_rebases_history_onto_the_node():
    a = leaf([1.0, 2.0])
    b = a * 1
    version = b._version
    c = InplaceDouble.apply(b)
    # PyTorch: the same object, its version bumped by mul_ and by mark_dirty, the new grad_fn.
    assert c is b and b._version == version + 2 and b.grad_fn.name() == "InplaceDoubleBackward"
    assert as_numpy(b).tolist() == [2.0, 4.0]
    c.sum().backward()
    assert as_numpy(a.grad).tolist() == [2.0, 2.0]


def test_mark_dirty_of_a_leaf_that_requires_grad_raises():
    # PyTorch: "a leaf Variable that requires grad has been used in an in-place operation."
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad is being used in an in-place operation"):
        InplaceDouble.apply(leaf([1.0]))


def test_mark_dirty_of_a_tensor_not_returned_raises():
    class NotReturned(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(RuntimeError, match="marked as dirty during the forward method were not returned"):
        NotReturned.apply(leaf([1.0]) * 1)


def test_mark_dirty_of_a_buffer_that_did_not_require_grad():
    class AddInto(Function):
        @staticmethod
        def forward(ctx, buf, x):
            buf.add_(x)
            ctx.mark_dirty(buf)
            return buf

        @staticmethod
        def backward(ctx, g):
            return g, g

    buf, x = opdispatch.zeros(2, dtype=opdispatch.float64), leaf([1.0, 2.0])
    out = AddInto.apply(buf, x)
    # PyTorch: the buffer itself, now requiring grad with the node as grad_fn.
    assert out is buf and buf.requires_grad and buf.grad_fn.name() == "AddIntoBackward"
    out.sum().backward()
    assert as_numpy(x.grad).tolist() == [1.0, 1.0]


def test_return_duplicate_inplace():
    class DoubleInplace(Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x, x

        @staticmethod
        def backward(ctx, grad1, grad2):
            return grad1 * 2 + grad2 * 2

    def inplace_fn(x):
        a, b = DoubleInplace.apply(x.clone())
        assert a is b
        return a + b

    assert gradcheck(inplace_fn, (leaf([0.5, 1.5]),))


# --- backward results --------------------------------------------------------------------------------


def _backward_of(grads, n_inputs=1):
    class Returns(Function):
        @staticmethod
        def forward(ctx, *args):
            return args[0] * 2

        @staticmethod
        def backward(ctx, g):
            return grads(g)

    x = leaf([1.0, 2.0])
    args = (x, 3) if n_inputs == 2 else (x,)
    Returns.apply(*args).sum().backward()
    return x.grad


def test_extra_none_gradients_are_allowed():
    assert as_numpy(_backward_of(lambda g: (g, None, None))).tolist() == [1.0, 1.0]


@pytest.mark.parametrize("grads, n_inputs, message", [
    (lambda g: (g, g), 1, r"incorrect number of gradients \(expected 1, got 2\)"),
    (lambda g: g, 2, r"incorrect number of gradients \(expected 2, got 1\)"),
    (lambda g: (g, g), 2, "gradient different than None at position 2, but the corresponding forward input was not"),
    (lambda g: 3, 1, "returned int as the gradient at position 1"),
    (lambda g: opdispatch.ones(3, dtype=opdispatch.float64), 1, "expected shape compatible with"),
], ids=["too-many", "too-few", "grad-for-int", "not-a-tensor", "bad-shape"])
def test_invalid_backward_results_raise(grads, n_inputs, message):
    # PyTorch's messages: "function XBackward returned an incorrect number of gradients (expected 1, got 2)",
    # "... returned a gradient different than None at position 2, but the corresponding forward input was not a
    # Variable", "expected Variable or None (got int)", "... got [3] but expected shape compatible with [2]".
    with pytest.raises(RuntimeError, match=message):
        _backward_of(grads, n_inputs)


def test_gradient_for_an_input_that_needs_none_is_ignored():
    class Ign(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return g, opdispatch.ones(7)  # wrong shape, but y needs no gradient: PyTorch ignores it

    x = leaf([1.0, 2.0])
    Ign.apply(x, tensor([1.0, 1.0], np.float64)).sum().backward()
    assert as_numpy(x.grad).tolist() == [1.0, 1.0]


def test_backward_errors_pass_through():
    class Boom(Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            raise ValueError("Simulate error on backward pass")

    with pytest.raises(ValueError, match="Simulate error on backward pass"):
        Boom.apply(leaf([1.0])).sum().backward()


def test_missing_backward_and_vjp():
    class NoBackward(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

    with pytest.raises(NotImplementedError, match="You must implement either the backward or vjp method"):
        NoBackward.apply(leaf([1.0])).sum().backward()

    class WithVjp(NoBackward):
        @staticmethod
        def vjp(ctx, g):
            return g * 5

    x = leaf([1.0])
    WithVjp.apply(x).sum().backward()
    assert as_numpy(x.grad).tolist() == [5.0]


def test_forward_not_implemented():
    class Empty(Function):
        pass

    with pytest.raises(NotImplementedError, match="You must implement the forward function"):
        Empty.apply(leaf([1.0]))


def test_instantiating_warns_and_calling_raises():
    with pytest.warns(DeprecationWarning, match="should not be instantiated"):
        f = MulAdd()
    with pytest.raises(RuntimeError, match="Legacy autograd function with non-static forward method"):
        f(leaf([1.0]))


# --- once_differentiable -------------------------------------------------------------------------------


class SquareOnce(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        assert not opdispatch.is_grad_enabled()
        (x,) = ctx.saved_tensors
        return 2 * x * g


def test_once_differentiable_first_order():
    x = leaf([1.0, 3.0])
    SquareOnce.apply(x).sum().backward()
    assert as_numpy(x.grad).tolist() == [2.0, 6.0]
    assert SquareOnce.backward.__name__ == "backward"


def test_once_differentiable_refuses_double_backward():
    x, w = leaf([1.0, 3.0]), leaf([1.0, 1.0])
    (gx,) = opdispatch.autograd.grad(SquareOnce.apply(x), x, grad_outputs=w, create_graph=True)
    # PyTorch: requires_grad through an Error node that raises at the second backward.
    assert gx.requires_grad and gx.grad_fn.name() == "DelayedError"
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was marked with "
                                           "@once_differentiable"):
        gx.sum().backward()
    # With an incoming gradient that does not require grad, the result is plain (PyTorch too).
    (gx,) = opdispatch.autograd.grad(SquareOnce.apply(x).sum(), x, create_graph=True)
    assert not gx.requires_grad


# --- lifetime ---------------------------------------------------------------------------------------------


def test_graph_is_freed_with_its_outputs():
    x = leaf([1.0])
    out = ScaleSC.apply(x)  # saves its own output: a cycle through the node
    node = weakref.ref(out.grad_fn)
    del out
    gc.collect()
    assert node() is None


def test_saved_output_forms_no_reference_cycle():
    # The node keeps its saved output without history (as PyTorch's SavedVariable), so the graph goes with
    # its output by reference counting alone.
    gc.disable()
    try:
        x = leaf([1.0])
        out = ScaleSC.apply(x)
        node = weakref.ref(out.grad_fn)
        del out
        assert node() is None
    finally:
        gc.enable()


# --- register_autograd: needs_input_grad ---------------------------------------------------------------------


def test_register_autograd_needs_input_grad_per_tensor_list_element(ns):
    # PyTorch 2.13 gives backward ([True, False, True], False, False) for f([a, b, c], y, 3)
    # with a and c requiring grad (and an internal flattened tuple in setup_context; here the same as backward).
    seen = []

    @library.custom_op(f"{ns}::f", mutates_args=())
    def f(xs: list[opdispatch.Tensor], y: opdispatch.Tensor, n: int) -> opdispatch.Tensor:
        out = y.clone()
        for x in xs:
            out = out + x
        return out

    def setup_context(ctx, inputs, output):
        seen.append(("setup", ctx.needs_input_grad))

    def backward(ctx, g):
        seen.append(("backward", ctx.needs_input_grad))
        return [g if need else None for need in ctx.needs_input_grad[0]], g, None

    f.register_autograd(backward, setup_context=setup_context)
    a, b, c = leaf([1.0]), tensor([1.0], np.float64), leaf([1.0])
    f([a, b, c], tensor([1.0], np.float64), 3).sum().backward()
    assert seen == [("setup", ([True, False, True], False, False)),
                    ("backward", ([True, False, True], False, False))]
    assert as_numpy(a.grad).tolist() == [1.0] and as_numpy(c.grad).tolist() == [1.0]
    seen.clear()
    f([b, b], leaf([1.0]), 3)
    assert seen == [("setup", ([False, False], True, False))]
