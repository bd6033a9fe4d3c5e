// _C._RegistrationMethod: Library.define and Library.impl as method
// descriptors that make their plain calls from C. See Note [Registration methods].
#include <Python.h>

#include <cstddef>
#include <string_view>

#include <pybind11/pybind11.h>

#include "StaticType.h"
#include "python_dispatch.h"

namespace py = pybind11;

namespace opdispatch::python {
namespace {

// Note [Registration methods]
// Library.define and Library.impl are the two calls a registration makes
// per operator. As Python functions each cost a frame, ~1.3k instructions
// around the one _C call that does the work (_library_define /
// _library_impl, Note [Registration fast path]): ~11% of a define + impl
// (callgrind over benchmarks/registration.py's loop: 23.9k instructions per
// operator through the methods, 21.2k calling _C directly).
//
// So each is a _RegistrationMethod: a method descriptor that holds the
// Python function and runs it for every call except the plain one, which it
// makes itself:
//   define(schema)                          schema a str
//   impl(op_name, fn[, dispatch_key])       op_name, dispatch_key strs; fn callable
// positional, on a live library (its `m` is not None), outside a
// _registration_site() block (Note [Registration sites] in library.py).
// A plain call passes _C what the Python body would: the library's `m`,
// the arguments, the defaults ("", (), False) and the library's `_op_defs`
// / `_op_impls`; for the site, None (search from the current frame): with
// no frame of the method's own, that is the caller's frame, which the
// Python body passes. Every other call (keywords, tags, an OpOverload, a
// destroyed library, a non-callable kernel, a site block) runs the Python
// function, which states the method once: its signature and docstring are
// the descriptor's (functools.update_wrapper).

enum class Kind { kDefine, kImpl };

struct RegistrationMethodObject {
  PyObject_HEAD vectorcallfunc vectorcall;
  PyObject* func;      // the Python function: the method's definition
  PyObject* site_var;  // the ContextVar of _registration_site() blocks
  PyObject* dict;
  Kind kind;
};

PyTypeObject gRegistrationMethodType = staticTypeObject();

PyObject* gM = nullptr;
PyObject* gOpDefs = nullptr;
PyObject* gOpImpls = nullptr;
PyObject* gDispatchKey = nullptr;
PyObject* gEmptyStr = nullptr;
PyObject* gEmptyTuple = nullptr;

/// Whether the positional arguments `args` (the library first) have a plain call's types.
bool plainArguments(Kind kind, PyObject* const* args, Py_ssize_t nargs) {
  if (kind == Kind::kDefine) {
    return nargs == 2 && PyUnicode_Check(args[1]);
  }
  return (nargs == 3 || nargs == 4) && PyUnicode_Check(args[1]) && PyCallable_Check(args[2]) &&
         (nargs == 3 || PyUnicode_Check(args[3]));
}

enum class Plain { kNo, kYes, kError };

/// Whether a call of `method` on `lib` is plain: `lib.m` (into `m`) is not
/// None and no _registration_site() block is open. kError: reading either
/// raised (the error is set).
Plain plainLibrary(const RegistrationMethodObject* method, PyObject* lib, py::object& m) {
  m = py::reinterpret_steal<py::object>(PyObject_GetAttr(lib, gM));
  if (!m) {
    return Plain::kError;
  }
  if (m.is_none()) {
    return Plain::kNo;
  }
  PyObject* site = nullptr;
  if (PyContextVar_Get(method->site_var, Py_None, &site) < 0) {
    return Plain::kError;
  }
  const bool outside = site == Py_None;
  Py_DECREF(site);
  return outside ? Plain::kYes : Plain::kNo;
}

/// define(self, schema), plain, on the library `lib` whose `m` is `m`: its result, or null with the error set.
PyObject* plainDefine(PyObject* lib, const py::object& m, PyObject* schema) {
  py::object defs = py::reinterpret_steal<py::object>(PyObject_GetAttr(lib, gOpDefs));
  if (!defs) {
    return nullptr;
  }
  PyObject* call[] = {m.ptr(), schema, gEmptyStr, gEmptyTuple, Py_None, defs.ptr()};
  return libraryDefine(nullptr, call, 6);
}

/// impl(self, op_name, fn[, dispatch_key]) (`args`, the library first), plain: as plainDefine.
PyObject* plainImpl(const py::object& m, PyObject* const* args, Py_ssize_t nargs) {
  // `dispatch_key or self.dispatch_key`, as the Python body has it.
  py::object dispatch = nargs == 4 && PyUnicode_GET_LENGTH(args[3]) > 0
                            ? py::reinterpret_borrow<py::object>(args[3])
                            : py::reinterpret_steal<py::object>(PyObject_GetAttr(args[0], gDispatchKey));
  if (!dispatch) {
    return nullptr;
  }
  py::object impls = py::reinterpret_steal<py::object>(PyObject_GetAttr(args[0], gOpImpls));
  if (!impls) {
    return nullptr;
  }
  PyObject* call[] = {m.ptr(), args[1], dispatch.ptr(), args[2], Py_False, Py_False, Py_None, impls.ptr()};
  PyObject* site = libraryImpl(nullptr, call, 8);
  if (site == nullptr) {
    return nullptr;
  }
  Py_DECREF(site);
  Py_RETURN_NONE;
}

PyObject* methodCall(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  auto* method = reinterpret_cast<RegistrationMethodObject*>(self);
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if ((kwnames == nullptr || PyTuple_GET_SIZE(kwnames) == 0) && plainArguments(method->kind, args, nargs)) {
    py::object m;
    switch (plainLibrary(method, args[0], m)) {
      case Plain::kError:
        return nullptr;
      case Plain::kYes:
        return method->kind == Kind::kDefine ? plainDefine(args[0], m, args[1]) : plainImpl(m, args, nargs);
      case Plain::kNo:
        break;
    }
  }
  return PyObject_Vectorcall(method->func, args, nargsf, kwnames);
}

/// `Library.define` (no instance) is the descriptor itself; `lib.define` a bound method.
PyObject* methodGet(PyObject* self, PyObject* obj, PyObject*) {
  if (obj == nullptr || obj == Py_None) {
    Py_INCREF(self);
    return self;
  }
  return PyMethod_New(self, obj);
}

PyObject* methodNew(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  PyObject* func = nullptr;
  const char* kind = nullptr;
  PyObject* site_var = nullptr;
  static const char* names[] = {"func", "kind", "site", nullptr};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OsO:_RegistrationMethod", const_cast<char**>(names), &func, &kind,
                                   &site_var)) {
    return nullptr;
  }
  if (!PyCallable_Check(func)) {
    PyErr_Format(PyExc_TypeError, "_RegistrationMethod: func must be callable, not %.200s", Py_TYPE(func)->tp_name);
    return nullptr;
  }
  if (!PyContextVar_CheckExact(site_var)) {
    PyErr_Format(PyExc_TypeError, "_RegistrationMethod: site must be a contextvars.ContextVar, not %.200s",
                 Py_TYPE(site_var)->tp_name);
    return nullptr;
  }
  const std::string_view k(kind);
  if (k != "define" && k != "impl") {
    PyErr_Format(PyExc_ValueError, "_RegistrationMethod: kind must be 'define' or 'impl', not '%s'", kind);
    return nullptr;
  }
  auto* method = reinterpret_cast<RegistrationMethodObject*>(type->tp_alloc(type, 0));
  if (method == nullptr) {
    return nullptr;
  }
  method->vectorcall = methodCall;
  method->kind = k == "define" ? Kind::kDefine : Kind::kImpl;
  Py_INCREF(func);
  method->func = func;
  Py_INCREF(site_var);
  method->site_var = site_var;
  return reinterpret_cast<PyObject*>(method);
}

/// The object fields of a method, which the collector visits and clears.
PyObject* RegistrationMethodObject::* const kObjectFields[] = {
    &RegistrationMethodObject::func,
    &RegistrationMethodObject::site_var,
    &RegistrationMethodObject::dict,
};

int methodTraverse(PyObject* self, visitproc visit, void* arg) {
  auto* method = reinterpret_cast<RegistrationMethodObject*>(self);
  for (auto field : kObjectFields) {
    Py_VISIT(method->*field);
  }
  return 0;
}

int methodClear(PyObject* self) {
  auto* method = reinterpret_cast<RegistrationMethodObject*>(self);
  for (auto field : kObjectFields) {
    Py_CLEAR(method->*field);
  }
  return 0;
}

void methodDealloc(PyObject* self) {
  PyObject_GC_UnTrack(self);
  methodClear(self);
  Py_TYPE(self)->tp_free(self);
}

PyGetSetDef kMethodGetSet[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

} // namespace

void initRegistrationMethodBindings(py::module_& m) {
  intern(gM, "m");
  intern(gOpDefs, "_op_defs");
  intern(gOpImpls, "_op_impls");
  intern(gDispatchKey, "dispatch_key");
  intern(gEmptyStr, "");
  gEmptyTuple = PyTuple_New(0);
  if (gEmptyTuple == nullptr) {
    throw py::error_already_set();
  }
  PyTypeObject& t = gRegistrationMethodType;
  t.tp_name = "opdispatch._C._RegistrationMethod";
  t.tp_basicsize = sizeof(RegistrationMethodObject);
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR;
  t.tp_doc =
      "_RegistrationMethod(func, kind, site): Library.define (kind 'define') or Library.impl ('impl') as a method "
      "descriptor running the Python function `func` except for plain calls, which it makes from C; `site` is the "
      "ContextVar of _registration_site() blocks (Note [Registration methods]).";
  t.tp_new = methodNew;
  t.tp_dealloc = methodDealloc;
  t.tp_traverse = methodTraverse;
  t.tp_clear = methodClear;
  t.tp_call = PyVectorcall_Call;
  t.tp_descr_get = methodGet;
  t.tp_vectorcall_offset = offsetof(RegistrationMethodObject, vectorcall);
  t.tp_dictoffset = offsetof(RegistrationMethodObject, dict);
  t.tp_getset = kMethodGetSet;
  addStaticType(m, t, "_RegistrationMethod");
}

} // namespace opdispatch::python
