// The Python key's fallback. See Note [The Python key].
//
// Note [The Python key]
// A call reaches the Python key because a tensor argument carries it (an
// instance of a subclass with __torch_dispatch__, see hasTorchDispatch) or
// because a dispatch mode is set (the thread then includes the key, Note [The
// dispatch mode stack]). The call path knows neither: this fallback is the
// Python key's kernel for every operator, reached like any other kernel, and
// everything below the key is the ordinary dispatcher. A call on plain tensors
// with no mode never carries the key and never comes here. The fallback
//  1. excludes every key above Python while it runs (autograd and the
//     snapshot have done their part; calls made by a handler start below them);
//  2. redispatches below Python if no mode is enabled and no argument carries
//     the key (the key was included by hand): there is nobody to ask;
//  3. converts the arguments to Python as PyTorch does for __torch_dispatch__
//     (the caller's own tensor objects; trailing defaults dropped);
//  4. asks the top mode, popped for the duration (StashTorchDispatchModeGuard),
//     through a rule registered for its type with register_torch_dispatch if
//     there is one, else its __torch_dispatch__(func, types, args, kwargs);
//  5. if there was no mode or it returned NotImplemented, asks each tensor
//     subclass among the arguments, subclasses before their bases and
//     otherwise in argument order (PyTorch: append_overloaded_arg), a
//     registered rule first, until one returns something else; `types` are
//     those classes in that order;
//  6. raises TypeError naming every handler if all returned NotImplemented,
//     else checks the result against the schema's returns and pushes it.
// Python exceptions raised by a handler pass through unchanged. A Python call
// takes the same steps on its bound objects (pythonFallbackForPythonCall, and
// pythonTLSSnapshotForPythonCall for the PythonTLSSnapshot key in front: Note
// [Python call entries]): the handler gets the caller's objects and its
// result goes back to the caller without IValues in between.
#include "PythonFallbackKernel.h"

#include <structmember.h>

#include <algorithm>
#include <array>
#include <string>
#include <unordered_map>

#include <opdispatch/core/Exception.h>
#include <opdispatch/core/SmallVector.h>
#include <opdispatch/dispatch/Dispatcher.h>
#include <opdispatch/dispatch/LocalDispatchKeySet.h>
#include <opdispatch/dispatch/PythonTLSSnapshot.h>

#include "ContextManager.h"
#include "IValueConversion.h"
#include "PythonCall.h"
#include "PythonTensor.h"
#include "TorchDispatchModeTLS.h"

namespace py = pybind11;

namespace opdispatch::python {

namespace {

/// Every key above Python. PyTorch: the complement of after_Python_keyset.
constexpr DispatchKeySet kAbovePython = DispatchKeySet(DispatchKeySet::FULL) -
                                        (DispatchKeySet(DispatchKeySet::FULL_AFTER, DispatchKey::Python) |
                                         DispatchKeySet(DispatchKey::Python));

/// _C._disabled_torch_dispatch_impl (opdispatch.Tensor.__torch_dispatch__).
PyObject* gDisabledImpl = nullptr;
/// {"ns::op[.overload]": {class: rule}} of register_torch_dispatch (set by
/// opdispatch.utils._python_dispatch), or null.
PyObject* gRules = nullptr;
/// Interned "__torch_dispatch__".
PyObject* gTorchDispatchName = nullptr;

} // namespace

py::object opOverload(const OperatorHandle& op) {
  struct Cache {
    uint64_t generation = 0;
    std::unordered_map<const OperatorEntry*, py::object> overloads;
    py::object resolve;
  };
  static Cache* cache = new Cache();  // never freed: it holds Python objects past finalisation
  uint64_t generation = Dispatcher::singleton().registrationGeneration();
  if (generation != cache->generation) {
    cache->overloads.clear();
    cache->generation = generation;
  }
  auto it = cache->overloads.find(&op.entry());
  if (it != cache->overloads.end()) {
    return it->second;
  }
  if (!cache->resolve) {
    cache->resolve = py::module_::import("opdispatch._ops").attr("_resolve_opoverload");
  }
  const OperatorName& name = op.operator_name();
  py::object overload = cache->resolve(name.name, name.overload_name);
  return cache->overloads.emplace(&op.entry(), std::move(overload)).first->second;
}

namespace {

bool carriesPythonKey(const TensorImpl* t) { return t->key_set().has(DispatchKey::Python); }

/// Whether a tensor among the `n` values on top of `stack` carries the Python key.
bool anyArgumentCarriesPythonKey(const Stack& stack, size_t n) {
  for (size_t i = stack.size() - n; i < stack.size(); ++i) {
    const IValue& v = stack[i];
    if (v.isTensor()) {
      if (carriesPythonKey(v.toTensor().unsafeGetTensorImpl())) {
        return true;
      }
    } else if (v.isTensorList()) {
      for (const Tensor& t : v.toTensorList()) {
        if (carriesPythonKey(t.unsafeGetTensorImpl())) {
          return true;
        }
      }
    } else if (v.isOptionalTensorList()) {
      for (const auto& t : v.toOptionalTensorList()) {
        if (t && t->defined() && carriesPythonKey(t->unsafeGetTensorImpl())) {
          return true;
        }
      }
    }
  }
  return false;
}

/// The tensor arguments whose class handles dispatch, in the order their classes are asked.
using Overloaded = SmallVector<PyObject*, 4>;

/// Adds `obj` (a tensor with the Python key) to `out` unless its class is
/// there; before the first class it is a subclass of. PyTorch: append_overloaded_arg.
void appendOverloaded(Overloaded& out, PyObject* obj) {
  PyTypeObject* type = Py_TYPE(obj);
  size_t at = out.size();
  for (size_t j = 0; j < out.size(); ++j) {
    if (Py_TYPE(out[j]) == type) {
      return;
    }
    if (at == out.size() && PyType_IsSubtype(type, Py_TYPE(out[j]))) {
      at = j;
    }
  }
  out.push_back(obj);
  std::rotate(out.begin() + at, out.end() - 1, out.end());
}

void collectOverloaded(PyObject* value, Overloaded& out) {
  if (isTensor(value)) {
    if (carriesPythonKey(unpackImpl(value))) {
      appendOverloaded(out, value);
    }
  } else if (PyList_Check(value) || PyTuple_Check(value)) {
    PyObject* seq = value;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject** items = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t i = 0; i < n; ++i) {
      if (isTensor(items[i]) && carriesPythonKey(unpackImpl(items[i]))) {
        appendOverloaded(out, items[i]);
      }
    }
  }
}

/// The rule register_torch_dispatch registered for (func, cls), or null (borrowed).
PyObject* findRule(const OperatorHandle& op, PyObject* cls) {
  if (gRules == nullptr || PyDict_GET_SIZE(gRules) == 0) {
    return nullptr;
  }
  const OperatorName& name = op.operator_name();
  std::string key = name.overload_name.empty() ? name.name : name.name + "." + name.overload_name;
  PyObject* rules = PyDict_GetItemString(gRules, key.c_str());
  return rules != nullptr && PyDict_Check(rules) ? PyDict_GetItem(rules, cls) : nullptr;
}

/// Calls fn([first,] func, types, args, kwargs); new reference, throws on error.
py::object callHandler(PyObject* fn, PyObject* first, PyObject* func, PyObject* types, PyObject* args,
                       PyObject* kwargs) {
  // argv[0] stays free for the callee (PY_VECTORCALL_ARGUMENTS_OFFSET): a bound method puts its self there.
  PyObject* argv[6] = {nullptr, first, func, types, args, kwargs};
  PyObject* const* start = first ? argv + 1 : argv + 2;
  size_t nargs = (first ? 5 : 4) | PY_VECTORCALL_ARGUMENTS_OFFSET;
  PyObject* r = PyObject_Vectorcall(fn, start, nargs, nullptr);
  if (r == nullptr) {
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::object>(r);
}

/// Where a classmethod object keeps its function: the offset CPython's own
/// `classmethod.__func__` member descriptor reads, or -1 if that is not a
/// plain object member (then __func__ is read as an attribute).
Py_ssize_t classmethodFunctionOffset() {
  static const Py_ssize_t offset = [] {
    PyObject* name = PyUnicode_InternFromString("__func__");
    PyObject* descr = name != nullptr ? _PyType_Lookup(&PyClassMethod_Type, name) : nullptr;
    Py_XDECREF(name);
    PyErr_Clear();
    if (descr == nullptr || !Py_IS_TYPE(descr, &PyMemberDescr_Type)) {
      return Py_ssize_t{-1};
    }
    const PyMemberDef* member = reinterpret_cast<PyMemberDescrObject*>(descr)->d_member;
    return member->type == T_OBJECT || member->type == T_OBJECT_EX ? member->offset : Py_ssize_t{-1};
  }();
  return offset;
}

/// The Python function of `attr` if it is a classmethod of one, else null.
/// Binding such a classmethod to a class gives a method calling the function
/// with the class first; calling the function so skips the method object.
/// Read at each call, as PyTorch reads __torch_dispatch__ at each call: a
/// classmethod re-initialised in place (`cm.__init__(f)`) has a new function.
py::object classmethodFunction(PyObject* attr) {
  if (Py_TYPE(attr) != &PyClassMethod_Type) {
    return {};
  }
  PyObject* function = nullptr;
  if (Py_ssize_t offset = classmethodFunctionOffset(); offset >= 0) {
    function = *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(attr) + offset);
    Py_XINCREF(function);
  } else {
    function = PyObject_GetAttrString(attr, "__func__");
    if (function == nullptr) {
      PyErr_Clear();
    }
  }
  if (function == nullptr || !PyFunction_Check(function)) {
    Py_XDECREF(function);
    return {};
  }
  return py::reinterpret_steal<py::object>(function);
}

py::object dispatchOnMode(const OperatorHandle& op, PyObject* func, PyObject* types, PyObject* args, PyObject* kwargs,
                          py::object& mode_out) {
  StashTorchDispatchModeGuard stash;
  const py::object& mode = stash.mode();
  mode_out = mode;
  if (PyObject* rule = findRule(op, reinterpret_cast<PyObject*>(Py_TYPE(mode.ptr())))) {
    return callHandler(rule, mode.ptr(), func, types, args, kwargs);
  }
  py::object handler = py::reinterpret_steal<py::object>(PyObject_GetAttr(mode.ptr(), gTorchDispatchName));
  if (!handler) {
    throw py::error_already_set();
  }
  OPDISPATCH_CHECK(PyMethod_Check(handler.ptr()) && PyMethod_GET_SELF(handler.ptr()) == mode.ptr(),
                   "Defining your mode's `__torch_dispatch__` as a classmethod is not supported, please make it "
                   "a plain method (mode ",
                   py::repr(mode).cast<std::string>(), ")");
  return callHandler(handler.ptr(), nullptr, func, types, args, kwargs);
}

py::object dispatchOnSubclasses(const OperatorHandle& op, const Overloaded& overloaded, PyObject* func, PyObject* types,
                                PyObject* args, PyObject* kwargs) {
  py::object ret;
  for (PyObject* arg : overloaded) {
    PyObject* cls = reinterpret_cast<PyObject*>(Py_TYPE(arg));
    // The class attribute (a classmethod, PyTorch's convention), bound as getattr(arg, name) would bind it;
    // tensor instances do not override it (PyTorch looks it up on the instance too).
    PyObject* attr = _PyType_Lookup(Py_TYPE(arg), gTorchDispatchName);
    if (attr == nullptr || attr == gDisabledImpl) {
      continue;
    }
    py::object keep = py::reinterpret_borrow<py::object>(attr);  // a rule may change the class
    if (PyObject* rule = findRule(op, cls)) {
      ret = callHandler(rule, cls, func, types, args, kwargs);
      if (ret.ptr() != Py_NotImplemented) {
        break;
      }
    }
    if (py::object function = classmethodFunction(attr)) {
      ret = callHandler(function.ptr(), cls, func, types, args, kwargs);
    } else {
      descrgetfunc bind = Py_TYPE(attr)->tp_descr_get;
      py::object handler = bind ? py::reinterpret_steal<py::object>(bind(attr, arg, cls)) : keep;
      if (!handler) {
        throw py::error_already_set();
      }
      ret = callHandler(handler.ptr(), nullptr, func, types, args, kwargs);
    }
    if (ret.ptr() != Py_NotImplemented) {
      break;
    }
  }
  return ret;
}

[[noreturn]] void throwAllNotImplemented(PyObject* func, const py::object& mode, const Overloaded& overloaded) {
  py::handle f(func);
  std::string msg = detail::str("Multiple dispatch failed for '", py::str(f.attr("__module__")).cast<std::string>(),
                                ".", py::str(f.attr("__name__")).cast<std::string>(),
                                "'; all __torch_dispatch__ handlers returned NotImplemented:\n\n");
  if (mode) {
    msg += "  - mode object " + py::repr(mode).cast<std::string>() + "\n";
  }
  for (PyObject* arg : overloaded) {
    msg += "  - tensor subclass " + py::repr(reinterpret_cast<PyObject*>(Py_TYPE(arg))).cast<std::string>() + "\n";
  }
  msg += "\nA handler returns NotImplemented to let the next one try; one of them must handle the call.";
  throw TypeError(msg);
}

/// Holds the GIL for its scope, taking it only if this thread does not hold it.
class GilHeld {
 public:
  GilHeld() : taken_(!PyGILState_Check()) {
    if (taken_) {
      state_ = PyGILState_Ensure();
    }
  }
  GilHeld(const GilHeld&) = delete;
  GilHeld& operator=(const GilHeld&) = delete;
  ~GilHeld() {
    if (taken_) {
      PyGILState_Release(state_);
    }
  }

 private:
  bool taken_;
  PyGILState_STATE state_{};
};

/// The `types` handlers receive: the classes of `overloaded`, in order. A
/// call on one subclass reuses the tuple of the previous such call if it
/// was for the same class (tuples are immutable; one class is kept alive).
py::tuple typesOf(const Overloaded& overloaded) {
  static PyObject* last = nullptr;  // (cls,) of the last call on one subclass; never freed
  if (overloaded.size() == 1 && last != nullptr &&
      PyTuple_GET_ITEM(last, 0) == reinterpret_cast<PyObject*>(Py_TYPE(overloaded[0]))) {
    return py::reinterpret_borrow<py::tuple>(last);
  }
  py::tuple types(overloaded.size());
  for (size_t i = 0; i < overloaded.size(); ++i) {
    PyObject* cls = reinterpret_cast<PyObject*>(Py_TYPE(overloaded[i]));
    Py_INCREF(cls);
    PyTuple_SET_ITEM(types.ptr(), static_cast<Py_ssize_t>(i), cls);
  }
  if (overloaded.size() == 1) {
    PyObject* old = last;
    last = types.inc_ref().ptr();
    Py_XDECREF(old);
  }
  return types;
}

/// Steps 4-6 of Note [The Python key] for the call of `op` with `args` and
/// `kwargs` (`mode_enabled`: dispatchModeEnabled()): the result of the
/// handler that took the call (not yet checked against the schema's returns).
py::object callHandlers(const OperatorHandle& op, const py::tuple& args, const py::dict& kwargs, bool mode_enabled) {
  Overloaded overloaded;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args.ptr()); ++i) {
    collectOverloaded(PyTuple_GET_ITEM(args.ptr(), i), overloaded);
  }
  Py_ssize_t pos = 0;
  PyObject* key = nullptr;
  PyObject* value = nullptr;
  while (PyDict_Next(kwargs.ptr(), &pos, &key, &value)) {
    collectOverloaded(value, overloaded);
  }
  py::tuple types = typesOf(overloaded);
  py::object func = opOverload(op);
  py::object ret;
  py::object mode;
  if (mode_enabled) {
    ret = dispatchOnMode(op, func.ptr(), types.ptr(), args.ptr(), kwargs.ptr(), mode);
  }
  if (!ret || ret.ptr() == Py_NotImplemented) {
    py::object sub = dispatchOnSubclasses(op, overloaded, func.ptr(), types.ptr(), args.ptr(), kwargs.ptr());
    if (sub) {
      ret = std::move(sub);
    }
  }
  if (!ret || ret.ptr() == Py_NotImplemented) {
    throwAllNotImplemented(func.ptr(), mode, overloaded);
  }
  return ret;
}

constexpr const char* kHandlerResult = "__torch_dispatch__ handler";
constexpr DispatchKeySet kBelowPython(DispatchKeySet::FULL_AFTER, DispatchKey::Python);

void pythonFallback(const OperatorHandle& op, DispatchKeySet ks, Stack* stack) {
  ExcludeDispatchKeyGuard below_python(kAbovePython);
  const FunctionSchema& schema = op.schema();
  GilHeld gil;
  const bool mode_enabled = dispatchModeEnabled();
  if (!mode_enabled && !anyArgumentCarriesPythonKey(*stack, schema.arguments().size())) {
    py::gil_scoped_release nogil;
    op.redispatchBoxed(ks & kBelowPython, stack);
    return;
  }
  auto [args, kwargs] = popArgumentsToPython(schemaForCall(op.entry()), *stack);
  py::object ret = callHandlers(op, args, kwargs, mode_enabled);
  pushPythonResults(schema, ret.ptr(), kHandlerResult, *stack);
}

/// pythonFallback for a Python call (Note [Python call entries]): the same
/// steps on the bound objects. The GIL is held.
py::object pythonFallbackForPythonCall(const OperatorHandle& op, DispatchKeySet ks, BoundArguments& bound) {
  ExcludeDispatchKeyGuard below_python(kAbovePython);
  const bool mode_enabled = dispatchModeEnabled();
  if (!mode_enabled && !bound.keySet().has(DispatchKey::Python)) {
    const DispatchKeySet below = ks & kBelowPython;
    return callBound(op, bound, &below);
  }
  auto [args, kwargs] = argumentsToPython(bound);
  return checkedPythonResult(bound.schema().schema, callHandlers(op, args, kwargs, mode_enabled), kHandlerResult);
}

/// pythonTLSSnapshotFallback for a Python call (Note [Python call entries]).
py::object pythonTLSSnapshotForPythonCall(const OperatorHandle& op, DispatchKeySet ks, BoundArguments& bound) {
  PythonTLSSnapshotScope scope;
  const DispatchKeySet below = ks & DispatchKeySet(DispatchKeySet::FULL_AFTER, DispatchKey::PythonTLSSnapshot);
  return callBound(op, bound, &below);
}

} // namespace

bool hasTorchDispatch(PyObject* cls) {
  if (gDisabledImpl == nullptr || !PyType_Check(cls)) {
    return false;
  }
  // The class attribute itself (borrowed; no binding of the classmethod): PyTorch: check_has_torch_dispatch.
  PyObject* attr = _PyType_Lookup(reinterpret_cast<PyTypeObject*>(cls), gTorchDispatchName);
  return attr != nullptr && attr != gDisabledImpl;
}

void initPythonFallbackBindings(py::module_& m) {
  gTorchDispatchName = PyUnicode_InternFromString("__torch_dispatch__");
  py::cpp_function disabled(
      [](py::handle func, py::handle, py::handle args, py::handle kwargs) {
        OPDISPATCH_CHECK_TYPE(PyTuple_Check(args.ptr()) || PyList_Check(args.ptr()),
                              "_disabled_torch_dispatch_impl: args must be a tuple or list, not ",
                              pyTypeName(args.ptr()));
        OPDISPATCH_CHECK_TYPE(kwargs.is_none() || PyDict_Check(kwargs.ptr()),
                              "_disabled_torch_dispatch_impl: kwargs must be a dict or None");
        // Runs below the Python key: as a redispatch after it would (PyTorch's approximation too).
        ExcludeDispatchKeyGuard below_python(kAbovePython | DispatchKeySet(DispatchKey::Python));
        py::tuple positional = py::reinterpret_steal<py::tuple>(PySequence_Tuple(args.ptr()));
        PyObject* r = PyObject_Call(func.ptr(), positional.ptr(), kwargs.is_none() ? nullptr : kwargs.ptr());
        if (r == nullptr) {
          throw py::error_already_set();
        }
        return py::reinterpret_steal<py::object>(r);
      },
      py::name("_disabled_torch_dispatch_impl"), py::arg("func"), py::arg("types"), py::arg("args") = py::tuple(),
      py::arg("kwargs") = py::none(),
      "opdispatch.Tensor.__torch_dispatch__, the marker of a class that does not handle dispatch: called (e.g. "
      "by super().__torch_dispatch__), it runs func(*args, **kwargs) with the Python key and the keys above it "
      "excluded. PyTorch: torch._C._disabled_torch_dispatch_impl.");
  gDisabledImpl = disabled.release().ptr();
  m.attr("_disabled_torch_dispatch_impl") = py::handle(gDisabledImpl);
  m.def(
      "_set_torch_dispatch_rules",
      [](py::object rules) {
        OPDISPATCH_CHECK_TYPE(PyDict_Check(rules.ptr()), "_set_torch_dispatch_rules needs a dict");
        PyObject* old = gRules;
        gRules = rules.release().ptr();
        Py_XDECREF(old);
      },
      py::arg("rules"), "Sets the registry of register_torch_dispatch rules: {'ns::op[.overload]': {class: rule}}.");
  bindContextManager<RestorePythonTLSSnapshot>(
      m, "_RestorePythonTLSSnapshot",
      "with _RestorePythonTLSSnapshot(): inside __torch_dispatch__, runs the block with the dispatch key sets "
      "this thread had when the call entered the dispatcher. RuntimeError outside one. PyTorch: same name.");
  // Kept for the life of the process (never deregistered, like PyTorch's TORCH_LIBRARY_IMPL(_, Python, m)).
  KernelFunction fallback = KernelFunction::makeFromBoxedFunctionWithKeyset<&pythonFallback>();
  setPythonCallEntry(fallback.ref().boxedFunction(), &pythonFallbackForPythonCall);
  setPythonCallEntry(pythonTLSSnapshotFallbackKernel().ref().boxedFunction(), &pythonTLSSnapshotForPythonCall);
  new RegistrationHandleRAII(Dispatcher::singleton().registerFallback(
      DispatchKey::Python, std::move(fallback), "Python key fallback (csrc/python/PythonFallbackKernel.cpp)"));
}

} // namespace opdispatch::python
