// opdispatch._C: the pybind11 module over libopdispatch.
#include <pybind11/pybind11.h>

#include <opdispatch/core/PyInterpreter.h>

#include "AutogradKernel.h"
#include "AutogradMeta.h"
#include "Engine.h"
#include "Exceptions.h"
#include "NumpyBridge.h"
#include "OpNode.h"
#include "PythonDispatcher.h"
#include "PythonFallbackKernel.h"
#include "PythonOperator.h"
#include "PythonTensor.h"
#include "PythonTypePromotion.h"
#include "PythonTypes.h"
#include "TopK.h"
#include "TorchDispatchModeTLS.h"
#include "TorchFunction.h"
#include "python_dispatch.h"

namespace py = pybind11;

namespace {

void decrefWithGil(void* obj) {
  if (!opdispatch::python::interpreterAlive()) {
    return;
  }
  PyGILState_STATE s = PyGILState_Ensure();
  Py_DECREF(static_cast<PyObject*>(obj));
  PyGILState_Release(s);
}

void increfWithGil(void* obj) {
  PyGILState_STATE s = PyGILState_Ensure();
  Py_INCREF(static_cast<PyObject*>(obj));
  PyGILState_Release(s);
}

void* releaseGil() {
  if (!opdispatch::python::interpreterAlive() || !PyGILState_Check()) {
    return nullptr;
  }
  return PyEval_SaveThread();
}

void reacquireGil(void* token) { PyEval_RestoreThread(static_cast<PyThreadState*>(token)); }

bool isModuleImported(const char* name) {
  if (!opdispatch::python::interpreterAlive()) {
    return false;
  }
  PyGILState_STATE s = PyGILState_Ensure();
  PyObject* key = PyUnicode_FromString(name);
  int found = key == nullptr ? -1 : PyDict_Contains(PyImport_GetModuleDict(), key);
  Py_XDECREF(key);
  if (found < 0) {
    PyErr_Clear();
  }
  PyGILState_Release(s);
  return found == 1;
}

} // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "opdispatch's C++ core: dispatcher, tensors, schemas.";
  opdispatch::pyInterpreterHooks().decref = &decrefWithGil;
  opdispatch::pyInterpreterHooks().incref = &increfWithGil;
  opdispatch::pyInterpreterHooks().releaseGil = &releaseGil;
  opdispatch::pyInterpreterHooks().reacquireGil = &reacquireGil;
  opdispatch::pyInterpreterHooks().isModuleImported = &isModuleImported;
  opdispatch::python::initExceptionTranslation(m);
  opdispatch::python::initTypeBindings(m);
  opdispatch::python::initTypePromotionBindings(m);
  opdispatch::python::initTensorBindings(m);
  opdispatch::python::initNumpyBridgeBindings(m);
  opdispatch::python::initTopKBindings(m);
  opdispatch::python::initAutogradMetaBindings(m);
  opdispatch::python::initAutogradKernelBindings(m);
  opdispatch::python::initOpNodeBindings(m);
  opdispatch::python::initEngineBindings(m);
  opdispatch::python::initSchemaBindings(m);
  opdispatch::python::initDispatchBindings(m);
  opdispatch::python::initRegistrationMethodBindings(m);
  opdispatch::python::initOperatorBindings(m);
  opdispatch::python::initTorchDispatchModeBindings(m);
  opdispatch::python::initTorchFunctionBindings(m);
  opdispatch::python::initPythonFallbackBindings(m);
  opdispatch::python::initPythonDispatcherBindings(m);
  opdispatch::python::initIntrospectionBindings(m);
}
