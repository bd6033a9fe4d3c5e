"""The in-place view operators (od::transpose_, t_, unsqueeze_, squeeze_ and
its .dim / .dims overloads, as_strided_): self takes the out-of-place
view's geometry over the same memory, its version counter is bumped, and
autograd records the change. Every expected value is what the same program
gives on PyTorch 2.13 (aten's namesakes)."""
from __future__ import annotations

import pytest

import opdispatch as od
from opdispatch import Tag

INPLACE_VIEW_OPS = [("transpose_", "default", "transpose_(Tensor(a!) self, int dim0, int dim1) -> Tensor(a!)"),
                    ("t_", "default", "t_(Tensor(a!) self) -> Tensor(a!)"),
                    ("unsqueeze_", "default", "unsqueeze_(Tensor(a!) self, int dim) -> Tensor(a!)"),
                    ("squeeze_", "default", "squeeze_(Tensor(a!) self) -> Tensor(a!)"),
                    ("squeeze_", "dim", "squeeze_.dim(Tensor(a!) self, int dim) -> Tensor(a!)"),
                    ("squeeze_", "dims", "squeeze_.dims(Tensor(a!) self, int[] dim) -> Tensor(a!)"),
                    ("as_strided_", "default", "as_strided_(Tensor(a!) self, SymInt[] size, SymInt[] stride, "
                                               "SymInt? storage_offset=None) -> Tensor(a!)")]


@pytest.mark.parametrize("name,overload,schema", INPLACE_VIEW_OPS)
def test_schemas_and_tags_are_pytorchs(name, overload, schema):
    op = getattr(getattr(od.ops.od, name), overload)
    assert str(op._schema) == "od::" + schema
    assert list(op.tags) == [Tag.inplace, Tag.inplace_view, Tag.pt2_compliant_tag]


def test_each_operator_changes_self_in_place_and_bumps_its_version():
    x = od.arange(6.0).reshape(2, 3)
    v = x._version
    assert x.transpose_(0, 1) is x
    assert (tuple(x.shape), x.stride(), x._version - v) == ((3, 2), (1, 3), 1)
    x.t_()
    assert (tuple(x.shape), x.stride(), x._version - v) == ((2, 3), (3, 1), 2)
    x.unsqueeze_(1)
    assert (tuple(x.shape), x.stride(), x._version - v) == ((2, 1, 3), (3, 3, 1), 3)
    x.squeeze_()
    assert (tuple(x.shape), x.stride()) == ((2, 3), (3, 1))
    x.unsqueeze_(0).squeeze_(0)
    assert tuple(x.shape) == (2, 3)
    x.as_strided_((3,), (2,), 1)
    assert (tuple(x.shape), x.stride(), x.storage_offset(), x._version - v, x.tolist()) == (
        (3,), (2,), 1, 7, [1.0, 3.0, 5.0])
    y = od.ones(1, 2, 1)
    y.squeeze_(dim=0)
    assert tuple(y.shape) == (2, 1)
    y.unsqueeze_(dim=0).squeeze_((0, 2))
    assert tuple(y.shape) == (2,)


def test_a_kernel_reads_the_new_geometry():
    # A tensor's kernels reuse one NumPy view of it; changing its geometry must drop that view.
    c = od.ones(3, 4) * 1
    c.unsqueeze_(1)
    assert tuple((c * od.arange(12.0).reshape(3, 1, 4)).shape) == (3, 1, 4)


def test_a_view_of_a_base_changes_alone():
    b = od.arange(6.0).reshape(2, 3)
    row = b[0]
    row.unsqueeze_(0)
    assert (tuple(row.shape), tuple(b.shape), b._version, row.tolist()) == ((1, 3), (2, 3), 1, [[0.0, 1.0, 2.0]])


def test_errors_are_pytorchs():
    with pytest.raises(IndexError, match="out of range"):
        od.randn(2).t_().transpose_(0, 3)
    with pytest.raises(RuntimeError, match=r"t_\(\) expects a tensor with <= 2 dimensions, but self is 3D"):
        od.randn(2, 3, 4).t_()
    x = od.randn(2, 3)
    with pytest.raises(RuntimeError, match="out of bounds for storage of size 24"):
        x.as_strided_((7,), (1,))
    assert (tuple(x.shape), x.stride()) == ((2, 3), (3, 1))


def test_autograd_records_the_change():
    a = od.arange(12.0).reshape(3, 4).requires_grad_()
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad is being used in an in-place operation"):
        a.transpose_(0, 1)
    c = a * 2
    c.transpose_(0, 1)
    assert c.grad_fn.next_functions[0][0] is not None
    c.sum().backward()
    assert a.grad.tolist() == [[2.0] * 4] * 3
    a.grad = None
    c = a * 2
    c.as_strided_((2, 2), (1, 4), 1)
    c.sum().backward()
    assert a.grad.tolist() == [[0.0, 2.0, 2.0, 0.0], [0.0, 2.0, 2.0, 0.0], [0.0] * 4]
    a.grad = None
    c = a * 2
    c.squeeze_()
    c.unsqueeze_(1)
    (c * od.arange(12.0).reshape(3, 1, 4)).sum().backward()
    assert a.grad.tolist() == [[0.0, 2.0, 4.0, 6.0], [8.0, 10.0, 12.0, 14.0], [16.0, 18.0, 20.0, 22.0]]
