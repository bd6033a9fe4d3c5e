// The Python-kernel trampoline.
#include "PythonKernelHolder.h"

#include <pybind11/pybind11.h>

#include <opdispatch/core/Exception.h>
#include <opdispatch/dispatch/Dispatcher.h>

#include "IValueConversion.h"

namespace py = pybind11;

namespace opdispatch::python {

namespace {
PyObject* gOpOverloadResolver = nullptr;

bool interpreterAlive() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsInitialized() && !Py_IsFinalizing();
#else
  return Py_IsInitialized() && !_Py_IsFinalizing();
#endif
}
} // namespace

void setOpOverloadResolver(PyObject* resolver) {
  Py_XINCREF(resolver);
  Py_XDECREF(gOpOverloadResolver);
  gOpOverloadResolver = resolver;
}

PyObject* opOverloadResolver() { return gOpOverloadResolver; }

PythonKernelHolder::PythonKernelHolder(PyObject* func, DispatchKey key, bool with_keyset, bool is_fallback)
    : func_(func),
      where_(detail::str(is_fallback ? "Python fallback" : "Python kernel", " registered at ", key)),
      with_keyset_(with_keyset),
      is_fallback_(is_fallback) {
  Py_INCREF(func_);
}

PythonKernelHolder::~PythonKernelHolder() { retire(); }

void PythonKernelHolder::retire() {
  if (!interpreterAlive()) {
    func_ = nullptr;
    return;
  }
  py::gil_scoped_acquire gil;
  PyObject* f = func_;
  func_ = nullptr;
  Py_XDECREF(f);
}

KernelFunction PythonKernelHolder::makeKernel(PyObject* func, DispatchKey key, bool with_keyset, bool is_fallback) {
  return KernelFunction::makeFromBoxedFunctor(std::make_unique<PythonKernelHolder>(func, key, with_keyset, is_fallback));
}

void PythonKernelHolder::operator()(const OperatorHandle& op, DispatchKeySet ks, Stack* stack) {
  py::gil_scoped_acquire gil;
  if (OPDISPATCH_UNLIKELY(func_ == nullptr)) {
    // Deregistered while this call was on its way here: use the new table entry.
    py::gil_scoped_release nogil;
    op.redispatchBoxed(ks, stack);
    return;
  }
  const FunctionSchema& schema = op.schema();
  py::object func = py::reinterpret_borrow<py::object>(func_);
  auto [args, kwargs] = popArgumentsToPython(schema, *stack);
  py::tuple args_tuple = py::reinterpret_steal<py::tuple>(args);
  py::dict kwargs_dict = py::reinterpret_steal<py::dict>(kwargs);
  size_t extra = (with_keyset_ ? 1 : 0) + (is_fallback_ ? 1 : 0);
  if (extra > 0) {
    py::tuple full(args_tuple.size() + extra);
    size_t i = 0;
    if (is_fallback_) {
      OPDISPATCH_CHECK(gOpOverloadResolver != nullptr, "no OpOverload resolver is installed for Python fallbacks");
      full[i++] = py::reinterpret_borrow<py::object>(gOpOverloadResolver)(op.operator_name().name,
                                                                           op.operator_name().overload_name);
    }
    if (with_keyset_) {
      full[i++] = py::cast(ks);
    }
    for (size_t j = 0; j < args_tuple.size(); ++j) {
      full[i++] = args_tuple[j];
    }
    args_tuple = std::move(full);
  }
  PyObject* result = PyObject_Call(func.ptr(), args_tuple.ptr(), kwargs_dict.ptr());
  if (result == nullptr) {
    throw py::error_already_set();
  }
  py::object owned = py::reinterpret_steal<py::object>(result);
  pushPythonResults(schema, result, where_.c_str(), *stack);
}

} // namespace opdispatch::python
