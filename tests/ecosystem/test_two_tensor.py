"""Port of PyTorch's TwoTensor test subclass (pytorch/pytorch
torch/testing/_internal/two_tensor.py), whose __torch_dispatch__ ends in
return_and_correct_aliasing: views, in-place and out= operators on it. The
ported code is in ported/two_tensor.py; each expected value is what the
original gives on PyTorch 2.13 for the same program (aliasing as
torch._C._is_alias_of reports it, here Tensor._shares_memory)."""
from __future__ import annotations

import pytest

import opdispatch as torch
from _port import loaded

od = torch.ops.od


@pytest.fixture(scope="module")
def tt():
    with loaded("two_tensor") as module:
        yield module


@pytest.fixture(scope="module")
def TwoTensor(tt):
    return tt.TwoTensor


@pytest.fixture
def t(TwoTensor):
    a = torch.arange(6.0).reshape(2, 3)
    return TwoTensor(a, a * 10)


def test_a_view_is_a_two_tensor_aliasing_its_base(TwoTensor, t):
    v = t.view(3, 2)
    assert type(v) is TwoTensor
    assert (tuple(v.shape), v.stride()) == ((3, 2), (2, 1))
    assert v._shares_memory(t) and v.a._shares_memory(t.a)
    tr = t.transpose(0, 1)
    assert (tuple(tr.shape), tr.stride()) == ((3, 2), (1, 3)) and tr._shares_memory(t)
    sq = t.unsqueeze(0).squeeze(0)
    assert tuple(sq.shape) == (2, 3) and sq._shares_memory(t)
    d = t.detach()
    assert type(d) is TwoTensor and d._shares_memory(t)


def test_each_piece_of_a_split_aliases_the_base(TwoTensor, t):
    pieces = od.split_with_sizes.default(t, [1, 1])
    assert type(pieces) is list and [type(p) for p in pieces] == [TwoTensor, TwoTensor]
    assert [p._shares_memory(t) for p in pieces] == [True, True]


def test_an_operator_that_makes_new_memory_aliases_nothing(t):
    assert not t.add(1)._shares_memory(t)
    assert not t.clone()._shares_memory(t)


def test_an_in_place_operator_returns_the_tensor_it_wrote(t):
    assert t.add_(1) is t
    assert t.a.tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    assert t.b.tolist() == [[1.0, 11.0, 21.0], [31.0, 41.0, 51.0]]


def test_an_out_operator_returns_its_out_argument(TwoTensor, t):
    o = TwoTensor(torch.zeros(2, 3), torch.zeros(2, 3))
    assert od.atan2.out(t, t, out=o) is o
    assert [round(x, 4) for x in o.a.flatten().tolist()] == [0.0] + [0.7854] * 5


def test_flatten_and_unflatten_round_trip(TwoTensor, t):
    names, ctx = t.__tensor_flatten__()
    u = TwoTensor.__tensor_unflatten__({n: getattr(t, n) for n in names}, ctx, t.size(), t.stride())
    assert type(u) is TwoTensor and u.get_elem_a() is t.a


def test_the_mode_makes_constructed_tensors_two_tensors(tt):
    from opdispatch._subclasses.fake_tensor import _is_tensor_constructor

    assert [_is_tensor_constructor(op) for op in (od.ones.default, od.empty.memory_format, od.add.Tensor,
                                                   od.arange.default, od.zeros_like.default,
                                                   od.split_with_sizes.default)] == [True, True, False, True,
                                                                                     False, False]
    with tt.TwoTensorMode():
        x = torch.ones(2, 3)
        y = torch.arange(3.0)
        z = x + 1
    assert [type(v) for v in (x, y, z)] == [tt.TwoTensor] * 3
    assert x.a.tolist() == x.b.tolist() == [[1.0] * 3] * 2 and x.a is not x.b
    assert z.b.tolist() == [[2.0] * 3] * 2


def test_in_place_view_operators_update_the_wrapper_and_its_elements(TwoTensor):
    # Expected values: the same program on PyTorch 2.13 with torch.testing._internal.two_tensor.TwoTensor.
    a = torch.arange(6.0).reshape(2, 3)
    t = TwoTensor(a, a * 10)
    v0 = t._version
    assert t.transpose_(0, 1) is t
    assert (tuple(t.shape), t.stride(), tuple(t.a.shape), tuple(t.b.shape), t._version - v0) == (
        (3, 2), (1, 3), (3, 2), (3, 2), 1)
    t.unsqueeze_(0)
    assert (tuple(t.shape), t.stride()) == ((1, 3, 2), (3, 1, 3))
    t.squeeze_(0)
    assert tuple(t.shape) == (3, 2)
    t.t_()
    assert (tuple(t.shape), t.stride()) == ((2, 3), (3, 1))
    t.as_strided_((3,), (2,), 0)
    assert (tuple(t.shape), t.stride(), t.storage_offset(), t.a.tolist(), t.b.tolist()) == (
        (3,), (2,), 0, [0.0, 2.0, 4.0], [0.0, 20.0, 40.0])
    u = TwoTensor(torch.ones(2, 1), torch.ones(2, 1))
    u.squeeze_(1)
    assert tuple(u.shape) == tuple(u.a.shape) == (2,)
