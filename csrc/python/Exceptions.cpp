// C++ -> Python exception translation.
#include "Exceptions.h"

#include <stdexcept>
#include <string>
#include <string_view>

#include <opdispatch/core/Exception.h>

namespace py = pybind11;

namespace opdispatch::python {

namespace {

// Note [Error messages are decoded leniently]
// A message may quote what the user passed, which need not be valid UTF-8
// (a schema's string literal "\377" unescapes to the byte 0xff). Decoding it
// strictly, as PyErr_SetString does, would replace the error by a
// UnicodeDecodeError that names neither the operator nor the position; the
// bytes that are not UTF-8 are shown as \xNN escapes instead. An Error's
// message is taken whole, by its length: a quoted NUL byte (a string literal
// "\0") would otherwise end it there, cutting off the position after it.
void setError(PyObject* type, std::string_view message) {
  PyObject* text = PyUnicode_DecodeUTF8(message.data(), static_cast<Py_ssize_t>(message.size()), "backslashreplace");
  if (text == nullptr) {
    return;  // (the decoding error, e.g. MemoryError, is set)
  }
  PyErr_SetObject(type, text);
  Py_DECREF(text);
}

// Note [Legacy type names in error messages]
// ATen's messages name a tensor's type by its C++ name, "CPUFloatType"
// (TensorBase::toString, which TensorUtils' checkSameType / checkScalarType
// print). PyTorch's Python bindings rewrite the eight of them that have a
// legacy tensor class to that class's name, "torch.FloatTensor", before
// raising (torch::processErrorMsg, applied to every c10::Error); the others
// ("CPUBoolType", "MetaFloatType") stay. Under the name map that is
// "opdispatch.FloatTensor", the rewrite done here for every opdispatch::Error.
std::string processErrorMsg(std::string_view message) {
  std::string text(message);
  if (text.find("CPU") == std::string::npos) {
    return text;
  }
  static constexpr std::string_view kLegacyTypes[] = {"Byte", "Char", "Double", "Float",
                                                      "Int",  "Long", "Short",  "Half"};
  for (std::string_view type : kLegacyTypes) {
    const std::string from = detail::str("CPU", type, "Type");
    const std::string to = detail::str("opdispatch.", type, "Tensor");
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
      text.replace(at, from.size(), to);
    }
  }
  return text;
}

/// setError for an opdispatch::Error's message (legacy type names rewritten).
void setCoreError(PyObject* type, std::string_view message) { setError(type, processErrorMsg(message)); }

// opdispatch._C.SchemaParseError, ArgumentTypeError and ArgumentValueError,
// made by initExceptionTranslation (owned by the module).
PyObject* schema_parse_error = nullptr;
PyObject* argument_type_error = nullptr;
PyObject* argument_value_error = nullptr;

/// A new exception class opdispatch._C.<name> deriving from `base` and
/// RuntimeError, added to `m`.
PyObject* addRuntimeErrorAlso(py::module_& m, const char* name, PyObject* base, const char* doc) {
  py::object bases = py::make_tuple(py::handle(base), py::handle(PyExc_RuntimeError));
  std::string qualified = std::string("opdispatch._C.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases.ptr(), nullptr);
  if (type == nullptr) {
    throw py::error_already_set();
  }
  m.add_object(name, py::reinterpret_steal<py::object>(type));  // the module owns it; `type` is borrowed
  return type;
}

} // namespace

void setPythonErrorFromCurrentException() {
  try {
    throw;
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const py::builtin_exception& e) {
    e.set_error();
  } catch (const NotImplementedError& e) {
    setCoreError(PyExc_NotImplementedError, e.msg());
  } catch (const ArgumentTypeError& e) {
    setCoreError(argument_type_error != nullptr ? argument_type_error : PyExc_TypeError, e.msg());
  } catch (const TypeError& e) {
    setCoreError(PyExc_TypeError, e.msg());
  } catch (const SchemaParseError& e) {
    setCoreError(schema_parse_error != nullptr ? schema_parse_error : PyExc_ValueError, e.msg());
  } catch (const ArgumentValueError& e) {
    setCoreError(argument_value_error != nullptr ? argument_value_error : PyExc_ValueError, e.msg());
  } catch (const ValueError& e) {
    setCoreError(PyExc_ValueError, e.msg());
  } catch (const IndexError& e) {
    setCoreError(PyExc_IndexError, e.msg());
  } catch (const OverflowError& e) {
    setCoreError(PyExc_OverflowError, e.msg());
  } catch (const std::out_of_range& e) {  // PyTorch: CATCH_CORE_ERRORS (a kernel's std::map::at, vector::at)
    setError(PyExc_IndexError, e.what());
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const Error& e) {
    setCoreError(PyExc_RuntimeError, e.msg());
  } catch (const std::exception& e) {
    setError(PyExc_RuntimeError, e.what());
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "unknown C++ exception");
  }
}

void initExceptionTranslation(py::module_& m) {
  schema_parse_error = addRuntimeErrorAlso(
      m, "SchemaParseError", PyExc_ValueError,
      "A function schema that does not parse (the message gives the position). A ValueError, as Python's "
      "convention has it for a bad argument value, and a RuntimeError, as PyTorch raises it.");
  argument_type_error = addRuntimeErrorAlso(
      m, "ArgumentTypeError", PyExc_TypeError,
      "An operator call whose arguments do not fit the schema (a wrong type, a missing, extra or unknown "
      "argument; the message names the operator and argument). A TypeError, as Python's convention has it, and a "
      "RuntimeError, as PyTorch's torch.ops raises it.");
  argument_value_error = addRuntimeErrorAlso(
      m, "ArgumentValueError", PyExc_ValueError,
      "An argument value that PyTorch rejects with RuntimeError (a device string or index that does not parse). "
      "A ValueError, as Python's convention has it, and a RuntimeError, as PyTorch raises it.");
  py::register_exception_translator([](std::exception_ptr p) {
    if (!p) {
      return;
    }
    try {
      std::rethrow_exception(p);
    } catch (const opdispatch::Error&) {
      setPythonErrorFromCurrentException();
    }
  });
}

} // namespace opdispatch::python
