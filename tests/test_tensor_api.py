"""The Tensor API: Python operators, indexing, methods, conversions
(NumPy, DLPack, Python numbers), repr, top-level functions, and
opdispatch.testing.assert_close."""
from __future__ import annotations

import numpy as np
import pytest

import opdispatch
from opdispatch import _C
from opdispatch.testing import assert_close


# --- operators --------------------------------------------------------------------------------

def test_arithmetic_operators_match_numpy():
    a_np = np.array([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], dtype=np.float32)
    b_np = np.array([0.5, 2.0, -1.0], dtype=np.float32)
    a, b = opdispatch.tensor(a_np), opdispatch.tensor(b_np)
    cases = [
        (a + b, a_np + b_np), (a - b, a_np - b_np), (a * b, a_np * b_np), (a / b, a_np / b_np),
        (a @ b, a_np @ b_np), (abs(a) ** b, np.abs(a_np) ** b_np), (-a, -a_np),
        (a + 1, a_np + 1), (1 + a, 1 + a_np), (a - 1.5, a_np - 1.5), (1.5 - a, 1.5 - a_np),
        (a * 2, a_np * 2), (2 * a, 2 * a_np), (a / 4, a_np / 4), (4 / a, 4 / a_np), (a ** 2, a_np ** 2),
        (2 ** a, 2 ** a_np), (abs(a), np.abs(a_np)),
    ]
    for got, expected in cases:
        assert got.dtype.to_numpy() == expected.dtype
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6)


def test_reflected_scalars_promote_as_pytorch():
    ints = opdispatch.tensor([1, 2, 4])
    assert (10 - ints).tolist() == [9, 8, 6] and (10 - ints).dtype is opdispatch.int64
    assert (1 / ints).dtype is opdispatch.float32 and (1 / ints).tolist() == [1.0, 0.5, 0.25]
    f16 = opdispatch.ones(2, dtype=opdispatch.float16)
    assert (3 - f16).dtype is opdispatch.float16 and (3 / f16).dtype is opdispatch.float16


def test_comparison_operators():
    a = opdispatch.tensor([1, 2, 3])
    assert (a == 2).tolist() == [False, True, False] and (a == 2).dtype is opdispatch.bool
    assert (a != opdispatch.tensor([1, 0, 3])).tolist() == [False, True, False]
    assert (a < 2).tolist() == [True, False, False] and (a <= 2).tolist() == [True, True, False]
    assert (a > 2).tolist() == [False, False, True] and (a >= 2).tolist() == [False, True, True]
    assert (2 < a).tolist() == [False, False, True]
    assert (a == None) is False  # noqa: E711
    assert len({a, a}) == 1


def test_inplace_python_operators_keep_the_object():
    t = opdispatch.ones(3)
    same = t
    t += 1
    t *= opdispatch.full([3], 3.0)
    t -= 0.5
    t /= 2
    assert t is same and t.tolist() == [2.75, 2.75, 2.75] and t._version == 4
    i = opdispatch.ones(2, dtype=opdispatch.int64)
    with pytest.raises(RuntimeError, match="can't be cast"):
        i += 0.5


def test_unsupported_operands_raise_type_error():
    t = opdispatch.ones(2)
    with pytest.raises(TypeError):
        t + "a"
    with pytest.raises(TypeError):
        t @ 2


# --- indexing --------------------------------------------------------------------------------------

def test_indexing_matches_numpy():
    a_np = np.arange(24).reshape(2, 3, 4)
    t = opdispatch.tensor(a_np)
    for index in [0, -1, (1, 2), (1, -1, 3), slice(None), slice(1, None), (slice(None), 1), (0, slice(None, None, 2)),
                  (slice(None), slice(-2, None), slice(1, 3)), (Ellipsis, 1), (None, 0), (0, None, Ellipsis, 2),
                  (slice(5, 9),), (np.int64(1),)]:
        got = t[index]
        assert got.tolist() == a_np[index].tolist(), index
        assert got._shares_storage(t)
    assert t[1, 2, 3].item() == 23 and t[1, 2, 3].shape == ()


def test_advanced_indexing_goes_through_index_tensor():
    # The shapes and values are PyTorch 2.13's for the same indices.
    x = opdispatch.arange(24.0).view(2, 3, 4)
    i = opdispatch.tensor([0, 2])
    assert x[:, i].shape == (2, 2, 4) and x[1, i].tolist() == [[12.0, 13.0, 14.0, 15.0], [20.0, 21.0, 22.0, 23.0]]
    assert x[[1, 0], :, i[:, None]].shape == (2, 2, 3)  # indices not adjacent: their dims come first
    assert x[0, :, opdispatch.tensor([3, 1])].tolist() == [[3.0, 1.0], [7.0, 5.0], [11.0, 9.0]]
    assert x[1:, i, 1:3].shape == (1, 2, 2) and x[:, [True, False, True]].shape == (2, 2, 4)
    assert x[x[:, :, 0] > 5].shape == (4, 4) and x[None, :, i].shape == (1, 2, 2, 4)
    from opdispatch.utils._python_dispatch import TorchDispatchMode

    class Log(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    seen: list = []
    with Log():
        x[opdispatch.tensor([1, 0])]
        x[1, i]
    # PyTorch 2.13's aten ops (the mode sees the index tensor made inside it through lift_fresh)
    assert seen == ["od.lift_fresh.default", "od.index.Tensor", "od.select.int", "od.index.Tensor"]


@pytest.mark.parametrize("index,error,message", [
    (2, IndexError, "index 2 out of range"),
    ((0, 3), IndexError, "index 3 out of range"),
    ((0, 0, 0, 0), IndexError, "too many indices for tensor of dimension 3"),
    ((Ellipsis, Ellipsis), IndexError, "single ellipsis"),
    (slice(None, None, -1), ValueError, "step must be greater than zero"),
    ([0, 5], IndexError, "index 5 is out of bounds for dimension 0 with size 2"),
    (opdispatch.tensor([0.0]), IndexError, "tensors used as indices must be long, int, byte or bool tensors"),
    (1.5, TypeError, "only integers, slices"),  # a bool is an index (tests/test_setitem.py)
])
def test_indexing_errors(index, error, message):
    t = opdispatch.zeros(2, 3, 4)
    with pytest.raises(error, match=message):
        t[index]


def test_len_iter_bool():
    t = opdispatch.tensor([[1, 2], [3, 4], [5, 6]])
    assert len(t) == 3
    assert [row.tolist() for row in t] == [[1, 2], [3, 4], [5, 6]]
    assert bool(opdispatch.tensor([0.5])) and not bool(opdispatch.tensor(0))
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with 6 values is ambiguous"):
        bool(t)
    scalar = opdispatch.tensor(3.0)
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(scalar)
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        iter(scalar)
    assert float(scalar) == 3.0 and int(scalar) == 3
    assert [10, 20, 30][opdispatch.tensor(1)] == 20


# --- methods -------------------------------------------------------------------------------------------

def test_methods_call_the_od_operators():
    t = opdispatch.arange(6.0).view(2, 3)
    assert t.sum().item() == 15.0 and t.sum(1).tolist() == [3.0, 12.0]
    assert t.sum(0, keepdim=True).shape == (1, 3) and t.sum(keepdim=True).shape == (1, 1)
    assert t.mean().item() == 2.5 and t.mean((0, 1), keepdim=True).shape == (1, 1)
    assert t.amax(1).tolist() == [2.0, 5.0] and t.max().item() == 5.0
    assert t.max(0).indices.tolist() == [1, 1, 1] and t.argmax(1).tolist() == [2, 2]
    # The same with PyTorch 2.13: [0.0, 3.0] 0.0 [0, 0, 0] [0, 0]; True [True, True] True [[False], [True]].
    assert t.amin(1).tolist() == [0.0, 3.0] and t.min().item() == 0.0
    assert t.min(0).indices.tolist() == [0, 0, 0] and t.argmin(1).tolist() == [0, 0]
    assert t.any().item() is True and t.any(1).tolist() == [True, True] and t.any((0, 1)).item() is True
    assert (t > 4).any(1, keepdim=True).tolist() == [[False], [True]] and t.any(dim=(1,)).tolist() == [True, True]
    assert t.repeat(2, 1, 2).shape == (2, 2, 6) and t.repeat([1, 2]).tolist()[0] == [0.0, 1.0, 2.0, 0.0, 1.0, 2.0]
    assert t.flip(0).tolist() == [[3.0, 4.0, 5.0], [0.0, 1.0, 2.0]] and t.flip(0, 1).tolist()[0] == [5.0, 4.0, 3.0]
    assert opdispatch.flip(t, [1]).tolist()[0] == [2.0, 1.0, 0.0] and t.cumsum(1).tolist()[1] == [3.0, 7.0, 12.0]
    assert t.var().item() == 3.5 and t.var(1, keepdim=True).shape == (2, 1) and t.var(0, False).tolist() == [2.25] * 3
    assert abs(t.var(False).item() - np.var(np.arange(6.0))) < 1e-6 and opdispatch.var(t, correction=0).item() == t.var(False).item()
    r = opdispatch.tensor([[3.0, 1.0, 3.0]]).sort(descending=True)  # values and indices from PyTorch 2.13
    assert (r.values.tolist(), r.indices.tolist()) == ([[3.0, 3.0, 1.0]], [[0, 2, 1]]) and r[1] is r.indices
    assert opdispatch.sort(t, 0, stable=True).values.shape == (2, 3) and t.prod().item() == 0.0
    assert t.prod(1, keepdim=True).tolist() == [[0.0], [60.0]] and opdispatch.prod(t, 0, dtype=opdispatch.int64).dtype == opdispatch.int64
    top = opdispatch.tensor([[3.0, 1.0, 5.0, 4.0]]).topk(2)  # from PyTorch 2.13
    assert (top.values.tolist(), top.indices.tolist()) == ([[5.0, 4.0]], [[2, 3]])
    assert opdispatch.topk(t, 1, 0, largest=False).indices.tolist() == [[0, 0, 0]]
    assert t.nonzero().tolist() == [[0, 1], [0, 2], [1, 0], [1, 1], [1, 2]] and t.nonzero().stride() == (1, 5)
    assert [c.tolist() for c in opdispatch.nonzero(t, as_tuple=True)] == [[0, 0, 1, 1, 1], [1, 2, 0, 1, 2]]
    assert [c.tolist() for c in opdispatch.tensor(3.0).nonzero(as_tuple=True)] == [[0]]
    assert [c.tolist() for c in opdispatch.tensor(0.0).nonzero(as_tuple=True)] == [[]]
    assert [p.tolist() for p in t.split([1, 2], 1)] == [[[0.0], [3.0]], [[1.0, 2.0], [4.0, 5.0]]]
    assert [p.shape for p in opdispatch.split(t, 2, 1)] == [(2, 2), (2, 1)] and len(t.split(2)) == 1
    assert [p.shape for p in opdispatch.zeros(0, 3).split(2)] == [(0, 3)] and t.split([1, 1])[1].data_ptr() == t.data_ptr() + 12
    for bad in (0, -1, [1, 1]):
        with pytest.raises(RuntimeError, match="split"):
            t.split(bad, 1)
    assert t.view(3, 2).shape == (3, 2) and t.view((6,)).shape == (6,) and t.reshape(-1, 2).shape == (3, 2)
    assert t.transpose(0, 1).shape == (3, 2) and t.t().shape == (3, 2) and t.permute(1, 0).shape == (3, 2)
    assert t.unsqueeze(0).squeeze().shape == (2, 3) and t.expand(4, 2, 3).shape == (4, 2, 3)
    assert t.flatten().tolist() == [0, 1, 2, 3, 4, 5] and t.select(1, 2).tolist() == [2.0, 5.0]
    assert t.exp().log().sub(t).abs().amax().item() < 1e-6
    assert t.sin().shape == t.cos().shape == t.tanh().shape == t.sigmoid().shape == (2, 3)
    assert t.sqrt().pow(2).sub(t).abs().sum().item() < 1e-5
    assert t.neg().relu().sum().item() == 0.0
    assert t.add(1, alpha=2).tolist() == [[2, 3, 4], [5, 6, 7]]
    assert t.add(t, alpha=-1).sum().item() == 0 and t.sub(t, alpha=1).sum().item() == 0
    assert t.mul(2).div(2).eq(t).tolist() == [[True] * 3] * 2
    assert t.maximum(opdispatch.full([3], 2.0)).tolist() == [[2, 2, 2], [3, 4, 5]]
    assert t.minimum(opdispatch.full([3], 2.0)).tolist() == [[0, 1, 2], [2, 2, 2]]
    # min/max of two tensors (od::min.other / max.other) and pow_; the same with PyTorch 2.13.
    assert t.min(opdispatch.full([3], 2.0)).tolist() == [[0, 1, 2], [2, 2, 2]]
    assert opdispatch.max(t, opdispatch.full([3], 2.0)).tolist() == [[2, 2, 2], [3, 4, 5]]
    u = t.clone()
    assert u.pow_(2) is u and u.tolist() == [[0, 1, 4], [9, 16, 25]] and u._version == 1
    u **= 0.5
    assert u.tolist() == t.tolist() and u._version == 2
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        opdispatch.tensor([1, 2]).pow_(0.5)
    assert t.where(t > 2, opdispatch.zeros(())).tolist() == [[0, 0, 0], [3, 4, 5]]
    assert t.softmax(1).sum(1).tolist() == pytest.approx([1.0, 1.0])
    assert t.log_softmax(0).exp().sum(0).tolist() == pytest.approx([1.0, 1.0, 1.0])
    assert t.matmul(opdispatch.ones(3)).tolist() == [3, 12] and t.mm(opdispatch.ones(3, 1)).shape == (2, 1)
    assert t.unsqueeze(0).bmm(opdispatch.ones(1, 3, 2)).shape == (1, 2, 2)
    assert t.clone().tolist() == t.tolist() and not t.clone()._shares_storage(t)
    assert t.ne(0).sum().item() == 5 and t.lt(1).sum().item() == 1 and t.ge(5).sum().item() == 1
    assert t.gt(4).sum().item() == 1 and t.le(0).sum().item() == 1


def test_tensor_methods_go_through_the_dispatcher():
    x = opdispatch.ones(2, 3, requires_grad=True)
    assert (x.sum()).grad_fn.name() == "od::sumBackward"
    assert x.view(6).grad_fn.name() == "od::viewBackward"
    assert x[0].grad_fn.name() == "od::select.intBackward"
    assert x[:, 1:].grad_fn.name() == "od::slice.TensorBackward"
    assert (x @ opdispatch.ones(3)).grad_fn.name() == "od::matmulBackward"
    assert x.to(opdispatch.float64).grad_fn.name() == "od::_to_copyBackward"
    assert x.max(1).values.grad_fn.name() == "od::max.dimBackward"
    m = x.detach().to("meta")
    assert (m + m).is_meta and m.sum(1).shape == (2,) and m[0].shape == (3,)


def test_to_variants():
    t = opdispatch.ones(2, dtype=opdispatch.float32)
    assert t.to(opdispatch.float64).dtype is opdispatch.float64
    assert t.to("meta").is_meta and t.to(opdispatch.device("meta")).is_meta
    assert t.to("meta", opdispatch.int32).dtype is opdispatch.int32
    assert t.to(dtype=opdispatch.int8).dtype is opdispatch.int8
    other = opdispatch.zeros(1, dtype=opdispatch.int16, device="meta")
    converted = t.to(other)
    assert converted.is_meta and converted.dtype is opdispatch.int16
    with pytest.raises(TypeError, match="to\\(\\) received an invalid argument"):
        t.to(3)


# --- conversions -----------------------------------------------------------------------------------------

def test_new_empty_takes_dtype_and_device_from_self():
    x = opdispatch.ones(2, 3, dtype=opdispatch.float64)
    out = x.new_empty(4, 5)
    assert out.shape == (4, 5) and out.dtype == opdispatch.float64 and str(out.device) == "cpu"
    assert x.new_empty([2], dtype=opdispatch.int64).dtype == opdispatch.int64
    meta = opdispatch.empty(3, device="meta").new_empty((1, 2))
    assert meta.is_meta and meta.shape == (1, 2)
    assert x.new_empty(3, requires_grad=True).requires_grad and not x.new_empty(3).requires_grad


def test_item_tolist_numpy():
    t = opdispatch.tensor([[1.5, 2.0]])
    assert t[0, 1].item() == 2.0 and isinstance(t[0, 1].item(), float)
    assert opdispatch.tensor([7]).item() == 7
    with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted to Scalar"):
        t.item()
    assert t.tolist() == [[1.5, 2.0]] and opdispatch.tensor(True).tolist() is True
    a = t.numpy()
    a[0, 0] = 9
    assert t[0, 0].item() == 9  # shares memory
    with pytest.raises(RuntimeError, match="requires grad"):
        t.requires_grad_().numpy()
    assert t.tolist() == [[9.0, 2.0]] and t.detach().numpy().shape == (1, 2)


def test_numpy_array_protocol():
    t = opdispatch.arange(4, dtype=opdispatch.float32)
    a = np.asarray(t)
    assert a.dtype == np.float32 and np.shares_memory(a, t.numpy())
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    assert not np.shares_memory(np.array(t, copy=True), t.numpy())
    assert np.add(t, 1).tolist() == [1, 2, 3, 4]


def test_dlpack_round_trip_is_zero_copy():
    a = np.arange(6.0).reshape(2, 3)
    t = opdispatch.from_dlpack(a)
    assert isinstance(t, opdispatch.Tensor) and t.shape == (2, 3) and t.dtype is opdispatch.float64
    a[0, 0] = 42
    assert t[0, 0].item() == 42
    back = np.from_dlpack(t)
    back[1, 2] = -1
    assert a[1, 2] == -1 and t.__dlpack_device__() == (1, 0)
    again = opdispatch.from_dlpack(t)
    assert again.data_ptr() == t.data_ptr()
    with pytest.raises(RuntimeError, match="only cpu tensors"):
        opdispatch.zeros(2, device="meta").__dlpack_device__()
    with pytest.raises(RuntimeError, match="require gradient"):
        opdispatch.ones(2, requires_grad=True).__dlpack__()


def test_tensor_factory_copies_and_infers_dtypes():
    assert opdispatch.tensor([1.0, 2]).dtype is opdispatch.float32
    assert opdispatch.tensor([1, 2]).dtype is opdispatch.int64
    assert opdispatch.tensor([True]).dtype is opdispatch.bool
    assert opdispatch.tensor(np.array([1.0])).dtype is opdispatch.float64
    assert opdispatch.tensor([1, 2], dtype=opdispatch.float16).dtype is opdispatch.float16
    assert opdispatch.tensor(3.5).shape == ()
    a = np.zeros(3)
    t = opdispatch.tensor(a)
    a[0] = 1
    assert t.tolist() == [0.0, 0.0, 0.0]
    copy = opdispatch.tensor(t)
    assert copy.tolist() == t.tolist() and not copy._shares_storage(t)
    m = opdispatch.tensor([[1, 2]], device="meta")
    assert m.is_meta and m.dtype is opdispatch.int64 and m.shape == (1, 2)
    g = opdispatch.tensor([1.0], requires_grad=True)
    assert g.requires_grad and g.is_leaf
    with pytest.raises(TypeError, match="numeric"):
        opdispatch.tensor(["a"])
    assert opdispatch.tensor(np.arange(6).reshape(2, 3).T).stride() == (2, 1)


# --- repr ------------------------------------------------------------------------------------------------

def test_repr():
    x = opdispatch.tensor([[1.0, 2.0]], requires_grad=True)
    assert repr(x) == "tensor([[1., 2.]], dtype=opdispatch.float32, requires_grad=True)"
    assert repr(x * x) == "tensor([[1., 4.]], dtype=opdispatch.float32, grad_fn=<od::mul.TensorBackward>)"
    assert repr(opdispatch.tensor([1, 2])) == "tensor([1, 2], dtype=opdispatch.int64)"
    assert repr(opdispatch.tensor(2.5, dtype=opdispatch.float64)) == "tensor(2.5, dtype=opdispatch.float64)"
    assert repr(opdispatch.zeros(0, 2)) == "tensor([], size=(0, 2), dtype=opdispatch.float32)"  # PyTorch: tensor([], size=(0, 2))
    assert repr(opdispatch.ones(2, 3, device="meta", dtype=opdispatch.int8)) == \
        "tensor(..., device='meta', size=(2, 3), dtype=opdispatch.int8)"
    assert repr(opdispatch.tensor([[1, 2], [3, 4]])) == "tensor([[1, 2],\n        [3, 4]], dtype=opdispatch.int64)"


class _Wrapper(opdispatch.Tensor):
    """A LoggingTensor-style wrapper (PyTorch's torch/testing/_internal/logging_tensor.py): its own __repr__
    passes the inner tensor's text as tensor_contents."""

    calls: list = []

    @staticmethod
    def __new__(cls, elem, requires_grad=False):
        r = opdispatch.Tensor._make_wrapper_subclass(cls, elem.size(), strides=elem.stride(), dtype=elem.dtype,
                                                     requires_grad=requires_grad)
        r.elem = elem
        return r

    def __repr__(self):
        return super().__repr__(tensor_contents=f"{self.elem}")

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        cls.calls.append(str(func))
        return func(*[a.elem if isinstance(a, _Wrapper) else a for a in args], **(kwargs or {}))


def test_subclass_repr_with_tensor_contents_runs_no_operator():
    # PyTorch 2.13 prints the same structure ("W(tensor([1., 1.]), requires_grad=True)", its dtype rule aside)
    # and dispatches nothing: _str runs with the modes disabled and the contents given.
    from opdispatch.utils._python_dispatch import TorchDispatchMode

    class Log(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            _Wrapper.calls.append("mode " + str(func))
            return func(*args, **(kwargs or {}))

    w = _Wrapper(opdispatch.ones(2, dtype=opdispatch.float64), requires_grad=True)
    _Wrapper.calls = []
    with Log():
        text = repr(w)
        assert str(w) == format(w) == text
    assert text == ("_Wrapper(tensor([1., 1.], dtype=opdispatch.float64), dtype=opdispatch.float64, "
                    "requires_grad=True)")
    assert _Wrapper.calls == []
    meta = opdispatch.ones(2, device="meta")
    assert opdispatch.Tensor.__repr__(meta, tensor_contents="<x>") == \
        "tensor(<x>, device='meta', size=(2,), dtype=opdispatch.float32)"


def test_subclass_repr_without_contents_reads_values_through_operators():
    # As PyTorch 2.13's _tensor_str: a 0-d wrapper prints item() (its handler sees _local_scalar_dense), an empty
    # one prints [] and runs nothing, any other fails at tolist(), which refuses subclasses. PyTorch 2.13 gave
    # _Wrapper(3.) (its handler saw view, then _local_scalar_dense: its formatter reshapes first),
    # _Wrapper([], size=(2, 0)), _Wrapper([], dtype=torch.int64) and the same error.
    _Wrapper.calls = []
    assert opdispatch.Tensor.__repr__(_Wrapper(opdispatch.tensor(3.0))) == "_Wrapper(3., dtype=opdispatch.float32)"
    assert _Wrapper.calls == ["od._local_scalar_dense.default"]
    _Wrapper.calls = []
    assert opdispatch.Tensor.__repr__(_Wrapper(opdispatch.ones(2, 0))) == \
        "_Wrapper([], size=(2, 0), dtype=opdispatch.float32)"
    assert opdispatch.Tensor.__repr__(_Wrapper(opdispatch.ones(0, dtype=opdispatch.int64))) == \
        "_Wrapper([], dtype=opdispatch.int64)"
    assert _Wrapper.calls == []
    with pytest.raises(RuntimeError, match=r"^\.tolist\(\) is not supported for tensor subclasses, got _Wrapper$"):
        opdispatch.Tensor.__repr__(_Wrapper(opdispatch.ones(2)))
    assert repr(opdispatch.ones(2, 0)) == "tensor([], size=(2, 0), dtype=opdispatch.float32)"  # PyTorch: size too


# --- top-level functions ---------------------------------------------------------------------------------

def test_top_level_functions():
    x = opdispatch.arange(6.0).view(2, 3)
    assert opdispatch.zeros(2, 3).shape == opdispatch.ones((2, 3)).shape == (2, 3)
    assert opdispatch.full((2,), 4.0).tolist() == [4.0, 4.0] and opdispatch.arange(1, 7, 2).tolist() == [1, 3, 5]
    assert opdispatch.rand(3).shape == opdispatch.randn(3).shape == (3,)
    assert opdispatch.zeros_like(x).sum().item() == 0 and opdispatch.ones_like(x).sum().item() == 6
    assert opdispatch.empty_like(x).shape == (2, 3) and opdispatch.empty(4).shape == (4,)
    assert opdispatch.matmul(x, opdispatch.ones(3)).tolist() == [3.0, 12.0]
    assert opdispatch.cat([x, x], 1).shape == (2, 6) and opdispatch.stack((x, x)).shape == (2, 2, 3)
    assert opdispatch.where(x > 2, x, -x).tolist() == [[0, -1, -2], [3, 4, 5]]
    assert opdispatch.maximum(x, opdispatch.full([], 3.0)).sum().item() == 3 * 4 + 4 + 5
    assert opdispatch.exp(x).log().sub(x).abs().amax().item() < 1e-6
    assert opdispatch.sum(x, 0).tolist() == [3.0, 5.0, 7.0] and opdispatch.mean(x).item() == 2.5
    assert opdispatch.transpose(x, 0, 1).shape == (3, 2) and opdispatch.reshape(x, (3, 2)).shape == (3, 2)
    assert opdispatch.softmax(x, 1).shape == (2, 3) and opdispatch.argmax(x).item() == 5
    logp = opdispatch.log_softmax(x, 1)
    target = opdispatch.tensor([2, 0])
    loss = opdispatch.nll_loss(logp, target)
    assert loss.item() == pytest.approx(-(logp[0, 2].item() + logp[1, 0].item()) / 2)
    assert opdispatch.nll_loss(logp, target, reduction="none").shape == (2,)
    with pytest.raises(ValueError, match="reduction must be"):
        opdispatch.nll_loss(logp, target, reduction="avg")
    assert opdispatch.ones(2, requires_grad=True).requires_grad
    for name in opdispatch.__all__:
        assert hasattr(opdispatch, name), name


# --- assert_close ------------------------------------------------------------------------------------------

def test_assert_close_passes_within_dtype_tolerances():
    assert_close(opdispatch.tensor([1.0, 2.0]), opdispatch.tensor([1.0 + 1e-6, 2.0]))
    assert_close(opdispatch.tensor([1.0], dtype=opdispatch.float16), opdispatch.tensor([1.0005],
                                                                                      dtype=opdispatch.float16))
    assert_close(opdispatch.tensor([1, 2]), [1, 2])
    assert_close(opdispatch.tensor([float("nan")]), opdispatch.tensor([float("nan")]), equal_nan=True)
    assert_close(opdispatch.tensor([1.0]), opdispatch.tensor([1.1]), rtol=0.2, atol=0.0)
    assert_close(opdispatch.ones(2, device="meta"), opdispatch.zeros(2, device="meta"))  # metadata only


def test_assert_close_reports_the_greatest_differences():
    actual = opdispatch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=opdispatch.float64)
    expected = opdispatch.tensor([[1.0, 2.0, 3.0], [4.0, 5.5, 6.1]], dtype=opdispatch.float64)
    with pytest.raises(AssertionError) as info:
        assert_close(actual, expected)
    message = str(info.value)
    assert "Tensor-likes are not close!" in message
    assert "Mismatched elements: 2 / 6 (33.3%)" in message
    assert "Greatest absolute difference: 0.5 at index (1, 1) (up to 1e-07 allowed)" in message
    assert "Greatest relative difference: 0.0909" in message and "at index (1, 1) (up to 1e-07 allowed)" in message


@pytest.mark.parametrize("actual,expected,message", [
    (opdispatch.ones(2), opdispatch.ones(3), r"'shape' do not match: \(2,\) != \(3,\)"),
    (opdispatch.ones(2), opdispatch.ones(2, dtype=opdispatch.float64), "'dtype' do not match"),
    (opdispatch.ones(2), opdispatch.ones(2, device="meta"), "'device' do not match"),
    (opdispatch.tensor([1, 2]), opdispatch.tensor([1, 3]), "Mismatched elements: 1 / 2"),
    (opdispatch.tensor(float("nan")), opdispatch.tensor(float("nan")), "Scalars are not close"),
])
def test_assert_close_failures(actual, expected, message):
    with pytest.raises(AssertionError, match=message):
        assert_close(actual, expected)


def test_assert_close_needs_both_tolerances():
    with pytest.raises(ValueError, match="Both 'rtol' and 'atol'"):
        assert_close(opdispatch.ones(1), opdispatch.ones(1), rtol=1e-3)


def test_dtype_objects_are_the_c_objects():
    assert opdispatch.float32 is _C.float32


def test_to_takes_none_for_its_device_and_dtype():
    # PyTorch 2.13: x.to(None) is x; to(None, float64) converts; to('cpu', None) is float32; a third None is refused.
    x = opdispatch.ones(2)
    assert x.to(None) is x and x.to("cpu", None).dtype is opdispatch.float32
    assert x.to(None, opdispatch.float64).dtype is opdispatch.float64
    with pytest.raises(TypeError):
        x.to(None, None, None)
