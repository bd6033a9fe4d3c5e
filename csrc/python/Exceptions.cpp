// C++ -> Python exception translation.
#include "Exceptions.h"

#include <stdexcept>
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
    setError(PyExc_NotImplementedError, e.msg());
  } catch (const ArgumentTypeError& e) {
    setError(argument_type_error != nullptr ? argument_type_error : PyExc_TypeError, e.msg());
  } catch (const TypeError& e) {
    setError(PyExc_TypeError, e.msg());
  } catch (const SchemaParseError& e) {
    setError(schema_parse_error != nullptr ? schema_parse_error : PyExc_ValueError, e.msg());
  } catch (const ArgumentValueError& e) {
    setError(argument_value_error != nullptr ? argument_value_error : PyExc_ValueError, e.msg());
  } catch (const ValueError& e) {
    setError(PyExc_ValueError, e.msg());
  } catch (const IndexError& e) {
    setError(PyExc_IndexError, e.msg());
  } catch (const OverflowError& e) {
    setError(PyExc_OverflowError, e.msg());
  } catch (const std::out_of_range& e) {  // PyTorch: CATCH_CORE_ERRORS (a kernel's std::map::at, vector::at)
    setError(PyExc_IndexError, e.what());
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const Error& e) {
    setError(PyExc_RuntimeError, e.msg());
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
