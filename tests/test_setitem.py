"""Tensor.__setitem__: values, the operator sequence modes see, autograd,
version counters, errors and the function layer, against PyTorch 2.13 (the
expected values below were recorded by running the same statements there)."""
from __future__ import annotations

import pytest

import opdispatch
from opdispatch.overrides import TorchFunctionMode
from opdispatch.tracing import make_fx
from opdispatch.utils._python_dispatch import TorchDispatchMode


class _LogOps(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.names.append(str(func).split(".", 1)[1])
        return func(*args, **(kwargs or {}))


IDX = opdispatch.tensor([0, 2])
MASK = opdispatch.tensor([True, False, True])
Y4 = opdispatch.ones(4)
Y32 = opdispatch.ones(3, 2)
Y14 = opdispatch.ones(1, 4)
S = opdispatch.tensor(3.0)

# statement: (its index and value, then PyTorch 2.13's operator names, result and version of x = arange(12.).reshape(3, 4)).
CASES = {
    "x[0] = 1": (0, 1, ['lift_fresh.default', 'select.int', 'fill_.Tensor'],
        [[1.0, 1.0, 1.0, 1.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0]], 1),
    "x[0] = y4": (0, Y4, ['select.int', 'copy_.default'],
        [[1.0, 1.0, 1.0, 1.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0]], 1),
    "x[:, 1:3] = 2.5": ((slice(None), slice(1, 3)), 2.5, ['lift_fresh.default', 'slice.Tensor', 'fill_.Tensor'],
        [[0.0, 2.5, 2.5, 3.0], [4.0, 2.5, 2.5, 7.0], [8.0, 2.5, 2.5, 11.0]], 1),
    "x[:, 1:3] = y32": ((slice(None), slice(1, 3)), Y32, ['slice.Tensor', 'copy_.default'],
        [[0.0, 1.0, 1.0, 3.0], [4.0, 1.0, 1.0, 7.0], [8.0, 1.0, 1.0, 11.0]], 1),
    "x[:] = y4": (slice(None), Y4, ['view.default', 'expand.default', 'copy_.default'],
        [[1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0]], 1),
    "x[0] = y14": (0, Y14, ['select.int', 'view.default', 'copy_.default'],
        [[1.0, 1.0, 1.0, 1.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0]], 1),
    "x[mask] = 0": (MASK, 0, ['lift_fresh.default', 'index_put_.default'],
        [[0.0, 0.0, 0.0, 0.0], [4.0, 5.0, 6.0, 7.0], [0.0, 0.0, 0.0, 0.0]], 1),
    "x[idx] = y4": (IDX, Y4, ['index_put_.default'],
        [[1.0, 1.0, 1.0, 1.0], [4.0, 5.0, 6.0, 7.0], [1.0, 1.0, 1.0, 1.0]], 1),
    "x[[0, 2]] = 5": ([0, 2], 5, ['lift_fresh.default', 'lift_fresh.default', 'index_put_.default'],
        [[5.0, 5.0, 5.0, 5.0], [4.0, 5.0, 6.0, 7.0], [5.0, 5.0, 5.0, 5.0]], 1),
    "x[1:, [0, 2]] = 7": ((slice(1, None), [0, 2]), 7.0, ['lift_fresh.default', 'slice.Tensor', 'lift_fresh.default', 'index_put_.default'],
        [[0.0, 1.0, 2.0, 3.0], [7.0, 5.0, 7.0, 7.0], [7.0, 9.0, 7.0, 11.0]], 1),
    "x[...] = 1": (..., 1, ['lift_fresh.default', 'fill_.Tensor'],
        [[1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0]], 1),
    "x[None] = 1": (None, 1, ['lift_fresh.default', 'unsqueeze.default', 'fill_.Tensor'],
        [[1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0]], 1),
    "x[0, 1] = 1": ((0, 1), 1, ['lift_fresh.default', 'select.int', 'select.int', 'copy_.default'],
        [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0]], 1),
    "x[0] = s": (0, S, ['select.int', 'fill_.Tensor'],
        [[3.0, 3.0, 3.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0]], 1),
    "x[idx] = s": (IDX, S, ['index_put_.default'],
        [[3.0, 3.0, 3.0, 3.0], [4.0, 5.0, 6.0, 7.0], [3.0, 3.0, 3.0, 3.0]], 1),
}


@pytest.mark.parametrize("statement", list(CASES))
def test_setitem_values_versions_and_operators_match_pytorch(statement):
    index, value, names, expected, version = CASES[statement]
    x = opdispatch.arange(12.0).reshape(3, 4)
    with _LogOps() as log:
        x[index] = value
    assert log.names == names
    assert x.tolist() == expected and x._version == version


W = opdispatch.arange(12.0).reshape(3, 4)


def _grads(update):
    a = opdispatch.ones(3, 4, requires_grad=True)
    y = opdispatch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    x = a * 2
    update(x, y)
    (x * W).sum().backward()
    return a.grad.tolist(), None if y.grad is None else y.grad.tolist(), x.grad_fn.name()


# (update, PyTorch 2.13's gradients of a and y and x's grad_fn; od names IndexPutBackward0 od::index_put_Backward).
GRAD_CASES = [
    (lambda x, y: x.__setitem__(0, y * 3),
     [[0, 0, 0, 0], [8, 10, 12, 14], [16, 18, 20, 22]], [0, 3, 6, 9], "CopySlices"),
    (lambda x, y: x.__setitem__((slice(None), 1), y[:3]),
     [[0, 0, 4, 6], [8, 0, 12, 14], [16, 0, 20, 22]], [1, 5, 9, 0], "CopySlices"),
    (lambda x, y: x.__setitem__(opdispatch.tensor([0, 2]), y),
     [[0, 0, 0, 0], [8, 10, 12, 14], [0, 0, 0, 0]], [8, 10, 12, 14], "od::index_put_Backward"),
    (lambda x, y: x.__setitem__(x > 4, y[0]),
     [[0, 2, 4, 6], [8, 10, 12, 14], [16, 18, 20, 22]], [0, 0, 0, 0], "od::index_put_Backward"),
    (lambda x, y: x.__setitem__((slice(1, None), [0, 3]), y[1]),
     [[0, 2, 4, 6], [0, 10, 12, 0], [0, 18, 20, 0]], [0, 30, 0, 0], "CopySlices"),
    (lambda x, y: x.__setitem__(0, 5.0),
     [[0, 0, 0, 0], [8, 10, 12, 14], [16, 18, 20, 22]], None, "CopySlices"),
]


@pytest.mark.parametrize("case", range(len(GRAD_CASES)))
def test_setitem_gradients_match_pytorch(case):
    update, a_grad, y_grad, node = GRAD_CASES[case]
    assert _grads(update) == (a_grad, y_grad, node)


def test_writing_a_value_that_requires_grad_into_a_plain_tensor_gives_it_history():
    y = opdispatch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    z = opdispatch.zeros(2, 4)
    z[1] = y * y
    assert z.requires_grad and z.grad_fn.name() == "CopySlices"
    (z * opdispatch.tensor([[1.0, 1, 1, 1], [1, 2, 3, 4]])).sum().backward()
    assert y.grad.tolist() == [2, 8, 18, 32]


def test_setitem_gradcheck():
    def f(a, y):
        x = a * 1
        x[1:, 2] = y[:2]
        x[opdispatch.tensor([0])] = y[2] * y[3]
        return x

    a = opdispatch.rand(3, 4, dtype=opdispatch.float64, requires_grad=True)
    y = opdispatch.rand(4, dtype=opdispatch.float64, requires_grad=True)
    assert opdispatch.autograd.gradcheck(f, (a, y))


def test_updating_a_leaf_that_requires_grad_is_refused_and_changes_nothing():
    leaf = opdispatch.zeros(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"od::copy_: a view of a leaf tensor that requires grad"):
        leaf[0] = 1.0
    with pytest.raises(RuntimeError, match=r"od::index_put_: a leaf tensor that requires grad"):
        leaf[opdispatch.tensor([0])] = 1.0
    assert leaf.tolist() == [0, 0] and leaf.is_leaf and leaf._version == 0
    with opdispatch.no_grad():
        leaf[0] = 1.0
    assert leaf.tolist() == [1, 0]


@pytest.mark.parametrize(("dtype", "value", "expected"), [
    (opdispatch.int64, 2.7, 2), (opdispatch.int32, 2.5, 2), (opdispatch.uint8, -1, 255), (opdispatch.bool, 2, True),
    (opdispatch.bool, 0.5, True), (opdispatch.float32, float("inf"), float("inf")), (opdispatch.float32, 1 + 0j, 1.0),
    (opdispatch.float16, 70000.0, float("inf")), (opdispatch.float32, True, 1.0),
])
def test_numbers_are_converted_to_the_dtype_as_pytorch_does(dtype, value, expected):
    x = opdispatch.zeros(2, dtype=dtype)
    x[0] = value
    assert x[0].item() == expected and x[1].item() == 0 and x.dtype == dtype


@pytest.mark.parametrize(("dtype", "value", "message"), [
    (opdispatch.int8, 300, "int8_t"), (opdispatch.int8, -129, "int8_t"), (opdispatch.uint8, -300, "uint8_t"),
    (opdispatch.uint8, 256, "uint8_t"), (opdispatch.int64, 1e20, "int64_t"), (opdispatch.int64, float("nan"), "int64_t"),
    (opdispatch.float32, 1e300, "float"), (opdispatch.float32, 1j, "float"),
])
def test_numbers_that_overflow_the_dtype_are_refused(dtype, value, message):
    x = opdispatch.zeros(2, dtype=dtype)
    with pytest.raises(RuntimeError, match=f"^value cannot be converted to type {message} without overflow$"):
        x[0] = value
    assert x.tolist() == [0, 0] and x._version == 0


def test_errors_match_pytorch():
    x = opdispatch.zeros(3, 4)
    with pytest.raises(ValueError, match="Overflow when unpacking long long"):
        x[0] = 2**63
    for value, name in (("a", "str"), (None, "NoneType"), ([1, 2, 3, 4], "list"), (Y4.numpy(), "numpy.ndarray")):
        with pytest.raises(TypeError, match=f"can't assign a {name} to a tensor of dtype opdispatch.float32"):
            x[0] = value
    with pytest.raises(RuntimeError, match=r"expanded size of the tensor \(4\) must match the existing size \(3\)"):
        x[0] = opdispatch.ones(3)
    with pytest.raises(RuntimeError, match=r"value tensor of shape \[3\] cannot be broadcast to indexing result of "
                                           r"shape \[2, 4\]"):
        x[IDX] = opdispatch.ones(3)
    with pytest.raises(RuntimeError, match="Index put requires the source and destination dtypes match, got Long for "
                                           "the destination and Float for the source"):
        opdispatch.zeros(2, dtype=opdispatch.int64)[opdispatch.tensor([0])] = opdispatch.tensor([2.7])
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 3"):
        x[opdispatch.tensor([5])] = 1.0
    with pytest.raises(ValueError, match="step must be greater than zero"):
        x[::-1] = 1.0
    assert x.tolist() == [[0] * 4] * 3 and x._version == 0


def test_a_tensor_value_is_cast_to_self_dtype():
    x = opdispatch.zeros(2, dtype=opdispatch.int64)
    x[0:1] = opdispatch.tensor([2.7])
    assert x.tolist() == [2, 0]
    m = opdispatch.zeros(2)  # one mask and a 0-d value: PyTorch's masked_fill path casts too
    m[opdispatch.tensor([True, False])] = opdispatch.tensor(2.5, dtype=opdispatch.float64)
    assert m.tolist() == [2.5, 0]


def test_the_function_layer_sees_setitem():
    seen = []

    class Logged(opdispatch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs or {})

    x = opdispatch.zeros(3, 4).as_subclass(Logged)
    x[0] = 1
    x[IDX] = Y4
    plain = opdispatch.zeros(3, 4)
    plain[0] = opdispatch.ones(4).as_subclass(Logged)  # the value is a relevant argument too
    assert seen == ["__setitem__"] * 3  # as PyTorch 2.13 (Tensor.__setitem__)
    assert x.tolist()[0] == [1, 1, 1, 1] and plain.tolist()[0] == [1, 1, 1, 1]
    seen.clear()

    class Mode(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return func(*args, **(kwargs or {}))

    with Mode():
        plain[1] = 2.0
        plain[opdispatch.tensor([0])] = 3.0
    assert seen == ["__setitem__", "tensor", "__setitem__"]  # as PyTorch 2.13 (tensor: the IDX made here)


def test_meta_tensors_and_make_fx():
    m = opdispatch.empty(3, 4, device="meta")
    m[0] = 1
    m[:, 1] = opdispatch.ones(3, device="meta")
    assert m.shape == (3, 4) and m.device.type == "meta"

    def f(x, y):
        x = x.clone()
        x[0] = y
        x[:, 1] = 2.0
        x[x > 3] = 0
        return x

    graph = make_fx(f)(opdispatch.arange(12.0).reshape(3, 4), opdispatch.ones(4))
    calls = [str(n.target) for n in graph.graph.nodes if n.op == "call_function"]
    # PyTorch 2.13's make_fx records these, with lift_fresh_copy for lift_fresh.
    assert calls == ["od.clone.default", "od.select.int", "od.copy_.default", "od.lift_fresh_copy.default",
                     "od.select.int", "od.fill_.Tensor", "od.gt.Scalar", "od.lift_fresh_copy.default",
                     "od.index_put_.default"]
    out = graph(opdispatch.arange(12.0).reshape(3, 4), opdispatch.ones(4))
    assert out.tolist() == [[1, 2, 1, 1], [0, 2, 0, 0], [0, 2, 0, 0]]


def _calls(fn, *args):
    return [str(n.target).removeprefix("od.") for n in make_fx(fn)(*args).graph.nodes if n.op == "call_function"]


def test_bool_indices_as_pytorch():
    # PyTorch 2.13: a bool adds a dim of size 1, indexed by [0] (True) or by nothing (False); x[False] = v
    # writes nothing, x[True] = v writes to x.unsqueeze(0). The operator lists are its make_fx's.
    x = opdispatch.zeros(2, 3)
    assert x[True].shape == (1, 2, 3) and x[False].shape == (0, 2, 3) and x[None, True, ..., False].shape == (0, 1, 2, 3)
    x[1, True] = 5.0
    x[False] = 7.0
    assert x.tolist() == [[0, 0, 0], [5, 5, 5]]
    x[True] = opdispatch.ones(3)
    assert x.tolist() == [[1, 1, 1], [1, 1, 1]]

    def write(x):
        x = x.clone()
        x[False] = 1.0
        x[True] = 2.0
        return x

    def read(x):
        return x[True], x[False]

    def write_true_and_int(x):
        x = x.clone()
        x[True, 0] = 3.0
        return x

    assert _calls(write, opdispatch.zeros(2)) == [
        "clone.default", "lift_fresh_copy.default", "lift_fresh_copy.default", "unsqueeze.default", "fill_.Tensor"]
    assert _calls(read, opdispatch.zeros(2)) == [
        "unsqueeze.default", "empty.memory_format", "fill_.Scalar", "index.Tensor", "unsqueeze.default",
        "empty.memory_format", "index.Tensor"]
    assert _calls(write_true_and_int, opdispatch.zeros(2)) == [
        "clone.default", "lift_fresh_copy.default", "unsqueeze.default", "empty.memory_format", "fill_.Scalar",
        "select.int", "index_put_.default"]
    assert write(opdispatch.zeros(2)).tolist() == [2, 2] and write_true_and_int(opdispatch.zeros(2)).tolist() == [3, 0]


def test_an_update_of_a_lifted_value_leaves_the_traced_constant_alone():
    def f(x):
        y = x.clone()
        y[0] = 5.0
        return y

    gm = make_fx(f)(opdispatch.zeros(3))
    assert gm(opdispatch.ones(3)).tolist() == [5, 1, 1] and gm(opdispatch.ones(3)).tolist() == [5, 1, 1]
