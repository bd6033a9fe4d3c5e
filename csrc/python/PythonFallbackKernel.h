// The Python key's backend fallback: where dispatch modes and tensor
// subclasses with __torch_dispatch__ intercept operator calls. PyTorch:
// ATen/core/PythonFallbackKernel.cpp (pythonFallback), PyInterpreter's
// dispatch and the __torch_dispatch__ half of handle_torch_function_no_python_arg_parser.
#pragma once

#include <Python.h>

#include <pybind11/pybind11.h>

#include <opdispatch/dispatch/Dispatcher.h>

namespace opdispatch::python {

/// Whether instances of `cls` (a tensor class) handle dispatch: its
/// __torch_dispatch__ is not Tensor's disabled one. Such tensors carry the
/// Python and PythonTLSSnapshot keys. PyTorch: check_has_torch_dispatch.
bool hasTorchDispatch(PyObject* cls);

/// The OpOverload of `op` (the `func` handlers receive; GIL held), cached per
/// operator until the next def or undef: opdispatch.ops makes new OpOverload
/// objects then. A new reference: a handler that defines or removes an
/// operator and calls again clears the cache while the caller still uses it.
pybind11::object opOverload(const OperatorHandle& op);

/// Registers the fallback at the Python key (for the life of the process) and
/// binds _disabled_torch_dispatch_impl, _set_torch_dispatch_rules and
/// _RestorePythonTLSSnapshot.
void initPythonFallbackBindings(pybind11::module_& m);

} // namespace opdispatch::python
