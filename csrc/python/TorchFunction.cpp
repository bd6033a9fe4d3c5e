// The function layer: the TorchFunctionMode stack, the override check, and
// _C._Overridable. See Note [The function layer].
#include "TorchFunction.h"

#include <cstdint>
#include <vector>

#include <opdispatch/core/Exception.h>
#include <opdispatch/core/PyInterpreter.h>

#include "ContextManager.h"
#include "IValueConversion.h"
#include "PythonTensor.h"
#include "PythonTypes.h"
#include "StaticType.h"

namespace py = pybind11;

namespace opdispatch::python {

// Note [The function layer]
// Public functions (opdispatch.add) and Tensor methods and properties
// (Tensor.add, Tensor.grad.__get__) sit above the dispatcher, as in PyTorch's
// torch.overrides: before any operator runs, a call whose arguments include
// an object with __torch_function__ (a tensor subclass that does not set it
// to _disabled_torch_function_impl, or any duck-typed object), or made while
// a TorchFunctionMode is on this thread's stack, is handed to
// opdispatch.overrides.handle_torch_function with the public object as
// `func`. Only then does the dispatcher run (autograd, the Python key,
// backends).
//
// Each such public object is an _Overridable wrapping the Python function
// that states it. Its call is made from C: on plain arguments (objects of
// opdispatch.Tensor itself and Python scalars need no attribute lookup) with
// no mode it calls the Python function, or, when every argument is a plain
// tensor passed positionally and their number is `fast_nargs`, the
// `fast` callable (the operator the Python body would call) directly, with no
// Python frame at all. So the check costs the plain path a type test per
// argument and a thread-local read, while the hottest methods lose their
// frame (callgrind, instructions per call on 8x8 float32 tensors, before ->
// after: x + y 8429 -> 7608, x.sum() 16187 -> 15226, x.mm(w) 9735 -> 9379,
// x.sin() 7638 -> 7417; with grad, x + y 17399 -> 16493). A method descriptor (Py_TPFLAGS_METHOD_DESCRIPTOR),
// so `x.sin()` and `x + y` call it unbound, with no bound-method object.
//
// PyTorch makes the same check in C++ (check_has_torch_function) in each
// generated binding; the state is per thread (PythonTorchFunctionTLS).

namespace {

enum class TorchFunctionState : uint8_t { kEnabled, kSubclassesDisabled, kAllDisabled };

/// This thread's modes, bottom first. Released with the GIL taken when the thread ends (OwnedPyObject).
thread_local std::vector<OwnedPyObject> tf_modes;
/// tf_modes.size(), read on every call of an _Overridable (a trivially initialised thread_local).
thread_local size_t tf_mode_count = 0;
thread_local TorchFunctionState tf_state = TorchFunctionState::kEnabled;

PyObject* gTorchFunctionName = nullptr;
/// _C._disabled_torch_function_impl (owned for the process's life).
PyObject* gDisabledImpl = nullptr;
/// opdispatch.overrides._handle_overridable(public, args, kwargs), set at its import.
PyObject* gHandler = nullptr;

/// Whether objects of `type` never override: Python's scalars, None, strings.
bool isBasicType(PyTypeObject* type) {
  return type == &PyLong_Type || type == &PyFloat_Type || type == &PyBool_Type || type == Py_TYPE(Py_None) ||
         type == &PyUnicode_Type || type == &PyComplex_Type;
}

/// Whether the class's __torch_function__ (the attribute itself, not bound) is an override.
bool typeOverrides(PyTypeObject* type) {
  PyObject* attr = _PyType_Lookup(type, gTorchFunctionName);
  return attr != nullptr && attr != gDisabledImpl;
}

bool objectOverrides(PyObject* obj) {
  PyTypeObject* type = Py_TYPE(obj);
  return type != gTensorClass && !isBasicType(type) && typeOverrides(type);
}

} // namespace

bool torchFunctionModeEnabled() { return tf_mode_count != 0 && tf_state != TorchFunctionState::kAllDisabled; }

bool hasTorchFunction(PyObject* obj) { return tf_state == TorchFunctionState::kEnabled && objectOverrides(obj); }

namespace {

struct OverridableObject {
  PyObject_HEAD vectorcallfunc vectorcall;
  PyObject* func;        ///< the Python function stating the public function
  PyObject* fast;        ///< called instead on `fast_nargs` plain positional tensors, or null
  PyObject* public_api;  ///< what handlers receive as `func` (null: this object)
  PyObject* dict;
  Py_ssize_t fast_nargs;
};

PyTypeObject gOverridableType = staticTypeObject();

/// hasTorchFunction for an argument of an _Overridable call: a list or tuple
/// argument counts if one of its items does (the tensors of cat(tensors)).
bool argumentHasTorchFunction(PyObject* arg) {
  PyTypeObject* type = Py_TYPE(arg);
  if (type != &PyTuple_Type && type != &PyList_Type) {
    return hasTorchFunction(arg);
  }
  PyObject** items = PySequence_Fast_ITEMS(arg);
  for (Py_ssize_t i = 0, n = PySequence_Fast_GET_SIZE(arg); i < n; ++i) {
    if (hasTorchFunction(items[i])) {
      return true;
    }
  }
  return false;
}

/// Hands the call to opdispatch.overrides._handle_overridable.
PyObject* handleCall(OverridableObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  if (gHandler == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "the function layer's handler is not set (import opdispatch.overrides)");
    return nullptr;
  }
  py::tuple positional = py::reinterpret_steal<py::tuple>(PyTuple_New(nargs));
  if (!positional) {
    return nullptr;
  }
  for (Py_ssize_t i = 0; i < nargs; ++i) {
    Py_INCREF(args[i]);
    PyTuple_SET_ITEM(positional.ptr(), i, args[i]);
  }
  py::dict keywords;
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t k = 0; k < nkw; ++k) {
    if (PyDict_SetItem(keywords.ptr(), PyTuple_GET_ITEM(kwnames, k), args[nargs + k]) < 0) {
      return nullptr;
    }
  }
  PyObject* api = self->public_api ? self->public_api : reinterpret_cast<PyObject*>(self);
  PyObject* call_args[] = {api, positional.ptr(), keywords.ptr()};
  return PyObject_Vectorcall(gHandler, call_args, 3, nullptr);
}

PyObject* overridableCall(PyObject* callable, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  auto* self = reinterpret_cast<OverridableObject*>(callable);
  Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if (torchFunctionModeEnabled()) {
    return handleCall(self, args, nargs, kwnames);
  }
  bool plain_tensors = kwnames == nullptr;
  for (Py_ssize_t i = 0; i < nargs; ++i) {
    if (Py_TYPE(args[i]) != gTensorClass) {
      plain_tensors = false;
      if (argumentHasTorchFunction(args[i])) {
        return handleCall(self, args, nargs, kwnames);
      }
    }
  }
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t k = 0; k < nkw; ++k) {
    if (argumentHasTorchFunction(args[nargs + k])) {
      return handleCall(self, args, nargs, kwnames);
    }
  }
  if (plain_tensors && nargs == self->fast_nargs) {
    return PyObject_Vectorcall(self->fast, args, nargsf, nullptr);
  }
  return PyObject_Vectorcall(self->func, args, nargsf, kwnames);
}

/// `Tensor.add` (no instance) is the object itself; `x.add` a bound method.
PyObject* overridableGet(PyObject* self, PyObject* obj, PyObject*) {
  if (obj == nullptr || obj == Py_None) {
    Py_INCREF(self);
    return self;
  }
  return PyMethod_New(self, obj);
}

PyObject* overridableNew(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  PyObject* func = nullptr;
  PyObject* fast = Py_None;
  Py_ssize_t fast_nargs = -1;
  static const char* names[] = {"func", "fast", "fast_nargs", nullptr};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$On:_Overridable", const_cast<char**>(names), &func, &fast,
                                   &fast_nargs)) {
    return nullptr;
  }
  if (!PyCallable_Check(func) || (fast != Py_None && !PyCallable_Check(fast))) {
    PyErr_SetString(PyExc_TypeError,
                    "_Overridable(func, *, fast=None, fast_nargs=-1): func and fast must be "
                    "callable");
    return nullptr;
  }
  if (fast == Py_None ? fast_nargs != -1 : fast_nargs < 1) {
    PyErr_SetString(PyExc_ValueError,
                    "_Overridable: fast_nargs is the number of tensors `fast` takes (>= 1), "
                    "given exactly when fast is");
    return nullptr;
  }
  auto* self = reinterpret_cast<OverridableObject*>(type->tp_alloc(type, 0));
  if (self == nullptr) {
    return nullptr;
  }
  self->vectorcall = overridableCall;
  Py_INCREF(func);
  self->func = func;
  if (fast != Py_None) {
    Py_INCREF(fast);
    self->fast = fast;
  }
  self->fast_nargs = fast_nargs;
  return reinterpret_cast<PyObject*>(self);
}

/// `<function Tensor.sin>`, as the Python function's repr without its address.
PyObject* overridableRepr(PyObject* self) {
  static PyObject* qualname = PyUnicode_InternFromString("__qualname__");
  py::object name = py::reinterpret_steal<py::object>(
      PyObject_GetAttr(reinterpret_cast<OverridableObject*>(self)->func, qualname));
  if (!name) {
    return nullptr;
  }
  return PyUnicode_FromFormat("<function %S>", name.ptr());
}

PyObject* OverridableObject::* const kObjectFields[] = {
    &OverridableObject::func,
    &OverridableObject::fast,
    &OverridableObject::public_api,
    &OverridableObject::dict,
};

int overridableTraverse(PyObject* self, visitproc visit, void* arg) {
  auto* o = reinterpret_cast<OverridableObject*>(self);
  for (auto field : kObjectFields) {
    Py_VISIT(o->*field);
  }
  return 0;
}

int overridableClear(PyObject* self) {
  auto* o = reinterpret_cast<OverridableObject*>(self);
  for (auto field : kObjectFields) {
    Py_CLEAR(o->*field);
  }
  return 0;
}

void overridableDealloc(PyObject* self) {
  PyObject_GC_UnTrack(self);
  overridableClear(self);
  Py_TYPE(self)->tp_free(self);
}

PyObject* getFunc(PyObject* self, void*) {
  PyObject* f = reinterpret_cast<OverridableObject*>(self)->func;
  Py_INCREF(f);
  return f;
}

PyObject* getPublic(PyObject* self, void*) {
  auto* o = reinterpret_cast<OverridableObject*>(self);
  PyObject* api = o->public_api ? o->public_api : self;
  Py_INCREF(api);
  return api;
}

int setPublic(PyObject* self, PyObject* value, void*) {
  auto* o = reinterpret_cast<OverridableObject*>(self);
  PyObject* api = value == nullptr || value == Py_None ? nullptr : value;
  Py_XINCREF(api);
  Py_XSETREF(o->public_api, api);
  return 0;
}

PyGetSetDef kOverridableGetSet[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, nullptr, nullptr},
    {"_func", getFunc, nullptr, "The Python function this object calls on plain arguments.", nullptr},
    {"_public", getPublic, setPublic,
     "What __torch_function__ handlers receive as `func` (default: this object; a property getter's is the "
     "property's __get__).",
     nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

// --- the disabled states, as context managers -----------------------------------

/// Sets the state for its scope, restoring the previous one. PyTorch: torch::DisableTorchFunction(Subclass).
template <TorchFunctionState kState>
struct DisableTorchFunctionGuard {
  DisableTorchFunctionGuard() : previous_(tf_state) {
    if (previous_ != TorchFunctionState::kAllDisabled) {
      tf_state = kState;
    }
  }
  DisableTorchFunctionGuard(const DisableTorchFunctionGuard&) = delete;
  DisableTorchFunctionGuard& operator=(const DisableTorchFunctionGuard&) = delete;
  ~DisableTorchFunctionGuard() { tf_state = previous_; }

 private:
  TorchFunctionState previous_;
};

bool hasTorchFunctionOrMode(PyObject* obj) { return torchFunctionModeEnabled() || hasTorchFunction(obj); }

} // namespace

void initTorchFunctionBindings(py::module_& m) {
  intern(gTorchFunctionName, "__torch_function__");
  m.def(
      "_disabled_torch_function_impl",
      [](py::handle func, py::handle, py::handle args, py::handle kwargs) {
        OPDISPATCH_CHECK_TYPE(PyTuple_Check(args.ptr()) || PyList_Check(args.ptr()),
                              "_disabled_torch_function_impl: args must be a tuple or list, not ",
                              pyTypeName(args.ptr()));
        OPDISPATCH_CHECK_TYPE(kwargs.is_none() || PyDict_Check(kwargs.ptr()),
                              "_disabled_torch_function_impl: kwargs must be a dict or None");
        py::tuple positional = py::reinterpret_steal<py::tuple>(PySequence_Tuple(args.ptr()));
        PyObject* r = PyObject_Call(func.ptr(), positional.ptr(), kwargs.is_none() ? nullptr : kwargs.ptr());
        if (r == nullptr) {
          throw py::error_already_set();
        }
        return py::reinterpret_steal<py::object>(r);
      },
      py::arg("func"), py::arg("types"), py::arg("args") = py::tuple(), py::arg("kwargs") = py::none(),
      "What a tensor subclass sets as __torch_function__ to opt out of the function layer "
      "(`__torch_function__ = _disabled_torch_function_impl`): calls func(*args, **kwargs). PyTorch: "
      "torch._C._disabled_torch_function_impl.");
  gDisabledImpl = py::object(m.attr("_disabled_torch_function_impl")).release().ptr();

  m.def(
      "_has_torch_function",
      [](py::handle args) {
        if (torchFunctionModeEnabled()) {
          return true;
        }
        py::object fast = py::reinterpret_steal<py::object>(PySequence_Fast(args.ptr(), "expected a sequence"));
        if (!fast) {
          throw py::error_already_set();
        }
        PyObject** items = PySequence_Fast_ITEMS(fast.ptr());
        for (Py_ssize_t i = 0, n = PySequence_Fast_GET_SIZE(fast.ptr()); i < n; ++i) {
          if (hasTorchFunction(items[i])) {
            return true;
          }
        }
        return false;
      },
      py::arg("relevant_args"),
      "Whether a call with these arguments goes to __torch_function__: a TorchFunctionMode is enabled, or an "
      "argument is not a plain opdispatch.Tensor and has an override. "
      "PyTorch: torch._C._has_torch_function.");
  m.def(
      "_has_torch_function_unary", [](py::handle obj) { return hasTorchFunctionOrMode(obj.ptr()); }, py::arg("obj"),
      "_has_torch_function((obj,)). PyTorch: torch._C._has_torch_function_unary.");
  m.def(
      "_has_torch_function_variadic",
      [](py::args args) {
        if (torchFunctionModeEnabled()) {
          return true;
        }
        for (py::handle a : args) {
          if (hasTorchFunction(a.ptr())) {
            return true;
          }
        }
        return false;
      },
      "_has_torch_function(args) for the arguments given. PyTorch: torch._C._has_torch_function_variadic.");
  m.def(
      "_is_torch_function_enabled", [] { return tf_state == TorchFunctionState::kEnabled; },
      "Whether __torch_function__ overrides of arguments run (not inside DisableTorchFunctionSubclass or "
      "DisableTorchFunction). PyTorch: same name.");
  m.def(
      "_is_torch_function_all_disabled", [] { return tf_state == TorchFunctionState::kAllDisabled; },
      "Whether DisableTorchFunction is in effect (neither modes nor overrides run). PyTorch: same name.");
  m.def("_is_torch_function_mode_enabled", &torchFunctionModeEnabled,
        "Whether a TorchFunctionMode is on this thread's stack and DisableTorchFunction is not in effect. "
        "PyTorch: same name.");
  m.def(
      "_push_on_torch_function_stack",
      [](py::handle mode) {
        Py_INCREF(mode.ptr());
        tf_modes.push_back(OwnedPyObject::steal(mode.ptr()));
        tf_mode_count = tf_modes.size();
      },
      py::arg("mode"), "Pushes a TorchFunctionMode on this thread's stack. PyTorch: same name.");
  m.def(
      "_pop_torch_function_stack",
      [] {
        OPDISPATCH_CHECK(!tf_modes.empty(), "Trying to pop from an empty mode stack");
        py::object mode = py::reinterpret_steal<py::object>(static_cast<PyObject*>(tf_modes.back().release()));
        tf_modes.pop_back();
        tf_mode_count = tf_modes.size();
        return mode;
      },
      "Pops the top TorchFunctionMode of this thread's stack and returns it; RuntimeError if there is none. "
      "PyTorch: same name.");
  m.def(
      "_len_torch_function_stack", [] { return tf_modes.size(); },
      "The number of TorchFunctionModes on this thread's stack. PyTorch: same name.");
  m.def(
      "_get_function_stack_at",
      [](int64_t idx) {
        OPDISPATCH_CHECK_INDEX(idx >= 0 && static_cast<size_t>(idx) < tf_modes.size(), "_get_function_stack_at(", idx,
                               "): the stack has ", tf_modes.size(), " modes");
        return py::reinterpret_borrow<py::object>(static_cast<PyObject*>(tf_modes[static_cast<size_t>(idx)].get()));
      },
      py::arg("idx"), "The TorchFunctionMode at index idx of this thread's stack (0: the bottom). PyTorch: same name.");
  bindContextManager<DisableTorchFunctionGuard<TorchFunctionState::kSubclassesDisabled>>(
      m, "DisableTorchFunctionSubclass",
      "with DisableTorchFunctionSubclass(): __torch_function__ overrides of arguments do not run in the block "
      "(TorchFunctionModes still do); what Tensor.__torch_function__ runs func under. PyTorch: same name.");
  bindContextManager<DisableTorchFunctionGuard<TorchFunctionState::kAllDisabled>>(
      m, "DisableTorchFunction",
      "with DisableTorchFunction(): neither TorchFunctionModes nor __torch_function__ overrides run in the block. "
      "PyTorch: same name.");
  m.def(
      "_set_torch_function_handler",
      [](py::handle fn) {
        OPDISPATCH_CHECK_TYPE(PyCallable_Check(fn.ptr()), "_set_torch_function_handler needs a callable");
        Py_INCREF(fn.ptr());
        Py_XSETREF(gHandler, fn.ptr());
      },
      py::arg("handler"),
      "Sets handler(public, args, kwargs), which _Overridable objects hand overridden calls to "
      "(opdispatch.overrides sets it at import).");

  PyTypeObject& t = gOverridableType;
  t.tp_name = "opdispatch._C._Overridable";
  t.tp_basicsize = sizeof(OverridableObject);
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR;
  t.tp_doc =
      "_Overridable(func, *, fast=None, fast_nargs=-1): a public function or Tensor method that "
      "checks for __torch_function__ overrides and modes before calling the Python function func (or, on "
      "fast_nargs plain tensors passed positionally, `fast`). See Note [The function layer].";
  t.tp_new = overridableNew;
  t.tp_dealloc = overridableDealloc;
  t.tp_traverse = overridableTraverse;
  t.tp_clear = overridableClear;
  t.tp_call = PyVectorcall_Call;
  t.tp_repr = overridableRepr;
  t.tp_descr_get = overridableGet;
  t.tp_vectorcall_offset = offsetof(OverridableObject, vectorcall);
  t.tp_dictoffset = offsetof(OverridableObject, dict);
  t.tp_getset = kOverridableGetSet;
  addStaticType(m, t, "_Overridable");
}

} // namespace opdispatch::python
