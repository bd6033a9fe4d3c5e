"""FakeTensorMode and FakeTensor (PyTorch's torch/_subclasses/fake_tensor.py;
behaviours of its test/test_fake_tensor.py that opdispatch has the pieces
for), and the symbolic sizes of new_dynamic_size() under it."""
from __future__ import annotations

import numpy as np
import pytest

import opdispatch
from opdispatch import Tensor, _C, ops
from opdispatch._subclasses.fake_tensor import FakeTensor, FakeTensorMode, UnsupportedFakeTensorException
from opdispatch._subclasses.symbolic_shapes import GuardOnDataDependentSymNode, SymInt
from opdispatch.library import Library, custom_op
from opdispatch.utils._python_dispatch import TorchDispatchMode

import custom_op_db


@pytest.fixture
def ns(request):
    return "ft_" + request.node.name[:40]


def test_from_tensor_keeps_metadata_and_owns_no_data():
    t = opdispatch.randn(4, 6).t()[1:]
    mode = FakeTensorMode()
    f = mode.from_tensor(t)
    assert type(f) is FakeTensor and f.fake_mode is mode
    assert (f.shape, f.stride(), f.storage_offset(), f.dtype) == (t.shape, t.stride(), t.storage_offset(), t.dtype)
    assert str(f.device) == "cpu" and f.fake_device == f.device and not f.is_meta and not f._has_storage()
    assert mode.from_tensor(t) is f  # memoized per tensor
    with pytest.raises(RuntimeError, match=r"numpy\(\): this FakeTensor has no data"):
        f.numpy()
    with pytest.raises(RuntimeError, match=r"tolist\(\): this FakeTensor has no data"):
        f.tolist()
    assert repr(f) == "FakeTensor(..., device='cpu', size=(5, 4), dtype=opdispatch.float32)"
    assert mode.from_tensor(opdispatch.ones(2, requires_grad=True)).requires_grad


def test_factories_in_the_mode_make_fakes_on_the_requested_device():
    with FakeTensorMode():
        z = opdispatch.zeros(2, 3, dtype=opdispatch.float64)
        c = opdispatch.empty(5, device="cuda")  # cuda has no memory in opdispatch; a fake needs none
        like = opdispatch.empty_like(c)
        r = opdispatch.randn(3)
    assert type(z) is FakeTensor and z.shape == (2, 3) and z.dtype == opdispatch.float64 and str(z.device) == "cpu"
    assert str(c.device) == "cuda" and str(like.device) == "cuda" and type(r) is FakeTensor


def test_operators_propagate_shapes_through_a_small_model_and_its_backward():
    rng = np.random.default_rng(0)
    w1 = opdispatch.from_numpy(rng.standard_normal((64, 32), dtype=np.float32)).requires_grad_()
    b1 = opdispatch.zeros(32, requires_grad=True)
    w2 = opdispatch.from_numpy(rng.standard_normal((32, 10), dtype=np.float32)).requires_grad_()
    x = opdispatch.randn(16, 64)
    labels = opdispatch.tensor(rng.integers(0, 10, 16))
    with FakeTensorMode() as mode:
        fx, fw1, fb1, fw2, flabels = (mode.from_tensor(t) for t in (x, w1, b1, w2, labels))
        h = (fx @ fw1 + fb1).relu()
        logits = h @ fw2
        loss = ops.od.nll_loss.default(logits.log_softmax(1), flabels)
        loss.backward()
    assert type(h) is FakeTensor and h.shape == (16, 32) and logits.shape == (16, 10) and loss.shape == ()
    assert loss.grad_fn is not None  # autograd ran above the Python key, on the fakes
    grads = [p.grad for p in (fw1, fb1, fw2)]
    assert [tuple(g.shape) for g in grads] == [(64, 32), (32,), (32, 10)]
    assert all(type(g) is FakeTensor for g in grads)
    assert w1.grad is None  # the real parameters were not touched


def test_views_and_inplace_updates_alias_like_real_tensors():
    mode = FakeTensorMode()
    f = mode.from_tensor(opdispatch.zeros(3, 4))
    with mode:
        v = f[1]
        out = f.add_(1.0)
    assert out is f and v._shares_memory(f) and v.shape == (4,) and v.storage_offset() == 4
    assert f._version == 1 and v._version == 1


def test_real_tensors_are_rejected_unless_allowed():
    real = opdispatch.ones(2)
    mode = FakeTensorMode()
    f = mode.from_tensor(opdispatch.ones(2))
    with pytest.raises(RuntimeError, match="Please convert all Tensors to FakeTensors first"):
        with mode:
            f + real
    with FakeTensorMode(allow_non_fake_inputs=True) as m2:
        assert type(m2.from_tensor(opdispatch.ones(2)) + real) is FakeTensor


def test_fakes_dispatch_through_their_mode_outside_it():
    mode = FakeTensorMode()
    f = mode.from_tensor(opdispatch.ones(2, 2))
    out = f @ f
    assert type(out) is FakeTensor and out.fake_mode is mode and out.shape == (2, 2)
    with pytest.raises(RuntimeError, match="different FakeTensorModes"):
        f + FakeTensorMode().from_tensor(opdispatch.ones(2, 2))


def test_an_operator_without_meta_support_raises_clearly(ns):
    lib = Library(ns, "DEF")
    lib.define("cpu_only(Tensor x) -> Tensor")
    lib.impl("cpu_only", lambda x: x.clone(), "CPU")
    with FakeTensorMode() as mode:
        f = mode.from_tensor(opdispatch.ones(2))
        with pytest.raises(UnsupportedFakeTensorException, match=f"{ns}.cpu_only.default: cannot run on fake"):
            getattr(ops, ns).cpu_only(f)
    lib._destroy()


def test_fake_impls_run_on_fakes_of_the_inputs_device(ns):
    seen = []

    @custom_op(f"{ns}::dev", mutates_args=())
    def dev(x: Tensor) -> Tensor:
        return x.clone()

    @dev.register_fake
    def _(x):
        seen.append((type(x).__name__, str(x.device)))
        # A device-specific fake impl: branches on the device the real call would have.
        return x.new_empty(x.shape) if x.device.type == "cpu" else x.new_empty(0)

    with FakeTensorMode() as mode:
        out = dev(mode.from_tensor(opdispatch.ones(3)))
    assert seen == [("FakeTensor", "cpu")] and out.shape == (3,) and type(out) is FakeTensor
    # On meta tensors (outside the mode) the same impl sees meta.
    dev(opdispatch.ones(3, device="meta"))
    assert seen[-1] == ("Tensor", "meta")


def test_new_dynamic_size_gives_symbols_that_flow_through_operators():
    nz = custom_op_db.numpy_nonzero
    with FakeTensorMode() as mode:
        x = mode.from_tensor(opdispatch.randn(4, 4))
        a, b = nz(x), nz(x)
        flat = a.view(-1)
        grown = opdispatch.ones(a.shape[0] + 3)
    u0, u1 = a.shape[0], b.shape[0]
    assert isinstance(u0, SymInt) and (str(u0), str(u1)) == ("u0", "u1") and u0 != u1
    assert a.shape == (u0, 2) and a.stride() == (2, 1) and str(a.numel()) == "2*u0"
    assert str(flat.shape[0]) == "2*u0" and str(grown.shape[0]) == "u0 + 3"
    assert repr(a) == "FakeTensor(..., device='cpu', size=(u0, 2), dtype=opdispatch.int64)"
    with pytest.raises(GuardOnDataDependentSymNode, match="Could not guard on data-dependent expression u0 == 5"):
        u0 == 5  # noqa: B015
    with pytest.raises(GuardOnDataDependentSymNode):
        int(u0)
    with FakeTensorMode() as mode:
        a = nz(mode.from_tensor(opdispatch.randn(4, 4)))
        b = nz(mode.from_tensor(opdispatch.randn(4, 4)))
        square = opdispatch.ones(a.shape[0], b.shape[0])  # (u0, u1): one symbol per size is fine
        assert [str(d) for d in square.shape] == ["u0", "u1"]
        with pytest.raises(RuntimeError, match="not of the form k\\*u or u\\+c"):
            square.view(-1)  # u0*u1: not expressible


def test_user_subclasses_run_before_the_fake_mode():
    class Tagged(Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return "handled by the subclass"

    t = Tensor._make_wrapper_subclass(Tagged, (2,))
    with FakeTensorMode():
        # FakeTensorMode returns NotImplemented for a subclass it does not know; the subclass answers.
        with pytest.raises(TypeError, match="returned str"):
            t.neg()


def test_fake_mode_is_an_infrastructure_mode_below_user_modes():
    log = []

    class Logging(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            log.append((str(func), [t.__name__ for t in types]))
            return func(*args, **kwargs)

    mode = FakeTensorMode()
    f = mode.from_tensor(opdispatch.ones(2))
    with mode, Logging():
        assert _C._get_dispatch_mode(_C._TorchDispatchModeKey.FAKE) is mode
        out = f * 2
    assert log == [("od.mul.Scalar", ["FakeTensor"])] and type(out) is FakeTensor
    assert _C._len_torch_dispatch_stack() == 0


def test_fake_modes_nest_and_reenter():
    outer, inner = FakeTensorMode(), FakeTensorMode()
    key = _C._TorchDispatchModeKey.FAKE
    with outer:
        with outer:  # re-entering the active mode changes nothing
            assert _C._get_dispatch_mode(key) is outer and _C._len_torch_dispatch_stack() == 1
        assert _C._get_dispatch_mode(key) is outer
        with inner:  # replaces the outer one until it exits
            assert _C._get_dispatch_mode(key) is inner and _C._len_torch_dispatch_stack() == 1
            assert type(opdispatch.zeros(1)) is FakeTensor and opdispatch.zeros(1).fake_mode is inner
        assert _C._get_dispatch_mode(key) is outer
    assert _C._get_dispatch_mode(key) is None and _C._len_torch_dispatch_stack() == 0


# --- FakeTensorMode as real modes use it (issue 28 item 4), each checked in PyTorch 2.13 ----------------------


def test_fake_tensor_attributes_real_modes_read():
    from opdispatch._subclasses import fake_tensor as ft

    mode = FakeTensorMode()
    x = opdispatch.randn(4, 3)
    f = mode.from_tensor(x)
    # PyTorch 2.13: f.fake_mode is mode, f.real_tensor is None, f.fake_device == cpu.
    assert f.fake_mode is mode and f.real_tensor is None and str(f.fake_device) == "cpu"
    assert issubclass(ft.MetadataMismatchError, RuntimeError)
    assert ft.is_fake(f) and not ft.is_fake(x) and not ft.is_fake(3)
    assert ft.maybe_get_fake_mode(f) is mode and ft.maybe_get_fake_mode(x) is None


def test_from_tensor_keywords_and_the_converter():
    # PyTorch 2.13: from_tensor(t, static_shapes=True) and mode.fake_tensor_converter.from_real_tensor(mode, t)
    # give the memoized fake of t (the same object).
    from opdispatch._subclasses.fake_tensor import FakeTensorConverter

    mode = FakeTensorMode()
    x = opdispatch.randn(2, 5)
    f = mode.from_tensor(x, static_shapes=True, source=None, trace=True)
    assert isinstance(mode.fake_tensor_converter, FakeTensorConverter)
    assert mode.fake_tensor_converter.from_real_tensor(mode, x) is f and mode.from_tensor(x) is f
    assert tuple(f.shape) == (2, 5)
    other = FakeTensorMode()
    g = FakeTensorConverter().from_real_tensor(other, x)
    assert g is not f and g.fake_mode is other
    with pytest.raises(NotImplementedError, match="no symbolic input sizes"):
        mode.from_tensor(x, symbolic_context=object())


def test_in_kernel_invocation_manager_disables_the_python_key():
    # PyTorch 2.13: inside, fake_mode.in_kernel_invocation is True and no mode sees calls.
    from opdispatch._subclasses.fake_tensor import in_kernel_invocation_manager

    mode = FakeTensorMode()
    seen = []

    class Recording(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(func)
            return func(*args, **(kwargs or {}))

    assert mode.in_kernel_invocation is False
    with Recording():
        with in_kernel_invocation_manager(mode):
            assert mode.in_kernel_invocation is True
            opdispatch.ones(2) + 1
        assert seen == []
        opdispatch.ones(2)
    assert mode.in_kernel_invocation is False and seen == [ops.od.ones.default]


def test_a_user_mode_stacked_on_a_fake_tensor_mode_sees_fakes():
    # PyTorch 2.13 records ['aten.add.Tensor', 'FakeTensor', 'aten.sum.default', 'FakeTensor'] for a user mode
    # entered inside FakeTensorMode, and ['aten.randn.default', 'FakeTensor', ...] for one entered outside it.
    class Counting(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.log = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            self.log += [str(func), type(out).__name__]
            return out

    with FakeTensorMode() as mode:
        a = mode.from_tensor(opdispatch.randn(2, 2))
        with Counting() as inner:
            (a + a).sum()
    assert inner.log == ["od.add.Tensor", "FakeTensor", "od.sum.default", "FakeTensor"]
    with Counting() as outer:
        with FakeTensorMode():
            opdispatch.randn(2, 2)
    assert outer.log == ["od.randn.default", "FakeTensor"]


def test_a_fake_output_dies_when_dropped():
    # As a PyTorch tensor does (refcounting, no cycle): memory trackers on fakes count on it
    # (tests/ecosystem/test_max_mem_tracker.py). tree_unflatten's recursive closure once held the leaves.
    import gc
    import weakref

    was_enabled = gc.isenabled()
    gc.disable()
    try:
        with FakeTensorMode() as mode:
            a = mode.from_tensor(opdispatch.randn(100))
            b = a * 10
            ref = weakref.ref(b)
            del b
            assert ref() is None
    finally:
        if was_enabled:
            gc.enable()


def test_a_tensor_made_inside_the_mode_is_fake():
    # PyTorch 2.13: torch.tensor([1.0, 2.0]) under FakeTensorMode() is a FakeTensor (at::lift_fresh, lift_fns).
    with FakeTensorMode() as mode:
        t = opdispatch.tensor([1.0, 2.0])
        s = opdispatch.tensor(3.0) + t
    assert isinstance(t, FakeTensor) and t.fake_mode is mode and t.shape == (2,) and str(t.device) == "cpu"
    assert isinstance(s, FakeTensor) and s.dtype == opdispatch.float32
