// Note [C++ warnings reach Python when the call returns]
// A kernel's OPDISPATCH_WARN may run with the GIL released (or in a kernel
// that must not be interrupted by a Python exception), so it cannot call
// Python's warnings module there. Each Python entry (pythonEntry) installs a
// PyWarningHandler for its thread: warnings are buffered, and when the call
// returns to Python (the GIL held again) each is issued with PyErr_WarnEx as
// UserWarning or DeprecationWarning, "<msg> (Triggered internally at
// <file>:<line>.)" unless verbatim. When the warnings filter turns one into an
// exception ("error"), the call's result is dropped and that exception
// raised; when the call is already raising, such an exception is printed
// (PyErr_Print) and the call's own exception kept. PyTorch:
// torch::PyWarningHandler (torch/csrc/Exceptions.cpp), installed by
// HANDLE_TH_ERRORS.
#pragma once

#include <Python.h>

#include <vector>

#include <opdispatch/Macros.h>
#include <opdispatch/core/Warning.h>
#include <opdispatch/dispatch/ThreadCallState.h>

namespace opdispatch::python {

class PyWarningHandler {
 public:
  // (The handler slot itself, not WarningUtils' calls: two accesses of the block CallGuard has reached.)
  PyWarningHandler() noexcept : prev_handler_(tls_call_state.warning_handler) {
    tls_call_state.warning_handler = &buffer_;
  }
  PyWarningHandler(const PyWarningHandler&) = delete;
  PyWarningHandler& operator=(const PyWarningHandler&) = delete;
  ~PyWarningHandler() { tls_call_state.warning_handler = prev_handler_; }

  /// Issues the buffered warnings (the GIL held); returns `result` (a new
  /// reference, or null with a Python error set), or null with the error
  /// a warning raised (`result` released).
  PyObject* flush(PyObject* result) noexcept {
    if (OPDISPATCH_LIKELY(buffer_.warnings.empty())) {
      return result;
    }
    return flushSlow(result);
  }

 private:
  struct Buffer : WarningHandler {
    void process(const Warning& warning) override;
    std::vector<Warning> warnings;
  };

  PyObject* flushSlow(PyObject* result) noexcept;

  Buffer buffer_;
  WarningHandler* prev_handler_;
};

} // namespace opdispatch::python
