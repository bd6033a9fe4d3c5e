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
// Python exceptions raised by a handler pass through unchanged.
#include "PythonFallbackKernel.h"

#include <string>
#include <unordered_map>
#include <vector>

#include <opdispatch/core/Exception.h>
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

py::handle opOverload(const OperatorHandle& op) {
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

/// Adds `obj` (a tensor with the Python key) to `out` unless its class is
/// there; before the first class it is a subclass of. PyTorch: append_overloaded_arg.
void appendOverloaded(std::vector<PyObject*>& out, PyObject* obj) {
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
  out.insert(out.begin() + static_cast<std::ptrdiff_t>(at), obj);
}

void collectOverloaded(PyObject* value, std::vector<PyObject*>& out) {
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

/// Calls fn(*prefix, func, types, args, kwargs) (prefix: 0 or 1 objects); new reference, throws on error.
py::object callHandler(PyObject* fn, PyObject* prefix, PyObject* func, PyObject* types, PyObject* args,
                       PyObject* kwargs) {
  PyObject* argv[5] = {prefix, func, types, args, kwargs};
  PyObject* const* start = prefix ? argv : argv + 1;
  PyObject* r = PyObject_Vectorcall(fn, start, prefix ? 5 : 4, nullptr);
  if (r == nullptr) {
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::object>(r);
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

py::object dispatchOnSubclasses(const OperatorHandle& op, const std::vector<PyObject*>& overloaded, PyObject* func,
                                PyObject* types, PyObject* args, PyObject* kwargs) {
  py::object ret;
  for (PyObject* arg : overloaded) {
    PyObject* cls = reinterpret_cast<PyObject*>(Py_TYPE(arg));
    // The class attribute (a classmethod, PyTorch's convention), bound as getattr(arg, name) would bind it;
    // tensor instances do not override it (PyTorch looks it up on the instance too).
    PyObject* attr = _PyType_Lookup(Py_TYPE(arg), gTorchDispatchName);
    if (attr == nullptr || attr == gDisabledImpl) {
      continue;
    }
    descrgetfunc bind = Py_TYPE(attr)->tp_descr_get;
    py::object handler = bind ? py::reinterpret_steal<py::object>(bind(attr, arg, cls))
                              : py::reinterpret_borrow<py::object>(attr);
    if (!handler) {
      throw py::error_already_set();
    }
    if (PyObject* rule = findRule(op, cls)) {
      ret = callHandler(rule, cls, func, types, args, kwargs);
      if (ret.ptr() != Py_NotImplemented) {
        break;
      }
    }
    ret = callHandler(handler.ptr(), nullptr, func, types, args, kwargs);
    if (ret.ptr() != Py_NotImplemented) {
      break;
    }
  }
  return ret;
}

[[noreturn]] void throwAllNotImplemented(PyObject* func, const py::object& mode,
                                         const std::vector<PyObject*>& overloaded) {
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

void pythonFallback(const OperatorHandle& op, DispatchKeySet ks, Stack* stack) {
  ExcludeDispatchKeyGuard below_python(kAbovePython);
  const FunctionSchema& schema = op.schema();
  GilHeld gil;
  if (!dispatchModeEnabled() && !anyArgumentCarriesPythonKey(*stack, schema.arguments().size())) {
    py::gil_scoped_release nogil;
    op.redispatchBoxed(ks & DispatchKeySet(DispatchKeySet::FULL_AFTER, DispatchKey::Python), stack);
    return;
  }
  auto [args, kwargs] = popArgumentsToPython(schemaForCall(op.entry()), *stack);
  std::vector<PyObject*> overloaded;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args.ptr()); ++i) {
    collectOverloaded(PyTuple_GET_ITEM(args.ptr(), i), overloaded);
  }
  Py_ssize_t pos = 0;
  PyObject* key = nullptr;
  PyObject* value = nullptr;
  while (PyDict_Next(kwargs.ptr(), &pos, &key, &value)) {
    collectOverloaded(value, overloaded);
  }
  py::tuple types(overloaded.size());
  for (size_t i = 0; i < overloaded.size(); ++i) {
    types[i] = py::handle(reinterpret_cast<PyObject*>(Py_TYPE(overloaded[i])));
  }
  py::handle func = opOverload(op);
  py::object ret;
  py::object mode;
  if (dispatchModeEnabled()) {
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
  pushPythonResults(schema, ret.ptr(), "__torch_dispatch__ handler", *stack);
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
  new RegistrationHandleRAII(Dispatcher::singleton().registerFallback(
      DispatchKey::Python, KernelFunction::makeFromBoxedFunctionWithKeyset<&pythonFallback>(),
      "Python key fallback (csrc/python/PythonFallbackKernel.cpp)"));
}

} // namespace opdispatch::python
