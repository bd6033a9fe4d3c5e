// The C call path of OpOverload: argument binding, dispatch, result conversion.
#include "PythonOperator.h"

#include <opdispatch/core/Exception.h>
#include <opdispatch/dispatch/Dispatcher.h>
#include <opdispatch/schema/SchemaParser.h>

#include "Exceptions.h"
#include "IValueConversion.h"

namespace py = pybind11;

namespace opdispatch::python {

namespace {

struct OperatorObject {
  PyObject_HEAD
  /// Never freed (see Note [Kernel lifetime]); null until __init__ ran.
  OperatorEntry* entry;
  PyObject* dict;
  PyObject* weakrefs;
};

PyTypeObject gOperatorType = {PyVarObject_HEAD_INIT(nullptr, 0)};

OperatorEntry& entryOf(PyObject* self) {
  OperatorEntry* e = reinterpret_cast<OperatorObject*>(self)->entry;
  OPDISPATCH_CHECK(e != nullptr, "this operator object was not initialised (call _DispatchOperator.__init__)");
  return *e;
}

const AnnotatedSchema& schemaOf(const OperatorEntry& e) {
  const AnnotatedSchema* s = e.schemaPtr();
  OPDISPATCH_CHECK(s != nullptr, "operator ", e.operator_name(),
                   " has no schema: its definition was removed (the Library that defined it was destroyed)");
  return *s;
}

PyObject* callWithKeySet(PyObject* self, const std::optional<DispatchKeySet>& redispatch_ks, PyObject* args,
                         PyObject* kwargs) {
  OperatorEntry& e = entryOf(self);
  const AnnotatedSchema& s = schemaOf(e);
  Stack stack;
  pushArgumentsForSchema(s.schema, args, kwargs, stack);
  OperatorHandle op(&e);
  if (redispatch_ks) {
    op.redispatchBoxed(*redispatch_ks, &stack);
  } else {
    DispatchKeySet ks = e.computeDispatchKeySetBoxed(s, stack);
    e.lookup(ks).callBoxed(op, ks, &stack);
  }
  return popResultsToPython(s.schema, stack);
}

PyObject* operatorCall(PyObject* self, PyObject* args, PyObject* kwargs) {
  return pythonEntry([&] { return callWithKeySet(self, std::nullopt, args, kwargs); });
}

int operatorInit(PyObject* self, PyObject* args, PyObject* kwargs) {
  static const char* kwlist[] = {"name", "overload_name", nullptr};
  const char* name = nullptr;
  const char* overload = "";
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s|s:_DispatchOperator", const_cast<char**>(kwlist), &name,
                                   &overload)) {
    return -1;
  }
  PyObject* r = pythonEntry([&]() -> PyObject* {
    OperatorHandle op = Dispatcher::singleton().findSchemaOrThrow(name, overload);
    reinterpret_cast<OperatorObject*>(self)->entry = &op.entry();
    Py_RETURN_NONE;
  });
  if (r == nullptr) {
    return -1;
  }
  Py_DECREF(r);
  return 0;
}

void operatorDealloc(PyObject* self) {
  auto* obj = reinterpret_cast<OperatorObject*>(self);
  PyObject_GC_UnTrack(self);
  if (obj->weakrefs != nullptr) {
    PyObject_ClearWeakRefs(self);
  }
  Py_CLEAR(obj->dict);
  Py_TYPE(self)->tp_free(self);
}

int operatorTraverse(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(reinterpret_cast<OperatorObject*>(self)->dict);
  return 0;
}

int operatorClear(PyObject* self) {
  Py_CLEAR(reinterpret_cast<OperatorObject*>(self)->dict);
  return 0;
}

PyObject* methRedispatch(PyObject* self, PyObject* args, PyObject* kwargs) {
  return pythonEntry([&]() -> PyObject* {
    OperatorEntry& e = entryOf(self);
    OPDISPATCH_CHECK_TYPE(PyTuple_GET_SIZE(args) >= 1, e.operator_name(),
                          ".redispatch(keyset, *args, **kwargs) needs a keyset");
    py::handle first = PyTuple_GET_ITEM(args, 0);
    OPDISPATCH_CHECK_TYPE(py::isinstance<DispatchKeySet>(first), e.operator_name(),
                          ".redispatch: argument 'keyset' must be a DispatchKeySet (e.g. keyset & "
                          "_C._dispatch_keyset_full_after(key)), not ",
                          pyTypeName(first.ptr()));
    auto ks = first.cast<DispatchKeySet>();
    py::tuple rest = py::reinterpret_steal<py::tuple>(PyTuple_GetSlice(args, 1, PyTuple_GET_SIZE(args)));
    return callWithKeySet(self, ks, rest.ptr(), kwargs);
  });
}

PyObject* getHandle(PyObject* self, void*) {
  return pythonEntry([&] { return py::cast(OperatorHandle(&entryOf(self))).release().ptr(); });
}

PyObject* getSchema(PyObject* self, void*) {
  return pythonEntry([&] { return py::cast(schemaOf(entryOf(self)).schema).release().ptr(); });
}

PyMethodDef kMethods[] = {
    {"redispatch", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(methRedispatch)),
     METH_VARARGS | METH_KEYWORDS,
     "redispatch(keyset, *args, **kwargs): calls the kernel for `keyset` (already restricted by the caller)."},
    {nullptr, nullptr, 0, nullptr},
};

PyGetSetDef kGetSets[] = {
    {"_handle", getHandle, nullptr, "The _OperatorHandle.", nullptr},
    {"_schema", getSchema, nullptr, "The FunctionSchema.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

} // namespace

void initOperatorBindings(py::module_& m) {
  PyTypeObject& t = gOperatorType;
  t.tp_name = "opdispatch._C._DispatchOperator";
  t.tp_basicsize = sizeof(OperatorObject);
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC;
  t.tp_doc = "_DispatchOperator(name, overload_name=''): calling it dispatches the operator.";
  t.tp_new = PyType_GenericNew;
  t.tp_init = operatorInit;
  t.tp_dealloc = operatorDealloc;
  t.tp_traverse = operatorTraverse;
  t.tp_clear = operatorClear;
  t.tp_call = operatorCall;
  t.tp_methods = kMethods;
  t.tp_getset = kGetSets;
  t.tp_dictoffset = offsetof(OperatorObject, dict);
  t.tp_weaklistoffset = offsetof(OperatorObject, weakrefs);
  if (PyType_Ready(&t) < 0) {
    throw py::error_already_set();
  }
  Py_INCREF(&t);
  m.attr("_DispatchOperator") = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(&t));
}

} // namespace opdispatch::python
