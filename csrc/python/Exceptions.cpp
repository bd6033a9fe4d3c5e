// C++ -> Python exception translation.
#include "Exceptions.h"

#include <opdispatch/core/Exception.h>

namespace py = pybind11;

namespace opdispatch::python {

void setPythonErrorFromCurrentException() {
  try {
    throw;
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const py::builtin_exception& e) {
    e.set_error();
  } catch (const NotImplementedError& e) {
    PyErr_SetString(PyExc_NotImplementedError, e.what());
  } catch (const TypeError& e) {
    PyErr_SetString(PyExc_TypeError, e.what());
  } catch (const ValueError& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const IndexError& e) {
    PyErr_SetString(PyExc_IndexError, e.what());
  } catch (const OverflowError& e) {
    PyErr_SetString(PyExc_OverflowError, e.what());
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "unknown C++ exception");
  }
}

void initExceptionTranslation(py::module_&) {
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
