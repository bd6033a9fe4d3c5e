// dtype singletons and device objects for Python.
#include "PythonTypes.h"

#include <unordered_map>

#include <pybind11/numpy.h>

#include <opdispatch/core/Exception.h>

#include "IValueConversion.h"

namespace py = pybind11;

namespace opdispatch::python {

namespace {
constexpr int kMaxScalarType = 16;
PyObject* gDtypeObjects[kMaxScalarType] = {};

struct NumpyCode {
  ScalarType type;
  char kind;
  int size;
};
constexpr NumpyCode kNumpyCodes[] = {
    {ScalarType::Bool, 'b', 1},
    {ScalarType::Byte, 'u', 1},
    {ScalarType::Char, 'i', 1},
    {ScalarType::Short, 'i', 2},
    {ScalarType::Int, 'i', 4},
    {ScalarType::Long, 'i', 8},
    {ScalarType::Half, 'f', 2},
    {ScalarType::Float, 'f', 4},
    {ScalarType::Double, 'f', 8},
    {ScalarType::ComplexFloat, 'c', 8},
    {ScalarType::ComplexDouble, 'c', 16},
};
} // namespace

PyObject* dtypeObject(ScalarType t) {
  auto i = static_cast<int>(t);
  OPDISPATCH_CHECK_VALUE(t != ScalarType::BFloat16, kNoBFloat16Tensors);
  OPDISPATCH_CHECK_VALUE(i >= 0 && i < kMaxScalarType && gDtypeObjects[i], "no dtype object for ", t);
  Py_INCREF(gDtypeObjects[i]);
  return gDtypeObjects[i];
}

PyObject* deviceObject(Device d) {
  // Few distinct devices exist in a process; the cache holds one object each for its life.
  static std::unordered_map<int, PyObject*> cache;
  int key = static_cast<int>(d.type()) * 256 + d.index() + 1;
  auto it = cache.find(key);
  if (it == cache.end()) {
    it = cache.emplace(key, py::cast(d).release().ptr()).first;
  }
  Py_INCREF(it->second);
  return it->second;
}

bool isDtype(PyObject* obj) { return py::isinstance<PyDtype>(obj); }
bool isDevice(PyObject* obj) { return py::isinstance<Device>(obj); }

py::object numpyDtype(ScalarType t) {
  // numpy.dtype objects are immutable singletons per type: cache them.
  static PyObject* cache[kMaxScalarType] = {};
  auto i = static_cast<int>(t);
  OPDISPATCH_CHECK_VALUE(i >= 0 && i < kMaxScalarType, "no NumPy dtype for ", t);
  if (cache[i] == nullptr) {
    cache[i] = py::module_::import("numpy").attr("dtype")(toPythonName(t)).release().ptr();
  }
  return py::reinterpret_borrow<py::object>(cache[i]);
}

ScalarType fromNumpyDtype(py::handle np_dtype) {
  py::dtype dt = py::reinterpret_borrow<py::dtype>(np_dtype);
  char kind = dt.kind();
  int size = static_cast<int>(dt.itemsize());
  for (const auto& c : kNumpyCodes) {
    if (c.kind == kind && c.size == size) {
      return c.type;
    }
  }
  throw TypeError(detail::str("NumPy dtype ", std::string(py::str(np_dtype)),
                              " is not supported; supported dtypes are bool, uint8, int8, int16, int32, int64, "
                              "float16, float32, float64, complex64, complex128"));
}

ScalarType toScalarType(py::handle obj, const char* what) {
  if (py::isinstance<PyDtype>(obj)) {
    return obj.cast<PyDtype&>().type;
  }
  if (py::isinstance<py::str>(obj)) {
    try {
      return parseScalarType(utf8String(obj.ptr()));
    } catch (const ValueError& e) {
      throw ValueError(detail::str(what, *what ? ": " : "", e.what()));
    }
  }
  py::module_ np = py::module_::import("numpy");
  if (py::isinstance(obj, np.attr("dtype")) || PyType_Check(obj.ptr())) {
    try {
      return fromNumpyDtype(np.attr("dtype")(obj));
    } catch (const py::error_already_set&) {
    }
  }
  throw TypeError(detail::str(what, " must be a dtype (e.g. opdispatch.float32), not ", Py_TYPE(obj.ptr())->tp_name));
}

Device toDevice(py::handle obj, const char* what) {
  if (py::isinstance<Device>(obj)) {
    return obj.cast<Device>();
  }
  if (py::isinstance<py::str>(obj)) {
    try {
      return Device(utf8String(obj.ptr()));
    } catch (const ArgumentValueError& e) {
      throw ArgumentValueError(detail::str(what, *what ? ": " : "", e.what()));
    }
  }
  throw ArgumentTypeError(
      detail::str(what, " must be a device or a string such as 'cpu' or 'meta', not ", Py_TYPE(obj.ptr())->tp_name));
}

void initTypeBindings(py::module_& m) {
  py::class_<PyDtype>(m, "dtype", "The element type of a tensor (opdispatch.float32, ...).")
      .def_property_readonly("itemsize", [](const PyDtype& d) { return elementSize(d.type); })
      .def_property_readonly("is_floating_point", [](const PyDtype& d) { return isFloatingType(d.type); })
      .def_property_readonly("is_complex", [](const PyDtype& d) { return isComplexType(d.type); })
      .def_property_readonly("name", [](const PyDtype& d) { return toPythonName(d.type); })
      .def(
          "to_numpy", [](const PyDtype& d) { return numpyDtype(d.type); }, "The equivalent numpy.dtype.")
      .def("__repr__", [](const PyDtype& d) { return std::string("opdispatch.") + toPythonName(d.type); })
      .def("__reduce__", [](const PyDtype& d) { return std::string(toPythonName(d.type)); });
  for (ScalarType t : kAllScalarTypes) {
    py::object obj = py::cast(PyDtype{t});
    gDtypeObjects[static_cast<int>(t)] = obj.release().ptr();
    m.attr(toPythonName(t)) = py::reinterpret_borrow<py::object>(gDtypeObjects[static_cast<int>(t)]);
  }

  py::class_<Device>(m, "device", "A device: 'cpu', 'meta', 'cuda[:i]', 'xpu', 'privateuseone', ... (see Device.h).")
      .def(py::init([](const std::string& spec) { return Device(spec); }), py::arg("type"))
      .def(py::init([](const std::string& type, int index) {
             Device d(type);
             OPDISPATCH_CHECK_WITH(ArgumentValueError, !d.has_index(), "device type '", type, "' already has an index");
             OPDISPATCH_CHECK_WITH(ArgumentValueError, index >= 0 && index < 128,
                                   "device index must be in [0, 127], got ", index);
             return Device(d.type(), static_cast<DeviceIndex>(index));
           }),
           py::arg("type"), py::arg("index"))
      .def(py::init([](const Device& d) { return d; }), py::arg("type"))  // device(device), as torch.device
      .def_property_readonly("type", [](const Device& d) { return std::string(toString(d.type())); })
      .def_property_readonly("index",
                             [](const Device& d) -> py::object {
                               return d.has_index() ? py::object(py::int_(d.index())) : py::object(py::none());
                             })
      .def("__eq__",
           [](const Device& a, py::handle b) {
             if (py::isinstance<Device>(b)) {
               return a == b.cast<Device>();
             }
             if (py::isinstance<py::str>(b)) {
               return a.str() == displayText(b.ptr());
             }
             return false;
           })
      .def("__hash__", [](const Device& d) { return std::hash<std::string>()(d.str()); })
      .def("__str__", &Device::str)
      .def("__repr__", [](const Device& d) {
        std::string r = std::string("device(type='") + toString(d.type()) + "'";
        if (d.has_index()) {
          r += ", index=" + std::to_string(d.index());
        }
        return r + ")";
      });
}

} // namespace opdispatch::python
