// opdispatch._C.TensorBase: the Python object of a TensorImpl, its
// attributes, and the NumPy bridge (from_numpy / numpy share memory).
#include "PythonTensor.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <opdispatch/core/Exception.h>
#include <opdispatch/dispatch/LocalDispatchKeySet.h>

#include "Exceptions.h"
#include "PythonTypes.h"
#include "StaticType.h"

namespace py = pybind11;

namespace opdispatch::python {

PyTypeObject* TensorBaseType = nullptr;

namespace {

/// The class new wrappers get (opdispatch.Tensor once _tensor.py registers it).
PyTypeObject* gTensorClass = nullptr;

PyTypeObject gTensorBaseType = staticTypeObject();

TensorImpl* selfImpl(PyObject* self) { return unpackImpl(self); }

PyObject* tensorNew(PyTypeObject* type, PyObject*, PyObject*) {
  PyErr_Format(PyExc_TypeError,
               "%s cannot be constructed directly; use opdispatch.tensor(data), opdispatch.empty(shape), "
               "opdispatch.from_numpy(array), or Tensor._make_subclass(cls, tensor) for a subclass",
               type->tp_name);
  return nullptr;
}

// Note [Tensor objects and the garbage collector]
// Autograd keeps its state (grad, grad_fn) in the TensorImpl's
// autograd_meta slot, so a cycle such as output -> grad_fn -> saved output
// runs through the TensorImpl, where the collector cannot see it. A tensor
// object therefore reports the autograd meta as its own reference, but only
// while it is the TensorImpl's sole owner (as PyTorch's THPVariable_traverse):
// if C++ also holds the TensorImpl, the meta is reachable from outside Python
// and must not be cleared.
int tensorTraverse(PyObject* self, visitproc visit, void* arg) {
  TensorImpl* impl = reinterpret_cast<TensorObject*>(self)->impl;
  if (impl != nullptr && impl->use_count() == 1) {
    Py_VISIT(static_cast<PyObject*>(impl->autograd_meta().get()));
  }
  return 0;
}

int tensorClear(PyObject* self) {
  TensorImpl* impl = reinterpret_cast<TensorObject*>(self)->impl;
  if (impl != nullptr && impl->use_count() == 1) {
    impl->autograd_meta().reset();
  }
  return 0;
}

void tensorDealloc(PyObject* self) {
  auto* obj = reinterpret_cast<TensorObject*>(self);
  PyObject_GC_UnTrack(self);
  if (obj->impl != nullptr) {
    if (obj->impl->pyobj() == self) {
      obj->impl->set_pyobj(nullptr);
    }
    intrusive_ptr<TensorImpl>::reclaim(obj->impl);
    obj->impl = nullptr;
  }
  Py_TYPE(self)->tp_free(self);
}

/// Wraps `impl` (one reference, given to the new object) in a new object of class `cls`.
PyObject* newWrapper(PyTypeObject* cls, TensorImpl* impl) {
  PyObject* obj = cls->tp_alloc(cls, 0);
  if (obj == nullptr) {
    intrusive_ptr<TensorImpl>::reclaim(impl);
    throw py::error_already_set();
  }
  reinterpret_cast<TensorObject*>(obj)->impl = impl;
  impl->set_pyobj(obj);
  return obj;
}


PyObject* intTuple(IntArrayRef v) {
  PyObject* t = PyTuple_New(static_cast<Py_ssize_t>(v.size()));
  for (size_t i = 0; i < v.size(); ++i) {
    PyTuple_SET_ITEM(t, i, PyLong_FromLongLong(v[i]));
  }
  return t;
}

// --- attributes -------------------------------------------------------------

PyObject* getShape(PyObject* self, void*) { return intTuple(selfImpl(self)->sizes()); }
PyObject* getDtype(PyObject* self, void*) {
  return pythonEntry([&] { return dtypeObject(selfImpl(self)->dtype()); });
}
PyObject* getDevice(PyObject* self, void*) {
  return pythonEntry([&] { return deviceObject(selfImpl(self)->device()); });
}
PyObject* getNdim(PyObject* self, void*) { return PyLong_FromLongLong(selfImpl(self)->dim()); }
PyObject* getRequiresGrad(PyObject* self, void*) { return PyBool_FromLong(selfImpl(self)->requires_grad()); }
int setRequiresGrad(PyObject* self, PyObject* value, void*) {
  if (value == nullptr || !PyBool_Check(value)) {
    PyErr_SetString(PyExc_TypeError, "requires_grad must be a bool");
    return -1;
  }
  PyObject* r = pythonEntry([&] {
    selfImpl(self)->set_requires_grad(value == Py_True);
    Py_RETURN_NONE;
  });
  if (r == nullptr) {
    return -1;
  }
  Py_DECREF(r);
  return 0;
}
PyObject* getVersion(PyObject* self, void*) { return PyLong_FromUnsignedLong(selfImpl(self)->version()); }
PyObject* getIsMeta(PyObject* self, void*) { return PyBool_FromLong(selfImpl(self)->device().is_meta()); }
PyObject* getAutogradMeta(PyObject* self, void*) {
  void* meta = selfImpl(self)->autograd_meta().get();
  PyObject* obj = meta ? static_cast<PyObject*>(meta) : Py_None;
  Py_INCREF(obj);
  return obj;
}
int setAutogradMeta(PyObject* self, PyObject* value, void*) {
  OwnedPyObject& slot = selfImpl(self)->autograd_meta();
  if (value == nullptr || value == Py_None) {
    slot.reset();
  } else {
    Py_INCREF(value);
    slot = OwnedPyObject::steal(value);
  }
  return 0;
}

PyGetSetDef kGetSets[] = {
    {"shape", getShape, nullptr, "The sizes, a tuple of ints.", nullptr},
    {"dtype", getDtype, nullptr, "The element type (opdispatch.float32, ...).", nullptr},
    {"device", getDevice, nullptr, "The device (opdispatch.device).", nullptr},
    {"ndim", getNdim, nullptr, "Number of dimensions.", nullptr},
    {"requires_grad", getRequiresGrad, setRequiresGrad,
     "Whether autograd records operations on this tensor; setting it changes the dispatch key set.", nullptr},
    {"_version", getVersion, nullptr, "The in-place modification counter (shared with views).", nullptr},
    {"is_meta", getIsMeta, nullptr, "Whether the tensor is on the meta device (no data).", nullptr},
    {"_autograd_meta", getAutogradMeta, setAutogradMeta, "Autograd state owned by the Python layer.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

// --- methods ------------------------------------------------------------------

/// stride(dim=None) / size(dim=None): all of them as a tuple, or the one of `dim`.
template <IntArrayRef (TensorImpl::*All)() const, int64_t (Tensor::*One)(int64_t) const>
PyObject* perDimension(PyObject* self, PyObject* args, const char* format) {
  PyObject* dim = Py_None;
  if (!PyArg_ParseTuple(args, format, &dim)) {
    return nullptr;
  }
  return pythonEntry([&]() -> PyObject* {
    if (dim == Py_None) {
      return intTuple((selfImpl(self)->*All)());
    }
    return PyLong_FromLongLong((unpackTensor(self).*One)(py::cast<int64_t>(dim)));
  });
}
PyObject* methStride(PyObject* self, PyObject* args) {
  return perDimension<&TensorImpl::strides, &Tensor::stride>(self, args, "|O:stride");
}
PyObject* methSize(PyObject* self, PyObject* args) {
  return perDimension<&TensorImpl::sizes, &Tensor::size>(self, args, "|O:size");
}
PyObject* methNumel(PyObject* self, PyObject*) { return PyLong_FromLongLong(selfImpl(self)->numel()); }
PyObject* methDim(PyObject* self, PyObject*) { return PyLong_FromLongLong(selfImpl(self)->dim()); }
PyObject* methIsContiguous(PyObject* self, PyObject*) { return PyBool_FromLong(selfImpl(self)->is_contiguous()); }
PyObject* methStorageOffset(PyObject* self, PyObject*) {
  return PyLong_FromLongLong(selfImpl(self)->storage_offset());
}
PyObject* methDataPtr(PyObject* self, PyObject*) {
  return pythonEntry([&] { return PyLong_FromVoidPtr(selfImpl(self)->data_ptr()); });
}
PyObject* methBumpVersion(PyObject* self, PyObject*) {
  selfImpl(self)->bump_version();
  Py_RETURN_NONE;
}
PyObject* methIsSame(PyObject* self, PyObject* other) {
  return PyBool_FromLong(isTensor(other) && unpackImpl(other) == selfImpl(self));
}
PyObject* methSharesStorage(PyObject* self, PyObject* other) {
  if (!isTensor(other)) {
    PyErr_SetString(PyExc_TypeError, "_shares_storage expects a tensor");
    return nullptr;
  }
  const auto& a = selfImpl(self)->storage();
  const auto& b = unpackImpl(other)->storage();
  return PyBool_FromLong(a.defined() && a == b);
}

PyObject* methSharesMemory(PyObject* self, PyObject* other) {
  if (!isTensor(other)) {
    PyErr_SetString(PyExc_TypeError, "_shares_memory expects a tensor");
    return nullptr;
  }
  return PyBool_FromLong(selfImpl(self)->sharesMemoryWith(*unpackImpl(other)));
}

PyObject* methNumpy(PyObject* self, PyObject* args, PyObject* kwargs) {
  static const char* kwlist[] = {"force", nullptr};
  int force = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$p:numpy", const_cast<char**>(kwlist), &force)) {
    return nullptr;
  }
  return pythonEntry([&] {
    TensorImpl* impl = selfImpl(self);
    OPDISPATCH_CHECK(impl->device().is_cpu(), "numpy() needs a cpu tensor; this tensor is on ", impl->device(),
                     (impl->device().is_meta() ? " (meta tensors have no data)" : ""));
    // PyTorch's rule: only while grad mode is on (grad mode is the TLS
    // exclusion of the autograd keys, see autograd/grad_mode.py), so kernels
    // below autograd and code under no_grad() may read such a tensor.
    OPDISPATCH_CHECK(force || !impl->requires_grad() || tls_is_dispatch_key_excluded(DispatchKey::AutogradCPU),
                     "Can't call numpy() on a tensor that requires grad while grad mode is enabled. Use "
                     "tensor.detach().numpy() instead (or numpy(force=True)).");
    auto* keep = new intrusive_ptr<StorageImpl>(impl->storage());
    py::capsule base(keep, [](void* p) { delete static_cast<intrusive_ptr<StorageImpl>*>(p); });
    std::vector<py::ssize_t> shape(impl->sizes().begin(), impl->sizes().end());
    std::vector<py::ssize_t> strides;
    for (int64_t s : impl->strides()) {
      strides.push_back(static_cast<py::ssize_t>(s * static_cast<int64_t>(impl->itemsize())));
    }
    py::array arr(py::reinterpret_borrow<py::dtype>(numpyDtype(impl->dtype())), shape, strides, impl->data_ptr(),
                  base);
    return arr.release().ptr();
  });
}

PyMethodDef kMethods[] = {
    {"stride", methStride, METH_VARARGS, "stride(dim=None): the strides in elements, or one of them."},
    {"size", methSize, METH_VARARGS, "size(dim=None): the sizes, or one of them."},
    {"numel", methNumel, METH_NOARGS, "Number of elements."},
    {"dim", methDim, METH_NOARGS, "Number of dimensions."},
    {"is_contiguous", methIsContiguous, METH_NOARGS, "Whether the layout is C-contiguous."},
    {"storage_offset", methStorageOffset, METH_NOARGS, "Offset of element 0 in the storage, in elements."},
    {"data_ptr", methDataPtr, METH_NOARGS, "Address of element 0 (raises for meta tensors)."},
    {"_bump_version", methBumpVersion, METH_NOARGS, "Records an in-place modification."},
    {"_is_same", methIsSame, METH_O, "Whether both objects wrap the same TensorImpl."},
    {"_shares_storage", methSharesStorage, METH_O, "Whether both tensors use the same storage."},
    {"_shares_memory", methSharesMemory, METH_O,
     "Whether writing through one tensor may change the other: the same tensor, a view of it (also on meta), or "
     "overlapping memory (TensorImpl::sharesMemoryWith)."},
    {"numpy", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(methNumpy)), METH_VARARGS | METH_KEYWORDS,
     "numpy(*, force=False): a NumPy array sharing this tensor's memory (cpu only). Raises for a tensor that "
     "requires grad while grad mode is enabled, unless force=True (as PyTorch)."},
    {nullptr, nullptr, 0, nullptr},
};

// --- factories ------------------------------------------------------------------

Tensor fromNumpy(py::handle obj) {
  OPDISPATCH_CHECK_TYPE(py::isinstance<py::array>(obj), "from_numpy expects a numpy.ndarray, not ",
                        Py_TYPE(obj.ptr())->tp_name);
  py::array arr = py::reinterpret_borrow<py::array>(obj);
  py::dtype dt = arr.dtype();
  ScalarType st = fromNumpyDtype(dt);
  char order = dt.attr("byteorder").cast<std::string>()[0];
  OPDISPATCH_CHECK_VALUE(order != '>', "from_numpy: big-endian arrays are not supported; convert with "
                                       "array.astype(array.dtype.newbyteorder('='))");
  auto itemsize = static_cast<int64_t>(dt.itemsize());
  std::vector<int64_t> sizes, strides;
  for (py::ssize_t i = 0; i < arr.ndim(); ++i) {
    sizes.push_back(arr.shape(i));
    int64_t s = arr.strides(i);
    OPDISPATCH_CHECK_VALUE(s >= 0, "from_numpy: stride ", s, " of dimension ", i,
                           " is negative, which tensors do not support; pass numpy.ascontiguousarray(array) (a "
                           "copy) instead");
    OPDISPATCH_CHECK_VALUE(s % itemsize == 0, "from_numpy: stride ", s, " of dimension ", i,
                           " is not a multiple of the element size ", itemsize,
                           "; pass numpy.ascontiguousarray(array) (a copy) instead");
    strides.push_back(s / itemsize);
  }
  if (arr.flags() & py::array::c_style) {
    // NumPy leaves the strides of size-0 and size-1 dimensions of a C-order
    // array unnormalised; they address no other element. Use the strides
    // contiguousStrides gives, so a C-order array yields exactly the tensor
    // a Meta kernel describes.
    strides = contiguousStrides(sizes);
  }
  if (!arr.writeable()) {
    // PyTorch: torch.from_numpy warns the same way. Tensors have no read-only flag.
    if (PyErr_WarnEx(PyExc_UserWarning,
                     "from_numpy: the given NumPy array is not writable, and tensors have no read-only mode: "
                     "writing to the tensor (or to tensor.numpy()) writes into memory NumPy considers "
                     "read-only. Pass array.copy() to protect its data.",
                     1) < 0) {
      throw py::error_already_set();
    }
  }
  PyObject* owner = arr.ptr();
  Py_INCREF(owner);
  return from_blob(const_cast<void*>(arr.data()), sizes, strides, st,
                   [](void* ctx, void*) { pyInterpreterHooks().decref(ctx); }, owner);
}

std::vector<int64_t> toShape(py::handle shape) {
  if (PyLong_Check(shape.ptr())) {
    return {shape.cast<int64_t>()};
  }
  OPDISPATCH_CHECK_TYPE(py::isinstance<py::sequence>(shape), "shape must be an int or a sequence of ints, not ",
                        Py_TYPE(shape.ptr())->tp_name);
  std::vector<int64_t> out;
  for (auto item : py::reinterpret_borrow<py::sequence>(shape)) {
    OPDISPATCH_CHECK_TYPE(PyLong_Check(item.ptr()), "shape must contain ints, not ", Py_TYPE(item.ptr())->tp_name);
    out.push_back(item.cast<int64_t>());
  }
  return out;
}

} // namespace

PyObject* wrapTensor(const Tensor& t) {
  if (!t.defined()) {
    Py_RETURN_NONE;
  }
  TensorImpl* impl = t.unsafeGetTensorImpl();
  if (auto* existing = static_cast<PyObject*>(impl->pyobj())) {
    Py_INCREF(existing);
    return existing;
  }
  return newWrapper(gTensorClass, intrusive_ptr<TensorImpl>(impl).release());
}

PyObject* wrapTensor(Tensor&& t) {
  if (!t.defined()) {
    Py_RETURN_NONE;
  }
  TensorImpl* impl = t.unsafeGetTensorImpl();
  if (auto* existing = static_cast<PyObject*>(impl->pyobj())) {
    Py_INCREF(existing);
    return existing;
  }
  return newWrapper(gTensorClass, t.unsafeReleaseTensorImpl());
}

void initTensorBindings(py::module_& m) {
  PyTypeObject& t = gTensorBaseType;
  t.tp_name = "opdispatch._C.TensorBase";
  t.tp_basicsize = sizeof(TensorObject);
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC;
  t.tp_traverse = tensorTraverse;
  t.tp_clear = tensorClear;
  t.tp_doc = "The C++ tensor (a TensorImpl); opdispatch.Tensor adds the Python methods.";
  t.tp_new = tensorNew;
  t.tp_dealloc = tensorDealloc;
  t.tp_getset = kGetSets;
  t.tp_methods = kMethods;
  if (PyType_Ready(&t) < 0) {
    throw py::error_already_set();
  }
  TensorBaseType = &t;
  gTensorClass = &t;
  Py_INCREF(&t);
  m.attr("TensorBase") = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(&t));

  m.def(
      "_set_tensor_class",
      [](py::object cls) {
        OPDISPATCH_CHECK_TYPE(PyType_Check(cls.ptr()) &&
                                  PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(cls.ptr()), TensorBaseType),
                              "_set_tensor_class needs a subclass of TensorBase");
        gTensorClass = reinterpret_cast<PyTypeObject*>(cls.release().ptr());
      },
      "Sets the class that wraps tensors created in C++ (opdispatch.Tensor).");
  m.def(
      "_make_subclass",
      [](py::object cls, const Tensor& data, bool requires_grad, bool dispatch_to_python) {
        OPDISPATCH_CHECK_TYPE(PyType_Check(cls.ptr()) &&
                                  PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(cls.ptr()), TensorBaseType),
                              "_make_subclass needs a subclass of opdispatch.Tensor");
        OPDISPATCH_CHECK_VALUE(data.defined(), "_make_subclass needs a defined tensor");
        Tensor alias = data.as_strided(data.sizes(), data.strides(), data.storage_offset());
        alias.set_requires_grad(requires_grad);
        alias.unsafeGetTensorImpl()->set_python_dispatch(dispatch_to_python);
        return py::reinterpret_steal<py::object>(
            newWrapper(reinterpret_cast<PyTypeObject*>(cls.ptr()), alias.unsafeReleaseTensorImpl()));
      },
      py::arg("cls"), py::arg("data"), py::arg("requires_grad") = false, py::arg("dispatch_to_python") = false,
      "A new object of class `cls` viewing `data`'s memory (shares storage and version counter). With "
      "dispatch_to_python, the tensor carries the Python dispatch keys.");
  m.def(
      "_as_strided",
      [](const Tensor& self, const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
         int64_t storage_offset) {
        OPDISPATCH_CHECK_VALUE(self.defined(), "_as_strided needs a tensor");
        return self.as_strided(sizes, strides, storage_offset);
      },
      py::arg("self"), py::arg("size"), py::arg("stride"), py::arg("storage_offset"),
      "A view of self's storage with the given sizes, strides (in elements) and offset: shares the storage and "
      "the version counter, does not require grad. Raises IndexError if it reaches past the storage.");
  m.def(
      "empty_strided",
      [](py::handle shape, py::handle stride, py::handle dtype, py::handle device) {
        ScalarType st = dtype.is_none() ? ScalarType::Float : toScalarType(dtype, "empty_strided(): dtype");
        Device dev = device.is_none() ? Device() : toDevice(device, "empty_strided(): device");
        return empty_strided(toShape(shape), toShape(stride), st, dev);
      },
      py::arg("shape"), py::arg("stride"), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      "A new uninitialised tensor with the given strides (in elements).");
  m.def("from_numpy", &fromNumpy, py::arg("array"),
        "A tensor sharing memory with a numpy.ndarray (which it keeps alive). Raises TypeError for unsupported "
        "dtypes and ValueError for negative or unaligned strides; warns (UserWarning) for a read-only array.");
  m.def(
      "empty",
      [](py::handle shape, py::handle dtype, py::handle device) {
        ScalarType st = dtype.is_none() ? ScalarType::Float : toScalarType(dtype, "empty(): dtype");
        Device dev = device.is_none() ? Device() : toDevice(device, "empty(): device");
        return empty(toShape(shape), st, dev);
      },
      py::arg("shape"), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      "A new uninitialised tensor of `shape` (int or sequence of ints), dtype (default float32) and device "
      "(default cpu; meta tensors have no memory).");
}

} // namespace opdispatch::python
