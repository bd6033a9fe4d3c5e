// The function layer above the dispatcher (__torch_function__): this
// thread's TorchFunctionMode stack and disabled state, the override check on
// arguments, and _C._Overridable, the public functions and Tensor methods
// that make that check. PyTorch: torch/csrc/utils/python_arg_parser.cpp
// (has_torch_function), torch/csrc/utils/disable_torch_function.cpp,
// c10/core/impl/PythonTorchFunctionTLS.
#pragma once

#include <pybind11/pybind11.h>

namespace opdispatch::python {

/// Whether calls on this thread go to a TorchFunctionMode first: a mode is
/// on the stack and DisableTorchFunction is not in effect.
bool torchFunctionModeEnabled();

/// Whether `obj` (an argument of a public function) hands the call to its
/// class's __torch_function__: its class is not opdispatch.Tensor itself, has
/// a __torch_function__ that is not _disabled_torch_function_impl, and
/// subclass overrides are not disabled on this thread. PyTorch:
/// check_has_torch_function(obj, ignore_mode=true).
bool hasTorchFunction(PyObject* obj);

/// The _C functions of the function layer and the _Overridable type.
void initTorchFunctionBindings(pybind11::module_& m);

} // namespace opdispatch::python
