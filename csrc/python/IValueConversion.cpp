// Schema-driven conversion between Python objects and IValues.
#include "IValueConversion.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include <pybind11/pybind11.h>

#include <opdispatch/core/EditDistance.h>
#include <opdispatch/core/Exception.h>

#include "NumpyBridge.h"
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

std::string displayText(PyObject* str) {
  PyObject* bytes = PyUnicode_Check(str) ? PyUnicode_AsEncodedString(str, "utf-8", "backslashreplace") : nullptr;
  if (bytes == nullptr) {
    PyErr_Clear();
    return "<unprintable>";
  }
  std::string out(PyBytes_AS_STRING(bytes), static_cast<size_t>(PyBytes_GET_SIZE(bytes)));
  Py_DECREF(bytes);
  return out;
}

namespace {
/// `text` cut to at most `max` bytes (plus "..."), for messages.
std::string abbreviated(std::string text, size_t max = 80) {
  if (text.size() > max) {
    text.resize(max);
    text += "...";
  }
  return text;
}
} // namespace

std::string utf8String(PyObject* str) {
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(str, &size);
  if (data != nullptr) {
    return std::string(data, static_cast<size_t>(size));
  }
  if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) {
    throw py::error_already_set();
  }
  PyErr_Clear();
  // The first code point UTF-8 cannot encode: a lone surrogate.
  Py_ssize_t n = PyUnicode_GET_LENGTH(str);
  Py_ssize_t at = 0;
  while (at < n && !Py_UNICODE_IS_SURROGATE(PyUnicode_READ_CHAR(str, at))) {
    ++at;
  }
  char code[16] = "?";
  if (at < n) {
    std::snprintf(code, sizeof(code), "\\u%04x", static_cast<unsigned>(PyUnicode_READ_CHAR(str, at)));
  }
  throw ValueError(detail::str("the str '", abbreviated(displayText(str)),
                               "' is not valid text: it holds the lone surrogate ", code, " at index ", at,
                               ", which UTF-8 cannot encode (pass text without surrogates, e.g. "
                               "s.encode('utf-8', 'replace').decode())"));
}

namespace {

/// A Python int for error messages: "the value <digits>", or "an int of <n>
/// bits" if it has too many digits to print (Python limits int -> str).
std::string intText(PyObject* l) {
  PyObject* text = PyObject_Str(l);
  if (text != nullptr) {
    std::string out = displayText(text);
    Py_DECREF(text);
    return "the value " + out;
  }
  PyErr_Clear();
  PyObject* bits = PyObject_CallMethod(l, "bit_length", nullptr);
  long long n = bits != nullptr ? PyLong_AsLongLong(bits) : -1;
  Py_XDECREF(bits);
  PyErr_Clear();
  return detail::str("an int of ", n, " bits");
}

/// The int64 value of the Python int `l`; OverflowError naming `obj` (the
/// value the user passed, of which `l` is the __index__) if it does not fit.
int64_t longToInt64(PyObject* l, PyObject* obj) {
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(l, &overflow);
  if (overflow != 0) {
    throw OverflowError(detail::str(intText(l), l == obj ? "" : " (" + pyTypeName(obj) + ")",
                                    " does not fit in int64 (from -2**63 to 2**63 - 1)"));
  }
  if (v == -1 && PyErr_Occurred()) {
    throw py::error_already_set();
  }
  return v;
}

} // namespace

bool toInt64(PyObject* obj, int64_t& out) {
  if (PyLong_Check(obj)) {
    out = longToInt64(obj, obj);
    return true;
  }
  if (isTensor(obj) || PyFloat_Check(obj) || Py_TYPE(obj)->tp_as_number == nullptr ||
      Py_TYPE(obj)->tp_as_number->nb_index == nullptr) {
    return false;
  }
  PyObject* idx = PyNumber_Index(obj);
  if (idx == nullptr) {
    if (PyErr_ExceptionMatches(PyExc_TypeError)) {
      PyErr_Clear(); // not an integer (e.g. a NumPy float scalar)
      return false;
    }
    throw py::error_already_set();
  }
  py::object owned = py::reinterpret_steal<py::object>(idx);
  out = longToInt64(idx, obj);
  return true;
}

bool toDouble(PyObject* obj, double& out) {
  if (PyFloat_Check(obj)) {
    out = PyFloat_AS_DOUBLE(obj);
    return true;
  }
  if (isTensor(obj) || PyComplex_Check(obj)) {
    return false;
  }
  // An int converts by value (2**70 is a fine float); OverflowError past 1e308.
  PyObject* l = nullptr;
  if (PyLong_Check(obj)) {
    l = obj;
    Py_INCREF(l);
  } else if (Py_TYPE(obj)->tp_as_number != nullptr && Py_TYPE(obj)->tp_as_number->nb_index != nullptr) {
    l = PyNumber_Index(obj);
    if (l == nullptr) {
      if (!PyErr_ExceptionMatches(PyExc_TypeError)) {
        throw py::error_already_set();
      }
      PyErr_Clear();
    }
  }
  if (l != nullptr) {
    double d = PyLong_AsDouble(l);
    Py_DECREF(l);
    if (d == -1.0 && PyErr_Occurred()) {
      throw py::error_already_set();
    }
    out = d;
    return true;
  }
  // An ndarray of one element converts (NumPy before 2.4, with a DeprecationWarning) or raises; PyTorch's
  // argument parser takes neither (THPUtils_checkDouble: Python numbers and NumPy scalars).
  if (Py_TYPE(obj)->tp_as_number == nullptr || Py_TYPE(obj)->tp_as_number->nb_float == nullptr ||
      isArrayWithDimensions(obj)) {
    return false;
  }
  double d = PyFloat_AsDouble(obj);
  if (d == -1.0 && PyErr_Occurred()) {
    throw py::error_already_set();
  }
  out = d;
  return true;
}

namespace {

/// A value for a list type: a list or tuple, or any other Python sequence
/// (as PyTorch's argument parser) except strings, bytes and tensors.
bool isSequence(PyObject* obj) {
  return PyList_Check(obj) || PyTuple_Check(obj) ||
         (PySequence_Check(obj) && !PyUnicode_Check(obj) && !PyBytes_Check(obj) && !isTensor(obj));
}

bool isNumpyBool(PyObject* obj) { return std::string(Py_TYPE(obj)->tp_name) == "numpy.bool"; }

/// The truth of a bool or NumPy bool.
bool truth(PyObject* obj) {
  int t = PyObject_IsTrue(obj);
  if (t < 0) {
    throw py::error_already_set();
  }
  return t == 1;
}

/// The elements of a sequence, read once into a tuple or a private list:
/// a tuple itself, a copy of a list, the items of any other sequence by
/// iteration (so a __len__ that lies or disagrees with __getitem__ neither
/// misleads nor sizes an allocation). Converting an element can run Python
/// code (__index__) that changes a list; the copy keeps every element alive
/// and in place meanwhile.
class Elements {
 public:
  explicit Elements(PyObject* seq) {
    if (PyTuple_Check(seq)) {
      Py_INCREF(seq);
      items_ = seq;
    } else if (PyList_Check(seq)) {
      items_ = PyList_AsTuple(seq);
    } else {
      items_ = iterate(seq);
    }
    if (items_ == nullptr) {
      throw py::error_already_set();
    }
  }
  ~Elements() { Py_DECREF(items_); }
  Elements(const Elements&) = delete;
  Elements& operator=(const Elements&) = delete;
  size_t size() const { return static_cast<size_t>(PySequence_Fast_GET_SIZE(items_)); }
  PyObject* operator[](size_t i) const { return PySequence_Fast_ITEMS(items_)[i]; }

 private:
  /// A new list of the items `seq` yields, or null with the error set.
  static PyObject* iterate(PyObject* seq) {
    PyObject* it = PyObject_GetIter(seq);
    PyObject* list = it != nullptr ? PyList_New(0) : nullptr;
    while (list != nullptr) {
      PyObject* item = PyIter_Next(it);
      if (item == nullptr) {
        if (PyErr_Occurred()) {
          Py_CLEAR(list);
        }
        break;
      }
      int appended = PyList_Append(list, item);
      Py_DECREF(item);
      if (appended < 0) {
        Py_CLEAR(list);
      }
    }
    Py_XDECREF(it);
    return list;
  }

  PyObject* items_; ///< a tuple, or a list no one else holds
};

/// The value of `obj` as type `type`, or nullopt if it has another type.
/// Throws OverflowError/ValueError (opdispatch) for a value of the right
/// kind that the type cannot hold, and py::error_already_set when the
/// value's own Python methods (__index__, __len__, ...) raise; callers name
/// the argument (Note [Conversion errors name the argument]).
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
    case TypeKind::QScheme: {
      int64_t v;
      if (toInt64(obj, v)) {
        return IValue(v);
      }
      return std::nullopt;
    }
    case TypeKind::Float: {
      double d;
      if (toDouble(obj, d)) {
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
        return IValue(truth(obj));
      }
      return std::nullopt;
    case TypeKind::Str:
      if (PyUnicode_Check(obj)) {
        return IValue(utf8String(obj));
      }
      return std::nullopt;
    case TypeKind::Scalar: {
      if (PyBool_Check(obj) || isNumpyBool(obj)) {
        return IValue(truth(obj));
      }
      int64_t i;
      if (toInt64(obj, i)) {
        return IValue(i);
      }
      double d;
      if (toDouble(obj, d)) {
        return IValue(d);
      }
      return std::nullopt;
    }
    case TypeKind::ScalarType: {
      if (isDtype(obj)) {
        return IValue(toScalarType(obj, ""));
      }
      int64_t i;
      if (!PyBool_Check(obj) && toInt64(obj, i) && isValidScalarType(i)) {
        return IValue(static_cast<ScalarType>(i));
      }
      return std::nullopt;
    }
    case TypeKind::Device:
      if (isDevice(obj) || PyUnicode_Check(obj)) {
        return IValue(toDevice(obj, ""));
      }
      return std::nullopt;
    case TypeKind::Generator:
      return IValue(OwnedPyObject::steal(py::reinterpret_borrow<py::object>(obj).release().ptr()));
    case TypeKind::Any:
      return toIValueAny(obj);
    case TypeKind::List: {
      TypePtr elem = type->elem();
      int64_t single;
      if (N && !isSequence(obj) && (elem->kind() == TypeKind::Int || elem->kind() == TypeKind::SymInt) &&
          toInt64(obj, single)) {
        return IValue(std::vector<int64_t>(static_cast<size_t>(*N), single));
      }
      if (!isSequence(obj)) {
        return std::nullopt;
      }
      Elements seq(obj);
      size_t n = seq.size();
      switch (elem->kind()) {
        case TypeKind::Int:
        case TypeKind::SymInt: {
          std::vector<int64_t> v(n);
          for (size_t i = 0; i < n; ++i) {
            if (!toInt64(seq[i], v[i])) {
              return std::nullopt;
            }
          }
          return IValue(std::move(v));
        }
        case TypeKind::Float: {
          std::vector<double> v(n);
          for (size_t i = 0; i < n; ++i) {
            if (!toDouble(seq[i], v[i])) {
              return std::nullopt;
            }
          }
          return IValue(std::move(v));
        }
        case TypeKind::Bool: {
          std::vector<bool> v(n);
          for (size_t i = 0; i < n; ++i) {
            PyObject* e = seq[i];
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
            PyObject* e = seq[i];
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
          PyObject* e = seq[i];
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
        auto e = convert(seq[i], elem, std::nullopt);
        if (!e) {
          return std::nullopt;
        }
        v.push_back(std::move(*e));
      }
      return IValue::genericList(std::move(v));
    }
    // Types the schema parser accepts (as PyTorch's does) but no IValue holds:
    // a call passing one raises the TypeError that names the argument.
    case TypeKind::Complex:
    case TypeKind::Storage:
    case TypeKind::Stream:
    case TypeKind::Quantizer:
    case TypeKind::Capsule:
    case TypeKind::NoneType:
    case TypeKind::AnyClass:
    case TypeKind::AnyEnum:
    case TypeKind::Tuple:
    case TypeKind::Dict:
    case TypeKind::Future:
    case TypeKind::Await:
    case TypeKind::RRef:
    case TypeKind::Union:
    case TypeKind::Var:
      return std::nullopt;
  }
  return std::nullopt;
}

std::string opLabel(const FunctionSchema& schema) { return schema.operator_name().toString(); }

// Note [Conversion errors name the argument]
// Converting a Python value can fail in three ways: it has another type
// (TypeError "must be <type>, not <pytype>"), it has the right kind but the
// type cannot hold it (an int beyond int64: OverflowError; a str that UTF-8
// cannot encode, an unknown device name: ValueError), or the value's own
// Python methods raise (__index__, __float__, __len__, __iter__,
// __getitem__). Each becomes an exception of the same class whose message
// starts with `where` (the operator and the argument or return), so a user
// always learns which operator and which argument was at fault. A Python
// exception of the third kind keeps its class when it is a ValueError or
// OverflowError and becomes a TypeError otherwise, with the original as
// its __cause__; MemoryError, RecursionError and exceptions that are not
// Exceptions (KeyboardInterrupt) pass through unchanged. The C++ -> Python
// direction (toPyObject) fails only for a str that is not valid UTF-8
// (ValueError) or a MemoryError, named the same way.

/// "<ExceptionClass>: <message>" of a Python exception (without traceback).
std::string exceptionText(const py::error_already_set& e) {
  std::string name = PyType_Check(e.type().ptr()) ? reinterpret_cast<PyTypeObject*>(e.type().ptr())->tp_name : "?";
  PyObject* text = PyObject_Str(e.value().ptr());
  if (text == nullptr) {
    PyErr_Clear();
    return name;
  }
  std::string message = displayText(text);
  Py_DECREF(text);
  return message.empty() ? name : name + ": " + message;
}

/// Rethrows the exception being handled with `where` in front of its
/// message (see the Note above); `expected` and `obj` describe the value
/// when a Python method of it raised.
[[noreturn]] void rethrowNaming(const std::string& where, const std::string& expected, PyObject* obj) {
  try {
    throw;
  } catch (const OverflowError& e) {
    throw OverflowError(detail::str(where, ": ", e.what()));
  } catch (const ArgumentValueError& e) {
    throw ArgumentValueError(detail::str(where, ": ", e.what()));
  } catch (const ValueError& e) {
    throw ValueError(detail::str(where, ": ", e.what()));
  } catch (const TypeError& e) {
    throw ArgumentTypeError(detail::str(where, ": ", e.what()));
  } catch (py::error_already_set& e) {
    if (!e.matches(PyExc_Exception) || e.matches(PyExc_MemoryError) || e.matches(PyExc_RecursionError)) {
      throw;
    }
    PyObject* type = e.matches(PyExc_OverflowError) ? PyExc_OverflowError
                     : e.matches(PyExc_ValueError)  ? PyExc_ValueError
                                                    : PyExc_TypeError;
    std::string raised = exceptionText(e);
    std::string message = obj != nullptr ? detail::str(where, " must be ", expected, ", not ", pyTypeName(obj),
                                                       ": converting it raised ", raised)
                                         : detail::str(where, ": ", raised);
    py::raise_from(e, type, message.c_str());
    throw py::error_already_set();
  }
}

/// toPyObject, with errors naming `where`.
/// toPyObject, with a failure's message naming the value: `where()` gives
/// its label (called only then: results convert on every call).
template <typename Label>
py::object toPython(const IValue& v, TypePtr type, const Label& where) {
  try {
    return py::reinterpret_steal<py::object>(toPyObject(v, type));
  } catch (...) {
    rethrowNaming(where(), "", nullptr);
  }
}

/// ". Did you mean '<name>'?" for the argument of `schema` closest to the
/// unknown keyword `name`, or "" if none is close: Python's rule for its
/// own suggestions (3.12+), at most (len(a) + len(b) + 3) / 6 edits
/// (editDistance, core/EditDistance.h, which also forgives case).
std::string suggestArgument(const FunctionSchema& schema, const std::string& name) {
  constexpr size_t kMaxNameLength = 256; // longer names get no suggestion (the distance is quadratic)
  const Argument* best = nullptr;
  size_t best_distance = 0;
  for (const Argument& a : schema.arguments()) {
    const std::string& candidate = a.name();
    if (name.size() > kMaxNameLength || candidate.size() > kMaxNameLength) {
      continue;
    }
    size_t d = editDistance(name, candidate);
    if (d * 6 <= name.size() + candidate.size() + 3 && (best == nullptr || d < best_distance)) {
      best = &a;
      best_distance = d;
    }
  }
  return best ? detail::str(". Did you mean '", best->name(), "'?") : std::string();
}

/// "<op>(): argument '<name>' (position <i>)".
std::string argumentLabel(const FunctionSchema& schema, const Argument& arg, size_t position) {
  return detail::str(opLabel(schema), "(): argument '", arg.name(), "' (position ", position + 1, ")");
}

} // namespace

void checkKeywordsKnown(const FunctionSchema& schema, PyObject* kwnames, size_t num_kw) {
  for (size_t k = 0; k < num_kw; ++k) {
    std::string name = displayText(PyTuple_GET_ITEM(kwnames, k));
    if (!schema.argumentIndexWithName(name)) {
      std::string hint = suggestArgument(schema, name);
      throw ArgumentTypeError(detail::str(opLabel(schema), "() got an unexpected keyword argument '", abbreviated(name),
                                          "'", hint.empty() ? "." : hint, " Declaration: ", schema));
    }
  }
}

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
    return IValue(longToInt64(obj, obj));
  }
  if (PyFloat_Check(obj)) {
    return IValue(PyFloat_AS_DOUBLE(obj));
  }
  if (PyUnicode_Check(obj)) {
    return IValue(utf8String(obj));
  }
  if (isDtype(obj)) {
    return IValue(toScalarType(obj, ""));
  }
  if (isDevice(obj)) {
    return IValue(toDevice(obj, ""));
  }
  return IValue(OwnedPyObject::steal(py::reinterpret_borrow<py::object>(obj).release().ptr()));
}

std::string expectedType(const Argument& arg) {
  std::string expected = arg.type()->toString();
  if (arg.N()) {
    expected += " (of length " + std::to_string(*arg.N()) + ")";
  }
  return expected;
}

namespace {

/// For a list or tuple `obj` given for a list type (or an optional one):
/// ": element <i> is <pytype>, not <element type>" for its first element
/// that does not convert on its own, else "". Only on the error path; lists
/// and tuples only, so that no user code (__iter__, __getitem__) runs again.
std::string firstMismatchedElement(PyObject* obj, TypePtr type) {
  if (type->kind() == TypeKind::Optional) {
    type = type->elem();
  }
  if (type->kind() != TypeKind::List || !(PyList_Check(obj) || PyTuple_Check(obj))) {
    return "";
  }
  TypePtr elem = type->elem();
  py::object items = py::reinterpret_steal<py::object>(PySequence_Tuple(obj));
  if (!items) {
    throw py::error_already_set();
  }
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(items.ptr()); ++i) {
    PyObject* item = PyTuple_GET_ITEM(items.ptr(), i);
    if (!convert(item, elem, std::nullopt)) {
      return detail::str(": element ", i, " is ", pyTypeName(item), ", not ", elem->toString());
    }
  }
  return "";
}

} // namespace

IValue toIValue(PyObject* obj, const Argument& arg, const FunctionSchema& schema, size_t position) {
  // The N of `int[N]` only says how many copies a single int expands to; a
  // list of any length is accepted, as PyTorch's argument parser does
  // (`amax(x, dim=[0, 2])` against `int[1] dim`).
  std::optional<IValue> v;
  try {
    v = convert(obj, arg.type(), arg.N());
  } catch (...) {
    rethrowNaming(argumentLabel(schema, arg, position), expectedType(arg), obj);
  }
  if (v) {
    return std::move(*v);
  }
  std::string element;
  try {
    element = firstMismatchedElement(obj, arg.type());
  } catch (...) {
    rethrowNaming(argumentLabel(schema, arg, position), expectedType(arg), obj);
  }
  throw ArgumentTypeError(detail::str(argumentLabel(schema, arg, position), " must be ", expectedType(arg), ", not ",
                                      pyTypeName(obj), element));
}

PyObject* toPyObject(const IValue& v, TypePtr type) {
  TypePtr t = type ? type->unwrapOptional() : nullptr;
  PyObject* out = nullptr;
  switch (v.tag()) {
    case IValue::Tag::None:
      Py_RETURN_NONE;
    case IValue::Tag::Tensor:
      return wrapTensor(v.toTensor());
    case IValue::Tag::Int:
      if (t && t->kind() == TypeKind::ScalarType) {
        return dtypeObject(v.toScalarType());
      }
      out = PyLong_FromLongLong(v.toInt());
      break;
    case IValue::Tag::Double:
      out = PyFloat_FromDouble(v.toDouble());
      break;
    case IValue::Tag::Bool:
      return PyBool_FromLong(v.toBool());
    case IValue::Tag::String: {
      const std::string& str = v.toStringRef();
      out = PyUnicode_DecodeUTF8(str.data(), static_cast<Py_ssize_t>(str.size()), "strict");
      if (out == nullptr && PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
        std::string reason = exceptionText(py::error_already_set());
        std::ostringstream quoted;
        printQuotedString(quoted, str);
        throw ValueError(detail::str("the str value ", abbreviated(quoted.str()),
                                     " is not valid UTF-8 and cannot become a Python str (", reason, ")"));
      }
      break;
    }
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
      py::tuple tup(elems.size());
      for (size_t i = 0; i < elems.size(); ++i) {
        PyTuple_SET_ITEM(tup.ptr(), i, toPyObject(elems[i], nullptr));
      }
      return tup.release().ptr();
    }
    default: {
      TypePtr elem = t && t->isList() ? t->elem() : nullptr;
      auto elems = v.toListOfIValues();
      py::list list(elems.size());
      for (size_t i = 0; i < elems.size(); ++i) {
        PyList_SET_ITEM(list.ptr(), i, toPyObject(elems[i], elem));
      }
      return list.release().ptr();
    }
  }
  if (out == nullptr) {
    throw py::error_already_set();
  }
  return out;
}

PyObject* argumentToPyObject(const IValue& v, const FunctionSchema& schema, size_t position) {
  const Argument& arg = schema.arguments()[position];
  return toPython(v, arg.type(), [&] { return argumentLabel(schema, arg, position); }).release().ptr();
}

PyObject* popResultsToPython(const FunctionSchema& schema, Stack& stack) {
  const auto& returns = schema.returns();
  size_t n = returns.size();
  OPDISPATCH_INTERNAL_ASSERT(stack.size() >= n, opLabel(schema), " left ", stack.size(),
                             " values on the stack, expected ", n);
  size_t first = stack.size() - n;
  auto result = [&](size_t i) {
    return toPython(stack[first + i], returns[i].type(), [&] { return detail::str(opLabel(schema), ": return ", i); });
  };
  py::object out;
  if (n == 0) {
    out = py::none();
  } else if (n == 1) {
    out = result(0);
  } else {
    py::tuple tup(n);
    for (size_t i = 0; i < n; ++i) {
      PyTuple_SET_ITEM(tup.ptr(), i, result(i).release().ptr());
    }
    out = std::move(tup);
  }
  drop(stack, n);
  return out.release().ptr();
}

void pushPythonResults(const FunctionSchema& schema, PyObject* result, const char* where, Stack& stack) {
  const auto& returns = schema.returns();
  size_t base = stack.size();
  auto convertOne = [&](PyObject* obj, size_t i) {
    std::optional<IValue> v;
    try {
      v = convert(obj, returns[i].type(), returns[i].N());
    } catch (...) {
      rethrowNaming(detail::str(opLabel(schema), ": return ", i, " of the ", where), returns[i].type()->toString(),
                    obj);
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
                                " but the schema declares ", returns.size(),
                                " returns; return a tuple. Schema: ", schema));
  }
  Elements values(result);
  size_t n = values.size();
  if (n != returns.size()) {
    throw TypeError(detail::str(opLabel(schema), ": the ", where, " returned ", n, " values but the schema declares ",
                                returns.size(), ". Schema: ", schema));
  }
  try {
    for (size_t i = 0; i < n; ++i) {
      convertOne(values[i], i);
    }
  } catch (...) {
    stack.resize(base);
    throw;
  }
}

} // namespace opdispatch::python
