// The Python dispatcher: the PythonDispatcher key's fallback, which lets an
// operator's py_impl kernels (OpOverload.py_kernels, per key and per mode
// class) take calls, and the guards that switch it on and off for a thread.
// PyTorch: pythonDispatcherFallback (ATen/core/PythonFallbackKernel.cpp),
// PyInterpreter::python_dispatcher, c10::impl::PythonDispatcherTLS.
#pragma once

#include <pybind11/pybind11.h>

namespace opdispatch::python {

/// Registers the fallback at PythonDispatcher (for the life of the process)
/// and binds _EnablePythonDispatcher and _DisablePythonDispatcher.
void initPythonDispatcherBindings(pybind11::module_& m);

} // namespace opdispatch::python
