// The Python dtype and device objects (opdispatch.float32,
// opdispatch.device("cpu")), and conversions between them and the C++ types.
#pragma once

#include <pybind11/pybind11.h>

#include <opdispatch/core/Device.h>
#include <opdispatch/core/ScalarType.h>

namespace opdispatch::python {

/// The Python object behind opdispatch.<dtype>.
struct PyDtype {
  ScalarType type;
};

/// New reference to the singleton dtype object of `t`.
PyObject* dtypeObject(ScalarType t);
/// New reference to the device object of `d` (device objects are immutable,
/// so one per device is made and reused: Tensor.device is read per call).
PyObject* deviceObject(Device d);
/// A ScalarType from an opdispatch dtype, a NumPy dtype or type, or a name
/// ("float32"). Throws TypeError/ValueError naming `what` ("empty(): dtype";
/// "" when the caller names the value itself) otherwise.
ScalarType toScalarType(pybind11::handle obj, const char* what);
/// A Device from an opdispatch.device or a string ("cpu", "cuda:0"). Throws
/// TypeError/ValueError naming `what`, as toScalarType.
Device toDevice(pybind11::handle obj, const char* what);
/// Whether `obj` is an opdispatch dtype / device object.
bool isDtype(PyObject* obj);
bool isDevice(PyObject* obj);
/// A NumPy dtype object for `t`.
pybind11::object numpyDtype(ScalarType t);
/// The ScalarType of a NumPy dtype; throws TypeError for unsupported dtypes.
ScalarType fromNumpyDtype(pybind11::handle np_dtype);

void initTypeBindings(pybind11::module_& m);

} // namespace opdispatch::python
