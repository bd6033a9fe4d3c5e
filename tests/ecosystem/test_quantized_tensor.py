"""Port of albanD/subclass_zoo's QuantizedTensor (quantized_tensor.py), a
quantisation subclass: int8 data behind a float32 public dtype, made by an
autograd.Function and computed through __torch_dispatch__. The ported code
is in ported/quantized_tensor.py; the script below is the original's (fixed
inputs in place of its randint ones), whose PyTorch 2.13 form printed the
values asserted here."""
from __future__ import annotations

import pytest

import opdispatch as torch
from _port import loaded


@pytest.fixture
def qt_module():
    with loaded("quantized_tensor") as module:
        module.CALLS.clear()
        yield module


def data_of(t):
    return str(t._data.dtype), t._data.tolist()


def test_quantized_tensor_script(qt_module):
    QuantizedTensor = qt_module.QuantizedTensor
    inp = torch.tensor([17.0, 42.0], requires_grad=True)
    qt = QuantizedTensor.from_tensor(inp)
    assert type(qt) is QuantizedTensor and qt.dtype is torch.float32 and qt.requires_grad
    assert data_of(qt) == ("opdispatch.int8", [17, 42])
    assert repr(qt).startswith("QuantizedTensor(tensor([17, 42], dtype=opdispatch.int8), "
                               "public_dtype=opdispatch.float32, grad_fn=<")

    (qt * 3).sum().backward(retain_graph=True)
    assert type(inp.grad) is QuantizedTensor and inp.grad.dtype is torch.float32
    assert data_of(inp.grad) == ("opdispatch.int64", [3, 3])  # PyTorch 2.13: tensor([3, 3]) (int64)
    first = list(qt_module.CALLS)

    qt2 = QuantizedTensor.from_tensor(torch.tensor([5.0, 90.0])).requires_grad_()
    assert qt2.is_leaf and data_of(qt2) == ("opdispatch.int8", [5, 90])
    assert repr(qt2) == ("QuantizedTensor(tensor([ 5, 90], dtype=opdispatch.int8), public_dtype=opdispatch.float32, "
                         "requires_grad=True)")
    qt_module.CALLS.clear()
    (qt2 * qt).sum().backward()
    assert data_of(qt2.grad) == ("opdispatch.int64", [17, 42])
    assert data_of(inp.grad) == ("opdispatch.int64", [8, 93])

    # What the handler saw. PyTorch 2.13's, for the same script:
    #   mul.Tensor sum.default ones_like.default expand.default mul.Tensor detach.default
    #   mul.Tensor sum.default ones_like.default expand.default mul.Tensor mul.Tensor detach.default add_.Tensor
    # Two differences remain: a Python number reaches PyTorch's mul as a wrapped 0-d tensor (mul.Tensor, the
    # handler given the number back), here od::mul.Scalar; and PyTorch's AccumulateGrad detaches a first
    # gradient and adds a later one in place, where opdispatch's engine stores the first and adds out of place.
    assert first == ["od.mul.Scalar", "od.sum.default", "od.ones_like.default", "od.expand.default",
                     "od.mul.Scalar"]
    assert qt_module.CALLS == ["od.mul.Tensor", "od.sum.default", "od.ones_like.default", "od.expand.default",
                               "od.mul.Tensor", "od.mul.Tensor", "od.add.Tensor"]
