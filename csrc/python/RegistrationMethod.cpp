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

/// Whether the call is outside a _registration_site() block; -1 with the error set if the variable cannot be read.
int outsideSiteBlock(const RegistrationMethodObject* method) {
  PyObject* value = nullptr;
  if (PyContextVar_Get(method->site_var, Py_None, &value) < 0) {
    return -1;
  }
  const bool outside = value == Py_None;
  Py_DECREF(value);
  return outside ? 1 : 0;
}

/// The library's `m` for a plain call of `method` on `lib`: into `m`; false
/// if the call is not plain (a destroyed library, a site block). `m` null
/// with the error set if reading either raised.
bool plainLibrary(const RegistrationMethodObject* method, PyObject* lib, py::object& m) {
  m = py::reinterpret_steal<py::object>(PyObject_GetAttr(lib, gM));
  if (!m) {
    return true;
  }
  if (m.is_none()) {
    return false;
  }
  int outside = outsideSiteBlock(method);
  if (outside < 0) {
    m = py::object();
  }
  return outside != 0;
}

/// define(self, schema) from C if it is a plain call: its result (null with
/// the error set if it raised) into `result`; false if it is not.
bool plainDefine(const RegistrationMethodObject* method, PyObject* const* args, Py_ssize_t nargs, PyObject*& result) {
  if (nargs != 2 || !PyUnicode_Check(args[1])) {
    return false;
  }
  py::object m;
  if (!plainLibrary(method, args[0], m)) {
    return false;
  }
  py::object defs = m ? py::reinterpret_steal<py::object>(PyObject_GetAttr(args[0], gOpDefs)) : py::object();
  if (!defs) {
    result = nullptr;
    return true;
  }
  PyObject* call[] = {m.ptr(), args[1], gEmptyStr, gEmptyTuple, Py_None, defs.ptr()};
  result = libraryDefine(nullptr, call, 6);
  return true;
}

/// impl(self, op_name, fn[, dispatch_key]) from C if it is a plain call: as plainDefine.
bool plainImpl(const RegistrationMethodObject* method, PyObject* const* args, Py_ssize_t nargs, PyObject*& result) {
  if ((nargs != 3 && nargs != 4) || !PyUnicode_Check(args[1]) || !PyCallable_Check(args[2]) ||
      (nargs == 4 && !PyUnicode_Check(args[3]))) {
    return false;
  }
  py::object m;
  if (!plainLibrary(method, args[0], m)) {
    return false;
  }
  result = nullptr;
  if (!m) {
    return true;
  }
  // `dispatch_key or self.dispatch_key`, as the Python body has it.
  py::object dispatch = nargs == 4 && PyUnicode_GET_LENGTH(args[3]) > 0
                            ? py::reinterpret_borrow<py::object>(args[3])
                            : py::reinterpret_steal<py::object>(PyObject_GetAttr(args[0], gDispatchKey));
  if (!dispatch) {
    return true;
  }
  py::object impls = py::reinterpret_steal<py::object>(PyObject_GetAttr(args[0], gOpImpls));
  if (!impls) {
    return true;
  }
  PyObject* call[] = {m.ptr(), args[1], dispatch.ptr(), args[2], Py_False, Py_False, Py_None, impls.ptr()};
  PyObject* site = libraryImpl(nullptr, call, 8);
  if (site != nullptr) {
    Py_DECREF(site);
    Py_INCREF(Py_None);
    result = Py_None;
  }
  return true;
}

PyObject* methodCall(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  auto* method = reinterpret_cast<RegistrationMethodObject*>(self);
  if (kwnames == nullptr || PyTuple_GET_SIZE(kwnames) == 0) {
    const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject* result = nullptr;
    if (method->kind == Kind::kDefine ? plainDefine(method, args, nargs, result)
                                      : plainImpl(method, args, nargs, result)) {
      return result;
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
