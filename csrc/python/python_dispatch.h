// Declarations shared by the _C binding files.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include <pybind11/pybind11.h>

#include <opdispatch/dispatch/Dispatcher.h>

#include "DispatchKeyCaster.h"

namespace opdispatch::python {

void initDispatchBindings(pybind11::module_& m);
void initSchemaBindings(pybind11::module_& m);
void initIntrospectionBindings(pybind11::module_& m);
void initRegistrationMethodBindings(pybind11::module_& m);

/// _C._library_define(*args) and _C._library_impl(*args) (Note [Registration
/// fast path]; the first parameter, the module, is not read): a new
/// reference, or null with the Python error set.
PyObject* libraryDefine(PyObject* module, PyObject* const* args, Py_ssize_t nargs);
PyObject* libraryImpl(PyObject* module, PyObject* const* args, Py_ssize_t nargs);

/// (file, line) of the innermost Python frame outside the sources the Python
/// layer asked to skip (_dispatch_set_call_site_skip_paths: its own
/// registration code); nullopt if there is none.
std::optional<std::pair<std::string, int>> pythonCallSiteFrame();
/// "<file>:<line>" of that frame as a str (one object per site, cached), or
/// None; searched from `from` outwards if given (else from the current frame).
pybind11::object pythonCallSiteText(PyFrameObject* from = nullptr);
/// "registered at <file>:<line>" of that frame ("registered from Python" if none).
std::string pythonCallSite();

} // namespace opdispatch::python
