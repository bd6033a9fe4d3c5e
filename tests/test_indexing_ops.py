"""index_select's, gather's, scatter_add's and scatter's data-dependent checks, which the OpInfo error samples
(tests/op_db.py) cannot hold because a Meta kernel never sees index values:
on cpu an index out of range raises PyTorch 2.13's RuntimeError (negative
indices too: index_select does not wrap them) and leaves nothing changed;
on meta the call succeeds with the result's shape, as PyTorch's meta does."""
from __future__ import annotations

import numpy as np
import pytest

import opdispatch
from opdispatch import ops


@pytest.mark.parametrize("bad", [3, -1])
def test_an_index_out_of_range_raises_on_cpu_and_not_on_meta(bad):
    x = opdispatch.arange(6.0).view(2, 3)
    # PyTorch 2.13: RuntimeError: INDICES element is out of DATA bounds, id=3 axis_dim=3 (id=-1 likewise)
    with pytest.raises(RuntimeError, match=f"od::index_select: INDICES element is out of DATA bounds, id={bad} "
                                           f"axis_dim=3"):
        ops.od.index_select(x, 1, opdispatch.tensor([0, bad]))
    meta = ops.od.index_select(x.to("meta"), 1, opdispatch.tensor([0, bad]).to("meta"))
    assert meta.is_meta and meta.shape == (2, 2)


def test_repeated_indices_add_their_gradients():
    x = opdispatch.arange(6.0).view(2, 3).requires_grad_()
    ops.od.index_select(x, 1, opdispatch.tensor([2, 0, 2])).sum().backward()
    # PyTorch 2.13 gives [[1., 0., 2.], [1., 0., 2.]]
    np.testing.assert_array_equal(x.grad.numpy(), [[1.0, 0.0, 2.0], [1.0, 0.0, 2.0]])


@pytest.mark.parametrize("bad", [4, -1])
def test_gather_and_scatter_add_refuse_an_index_out_of_range_on_cpu_only(bad):
    x, index = opdispatch.arange(12.0).view(3, 4), opdispatch.tensor([[0, bad]])
    # PyTorch 2.13: RuntimeError: index 4 is out of bounds for dimension 1 with size 4 (-1 likewise)
    message = f"index {bad} is out of bounds for dimension 1 with size 4"
    with pytest.raises(RuntimeError, match=f"od::gather: {message}"):
        ops.od.gather(x, 1, index)
    before = x.numpy().copy()
    with pytest.raises(RuntimeError, match=f"od::scatter_add: {message}"):
        ops.od.scatter_add(x, 1, index, opdispatch.ones(1, 2))
    with pytest.raises(RuntimeError, match=f"od::scatter.src: {message}"):
        ops.od.scatter.src(x, 1, index, opdispatch.ones(1, 2))
    with pytest.raises(RuntimeError, match=f"od::scatter.value: {message}"):
        ops.od.scatter.value(x, 1, index, 1.0)
    np.testing.assert_array_equal(x.numpy(), before)
    assert ops.od.scatter.value(x.to("meta"), 1, index.to("meta"), 1.0).shape == (3, 4)
    assert ops.od.gather(x.to("meta"), 1, index.to("meta")).shape == (1, 2)


def test_gather_gradient_adds_at_repeated_positions():
    x = opdispatch.arange(12.0).view(3, 4).requires_grad_()
    ops.od.gather(x, 1, opdispatch.tensor([[0, 3], [1, 1]])).sum().backward()
    # PyTorch 2.13 gives [[1, 0, 0, 1], [0, 2, 0, 0], [0, 0, 0, 0]]
    np.testing.assert_array_equal(x.grad.numpy(), [[1, 0, 0, 1], [0, 2, 0, 0], [0, 0, 0, 0]])


def test_scatter_add_takes_the_leading_part_of_a_larger_src():
    out = ops.od.scatter_add(opdispatch.zeros(3, 4), 0, opdispatch.tensor([[0, 0, 2]]), opdispatch.ones(2, 3))
    # PyTorch 2.13: [[1, 1, 0, 0], [0, 0, 0, 0], [0, 0, 1, 0]] (its gradient for src of that shape raises there too)
    np.testing.assert_array_equal(out.numpy(), [[1, 1, 0, 0], [0, 0, 0, 0], [0, 0, 1, 0]])


def test_scatter_writes_and_its_gradients():
    x = opdispatch.zeros(3, 4, requires_grad=True)
    src = opdispatch.arange(1.0, 5.0).view(2, 2).requires_grad_()
    out = x.scatter(1, opdispatch.tensor([[0, 3], [1, 2]]), src)
    # PyTorch 2.13: [[1, 0, 0, 2], [0, 3, 4, 0], [0, 0, 0, 0]]; x's gradient is 0 where src was written
    np.testing.assert_array_equal(out.detach().numpy(), [[1, 0, 0, 2], [0, 3, 4, 0], [0, 0, 0, 0]])
    (out * opdispatch.arange(12.0).view(3, 4)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0, 1, 2, 0], [4, 0, 0, 7], [8, 9, 10, 11]])
    np.testing.assert_array_equal(src.grad.numpy(), [[0, 3], [5, 6]])
    ints = opdispatch.zeros(3, dtype=opdispatch.int64)
    assert opdispatch.scatter(ints, 0, opdispatch.tensor([1]), value=2.7).tolist() == [0, 2, 0]  # PyTorch: [0, 2, 0]


@pytest.mark.parametrize("reduce,include_self,self_grad,src_grad", [
    # PyTorch 2.13's gradients: ties share it evenly (self's 2 with src's first 2, src's two 3s)
    ("amax", True, [0.5, 2.0, 0.0], [0.5, 0.0, 1.5, 1.5]),
    ("mean", False, [0.0, 2.0, 0.0], [0.5, 0.5, 1.5, 1.5]),
])
def test_scatter_reduce_gradients(reduce, include_self, self_grad, src_grad):
    x = opdispatch.tensor([2.0, 5.0, 1.0], requires_grad=True)
    src = opdispatch.tensor([2.0, 1.0, 3.0, 3.0], requires_grad=True)
    out = x.scatter_reduce(0, opdispatch.tensor([0, 0, 2, 2]), src, reduce, include_self=include_self)
    out.backward(opdispatch.tensor([1.0, 2.0, 3.0]))
    assert (x.grad.tolist(), src.grad.tolist()) == (self_grad, src_grad)
    with pytest.raises(RuntimeError, match="od::scatter_reduce.two: index 3 is out of bounds for dimension 0"):
        opdispatch.scatter_reduce(x, 0, opdispatch.tensor([3]), src, reduce)


def test_masked_scatter_needs_enough_source_elements_on_cpu_only():
    x, mask = opdispatch.zeros(2, 3), opdispatch.tensor([True, False, True])
    # PyTorch 2.13: RuntimeError: Number of elements of source < number of ones in mask
    with pytest.raises(RuntimeError, match="od::masked_scatter: Number of elements of source < number of ones in mask"):
        x.masked_scatter(mask, opdispatch.ones(3))
    assert ops.od.masked_scatter(x.to("meta"), mask.to("meta"), opdispatch.ones(3, device="meta")).shape == (2, 3)
    # PyTorch 2.13: RuntimeError: shape '[2]' is invalid for input of size 4
    with pytest.raises(RuntimeError, match=r"od::masked_scatter_backward: shape '\[2\]' is invalid for input of size 4"):
        ops.od.masked_scatter_backward(opdispatch.ones(2, 3), mask, [2])


def test_masked_scatter_gradients():
    x = opdispatch.zeros(2, 3, requires_grad=True)
    source = opdispatch.zeros(7, requires_grad=True)
    opdispatch.masked_scatter(x, opdispatch.tensor([True, False, True]), source).backward(opdispatch.arange(6.0).view(2, 3))
    # PyTorch 2.13: [[0, 1, 0], [0, 4, 0]] and [0, 2, 3, 5, 0, 0, 0]
    assert x.grad.tolist() == [[0.0, 1.0, 0.0], [0.0, 4.0, 0.0]]
    assert source.grad.tolist() == [0.0, 2.0, 3.0, 5.0, 0.0, 0.0, 0.0]
def test_as_strided_checks_the_geometry_against_the_storage():
    x = opdispatch.arange(6.0)
    # PyTorch 2.13's message (checkInBoundsForStorage); a meta tensor has no storage here, so only cpu checks.
    with pytest.raises(RuntimeError, match=r"^setStorage: sizes \[4\], strides \[2\], storage offset 0, and itemsize 4 "
                                           r"requiring a storage size of 28 are out of bounds for storage of size 24$"):
        x.as_strided([4], [2])
    # The offset counts from the storage's start, not from a view's first element; an empty view may lie anywhere.
    assert x[2:].as_strided([2], [1]).tolist() == [2.0, 3.0] and x[2:].as_strided([2], [1], 0).tolist() == [0.0, 1.0]
    assert opdispatch.as_strided(x, [2, 0], [100, 1], 7).storage_offset() == 7


def test_as_strided_gradient_accumulates_overlaps_and_shares_among_overlapping_inputs():
    x = opdispatch.arange(6.0).requires_grad_()
    (x.as_strided([2, 3], [1, 1]) * opdispatch.arange(1.0, 7.0).view(2, 3)).sum().backward()
    assert x.grad.tolist() == [1.0, 6.0, 8.0, 6.0, 0.0, 0.0]  # PyTorch 2.13
    e = opdispatch.arange(3.0).requires_grad_()
    (e.expand(2, 3).as_strided([2], [1], 0) * opdispatch.tensor([1.0, 10.0])).sum().backward()
    assert e.grad.tolist() == [1.0, 10.0, 0.0]  # PyTorch 2.13


def test_empty_strided_allocates_what_the_geometry_reaches():
    t = opdispatch.empty_strided((2, 3), (1, 2), dtype=opdispatch.float64, requires_grad=True)
    # PyTorch 2.13: untyped_storage().nbytes() == 48 (1 + 1*1 + 2*2 = 6 elements)
    assert (t.shape, t.stride(), t._storage_nbytes(), t.requires_grad) == ((2, 3), (1, 2), 48, True)
    assert opdispatch.empty_strided([2, 0], [1, 2])._storage_nbytes() == 0
    assert opdispatch.empty_strided([2, 3], [3, 1], device="meta").stride() == (3, 1)


def test_index_by_masks_and_its_data_dependent_errors():
    x = opdispatch.arange(6.0).view(2, 3)
    mask = opdispatch.tensor([[True, False, True], [False, False, True]])
    assert ops.od.index.Tensor(x, [mask]).tolist() == [0.0, 2.0, 5.0]  # PyTorch 2.13
    assert ops.od.index.Tensor(x, [None, opdispatch.tensor([1, 0, 1], dtype=opdispatch.uint8)]).tolist() == [[0.0, 2.0], [3.0, 5.0]]
    # PyTorch 2.13 numbers the index tensors, not the dims: [None, tensor([-4])] is "dimension 0 with size 3".
    with pytest.raises(IndexError, match="index -4 is out of bounds for dimension 0 with size 3"):
        ops.od.index.Tensor(x, [None, opdispatch.tensor([-4])])
    with pytest.raises(NotImplementedError, match="data-dependent shape"):  # PyTorch's meta nonzero raises too
        ops.od.index.Tensor(x.to("meta"), [mask.to("meta")])
    before = x.tolist()
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 2"):
        x.index_put([opdispatch.tensor([5])], opdispatch.tensor(1.0))
    assert x.tolist() == before
    assert opdispatch.index_put(x, [mask], opdispatch.tensor(-1.0)).tolist() == [[-1.0, 1.0, -1.0], [3.0, 4.0, -1.0]]


def test_index_and_index_put_gradients():
    a = opdispatch.arange(12.0).view(3, 4).requires_grad_()
    w = opdispatch.arange(12.0).view(3, 4)
    (ops.od.index.Tensor(a, [opdispatch.tensor([0, 0, 2]), None]) * w).sum().backward()
    assert a.grad.tolist() == [[4.0, 6.0, 8.0, 10.0], [0.0, 0.0, 0.0, 0.0], [8.0, 9.0, 10.0, 11.0]]  # PyTorch 2.13
    a.grad = None
    v = opdispatch.tensor([5.0, 6.0]).requires_grad_()
    (a.index_put([opdispatch.tensor([0, 1]), opdispatch.tensor([1, 1])], v) * w).sum().backward()
    # PyTorch 2.13: the overwritten positions get no gradient; the values get the gradient there.
    assert a.grad.tolist() == [[0.0, 0.0, 2.0, 3.0], [4.0, 0.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0]]
    assert v.grad.tolist() == [1.0, 5.0]
    assert opdispatch.zeros(5).index_put([opdispatch.tensor([0, 0, 2])], opdispatch.tensor([1.0, 2.0, 3.0]),
                                         accumulate=True).tolist() == [3.0, 0.0, 3.0, 0.0, 0.0]
