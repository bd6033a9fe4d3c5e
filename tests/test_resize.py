"""od::resize_ against PyTorch 2.13 (the expected values below are what
PyTorch 2.13 CPU gives for the same calls): the values kept, the strides, the
storage growing in place under every tensor that shares it and kept when
shrinking, meta tensors, memory formats and the errors; and opdispatch's rule
for NumPy arrays viewing memory a resize replaced (Note [Growing a storage and
the arrays that view it] in csrc/opdispatch/core/Storage.h)."""
from __future__ import annotations

import gc

import numpy as np
import pytest

import opdispatch as od


def test_growing_keeps_the_values_and_every_view_sees_the_new_memory():
    a = od.arange(6, dtype=od.float64).reshape(2, 3)
    b = a.view(6)
    row = a[1]
    assert a.resize_(3, 4) is a
    a[2, 3] = -1
    a[0, 0] = 9
    assert tuple(a.shape) == (3, 4) and a.stride() == (4, 1) and a._storage_nbytes() == 96
    assert a.flatten()[:6].tolist() == [9.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert b.tolist() == [9.0, 1.0, 2.0, 3.0, 4.0, 5.0] and row.tolist() == [3.0, 4.0, 5.0]
    assert b.data_ptr() == a.data_ptr() and a._shares_storage(b)
    assert (b + 1).tolist() == [10.0, 2.0, 3.0, 4.0, 5.0, 6.0]  # its kernel array was made again


def test_growing_a_tensor_with_a_storage_offset():
    d = od.arange(12, dtype=od.float32)[2:5]
    d.resize_(2, 10)
    assert d.storage_offset() == 2 and d.stride() == (10, 1) and d._storage_nbytes() == 88
    assert d.flatten()[:3].tolist() == [2.0, 3.0, 4.0]


def test_shrinking_keeps_the_storage():
    e = od.arange(6.0)
    e.resize_(2, 2)
    assert e.tolist() == [[0.0, 1.0], [2.0, 3.0]] and e._storage_nbytes() == 24 and e.stride() == (2, 1)
    z = od.zeros(2)
    z.resize_(2, 0, 3)
    assert tuple(z.shape) == (2, 0, 3) and z.stride() == (3, 3, 1) and z._storage_nbytes() == 8
    assert tuple(od.zeros(2).resize_([]).shape) == ()


def test_the_same_sizes_keep_the_strides_unless_a_memory_format_is_given():
    x = od.arange(12).reshape(3, 4).t()
    x.resize_(4, 3)
    assert x.stride() == (1, 4)
    x.resize_(4, 3, memory_format=0)  # contiguous_format
    assert x.stride() == (3, 1) and x.tolist() == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11]]


def test_channels_last_strides():
    assert od.zeros(2).resize_(2, 3, 4, 5, memory_format=2).stride() == (60, 1, 15, 3)
    assert od.zeros(2).resize_(1, 2, 3, 4, 5, memory_format=3).stride() == (120, 1, 40, 10, 2)


def test_meta_tensors_change_their_sizes():
    m = od.empty(2, 3, device="meta")
    m.resize_(4, 5, 6)
    assert tuple(m.shape) == (4, 5, 6) and m.stride() == (30, 6, 1)


def test_the_version_counter_is_bumped():
    x = od.zeros(2)
    x.resize_(5)
    assert x._version == 1


@pytest.mark.parametrize("call, message", [
    (lambda: od.zeros(2).resize_(3, -2), "negative dimension -2"),
    (lambda: od.zeros(2, requires_grad=True).resize_(3), "cannot resize variables that require grad"),
    (lambda: od.from_numpy(np.zeros(3)).resize_(10), "Trying to resize storage that is not resizable"),
    (lambda: od.zeros(2).resize_(2, 3, 4, memory_format=2), "required rank 4 tensor to use channels_last format"),
    (lambda: od.zeros(2).resize_(1, 2, 3, 4, memory_format=3),
     "required rank 5 tensor to use channels_last_3d format"),
    (lambda: od.zeros(2).resize_(3, memory_format=1), "Unsupported memory formatPreserve"),
    (lambda: od.zeros(2).resize_(2**62, 4), "overflows int64"),
])
def test_errors(call, message):
    with pytest.raises(RuntimeError, match=message):
        call()


def test_a_refused_resize_changes_nothing():
    t = od.from_numpy(np.arange(3.0))
    with pytest.raises(RuntimeError):
        t.resize_(10)
    assert tuple(t.shape) == (3,) and t.tolist() == [0.0, 1.0, 2.0]
    t.resize_(2)  # shrinking needs no new memory: allowed, as in PyTorch
    assert t.tolist() == [0.0, 1.0]


def test_numpy_arrays_keep_the_memory_they_view():
    # PyTorch refuses to resize a storage numpy() exported; opdispatch grows it and the array keeps the old
    # memory, with the values as they were (Note [Growing a storage and the arrays that view it]).
    t = od.arange(4.0)
    arr = t.numpy()
    derived = arr[1:]
    t.resize_(1000)
    t[0] = 42.0
    gc.collect()
    assert arr.tolist() == [0.0, 1.0, 2.0, 3.0] and derived.tolist() == [1.0, 2.0, 3.0]
    arr[0] = 7.0  # the old memory is still writable and no longer the tensor's
    assert t[0].item() == 42.0
    for n in range(1001, 1200):  # old buffers with no array left are freed as they go
        t.resize_(n)
        kept = t.numpy()
    del arr, derived, kept
    assert t[:2].tolist() == [42.0, 1.0]


def test_a_kernel_result_that_views_an_input_survives_the_input_growing():
    x = od.arange(4.0)
    y = x.view(2, 2)
    z = y * 1
    x.resize_(10**6)
    assert z.tolist() == [[0.0, 1.0], [2.0, 3.0]] and y.tolist() == [[0.0, 1.0], [2.0, 3.0]]
