// Schema-driven conversion between Python objects and IValues.
#include "IValueConversion.h"

#include <pybind11/pybind11.h>

#include <opdispatch/core/Exception.h>

#include "PythonTensor.h"
#include "PythonTypes.h"

namespace py = pybind11;

namespace opdispatch::python {

std::string pyTypeName(PyObject* obj) {
  if (obj == Py_None) {
    return "None";
  }
  if (isTensor(obj)) {
    return "Tensor";
  }
  return Py_TYPE(obj)->tp_name;
}

namespace {

/// A value for a list type: a list or tuple, or any other Python sequence
/// (as PyTorch's argument parser) except strings, bytes and tensors.
bool isSequence(PyObject* obj) {
  return PyList_Check(obj) || PyTuple_Check(obj) ||
         (PySequence_Check(obj) && !PyUnicode_Check(obj) && !PyBytes_Check(obj) && !isTensor(obj));
}

bool asInt(PyObject* obj, int64_t& out) {
  if (PyLong_Check(obj)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
    if (overflow != 0) {
      throw ValueError(detail::str("integer ", std::string(py::str(obj)), " does not fit in 64 bits"));
    }
    out = v;
    return true;
  }
  if (!isTensor(obj) && !PyFloat_Check(obj) && Py_TYPE(obj)->tp_as_number && Py_TYPE(obj)->tp_as_number->nb_index) {
    PyObject* idx = PyNumber_Index(obj);
    if (idx == nullptr) {
      PyErr_Clear();
      return false;
    }
    out = PyLong_AsLongLong(idx);
    Py_DECREF(idx);
    return true;
  }
  return false;
}

bool asDouble(PyObject* obj, double& out) {
  if (PyFloat_Check(obj)) {
    out = PyFloat_AS_DOUBLE(obj);
    return true;
  }
  int64_t i;
  if (asInt(obj, i)) {
    out = static_cast<double>(i);
    return true;
  }
  if (!isTensor(obj) && Py_TYPE(obj)->tp_as_number && Py_TYPE(obj)->tp_as_number->nb_float &&
      !PyComplex_Check(obj)) {
    double d = PyFloat_AsDouble(obj);
    if (d == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
      return false;
    }
    out = d;
    return true;
  }
  return false;
}

bool isNumpyBool(PyObject* obj) { return std::string(Py_TYPE(obj)->tp_name) == "numpy.bool"; }

/// The value of `obj` as type `type`, or nullopt if it does not fit.
std::optional<IValue> convert(PyObject* obj, TypePtr type, std::optional<int32_t> N) {
  switch (type->kind()) {
    case TypeKind::Tensor:
      if (isTensor(obj)) {
        return IValue(unpackTensor(obj));
      }
      return std::nullopt;
    case TypeKind::Optional:
      if (obj == Py_None) {
        return IValue();
      }
      return convert(obj, type->elem(), N);
    case TypeKind::Int:
    case TypeKind::SymInt:
    case TypeKind::Layout:
    case TypeKind::MemoryFormat:
    case TypeKind::QScheme: {  // an int, as PyTorch's argument parser takes it
      int64_t v;
      if (asInt(obj, v)) {
        return IValue(v);
      }
      return std::nullopt;
    }
    case TypeKind::Float: {
      double d;
      if (asDouble(obj, d)) {
        return IValue(d);
      }
      return std::nullopt;
    }
    case TypeKind::Bool:
    case TypeKind::SymBool:
      if (PyBool_Check(obj)) {
        return IValue(obj == Py_True);
      }
      if (isNumpyBool(obj)) {
        return IValue(PyObject_IsTrue(obj) == 1);
      }
      return std::nullopt;
    case TypeKind::Str:
      if (PyUnicode_Check(obj)) {
        Py_ssize_t size = 0;
        const char* data = PyUnicode_AsUTF8AndSize(obj, &size);
        if (data == nullptr) {
          throw py::error_already_set();
        }
        return IValue(std::string(data, static_cast<size_t>(size)));
      }
      return std::nullopt;
    case TypeKind::Scalar: {
      if (PyBool_Check(obj) || isNumpyBool(obj)) {
        return IValue(PyObject_IsTrue(obj) == 1);
      }
      int64_t i;
      if (asInt(obj, i)) {
        return IValue(i);
      }
      double d;
      if (asDouble(obj, d)) {
        return IValue(d);
      }
      return std::nullopt;
    }
    case TypeKind::ScalarType: {
      if (isDtype(obj)) {
        return IValue(toScalarType(obj, "dtype"));
      }
      int64_t i;
      if (!PyBool_Check(obj) && asInt(obj, i) && isValidScalarType(i)) {
        return IValue(static_cast<ScalarType>(i));
      }
      return std::nullopt;
    }
    case TypeKind::Device:
      if (isDevice(obj) || PyUnicode_Check(obj)) {
        return IValue(toDevice(obj, "device"));
      }
      return std::nullopt;
    case TypeKind::Generator:
      return IValue(OwnedPyObject::steal(py::reinterpret_borrow<py::object>(obj).release().ptr()));
    case TypeKind::Any:
      return toIValueAny(obj);
    case TypeKind::List: {
      TypePtr elem = type->elem();
      int64_t single;
      if (N && !isSequence(obj) && elem->kind() != TypeKind::Bool &&
          (elem->kind() == TypeKind::Int || elem->kind() == TypeKind::SymInt) && asInt(obj, single)) {
        return IValue(std::vector<int64_t>(static_cast<size_t>(*N), single));
      }
      if (!isSequence(obj)) {
        return std::nullopt;
      }
      py::sequence seq = py::reinterpret_borrow<py::sequence>(obj);
      size_t n = seq.size();
      switch (elem->kind()) {
        case TypeKind::Int:
        case TypeKind::SymInt: {
          std::vector<int64_t> v(n);
          for (size_t i = 0; i < n; ++i) {
            if (!asInt(seq[i].ptr(), v[i])) {
              return std::nullopt;
            }
          }
          return IValue(std::move(v));
        }
        case TypeKind::Float: {
          std::vector<double> v(n);
          for (size_t i = 0; i < n; ++i) {
            if (!asDouble(seq[i].ptr(), v[i])) {
              return std::nullopt;
            }
          }
          return IValue(std::move(v));
        }
        case TypeKind::Bool: {
          std::vector<bool> v(n);
          for (size_t i = 0; i < n; ++i) {
            PyObject* e = seq[i].ptr();
            if (!PyBool_Check(e)) {
              return std::nullopt;
            }
            v[i] = e == Py_True;
          }
          return IValue(std::move(v));
        }
        case TypeKind::Tensor: {
          std::vector<Tensor> v;
          v.reserve(n);
          for (size_t i = 0; i < n; ++i) {
            PyObject* e = seq[i].ptr();
            if (!isTensor(e)) {
              return std::nullopt;
            }
            v.push_back(unpackTensor(e));
          }
          return IValue(std::move(v));
        }
        default:
          break;
      }
      if (elem->kind() == TypeKind::Optional && elem->elem()->kind() == TypeKind::Tensor) {
        std::vector<std::optional<Tensor>> v;
        v.reserve(n);
        for (size_t i = 0; i < n; ++i) {
          PyObject* e = seq[i].ptr();
          if (e == Py_None) {
            v.emplace_back(std::nullopt);
          } else if (isTensor(e)) {
            v.emplace_back(unpackTensor(e));
          } else {
            return std::nullopt;
          }
        }
        return IValue(std::move(v));
      }
      std::vector<IValue> v;
      v.reserve(n);
      for (size_t i = 0; i < n; ++i) {
        auto e = convert(seq[i].ptr(), elem, std::nullopt);
        if (!e) {
          return std::nullopt;
        }
        v.push_back(std::move(*e));
      }
      return IValue::genericList(std::move(v));
    }
  }
  return std::nullopt;
}

std::string opLabel(const FunctionSchema& schema) {
  return schema.operator_name().toString();
}

} // namespace

IValue toIValueAny(PyObject* obj) {
  if (obj == Py_None) {
    return IValue();
  }
  if (isTensor(obj)) {
    return IValue(unpackTensor(obj));
  }
  if (PyBool_Check(obj)) {
    return IValue(obj == Py_True);
  }
  if (PyLong_Check(obj)) {
    int64_t v;
    if (asInt(obj, v)) {
      return IValue(v);
    }
  }
  if (PyFloat_Check(obj)) {
    return IValue(PyFloat_AS_DOUBLE(obj));
  }
  if (PyUnicode_Check(obj)) {
    return IValue(py::cast<std::string>(obj));
  }
  if (isDtype(obj)) {
    return IValue(toScalarType(obj, "dtype"));
  }
  if (isDevice(obj)) {
    return IValue(toDevice(obj, "device"));
  }
  return IValue(OwnedPyObject::steal(py::reinterpret_borrow<py::object>(obj).release().ptr()));
}

IValue toIValue(PyObject* obj, const Argument& arg, const FunctionSchema& schema, size_t position) {
  // The N of `int[N]` only says how many copies a single int expands to; a
  // list of any length is accepted, as PyTorch's argument parser does
  // (`amax(x, dim=[0, 2])` against `int[1] dim`).
  std::optional<IValue> v;
  try {
    v = convert(obj, arg.type(), arg.N());
  } catch (const ValueError& e) {
    throw ValueError(detail::str(opLabel(schema), "(): argument '", arg.name(), "' (position ", position + 1,
                                 "): ", e.what()));
  }
  if (v) {
    return std::move(*v);
  }
  std::string expected = arg.type()->toString();
  if (arg.N()) {
    expected += " (of length " + std::to_string(*arg.N()) + ")";
  }
  throw TypeError(detail::str(opLabel(schema), "(): argument '", arg.name(), "' (position ", position + 1,
                              ") must be ", expected, ", not ", pyTypeName(obj)));
}

PyObject* toPyObject(const IValue& v, TypePtr type) {
  TypePtr t = type ? type->unwrapOptional() : nullptr;
  switch (v.tag()) {
    case IValue::Tag::None:
      Py_RETURN_NONE;
    case IValue::Tag::Tensor:
      return wrapTensor(v.toTensor());
    case IValue::Tag::Int:
      if (t && t->kind() == TypeKind::ScalarType) {
        return dtypeObject(v.toScalarType());
      }
      return PyLong_FromLongLong(v.toInt());
    case IValue::Tag::Double:
      return PyFloat_FromDouble(v.toDouble());
    case IValue::Tag::Bool:
      return PyBool_FromLong(v.toBool());
    case IValue::Tag::String:
      return PyUnicode_FromStringAndSize(v.toStringRef().data(), static_cast<Py_ssize_t>(v.toStringRef().size()));
    case IValue::Tag::ScalarType:
      return dtypeObject(v.toScalarType());
    case IValue::Tag::Device:
      return deviceObject(v.toDevice());
    case IValue::Tag::PyObject: {
      auto* obj = static_cast<PyObject*>(v.toPyObject());
      Py_INCREF(obj);
      return obj;
    }
    case IValue::Tag::Tuple: {
      const auto& elems = v.toTuple();
      PyObject* tup = PyTuple_New(static_cast<Py_ssize_t>(elems.size()));
      for (size_t i = 0; i < elems.size(); ++i) {
        PyTuple_SET_ITEM(tup, i, toPyObject(elems[i], nullptr));
      }
      return tup;
    }
    default: {
      TypePtr elem = t && t->isList() ? t->elem() : nullptr;
      auto elems = v.toListOfIValues();
      PyObject* list = PyList_New(static_cast<Py_ssize_t>(elems.size()));
      for (size_t i = 0; i < elems.size(); ++i) {
        PyList_SET_ITEM(list, i, toPyObject(elems[i], elem));
      }
      return list;
    }
  }
}

PyObject* popResultsToPython(const FunctionSchema& schema, Stack& stack) {
  const auto& returns = schema.returns();
  size_t n = returns.size();
  OPDISPATCH_INTERNAL_ASSERT(stack.size() >= n, opLabel(schema), " left ", stack.size(),
                             " values on the stack, expected ", n);
  PyObject* out;
  if (n == 0) {
    out = Py_None;
    Py_INCREF(out);
  } else if (n == 1) {
    out = toPyObject(stack.back(), returns[0].type());
  } else {
    out = PyTuple_New(static_cast<Py_ssize_t>(n));
    size_t first = stack.size() - n;
    for (size_t i = 0; i < n; ++i) {
      PyTuple_SET_ITEM(out, i, toPyObject(stack[first + i], returns[i].type()));
    }
  }
  drop(stack, n);
  return out;
}

void pushPythonResults(const FunctionSchema& schema, PyObject* result, const char* where, Stack& stack) {
  const auto& returns = schema.returns();
  auto convertOne = [&](PyObject* obj, size_t i) {
    std::optional<IValue> v;
    try {
      v = convert(obj, returns[i].type(), returns[i].N());
    } catch (const ValueError& e) {
      throw ValueError(detail::str(opLabel(schema), ": the ", where, " returned a bad value for return ", i, ": ",
                                   e.what(), ". Schema: ", schema));
    }
    if (!v) {
      throw TypeError(detail::str(opLabel(schema), ": the ", where, " returned ", pyTypeName(obj), " for return ", i,
                                  " but the schema declares ", returns[i].type()->toString(), ". Schema: ", schema));
    }
    stack.push_back(std::move(*v));
  };
  if (returns.empty()) {
    if (result != Py_None) {
      throw TypeError(detail::str(opLabel(schema), ": the ", where, " returned ", pyTypeName(result),
                                  " but the schema declares no return (-> ()); return None. Schema: ", schema));
    }
    return;
  }
  if (returns.size() == 1) {
    convertOne(result, 0);
    return;
  }
  if (!PyTuple_Check(result) && !PyList_Check(result)) {
    throw TypeError(detail::str(opLabel(schema), ": the ", where, " returned ", pyTypeName(result),
                                " but the schema declares ", returns.size(), " returns; return a tuple. Schema: ",
                                schema));
  }
  py::sequence seq = py::reinterpret_borrow<py::sequence>(result);
  if (seq.size() != returns.size()) {
    throw TypeError(detail::str(opLabel(schema), ": the ", where, " returned ", seq.size(),
                                " values but the schema declares ", returns.size(), ". Schema: ", schema));
  }
  size_t base = stack.size();
  try {
    for (size_t i = 0; i < returns.size(); ++i) {
      convertOne(seq[i].ptr(), i);
    }
  } catch (...) {
    stack.resize(base);
    throw;
  }
}

} // namespace opdispatch::python
