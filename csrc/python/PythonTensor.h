// The Python tensor type opdispatch._C.TensorBase (base of opdispatch.Tensor):
// a Python object owning one reference to a TensorImpl, which points back to
// it, so a TensorImpl always surfaces in Python as the same object while
// that object lives.
#pragma once

#include <Python.h>

#include <pybind11/pybind11.h>

#include <opdispatch/core/Tensor.h>

namespace opdispatch::python {

struct TensorObject {
  PyObject_HEAD
      /// Owned reference, except while impl->owns_pyobj() (then borrowed, see
      /// Note [Preserving tensor subclass objects]); never null for a constructed object.
      TensorImpl* impl;
  /// The ndarray view of impl's memory that kernels use, or null until the
  /// first: owned, seen only by kernels (Note [Kernel arrays] in NumpyBridge.cpp).
  PyObject* kernel_array;
  PyObject* weakrefs;
  /// The tuple `shape` returned last (owned, or null), returned again while
  /// the sizes are the same: a wrapper subclass reads its element's shape per call.
  PyObject* shape;
};

/// opdispatch._C.TensorBase.
extern PyTypeObject* TensorBaseType;
/// The class new wrappers get (opdispatch.Tensor once _tensor.py registers it).
extern PyTypeObject* gTensorClass;

/// tp_dealloc of the tensor subclasses whose objects are preserved (Note
/// [Preserving tensor subclass objects] in PythonTensor.cpp).
void subclassDealloc(PyObject* self);

/// Whether `obj` is a tensor (TensorBase or a subclass). The class of
/// ordinary tensors and the subclasses with subclassDealloc (every subclass
/// whose object was made, e.g. a wrapper subclass per operator call) are
/// tested first: PyType_IsSubtype walks the MRO on every call.
inline bool isTensor(PyObject* obj) {
  PyTypeObject* type = Py_TYPE(obj);
  return type == gTensorClass || type->tp_dealloc == subclassDealloc || PyObject_TypeCheck(obj, TensorBaseType);
}
/// Borrowed TensorImpl of a tensor object (precondition: isTensor(obj)).
inline TensorImpl* unpackImpl(PyObject* obj) { return reinterpret_cast<TensorObject*>(obj)->impl; }
/// A new handle to the tensor of `obj` (precondition: isTensor(obj)).
inline Tensor unpackTensor(PyObject* obj) { return Tensor(intrusive_ptr<TensorImpl>(unpackImpl(obj))); }
/// New reference to the Python object of `t`: the existing wrapper if it is
/// alive, else a new instance of the registered tensor class; None for an
/// undefined tensor.
PyObject* wrapTensor(const Tensor& t);
/// Same, taking the caller's reference.
PyObject* wrapTensor(Tensor&& t);

/// Defines TensorBase and the tensor functions of the module.
void initTensorBindings(pybind11::module_& m);

} // namespace opdispatch::python

namespace pybind11::detail {
/// Lets pybind11-bound functions take and return opdispatch::Tensor as the
/// Python tensor type (undefined <-> None).
template <>
struct type_caster<opdispatch::Tensor> {
  PYBIND11_TYPE_CASTER(opdispatch::Tensor, const_name("opdispatch.Tensor"));
  bool load(handle src, bool) {
    if (src.is_none()) {
      value = opdispatch::Tensor();
      return true;
    }
    if (!opdispatch::python::isTensor(src.ptr())) {
      return false;
    }
    value = opdispatch::python::unpackTensor(src.ptr());
    return true;
  }
  static handle cast(const opdispatch::Tensor& t, return_value_policy, handle) {
    return opdispatch::python::wrapTensor(t);
  }
};
} // namespace pybind11::detail
