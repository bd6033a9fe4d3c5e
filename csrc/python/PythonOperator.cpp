// The callable base classes of OpOverload (_DispatchOperator) and
// OpOverloadPacket (_DispatchPacket): vectorcall entry points into the one
// call path (csrc/python/PythonCall.h), and overload resolution for packets
// (Note [Overload resolution]).
#include "PythonOperator.h"

#include <structmember.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <opdispatch/core/Exception.h>
#include <opdispatch/dispatch/Dispatcher.h>
#include <opdispatch/dispatch/LocalDispatchKeySet.h>

#include "DispatchKeyCaster.h"
#include "Exceptions.h"
#include "IValueConversion.h"
#include "PythonCall.h"
#include "StaticType.h"

namespace py = pybind11;

namespace opdispatch::python {

namespace {

struct OperatorObject {
  PyObject_HEAD vectorcallfunc vectorcall;
  /// The operator (a counted handle, see Note [Kernel lifetime]); null until __init__ ran.
  OperatorHandle* handle;
  PyObject* dict;
  PyObject* weakrefs;
};

struct PacketObject {
  PyObject_HEAD vectorcallfunc vectorcall;
  PyObject* dict;
  PyObject* weakrefs;
  /// `_qualified_op_name`: "ns::op".
  PyObject* name;
  /// `_overload_ops`: the tuple of OpOverloads a call chooses from.
  PyObject* overloads;
  /// `_generation`: the registration generation `overloads` was read at.
  long long generation;
};

PyTypeObject gOperatorType = staticTypeObject();
PyTypeObject gPacketType = staticTypeObject();

const OperatorHandle& handleOf(PyObject* self) {
  const OperatorHandle* h = reinterpret_cast<OperatorObject*>(self)->handle;
  OPDISPATCH_CHECK(h != nullptr, "this operator object was not initialised (call _DispatchOperator.__init__)");
  return *h;
}

OperatorEntry& entryOf(PyObject* self) { return handleOf(self).entry(); }

/// A DispatchKey from a DispatchKey object or its name.
DispatchKey toDispatchKey(PyObject* obj) {
  if (PyUnicode_Check(obj)) {
    return parseDispatchKey(utf8String(obj));
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
// defaults). The first that binds is dispatched with the arguments bound while
// checking, so they are converted once. If none binds, a TypeError lists
// every candidate schema with the reason it was rejected; with a single
// candidate its own error is raised unchanged. PyTorch: getOpWithStack in
// torch/csrc/jit/python/pybind_utils.h (its overload order is registration
// order, as ours).

using Candidates = std::vector<std::pair<const OperatorHandle*, const AnnotatedSchema*>>;

/// Binds the call to the first of `candidates` (operators with a schema)
/// that accepts it, into `bound`; returns its index.
size_t bindFirstMatching(const std::string& name, const Candidates& candidates, PyCallArguments call,
                         std::optional<BoundArguments>& bound) {
  OPDISPATCH_CHECK(!candidates.empty(), "no overload of ", name,
                   " is defined (its definitions were removed); define it again or load the library that defines it");
  if (candidates.size() == 1) {
    bound.emplace(*candidates[0].second, call);
    return 0;
  }
  std::string reasons;
  for (size_t i = 0; i < candidates.size(); ++i) {
    try {
      bound.emplace(*candidates[i].second, call);
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

// --- _DispatchOperator ----------------------------------------------------------

PyObject* operatorVectorcall(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  return pythonEntry([&]() -> PyObject* {
    return callFromPython(handleOf(self), {args, static_cast<size_t>(PyVectorcall_NARGS(nargsf)), kwnames})
        .release()
        .ptr();
  });
}

PyObject* operatorNew(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  PyObject* self = PyType_GenericNew(type, args, kwargs);
  if (self != nullptr) {
    reinterpret_cast<OperatorObject*>(self)->vectorcall = operatorVectorcall;
  }
  return self;
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
    auto* obj = reinterpret_cast<OperatorObject*>(self);
    auto handle = std::make_unique<OperatorHandle>(Dispatcher::singleton().findSchemaOrThrow(name, overload));
    delete obj->handle;
    obj->handle = handle.release();
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
  delete obj->handle;
  obj->handle = nullptr;
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
    return callFromPython(handleOf(self), {args + 1, nargs - 1, kwnames}, &ks).release().ptr();
  });
}

PyObject* methRedispatch(PyObject* self, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  return redispatchImpl(self, args, nargsf, kwnames, false);
}

PyObject* methRedispatchBelowAutograd(PyObject* self, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  return redispatchImpl(self, args, nargsf, kwnames, true);
}

PyObject* methCallForDispatchKey(PyObject* self, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  return pythonEntry([&]() -> PyObject* {
    size_t nargs = static_cast<size_t>(PyVectorcall_NARGS(nargsf));
    OPDISPATCH_CHECK_TYPE(nargs >= 1, "_call_for_dispatch_key(dispatch_key, *args, **kwargs) needs a dispatch key");
    DispatchKey k = toDispatchKey(args[0]);
    OperatorEntry& e = entryOf(self);
    BoundArguments bound(schemaForCall(e), {args + 1, nargs - 1, kwnames});
    Stack stack;
    bound.pushIValues(stack);
    handleOf(self).callBoxedForDispatchKey(k, &stack);
    return popResultsToPython(bound.schema().schema, stack);
  });
}

PyObject* getHandle(PyObject* self, void*) {
  return pythonEntry([&] { return py::cast(handleOf(self)).release().ptr(); });
}

PyObject* getSchema(PyObject* self, void*) {
  return pythonEntry([&] { return py::cast(schemaForCall(entryOf(self)).schema).release().ptr(); });
}

// --- _DispatchPacket ---------------------------------------------------------------

/// Calls the first overload of the packet the arguments bind to (Note [Overload resolution]).
PyObject* callOverloads(PacketObject* p, PyCallArguments call) {
  OPDISPATCH_CHECK_TYPE(p->overloads != nullptr && PyTuple_Check(p->overloads) && p->name != nullptr &&
                            PyUnicode_Check(p->name),
                        "this packet was not initialised: _qualified_op_name must be a str and _overload_ops a "
                        "tuple of operators");
  // Owned for the call: binding runs user code (__index__, __len__), which may refresh the packet and drop the
  // tuple whose operator objects own the handles in `candidates`.
  py::object overloads = py::reinterpret_borrow<py::object>(p->overloads);
  Candidates candidates;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(overloads.ptr()); ++i) {
    PyObject* o = PyTuple_GET_ITEM(overloads.ptr(), i);
    OPDISPATCH_CHECK_TYPE(PyObject_TypeCheck(o, &gOperatorType), "_overload_ops[", i,
                          "] is not an operator object but ", pyTypeName(o));
    const OperatorHandle& h = handleOf(o);
    if (const AnnotatedSchema* s = h.entry().schemaPtr()) {
      candidates.emplace_back(&h, s);
    }
  }
  std::optional<BoundArguments> bound;
  size_t i = bindFirstMatching(utf8String(p->name), candidates, call, bound);
  return callBound(*candidates[i].first, *bound).release().ptr();
}

PyObject* packetVectorcall(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  auto* p = reinterpret_cast<PacketObject*>(self);
  if (p->generation != static_cast<long long>(Dispatcher::singleton().registrationGeneration())) {
    // Overloads were defined or removed since: the Python side re-reads them.
    PyObject* r = PyObject_CallMethod(self, "_refresh", nullptr);
    if (r == nullptr) {
      return nullptr;
    }
    Py_DECREF(r);
  }
  return pythonEntry([&]() -> PyObject* {
    return callOverloads(p, {args, static_cast<size_t>(PyVectorcall_NARGS(nargsf)), kwnames});
  });
}

PyObject* packetNew(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  PyObject* self = PyType_GenericNew(type, args, kwargs);
  if (self != nullptr) {
    auto* p = reinterpret_cast<PacketObject*>(self);
    p->vectorcall = packetVectorcall;
    p->generation = -1;
  }
  return self;
}

void packetDealloc(PyObject* self) {
  auto* p = reinterpret_cast<PacketObject*>(self);
  PyObject_GC_UnTrack(self);
  if (p->weakrefs != nullptr) {
    PyObject_ClearWeakRefs(self);
  }
  Py_CLEAR(p->dict);
  Py_CLEAR(p->name);
  Py_CLEAR(p->overloads);
  Py_TYPE(self)->tp_free(self);
}

int packetTraverse(PyObject* self, visitproc visit, void* arg) {
  auto* p = reinterpret_cast<PacketObject*>(self);
  Py_VISIT(p->dict);
  Py_VISIT(p->overloads);
  return 0;
}

int packetClear(PyObject* self) {
  auto* p = reinterpret_cast<PacketObject*>(self);
  Py_CLEAR(p->dict);
  Py_CLEAR(p->overloads);
  return 0;
}

/// _jit_resolve_packet(qualname, *args, **kwargs) -> the overload name ("default" for ""). PyTorch: same name.
PyObject* resolvePacket(PyObject*, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  return pythonEntry([&]() -> PyObject* {
    size_t nargs = static_cast<size_t>(PyVectorcall_NARGS(nargsf));
    OPDISPATCH_CHECK_TYPE(nargs >= 1 && PyUnicode_Check(args[0]),
                          "_jit_resolve_packet(qualname: str, *args, **kwargs)");
    std::string name = utf8String(args[0]);
    Dispatcher& d = Dispatcher::singleton();
    std::vector<OperatorHandle> handles;
    for (const std::string& overload : d.findOverloadNames(name)) {
      if (auto op = d.findSchema(OperatorName(name, overload))) {
        handles.push_back(std::move(*op));
      }
    }
    Candidates candidates;
    for (const OperatorHandle& h : handles) {
      if (const AnnotatedSchema* s = h.entry().schemaPtr()) {
        candidates.emplace_back(&h, s);
      }
    }
    std::optional<BoundArguments> bound;
    size_t i = bindFirstMatching(name, candidates, {args + 1, nargs - 1, kwnames}, bound);
    const std::string& overload = candidates[i].first->operator_name().overload_name;
    return py::str(overload.empty() ? "default" : overload).release().ptr();
  });
}

// Python subclasses (OpOverload, OpOverloadPacket) get the base's vectorcall
// entry: CPython before 3.12 does not pass Py_TPFLAGS_HAVE_VECTORCALL on to
// classes defined in Python, which would build an args tuple per call.
PyObject* initSubclass(PyObject* cls, PyObject*) {
  auto* type = reinterpret_cast<PyTypeObject*>(cls);
  PyTypeObject* base = PyType_IsSubtype(type, &gPacketType) ? &gPacketType : &gOperatorType;
  if (type->tp_call == base->tp_call) {  // __call__ not overridden
    type->tp_vectorcall_offset = base->tp_vectorcall_offset;
    type->tp_flags |= Py_TPFLAGS_HAVE_VECTORCALL;
    PyType_Modified(type);
  }
  Py_RETURN_NONE;
}

constexpr int kFastcallKeywords = METH_FASTCALL | METH_KEYWORDS;

template <class F>
PyCFunction cfunction(F* f) {
  return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(f));
}

PyMethodDef kOperatorMethods[] = {
    {"redispatch", cfunction(methRedispatch), kFastcallKeywords,
     "redispatch(keyset, *args, **kwargs): calls the kernel for `keyset` (already restricted by the caller)."},
    {"_redispatch_below_autograd", cfunction(methRedispatchBelowAutograd), kFastcallKeywords,
     "_redispatch_below_autograd(keyset, *args, **kwargs): what an Autograd kernel does to run the operator: "
     "redispatch(keyset & _after_autograd_keyset, ...) with the autograd keys excluded for the call "
     "(_AutoDispatchBelowAutograd), in one C call."},
    {"_call_for_dispatch_key", cfunction(methCallForDispatchKey), kFastcallKeywords,
     "_call_for_dispatch_key(dispatch_key, *args, **kwargs): calls the kernel registered at `dispatch_key` (a "
     "DispatchKey or its name; alias keys such as CompositeImplicitAutograd allowed), bypassing the choice of "
     "kernel from the arguments. See OperatorHandle::callBoxedForDispatchKey."},
    {"__init_subclass__", initSubclass, METH_NOARGS | METH_CLASS, "Gives the subclass the vectorcall entry."},
    {nullptr, nullptr, 0, nullptr},
};

PyMethodDef kPacketMethods[] = {
    {"__init_subclass__", initSubclass, METH_NOARGS | METH_CLASS, "Gives the subclass the vectorcall entry."},
    {nullptr, nullptr, 0, nullptr},
};

PyMemberDef kPacketMembers[] = {
    {"_qualified_op_name", T_OBJECT_EX, offsetof(PacketObject, name), 0, "The operator's name, 'ns::op'."},
    {"_overload_ops", T_OBJECT_EX, offsetof(PacketObject, overloads), 0,
     "The OpOverloads a call chooses from, in order (a tuple)."},
    {"_generation", T_LONGLONG, offsetof(PacketObject, generation), 0,
     "The registration generation _overload_ops was read at; a call with another one calls _refresh() first."},
    {nullptr, 0, 0, 0, nullptr},
};

PyMethodDef kModuleMethods[] = {
    {"_jit_resolve_packet", cfunction(resolvePacket), kFastcallKeywords,
     "_jit_resolve_packet(qualname, *args, **kwargs) -> the name of the overload of `qualname` a packet call "
     "with these arguments would pick ('default' for the unnamed one)."},
    {nullptr, nullptr, 0, nullptr},
};

PyGetSetDef kOperatorGetSets[] = {
    {"_handle", getHandle, nullptr, "The _OperatorHandle.", nullptr},
    {"_schema", getSchema, nullptr, "The FunctionSchema.", nullptr},
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyGetSetDef kPacketGetSets[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

/// The slots both callable types share: a garbage-collected, subclassable
/// object with a __dict__, weak references and its vectorcall entry in
/// T::vectorcall.
template <class T>
void initCallableType(PyTypeObject& t, const char* name, const char* doc) {
  t.tp_name = name;
  t.tp_basicsize = sizeof(T);
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL;
  t.tp_doc = doc;
  t.tp_call = PyVectorcall_Call;
  t.tp_vectorcall_offset = offsetof(T, vectorcall);
  t.tp_dictoffset = offsetof(T, dict);
  t.tp_weaklistoffset = offsetof(T, weakrefs);
}

} // namespace

void initOperatorBindings(py::module_& m) {
  PyTypeObject& t = gOperatorType;
  initCallableType<OperatorObject>(t, "opdispatch._C._DispatchOperator",
                                   "_DispatchOperator(name, overload_name=''): calling it dispatches the operator.");
  t.tp_new = operatorNew;
  t.tp_init = operatorInit;
  t.tp_dealloc = operatorDealloc;
  t.tp_traverse = operatorTraverse;
  t.tp_clear = operatorClear;
  t.tp_methods = kOperatorMethods;
  t.tp_getset = kOperatorGetSets;
  addStaticType(m, t, "_DispatchOperator");

  PyTypeObject& p = gPacketType;
  initCallableType<PacketObject>(
      p, "opdispatch._C._DispatchPacket",
      "_DispatchPacket(): calling it calls the first of _overload_ops the arguments bind to.");
  p.tp_new = packetNew;
  p.tp_dealloc = packetDealloc;
  p.tp_traverse = packetTraverse;
  p.tp_clear = packetClear;
  p.tp_methods = kPacketMethods;
  p.tp_members = kPacketMembers;
  p.tp_getset = kPacketGetSets;
  addStaticType(m, p, "_DispatchPacket");

  if (PyModule_AddFunctions(m.ptr(), kModuleMethods) < 0) {
    throw py::error_already_set();
  }
}

} // namespace opdispatch::python
