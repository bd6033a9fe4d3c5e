// The C call path of OpOverload: argument binding, dispatch, result
// conversion; overload resolution for packets (see Note [Overload resolution]).
#include "PythonOperator.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <opdispatch/core/Exception.h>
#include <opdispatch/dispatch/Dispatcher.h>
#include <opdispatch/dispatch/LocalDispatchKeySet.h>
#include <opdispatch/schema/SchemaParser.h>

#include "Exceptions.h"
#include "IValueConversion.h"
#include "PyObjectDispatch.h"
#include "StaticType.h"

namespace py = pybind11;

namespace opdispatch::python {

namespace {

struct OperatorObject {
  PyObject_HEAD
  /// Never freed (see Note [Kernel lifetime]); null until __init__ ran.
  OperatorEntry* entry;
  PyObject* dict;
  PyObject* weakrefs;
  /// Facts about the current schema for the fast path (Note [PyObject dispatch]).
  FastCallCache fast;
};

PyTypeObject gOperatorType = staticTypeObject();

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

/// Dispatches a call whose arguments are already on `stack` and returns the
/// Python result: normally, or for `redispatch_ks` (already restricted by the caller).
PyObject* dispatchBound(OperatorEntry& e, const AnnotatedSchema& s, const std::optional<DispatchKeySet>& redispatch_ks,
                        Stack& stack) {
  OperatorHandle op(&e);
  if (redispatch_ks) {
    op.redispatchBoxed(*redispatch_ks, &stack);
  } else {
    DispatchKeySet ks = e.computeDispatchKeySetBoxed(s, stack);
    e.callKernelBoxed(op, s, ks, &stack);
  }
  return popResultsToPython(s.schema, stack);
}

PyObject* callWithKeySet(PyObject* self, const std::optional<DispatchKeySet>& redispatch_ks, PyObject* args,
                         PyObject* kwargs) {
  OperatorEntry& e = entryOf(self);
  const AnnotatedSchema& s = schemaOf(e);
  Stack stack;
  pushArgumentsForSchema(s.schema, args, kwargs, stack);
  return dispatchBound(e, s, redispatch_ks, stack);
}

/// A DispatchKey from a DispatchKey object or its name.
DispatchKey toDispatchKey(PyObject* obj) {
  if (PyUnicode_Check(obj)) {
    return parseDispatchKey(py::cast<std::string>(obj));
  }
  try {
    return py::cast<DispatchKey>(obj);
  } catch (const py::cast_error&) {
    throw TypeError(detail::str("expected a DispatchKey or a dispatch key name, not ", pyTypeName(obj)));
  }
}

// Note [Overload resolution]
// Calling a packet (opdispatch.ops.ns.foo(...)) picks the first overload, in
// the order the packet lists them, whose schema the arguments bind to: the
// same binding a direct call of that overload does (counts, names, types,
// defaults). The first that binds is dispatched with the stack built while
// checking, so arguments are converted once. If none binds, a TypeError lists
// every candidate schema with the reason it was rejected; with a single
// candidate its own error is raised unchanged. PyTorch: getOpWithStack in
// torch/csrc/jit/python/pybind_utils.h (its overload order is registration
// order, as ours).

/// Binds args/kwargs to the first of `candidates` (operators with a schema)
/// that accepts them, leaving the arguments on `stack`; returns its index.
size_t bindFirstMatching(const std::string& name, const std::vector<std::pair<OperatorEntry*, const AnnotatedSchema*>>& candidates,
                         PyObject* args, PyObject* kwargs, Stack& stack) {
  OPDISPATCH_CHECK(!candidates.empty(), "no overload of ", name,
                   " is defined (its definitions were removed); define it again or load the library that defines it");
  if (candidates.size() == 1) {
    pushArgumentsForSchema(candidates[0].second->schema, args, kwargs, stack);
    return 0;
  }
  std::string reasons;
  for (size_t i = 0; i < candidates.size(); ++i) {
    try {
      pushArgumentsForSchema(candidates[i].second->schema, args, kwargs, stack);
      return i;
    } catch (const TypeError& e) {
      reasons += detail::str("\n  ", candidates[i].second->schema, "\n    ", e.what());
    }
  }
  throw TypeError(detail::str(name, "(): the arguments failed to match any schema of its ", candidates.size(),
                              " overloads:", reasons,
                              "\nPass arguments matching one of them, or call an overload directly (",
                              "opdispatch.ops.<ns>.<op>.<overload>)."));
}

/// _call_overload_packet(name, overloads, args, kwargs): see Note [Overload resolution].
PyObject* callOverloadPacket(PyObject*, PyObject* const* argv, Py_ssize_t nargs) {
  return pythonEntry([&]() -> PyObject* {
    OPDISPATCH_CHECK_TYPE(nargs == 4 && PyUnicode_Check(argv[0]) && PyTuple_Check(argv[1]) && PyTuple_Check(argv[2]) &&
                              (argv[3] == Py_None || PyDict_Check(argv[3])),
                          "_call_overload_packet(name: str, overloads: tuple, args: tuple, kwargs: dict | None)");
    PyObject* kwargs = argv[3] == Py_None ? nullptr : argv[3];
    if (PyTuple_GET_SIZE(argv[1]) == 1 && (kwargs == nullptr || PyDict_GET_SIZE(kwargs) == 0)) {
      // One overload: its own call, fast path included.
      PyObject* only = PyTuple_GET_ITEM(argv[1], 0);
      auto* obj = reinterpret_cast<OperatorObject*>(only);
      PyObject* result = nullptr;
      if (PyObject_TypeCheck(only, &gOperatorType) && obj->entry != nullptr &&
          tryPyObjectDispatch(*obj->entry, obj->fast, &PyTuple_GET_ITEM(argv[2], 0),
                              static_cast<size_t>(PyTuple_GET_SIZE(argv[2])), nullptr, &result)) {
        return result;
      }
    }
    std::string name = py::cast<std::string>(argv[0]);
    std::vector<std::pair<OperatorEntry*, const AnnotatedSchema*>> candidates;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(argv[1]); ++i) {
      PyObject* o = PyTuple_GET_ITEM(argv[1], i);
      OPDISPATCH_CHECK_TYPE(PyObject_TypeCheck(o, &gOperatorType), "_call_overload_packet: overload ", i,
                            " is not an operator object but ", pyTypeName(o));
      OperatorEntry& e = entryOf(o);
      if (const AnnotatedSchema* s = e.schemaPtr()) {
        candidates.emplace_back(&e, s);
      }
    }
    Stack stack;
    size_t i = bindFirstMatching(name, candidates, argv[2], kwargs, stack);
    return dispatchBound(*candidates[i].first, *candidates[i].second, std::nullopt, stack);
  });
}

/// _jit_resolve_packet(qualname, *args, **kwargs) -> the overload name ("default" for ""). PyTorch: same name.
PyObject* resolvePacket(PyObject*, PyObject* args, PyObject* kwargs) {
  return pythonEntry([&]() -> PyObject* {
    OPDISPATCH_CHECK_TYPE(PyTuple_GET_SIZE(args) >= 1 && PyUnicode_Check(PyTuple_GET_ITEM(args, 0)),
                          "_jit_resolve_packet(qualname: str, *args, **kwargs)");
    std::string name = py::cast<std::string>(PyTuple_GET_ITEM(args, 0));
    Dispatcher& d = Dispatcher::singleton();
    std::vector<std::pair<OperatorEntry*, const AnnotatedSchema*>> candidates;
    for (const auto& n : d.getAllOpNames()) {
      if (n.name != name) {
        continue;
      }
      if (auto op = d.findSchema(n)) {
        if (const AnnotatedSchema* s = op->entry().schemaPtr()) {
          candidates.emplace_back(&op->entry(), s);
        }
      }
    }
    py::tuple rest = py::reinterpret_steal<py::tuple>(PyTuple_GetSlice(args, 1, PyTuple_GET_SIZE(args)));
    Stack stack;
    size_t i = bindFirstMatching(name, candidates, rest.ptr(), kwargs, stack);
    const std::string& overload = candidates[i].first->operator_name().overload_name;
    return py::str(overload.empty() ? "default" : overload).release().ptr();
  });
}

PyObject* operatorCall(PyObject* self, PyObject* args, PyObject* kwargs) {
  return pythonEntry([&]() -> PyObject* {
    auto* obj = reinterpret_cast<OperatorObject*>(self);
    PyObject* result = nullptr;
    if (obj->entry != nullptr && (kwargs == nullptr || PyDict_GET_SIZE(kwargs) == 0) &&
        tryPyObjectDispatch(*obj->entry, obj->fast, &PyTuple_GET_ITEM(args, 0),
                            static_cast<size_t>(PyTuple_GET_SIZE(args)), nullptr, &result)) {
      return result;
    }
    return callWithKeySet(self, std::nullopt, args, kwargs);
  });
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

/// redispatch(keyset, *args, **kwargs); with `below_autograd`, the
/// _redispatch_below_autograd variant: `keyset` is restricted to the keys
/// after autograd and the call runs with the autograd keys excluded.
PyObject* redispatchImpl(PyObject* self, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames,
                         bool below_autograd) {
  return pythonEntry([&]() -> PyObject* {
    size_t nargs = static_cast<size_t>(PyVectorcall_NARGS(nargsf));
    OperatorEntry& e = entryOf(self);
    OPDISPATCH_CHECK_TYPE(nargs >= 1, e.operator_name(), ".redispatch(keyset, *args, **kwargs) needs a keyset");
    py::handle first = args[0];
    OPDISPATCH_CHECK_TYPE(py::isinstance<DispatchKeySet>(first), e.operator_name(),
                          ".redispatch: argument 'keyset' must be a DispatchKeySet (e.g. keyset & "
                          "_C._dispatch_keyset_full_after(key)), not ",
                          pyTypeName(first.ptr()));
    auto ks = first.cast<DispatchKeySet>();
    std::optional<AutoDispatchBelowAutograd> guard;
    if (below_autograd) {
      ks = ks & after_autograd_keyset;
      guard.emplace();
    }
    auto* obj = reinterpret_cast<OperatorObject*>(self);
    PyObject* result = nullptr;
    if ((kwnames == nullptr || PyTuple_GET_SIZE(kwnames) == 0) &&
        tryPyObjectDispatch(e, obj->fast, args + 1, nargs - 1, &ks, &result)) {
      return result;
    }
    const AnnotatedSchema& s = schemaOf(e);
    Stack stack;
    pushArgumentsForSchema(s.schema, args + 1, nargs - 1, kwnames, stack);
    return dispatchBound(e, s, ks, stack);
  });
}

PyObject* methRedispatch(PyObject* self, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  return redispatchImpl(self, args, nargsf, kwnames, false);
}

PyObject* methRedispatchBelowAutograd(PyObject* self, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  return redispatchImpl(self, args, nargsf, kwnames, true);
}

PyObject* methCallForDispatchKey(PyObject* self, PyObject* args, PyObject* kwargs) {
  return pythonEntry([&]() -> PyObject* {
    OPDISPATCH_CHECK_TYPE(PyTuple_GET_SIZE(args) >= 1,
                          "_call_for_dispatch_key(dispatch_key, *args, **kwargs) needs a dispatch key");
    DispatchKey k = toDispatchKey(PyTuple_GET_ITEM(args, 0));
    py::tuple rest = py::reinterpret_steal<py::tuple>(PyTuple_GetSlice(args, 1, PyTuple_GET_SIZE(args)));
    OperatorEntry& e = entryOf(self);
    const AnnotatedSchema& s = schemaOf(e);
    Stack stack;
    pushArgumentsForSchema(s.schema, rest.ptr(), kwargs, stack);
    OperatorHandle(&e).callBoxedForDispatchKey(k, &stack);
    return popResultsToPython(s.schema, stack);
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
     METH_FASTCALL | METH_KEYWORDS,
     "redispatch(keyset, *args, **kwargs): calls the kernel for `keyset` (already restricted by the caller)."},
    {"_redispatch_below_autograd",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(methRedispatchBelowAutograd)),
     METH_FASTCALL | METH_KEYWORDS,
     "_redispatch_below_autograd(keyset, *args, **kwargs): what an Autograd kernel does to run the operator: "
     "redispatch(keyset & _after_autograd_keyset, ...) with the autograd keys excluded for the call "
     "(_AutoDispatchBelowAutograd), in one C call."},
    {"_call_for_dispatch_key",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(methCallForDispatchKey)),
     METH_VARARGS | METH_KEYWORDS,
     "_call_for_dispatch_key(dispatch_key, *args, **kwargs): calls the kernel registered at `dispatch_key` (a "
     "DispatchKey or its name; alias keys such as CompositeImplicitAutograd allowed), bypassing the choice of "
     "kernel from the arguments. See OperatorHandle::callBoxedForDispatchKey."},
    {nullptr, nullptr, 0, nullptr},
};

PyMethodDef kModuleMethods[] = {
    {"_call_overload_packet", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(callOverloadPacket)),
     METH_FASTCALL,
     "_call_overload_packet(name, overloads, args, kwargs): calls the first operator of the tuple `overloads` "
     "whose schema the arguments bind to; TypeError listing every candidate if none does."},
    {"_jit_resolve_packet", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(resolvePacket)),
     METH_VARARGS | METH_KEYWORDS,
     "_jit_resolve_packet(qualname, *args, **kwargs) -> the name of the overload of `qualname` a packet call "
     "with these arguments would pick ('default' for the unnamed one)."},
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
  if (PyModule_AddFunctions(m.ptr(), kModuleMethods) < 0) {
    throw py::error_already_set();
  }
}

} // namespace opdispatch::python
