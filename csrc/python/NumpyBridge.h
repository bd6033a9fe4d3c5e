// The bridge between tensors and NumPy, the kernel library: ndarray views of
// tensor memory, tensors sharing an ndarray's memory, and _call_numpy, the
// one C call through which built-in kernels run NumPy on tensors.
#pragma once

#include <Python.h>

#include <pybind11/pybind11.h>

#include <opdispatch/core/Tensor.h>

namespace opdispatch::python {

/// New reference to an ndarray viewing the memory of the cpu tensor object
/// `tensor` (writeable; its base keeps the tensor's storage alive, not the
/// tensor). Throws Error for a tensor without data (meta, wrapper subclasses).
PyObject* arrayOfTensor(PyObject* tensor);

/// A tensor sharing the memory of ndarray `array` and keeping it alive.
/// Throws TypeError for an unsupported dtype, ValueError for big-endian data
/// or strides that are negative or not a multiple of the element size.
Tensor tensorOfArray(PyObject* array);

/// Whether `obj` is an ndarray of one or more dimensions (not a 0-d array or
/// a NumPy scalar).
bool isArrayWithDimensions(PyObject* obj);

void initNumpyBridgeBindings(pybind11::module_& m);

} // namespace opdispatch::python
