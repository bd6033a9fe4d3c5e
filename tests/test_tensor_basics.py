"""opdispatch's tensor as Python sees it: zero-copy NumPy interop (both ways,
every dtype), metadata of strided views, factories on cpu and meta, dispatch
keys and requires_grad, lifetimes, and Python-object identity."""
from __future__ import annotations

import gc
import itertools
import weakref

import numpy as np
import pytest

import opdispatch
from opdispatch import _C
from _helpers import keys

K = _C.DispatchKey

DTYPES = [
    (np.bool_, opdispatch.bool, "bool"),
    (np.uint8, opdispatch.uint8, "uint8"),
    (np.int8, opdispatch.int8, "int8"),
    (np.int16, opdispatch.int16, "int16"),
    (np.int32, opdispatch.int32, "int32"),
    (np.int64, opdispatch.int64, "int64"),
    (np.float16, opdispatch.float16, "float16"),
    (np.float32, opdispatch.float32, "float32"),
    (np.float64, opdispatch.float64, "float64"),
    (np.complex64, opdispatch.complex64, "complex64"),
    (np.complex128, opdispatch.complex128, "complex128"),
]

_ns_counter = itertools.count()


@pytest.fixture
def identity_op():
    """An operator `ns::ident(Tensor x) -> Tensor` with C++ identity kernels at CPU and Meta."""
    ns = f"tensor_basics_{next(_ns_counter)}"
    lib = _C._dispatch_library("FRAGMENT", ns, "")
    lib.def_("ident(Tensor x) -> Tensor")
    lib.impl_t_t("ident", "CPU")
    lib.impl_t_t("ident", "Meta")
    yield _C._DispatchOperator(f"{ns}::ident", "")
    lib.reset()


# --- NumPy interop ------------------------------------------------------------------


@pytest.mark.parametrize("np_dtype, od_dtype, name", DTYPES, ids=[d[2] for d in DTYPES])
def test_from_numpy_shares_memory_both_ways(np_dtype, od_dtype, name):
    a = np.zeros((2, 3), dtype=np_dtype)
    t = opdispatch.from_numpy(a)
    assert t.dtype is od_dtype
    assert t.dtype.name == name
    assert t.dtype.itemsize == a.itemsize
    assert t.dtype.to_numpy() == a.dtype
    assert t.data_ptr() == a.ctypes.data
    b = t.numpy()
    assert b.dtype == a.dtype
    assert b.shape == a.shape and b.strides == a.strides
    assert np.shares_memory(a, b)
    one = np.ones((), dtype=np_dtype)
    a[1, 2] = one  # write through the original: visible through the tensor
    assert b[1, 2] == one
    b[0, 1] = one  # write through tensor.numpy(): visible in the original
    assert a[0, 1] == one
    assert a.sum() == b.sum()


def test_dtype_objects():
    assert repr(opdispatch.float32) == "opdispatch.float32"
    assert opdispatch.float64.is_floating_point and not opdispatch.int64.is_floating_point
    assert opdispatch.complex64.is_complex and not opdispatch.float32.is_complex
    assert [d[1].itemsize for d in DTYPES] == [1, 1, 1, 2, 4, 8, 2, 4, 8, 8, 16]


def test_transposed_array_metadata():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    t = opdispatch.from_numpy(a.transpose(2, 0, 1))
    assert t.shape == (4, 2, 3)
    assert t.size() == (4, 2, 3) and t.size(0) == 4 and t.size(-1) == 3
    assert t.stride() == (1, 12, 4)
    assert t.stride(1) == 12 and t.stride(-1) == 4
    assert t.ndim == 3 and t.dim() == 3
    assert t.numel() == 24
    assert not t.is_contiguous()
    assert t.dtype is opdispatch.float32
    assert str(t.device) == "cpu" and t.device == opdispatch.device("cpu") and t.device.type == "cpu"
    assert t.device.index is None
    back = t.numpy()
    assert back.strides == a.transpose(2, 0, 1).strides
    np.testing.assert_array_equal(back, a.transpose(2, 0, 1))


def test_sliced_with_step_metadata():
    a = np.arange(60, dtype=np.int64).reshape(6, 10)
    view = a[1::2, 3:9:3]
    t = opdispatch.from_numpy(view)
    assert t.shape == (3, 2)
    assert t.stride() == (20, 3)
    assert t.numel() == 6 and t.ndim == 2
    assert not t.is_contiguous()
    assert t.data_ptr() == view.ctypes.data
    np.testing.assert_array_equal(t.numpy(), view)
    t.numpy()[2, 1] = -5
    assert a[5, 6] == -5


def test_contiguity_rules():
    assert opdispatch.from_numpy(np.zeros((3, 4))).is_contiguous()
    assert not opdispatch.from_numpy(np.asfortranarray(np.zeros((3, 4)))).is_contiguous()
    assert opdispatch.from_numpy(np.zeros((3, 1))[:, ::5]).is_contiguous()  # size-1 dims do not matter
    assert opdispatch.from_numpy(np.zeros((0, 3))).is_contiguous()
    s = opdispatch.from_numpy(np.array(2.5))
    assert s.shape == () and s.stride() == () and s.ndim == 0 and s.numel() == 1 and s.is_contiguous()
    assert s.numpy()[()] == 2.5


def test_stride_and_size_out_of_range():
    t = opdispatch.from_numpy(np.zeros((2, 3)))
    with pytest.raises(IndexError, match=r"dimension 2 out of range.*\[-2, 1\]"):
        t.stride(2)
    with pytest.raises(IndexError, match="dimension -3 out of range"):
        t.size(-3)


@pytest.mark.parametrize("bad, exc, message", [
    (np.array(["2020-01-01"], dtype="datetime64[D]"), TypeError, r"NumPy dtype datetime64\[D\] is not supported"),
    (np.array([1, 2], dtype=np.uint32), TypeError, "NumPy dtype uint32 is not supported; supported dtypes are bool"),
    (np.array(["a"]), TypeError, "NumPy dtype <U1 is not supported"),
    (np.array([1], dtype=object), TypeError, "NumPy dtype object is not supported"),
    (np.arange(3, dtype=">i4"), ValueError, "big-endian arrays are not supported"),
    (np.arange(3, dtype=">f8"), ValueError, "big-endian"),
    (np.arange(5.0)[::-1], ValueError, "stride -8 of dimension 0 is negative.*ascontiguousarray"),
    (np.zeros((3, 4), np.float32)[:, ::-2], ValueError, "dimension 1 is negative"),
])
def test_from_numpy_rejects_what_it_cannot_share(bad, exc, message):
    with pytest.raises(exc, match=message):
        opdispatch.from_numpy(bad)


def test_from_numpy_rejects_stride_that_is_not_a_whole_number_of_elements():
    odd = np.lib.stride_tricks.as_strided(np.zeros(8, np.float32), shape=(3,), strides=(6,))
    with pytest.raises(ValueError, match="stride 6 of dimension 0 is not a multiple of the element size 4"):
        opdispatch.from_numpy(odd)


def test_from_numpy_needs_an_ndarray():
    with pytest.raises(TypeError, match="from_numpy expects a numpy.ndarray, not list"):
        opdispatch.from_numpy([1.0, 2.0])


def test_from_numpy_of_read_only_array_warns():
    a = np.broadcast_to(np.arange(3.0), (2, 3))
    assert not a.flags.writeable
    with pytest.warns(UserWarning, match="not writable"):
        t = opdispatch.from_numpy(a)
    assert t.stride() == (0, 1)
    np.testing.assert_array_equal(t.numpy(), a)


def test_the_tensor_class_constructor_is_pytorchs_legacy_one():
    # Issue 28, item 1: subclasses call Tensor.__new__(cls, tensor); PyTorch 2.13 gives each result below.
    Sub = type("Sub", (opdispatch.Tensor,), {})
    t = opdispatch.ones(2)
    s = opdispatch.Tensor.__new__(Sub, t)
    s.add_(1)
    assert type(s) is Sub and t.tolist() == [2.0, 2.0] and not s.requires_grad  # an alias
    leaf = opdispatch.ones(2, requires_grad=True)
    alias = opdispatch.Tensor.__new__(Sub, leaf)
    assert alias.requires_grad and not alias.is_leaf
    alias.sum().backward()
    assert leaf.grad.tolist() == [1.0, 1.0]
    assert opdispatch.Tensor.__new__(Sub, [1, 2]).dtype == opdispatch.float32
    assert opdispatch.Tensor.__new__(Sub, 2, 3).shape == (2, 3) and opdispatch.Tensor().shape == (0,)
    assert type(opdispatch.Tensor(t)) is opdispatch.Tensor
    with pytest.raises(TypeError, match="takes a tensor"):
        opdispatch.Tensor.__new__(Sub, t, t)


# --- factories ----------------------------------------------------------------------


@pytest.mark.parametrize("np_dtype, od_dtype, name", DTYPES, ids=[d[2] for d in DTYPES])
def test_empty_cpu(np_dtype, od_dtype, name):
    t = _C.empty((2, 3), od_dtype, "cpu")
    assert isinstance(t, opdispatch.Tensor)
    assert t.shape == (2, 3) and t.stride() == (3, 1) and t.dtype is od_dtype
    assert t.device == "cpu" and t.is_contiguous() and not t.is_meta
    a = t.numpy()
    assert a.dtype == np.dtype(np_dtype) and a.shape == (2, 3)
    a[...] = np.ones((), dtype=np_dtype)
    assert t.numpy().all()  # the same memory
    assert t.data_ptr() == a.ctypes.data
    assert _C._dispatch_keys(t) == keys("CPU")


def test_empty_defaults_and_shape_forms():
    t = _C.empty(5)
    assert t.shape == (5,) and t.dtype is opdispatch.float32 and t.device == "cpu"
    assert _C.empty([]).shape == ()
    assert _C.empty([0, 4]).numel() == 0
    assert _C.empty((2,), dtype=np.float64).dtype is opdispatch.float64
    assert _C.empty((2,), device=opdispatch.device("meta")).is_meta


def test_empty_meta_has_metadata_but_no_data():
    t = _C.empty((4, 5), opdispatch.float64, "meta")
    assert t.shape == (4, 5) and t.stride() == (5, 1) and t.numel() == 20
    assert t.dtype is opdispatch.float64 and t.device == "meta" and t.device.type == "meta" and t.is_meta
    assert _C._dispatch_keys(t) == keys("Meta")
    with pytest.raises(RuntimeError, match=r"numpy\(\) needs a cpu tensor; this tensor is on meta "
                                           r"\(meta tensors have no data\)"):
        t.numpy()
    with pytest.raises(RuntimeError, match="cannot access the data of a tensor on meta: it has no storage"):
        t.data_ptr()


@pytest.mark.parametrize("device, key", [("cuda", "CUDA"), ("privateuseone", "PrivateUse1")])
def test_other_devices_carry_their_backend_key(device, key):
    t = _C.empty((2,), device=device)
    assert t.device.type == device
    assert _C._dispatch_keys(t) == keys(key)
    with pytest.raises(RuntimeError, match=f"numpy\\(\\) needs a cpu tensor; this tensor is on {device}"):
        t.numpy()


@pytest.mark.parametrize("kwargs, exc, message", [
    (dict(shape=(-1, 2)), ValueError, "sizes must be >= 0, got -1 at dimension 0"),
    (dict(shape=(2,), device="tpu"), ValueError, "unknown device 'tpu'"),
    (dict(shape=(2,), dtype=3), TypeError, r"empty\(\): dtype must be a dtype"),
    (dict(shape=(2,), device=3), TypeError, r"empty\(\): device must be a device or a string"),
    (dict(shape=(2.5,)), TypeError, "shape must contain ints, not float"),
    (dict(shape="ab"), TypeError, "shape must contain ints, not str"),
])
def test_empty_bad_arguments(kwargs, exc, message):
    with pytest.raises(exc, match=message):
        _C.empty(**kwargs)


# --- requires_grad and dispatch keys --------------------------------------------------


@pytest.mark.parametrize("device, backend, autograd", [("cpu", "CPU", "AutogradCPU"), ("meta", "Meta", "AutogradMeta"),
                                                       ("privateuseone", "PrivateUse1", "AutogradPrivateUse1")])
@pytest.mark.parametrize("dtype", [opdispatch.float32, opdispatch.float64, opdispatch.float16, opdispatch.complex64])
def test_requires_grad_adds_and_removes_the_autograd_keys(device, backend, autograd, dtype):
    t = _C.empty((3,), dtype, device)
    assert t.requires_grad is False
    assert _C._dispatch_keys(t) == keys(backend)
    t.requires_grad = True
    assert t.requires_grad is True
    assert _C._dispatch_keys(t) == keys(backend, "ADInplaceOrView", autograd)
    assert repr(_C._dispatch_keys(t)) == f"DispatchKeySet({backend}, ADInplaceOrView, {autograd})"
    t.requires_grad = True  # idempotent
    assert _C._dispatch_keys(t) == keys(backend, "ADInplaceOrView", autograd)
    t.requires_grad = False
    assert _C._dispatch_keys(t) == keys(backend)


@pytest.mark.parametrize("dtype", [opdispatch.int64, opdispatch.int32, opdispatch.uint8, opdispatch.bool])
def test_requires_grad_on_non_floating_tensor_raises(dtype):
    t = _C.empty((3,), dtype)
    with pytest.raises(RuntimeError, match=f"only Tensors of floating point and complex dtype can require "
                                           f"gradients, not opdispatch.{dtype.name}"):
        t.requires_grad = True
    assert t.requires_grad is False
    assert _C._dispatch_keys(t) == keys("CPU")
    t.requires_grad = False  # always allowed


def test_requires_grad_must_be_a_bool():
    t = _C.empty((3,))
    with pytest.raises(TypeError, match="requires_grad must be a bool"):
        t.requires_grad = 1
    with pytest.raises(AttributeError):
        del t.requires_grad
    with pytest.raises(TypeError, match="requires_grad must be a bool"):
        _C.TensorBase.requires_grad.__delete__(t)


def test_numpy_of_tensor_that_requires_grad_raises_while_grad_mode_is_on():
    t = opdispatch.from_numpy(np.zeros(3))
    t.requires_grad = True
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on a tensor that requires grad while grad mode"):
        t.numpy()
    assert t.numpy(force=True).shape == (3,)
    with opdispatch.autograd.no_grad():  # as in a kernel below autograd (PyTorch's rule)
        assert t.numpy().shape == (3,)


def test_device_objects_are_shared():
    a, b = opdispatch.ones(1), opdispatch.ones(2)
    assert a.device is b.device and a.device is a.device and a.device == opdispatch.device("cpu")
    meta = opdispatch.empty(1, device="meta")
    assert meta.device is opdispatch.empty(2, device="meta").device and meta.device != a.device
    assert opdispatch.device("cuda", 1) == opdispatch.device("cuda:1")


def test_dispatch_keys_needs_a_tensor():
    with pytest.raises(TypeError):
        _C._dispatch_keys(np.zeros(3))


# --- lifetimes ----------------------------------------------------------------------


def test_tensor_keeps_the_numpy_array_alive():
    a = np.arange(4.0)
    base = weakref.ref(a)
    t = opdispatch.from_numpy(a)
    del a
    gc.collect()
    assert base() is not None, "the tensor must keep its NumPy array alive"
    np.testing.assert_array_equal(t.numpy(), [0.0, 1.0, 2.0, 3.0])
    del t
    gc.collect()
    assert base() is None, "the array must be released with the last tensor"


def test_numpy_view_keeps_memory_alive_after_the_tensor_dies():
    # Memory owned by the tensor (empty): the array from numpy() keeps it alive.
    t = _C.empty((3,), opdispatch.float64)
    t_ref = weakref.ref(t)
    view = t.numpy()
    view[:] = [1.0, 2.0, 3.0]
    del t
    gc.collect()
    assert t_ref() is None
    np.testing.assert_array_equal(view, [1.0, 2.0, 3.0])
    view += 1  # still writable, still valid memory
    np.testing.assert_array_equal(view, [2.0, 3.0, 4.0])


def test_numpy_array_lives_while_any_view_through_the_tensor_lives():
    a = np.arange(6.0)
    base = weakref.ref(a)
    t = opdispatch.from_numpy(a)
    t_ref = weakref.ref(t)
    b = t.numpy()
    del a, t
    gc.collect()
    assert t_ref() is None
    assert base() is not None, "b reaches the original array through the tensor's storage"
    b[0] = 42.0
    assert base()[0] == 42.0
    del b
    gc.collect()
    assert base() is None


def test_many_round_trips_do_not_leak_the_array():
    a = np.arange(3.0)
    base = weakref.ref(a)
    for _ in range(100):
        opdispatch.from_numpy(a).numpy()
    del a
    gc.collect()
    assert base() is None


# --- identity -----------------------------------------------------------------------


def test_same_tensorimpl_is_the_same_python_object(identity_op):
    t = opdispatch.from_numpy(np.arange(3.0))
    assert identity_op(t) is t
    assert identity_op(identity_op(t)) is t
    t.note = "attributes survive"
    assert identity_op(t).note == "attributes survive"
    m = _C.empty((2,), device="meta")
    assert identity_op(m) is m
    t.requires_grad = True
    assert identity_op(t) is t


def test_identity_through_a_boxed_call(identity_op):
    t = _C.empty((2,))
    handle = identity_op._handle
    assert handle.call_boxed(t) is t
    assert handle.call_boxed(x=t) is t


def test_distinct_tensors_are_distinct_objects(identity_op):
    a = np.arange(3.0)
    t1 = opdispatch.from_numpy(a)
    t2 = opdispatch.from_numpy(a)  # same memory, different tensors
    assert t1 is not t2
    assert identity_op(t1) is t1 and identity_op(t2) is t2
    assert t1.data_ptr() == t2.data_ptr()


def test_device_constructor_forms_as_torch_device():
    # Each line as PyTorch 2.13 prints it for torch.device.
    assert repr(opdispatch.device("cpu", 0)) == "device(type='cpu', index=0)"
    assert repr(opdispatch.device(type="cpu", index=1)) == "device(type='cpu', index=1)"
    assert repr(opdispatch.device("cpu:2")) == "device(type='cpu', index=2)"
    copied = opdispatch.device(opdispatch.device("meta"))
    assert copied == opdispatch.device("meta") and copied.type == "meta" and copied.index is None
    assert opdispatch.device("cpu", 0) != opdispatch.device("cpu")
    assert {opdispatch.device("cpu"): 1}[opdispatch.device("cpu")] == 1 and str(opdispatch.device("cpu", 0)) == "cpu:0"
