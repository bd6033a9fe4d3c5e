// The _dispatch_* API of opdispatch._C (PyTorch: torch/csrc/utils/
// python_dispatch.cpp): libraries, Python kernels and fallbacks, registry
// inspection, DispatchKey / DispatchKeySet, TLS guards, boxed calls.
#include <cstring>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <opdispatch/core/Exception.h>
#include <opdispatch/core/GradMode.h>
#include <opdispatch/dispatch/AutogradFallback.h>
#include <opdispatch/dispatch/Dispatcher.h>
#include <opdispatch/library.h>
#include <opdispatch/schema/SchemaParser.h>

#include "DispatchKeyCaster.h"
#include "Exceptions.h"
#include "IValueConversion.h"
#include "PythonCall.h"
#include "PythonKernelHolder.h"
#include "PythonTensor.h"
#include "python_dispatch.h"

#include "ContextManager.h"

namespace py = pybind11;

namespace opdispatch::python {

namespace {

PyObject* gFallthroughKernel = nullptr;

Library::Kind parseKind(const std::string& k) {
  if (k == "DEF") {
    return Library::DEF;
  }
  if (k == "IMPL") {
    return Library::IMPL;
  }
  if (k == "FRAGMENT") {
    return Library::FRAGMENT;
  }
  throw ValueError(detail::str("could not parse library kind '", k, "'; expected DEF, IMPL or FRAGMENT"));
}

std::optional<DispatchKey> optionalKey(const std::string& k) {
  if (k.empty()) {
    return std::nullopt;
  }
  return parseDispatchKey(k);
}

/// A CppFunction at `key` (none = the library's key).
CppFunction withKey(std::optional<DispatchKey> key, CppFunction f) {
  return key ? opdispatch::dispatch(*key, std::move(f)) : std::move(f);
}

/// A CppFunction at `dispatch` ("" = the library's key).
CppFunction withKey(const std::string& dispatch, CppFunction f) { return withKey(optionalKey(dispatch), std::move(f)); }

Tensor identity(const Tensor& a) { return a; }

CppFunction identityKernel(const std::string& dispatch, const std::string& debug) {
  return withKey(dispatch, CppFunction(OPDISPATCH_FN(identity)).debug(debug));
}

/// The key a Python kernel is registered at: the given one, else the library's, else CompositeImplicitAutograd.
DispatchKey effectiveKey(const Library& lib, std::optional<DispatchKey> given) {
  return given ? *given : lib.dispatch_key().value_or(DispatchKey::CompositeImplicitAutograd);
}

DispatchKey effectiveKey(const Library& lib, const std::string& dispatch) {
  return effectiveKey(lib, optionalKey(dispatch));
}

OperatorName parseOpName(const std::string& name) { return parseName(name); }

std::optional<OperatorHandle> findOp(const std::string& name) {
  return Dispatcher::singleton().findOp(parseOpName(name));
}

OperatorHandle findOpOrThrow(const std::string& name) {
  auto op = findOp(name);
  OPDISPATCH_CHECK(op.has_value(), "operator ", name,
                   " does not exist: nothing defines or implements it (check the name, 'namespace::op[.overload]', "
                   "and that the library registering it is alive)");
  return *op;
}

/// An opdispatch._C context manager applying an RAII guard between __enter__
/// and __exit__. One object may be entered again while entered (`with g:
/// with g:`): each __enter__ pushes a guard, each __exit__ pops the newest.
template <class Guard, class... Arg>
struct PyGuard {
  std::tuple<Arg...> arg;
  std::vector<std::unique_ptr<Guard>> active;
};

template <class Guard, class... Arg>
py::class_<PyGuard<Guard, Arg...>> bindGuard(py::module_& m, const char* name, const char* doc) {
  using G = PyGuard<Guard, Arg...>;
  return py::class_<G>(m, name, doc)
      .def(py::init([](Arg... a) { return std::make_unique<G>(G{std::tuple<Arg...>(a...), {}}); }))
      .def("__enter__",
           [](G& g) { g.active.push_back(std::apply([](Arg... a) { return std::make_unique<Guard>(a...); }, g.arg)); })
      .def("__exit__", [name](G& g, py::args) {
        OPDISPATCH_CHECK(!g.active.empty(), name, ".__exit__ called without a matching __enter__");
        g.active.pop_back();
      });
}

/// The files, and directories (ending in '/'), whose frames are not where a
/// user registered: the Python layer's own registration code, which says so
/// with _dispatch_set_call_site_skip_paths.
struct SkippedSources {
  std::vector<std::string> paths;
  /// Changes with every new list, so cached answers are recomputed.
  uint64_t version = 0;

  bool skips(const std::string& file) const {
    for (const auto& p : paths) {
      if (!p.empty() && p.back() == '/' ? file.compare(0, p.size(), p) == 0 : file == p) {
        return true;
      }
    }
    return false;
  }
};

SkippedSources& skippedSources() {
  static SkippedSources s;
  return s;
}

/// The set of one key, as PyTorch's DispatchKeySet(key): empty for Undefined and
/// for an alias key (DispatchKeySet(DispatchKey.Autograd) is DispatchKeySet()).
DispatchKeySet keySetOf(DispatchKey k) {
  return k == DispatchKey::Undefined || isAliasDispatchKey(k) ? DispatchKeySet() : DispatchKeySet(k);
}

/// A key-set guard binding of bindGuard made from one key (keySetOf).
template <class Guard>
std::unique_ptr<PyGuard<Guard, DispatchKeySet>> guardOfKey(DispatchKey k) {
  return std::make_unique<PyGuard<Guard, DispatchKeySet>>(
      PyGuard<Guard, DispatchKeySet>{std::tuple<DispatchKeySet>(keySetOf(k)), {}});
}

/// Rejects alias keys where only runtime keys (or Undefined) make sense.
DispatchKey runtimeKey(DispatchKey k, const char* what) {
  OPDISPATCH_CHECK_VALUE(k == DispatchKey::Undefined || isRuntimeDispatchKey(k), what,
                         " needs a runtime dispatch key; ", k,
                         " is an alias key (use the runtime keys it stands for, e.g. from "
                         "_dispatch_get_runtime_keyset)");
  return k;
}

} // namespace

namespace {
/// The Python call of `op` with args/kwargs (redispatched to `ks` if given): Note [One call path].
py::object callHandle(const OperatorHandle& op, const DispatchKeySet* ks, const py::args& args,
                      const py::kwargs& kwargs) {
  PyCallArgumentsFromTuple call(args.ptr(), kwargs.ptr());
  return callFromPython(op, call.get(), ks);
}

/// Registrations undone together when the object is destroyed or remove() is called.
struct RegistrationHandles {
  std::vector<RegistrationHandleRAII> handles;
  void remove() {
    while (!handles.empty()) {
      handles.pop_back();
    }
  }
};

/// `name` with `lib`'s namespace if it has none.
OperatorName qualifiedIn(const Library& lib, OperatorName name) {
  if (name.name.find("::") == std::string::npos) {
    name.name = lib.ns() + "::" + name.name;
  }
  return name;
}

/// The str argument `o` as UTF-8 (valid while `o` lives); TypeError naming `what` otherwise.
std::string_view strView(PyObject* o, const char* what) {
  OPDISPATCH_CHECK_TYPE(PyUnicode_Check(o), what, " must be a str, not ", pyTypeName(o));
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(o, &size);
  if (data == nullptr) {
    throw py::error_already_set();
  }
  return std::string_view(data, static_cast<size_t>(size));
}

/// "registered at <site>" for the site text `site` (a str; "" for "").
InternedString registeredAt(py::handle site) {
  std::string_view text = strView(site.ptr(), "site");
  if (text.empty()) {
    return {};
  }
  std::string out;  // (one heap block)
  out.reserve(14 + text.size());
  out.append("registered at ").append(text);
  return out;
}

/// Where a registration from Python was made: its "file:line" text (a str)
/// and the "registered at <text>" its record keeps ("" for the text "").
struct Site {
  py::object text;
  InternedString debug;
};

/// The Site of the innermost Python frame outside opdispatch's registration
/// code, searched from `from` outwards (null: from the current frame); both
/// made once per call site (CodeInfo keeps them). Text
/// None if there is no such frame.
Site pythonCallSiteFrom(PyFrameObject* from);

/// `site` ("file:line" of a registration, as given), or the registering
/// frame's: for None, the innermost Python frame outside opdispatch's
/// registration code (Note [Registration sites] in library.py), for a frame
/// object the innermost such frame from that one outwards; "(unknown)" if
/// there is none. (Found here rather than by a call of
/// _python_call_site_text from Python: one call fewer per registration.)
Site registrationSite(py::handle site) {
  if (site.is_none() || PyFrame_Check(site.ptr())) {
    Site found = pythonCallSiteFrom(site.is_none() ? nullptr : reinterpret_cast<PyFrameObject*>(site.ptr()));
    if (found.text.is_none()) {
      found.text = py::str("(unknown)");
      found.debug = registeredAt(found.text);
    }
    return found;
  }
  OPDISPATCH_CHECK_TYPE(PyUnicode_Check(site.ptr()), "site must be a str ('file:line'), a frame or None, not ",
                        pyTypeName(site.ptr()));
  return {py::reinterpret_borrow<py::object>(site), registeredAt(site)};
}

/// Defines `schema` in `lib`, its alias annotations read as `kind` says.
void defineWithAliasAnalysis(Library& lib, FunctionSchema schema, std::optional<AliasAnalysisKind> kind,
                             const std::vector<Tag>& tags = {}, InternedString debug = {}) {
  lib.def(std::move(schema), tags, std::move(debug), kind);
}

/// Library.define from Python: defines `schema` in `lib` with its alias
/// analysis kind and tag names, registered at `site` (registrationSite; ""
/// for the library's own site); returns the operator's name and overload name as written.
OperatorName defineFromPython(Library& lib, std::string_view schema, std::string_view alias_analysis,
                              const std::vector<std::string>& tags, py::handle site) {
  AliasAnalysisKind kind = parseAliasAnalysisKind(alias_analysis);
  FunctionSchema parsed = parseSchema(schema);
  OperatorName name = parsed.operator_name();
  std::vector<Tag> parsed_tags;
  for (const auto& t : tags) {
    parsed_tags.push_back(parseTag(t));
  }
  defineWithAliasAnalysis(lib, std::move(parsed), kind, parsed_tags, registrationSite(site).debug);
  return name;
}

/// Library.impl from Python: registers `func` (or a fallthrough for the
/// fallthrough kernel) as the kernel of `name` at `dispatch`, registered at
/// `site` (registrationSite's); returns the site recorded.
/// Warns (UserWarning) if the operator `name` of `lib` already has a kernel at `key`, which the kernel about to be
/// registered there overrides (the newest kernel of a key runs; the older one runs again once the newer goes).
/// Meta is exempt: Python fake kernels replace Meta kernels as a rule. PyTorch: the warning of
/// OperatorEntry::registerKernel (TORCH_WARN_ONCE there, once per process; here a Python warning per registration,
/// which Python's filters show once per call site).
void warnIfOverriding(const Library& lib, const std::string& name, DispatchKey key, const Site& site) {
  if (key == DispatchKey::Meta) {
    return;
  }
  OperatorName op_name = parseOpName(name.find("::") == std::string::npos ? lib.ns() + "::" + name : name);
  std::optional<OperatorHandle> op = Dispatcher::singleton().findOp(op_name);
  if (!op || !op->hasKernelForDispatchKey(key)) {
    return;
  }
  std::optional<std::string> previous = Dispatcher::singleton().kernelDebug(op_name, key);
  std::string where = site.debug.str().empty() ? pythonCallSite() : site.debug.str();
  std::string message = detail::str(
      "Overriding a previously registered kernel for the same operator and the same dispatch key\n  operator: ",
      op->hasSchema() ? detail::str(op->schema()) : detail::str(op_name), "\n  dispatch key: ", key,
      "\n  previous kernel: ", previous.value_or("no debug info"), "\n       new kernel: ", where,
      "\nThe new kernel runs until its Library is destroyed; then the previous one runs again.");
  // Attributed to the registration's site (whether Library.impl ran a Python body or not).
  std::string_view located = where;
  constexpr std::string_view kPrefix = "registered at ";
  if (located.substr(0, kPrefix.size()) == kPrefix) {
    located.remove_prefix(kPrefix.size());
  }
  size_t colon = located.rfind(':');
  std::string file(located.substr(0, colon));
  int line = colon == std::string_view::npos ? 0 : std::atoi(std::string(located.substr(colon + 1)).c_str());
  if (PyErr_WarnExplicit(PyExc_UserWarning, message.c_str(), file.c_str(), line, nullptr, nullptr) < 0) {
    throw py::error_already_set();
  }
}

/// Registers the Python kernel `func`; `warn_override`: warn if it overrides a kernel at its key (not for a custom
/// op's replacement of its own kernel, which PyTorch's custom ops make without the warning).
py::object implFromPython(Library& lib, const std::string& name, const std::string& dispatch, py::handle func,
                          bool with_keyset, bool check_aliasing, Site site, bool warn_override = true) {
  if (gFallthroughKernel != nullptr && func.ptr() == gFallthroughKernel) {
    OPDISPATCH_CHECK_VALUE(!check_aliasing, "impl(", name, "): a fallthrough kernel cannot take check_aliasing");
    lib.impl(name, withKey(dispatch, CppFunction::makeFallthrough().debug(std::move(site.debug))));
    return site.text;
  }
  OPDISPATCH_CHECK_TYPE(PyCallable_Check(func.ptr()), "impl(", name, "): the kernel must be callable, not ",
                        pyTypeName(func.ptr()));
  std::optional<DispatchKey> given = optionalKey(dispatch);  // (parsed once: a scan of the key names)
  DispatchKey key = effectiveKey(lib, given);
  if (warn_override) {
    warnIfOverriding(lib, name, key, site);
  }
  KernelFunction kernel = PythonKernelHolder::makeKernel(func.ptr(), key, with_keyset);
  if (check_aliasing) {
    kernel = std::move(kernel).checkOutputAliasing();
  }
  CppFunction f = CppFunction::makeFromKernelFunction(std::move(kernel))
                      .debug(site.debug.empty() ? InternedString(pythonCallSite()) : std::move(site.debug));
  lib.impl(name, withKey(given, std::move(f)));
  return site.text;
}

// Note [Registration fast path]
// Python registers every definition and kernel through _library_define and
// _library_impl: plain METH_FASTCALL functions with positional arguments
// converted here, rather than the pybind11 methods Library.define / .impl
// (the same bodies, defineFromPython / implFromPython), whose overload
// dispatch and argument casters cost about as much as the registration
// itself. The methods stay for callers that pass keywords.
//
// They also keep the Python registry's tables (Note [The Python registry]
// in _library/registry.py): a definition adds its qualified name to the
// owner's set and to registry.defs and tells the definition listener; a
// kernel adds its "ns/op/key" slot to the owner's set and to
// registry.impls, after the registry's slot check has run where a slot may
// be taken. Library.define / .impl make their plain calls of them from C,
// with no Python frame (Note [Registration methods] in
// RegistrationMethod.cpp), and call them directly otherwise (the Python
// layer once cost as much as the dispatcher's work).

/// The Python registry's tables and hooks (_set_python_registry,
/// _set_definition_listener); strong references for the process's lifetime.
struct PythonRegistry {
  PyObject* defs = nullptr;
  PyObject* impls = nullptr;
  /// check(slot, ns, op_name, dispatch, site): raises if the kernel may not be registered.
  PyObject* check_kernel_slot = nullptr;
  /// The dispatch keys (strs, as passed) whose kernels get the check even where their slot is free.
  PyObject* checked_keys = nullptr;
  /// listener(qualname), called for namespaces that are keys of `watched` (all if null).
  PyObject* listener = nullptr;
  PyObject* watched = nullptr;
};

PythonRegistry& pythonRegistry() {
  static PythonRegistry r;
  return r;
}

/// Replaces the reference in `slot` by a new one to `o` (None: null).
void setReference(PyObject*& slot, PyObject* o) {
  PyObject* previous = slot;
  slot = o == Py_None ? nullptr : o;
  Py_XINCREF(slot);
  Py_XDECREF(previous);
}

/// The str argument `o` as UTF-8; TypeError naming `what` otherwise.
std::string strArg(PyObject* o, const char* what) { return std::string(strView(o, what)); }

/// The truth of argument `o` (as pybind11's bool caster converts it).
bool boolArg(PyObject* o) {
  int truth = PyObject_IsTrue(o);
  if (truth < 0) {
    throw py::error_already_set();
  }
  return truth != 0;
}

/// A new str of the UTF-8 text `s`.
py::object newStr(std::string_view s) {
  PyObject* o = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "surrogateescape");
  if (o == nullptr) {
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::object>(o);
}

/// A new str of the UTF-8 texts `parts` joined (made in a stack buffer when short: no heap block).
py::object newStrJoined(std::initializer_list<std::string_view> parts) {
  size_t size = 0;
  for (std::string_view p : parts) {
    size += p.size();
  }
  char local[256];
  std::string long_text;
  char* out = local;
  if (size > sizeof(local)) {
    long_text.resize(size);
    out = long_text.data();
  }
  char* at = out;
  for (std::string_view p : parts) {
    std::memcpy(at, p.data(), p.size());
    at += p.size();
  }
  return newStr(std::string_view(out, size));
}

/// "ns::name[.overload]" as a str: `name` qualified with `lib`'s namespace if it has none.
py::object qualifiedStr(const Library& lib, const OperatorName& name) {
  const bool bare = name.name.find("::") == std::string::npos;
  const bool overload = !name.overload_name.empty();
  return newStrJoined({bare ? std::string_view(lib.ns()) : std::string_view(), bare ? "::" : "", name.name,
                       overload ? "." : "", name.overload_name});
}

/// The Python registry's slot of a kernel of `name` ("[ns::]op[.overload]")
/// at `dispatch` (as passed; "" for none) registered by a library of
/// namespace `ns`: "<ns>/<op[.overload]>/<dispatch>" (seed 000's
/// torch.library._impls key; registry.impls_key).
py::object pythonKernelSlot(std::string_view ns, std::string_view name, std::string_view dispatch) {
  size_t colons = name.rfind("::");
  std::string_view op_name = colons == std::string_view::npos ? name : name.substr(colons + 2);
  return newStrJoined({ns, "/", op_name, "/", dispatch});
}

/// `lib`'s namespace as a str (the last one asked for is kept: registrations come in runs per library).
py::object namespaceStr(const Library& lib) {
  static std::string last_ns;
  static PyObject* last = nullptr;  // (a raw reference: never released after the interpreter is gone)
  if (last == nullptr || last_ns != lib.ns()) {
    py::object ns = newStr(lib.ns());
    last_ns = lib.ns();
    Py_XDECREF(last);
    last = ns.release().ptr();
  }
  return py::reinterpret_borrow<py::object>(last);
}

/// TypeError unless `table` (an owner's table, checked before anything is registered) is a set.
void checkOwnerTable(PyObject* table) {
  OPDISPATCH_CHECK_TYPE(PySet_Check(table), "the owner's table must be a set, not ", pyTypeName(table));
}

/// Adds `item` to the set `owner` (the registering owner's) and to `global` (a registry table).
void addToTables(PyObject* owner, PyObject* global, PyObject* item) {
  if (PySet_Add(owner, item) < 0 || (global != nullptr && PySet_Add(global, item) < 0)) {
    throw py::error_already_set();
  }
}

/// Undoes addToTables(owner, global, item), keeping any error already set.
void discardFromTables(PyObject* owner, PyObject* global, PyObject* item) {
  PyObject *type = nullptr, *value = nullptr, *traceback = nullptr;
  PyErr_Fetch(&type, &value, &traceback);
  if (PySet_Discard(owner, item) < 0 || (global != nullptr && PySet_Discard(global, item) < 0)) {
    PyErr_Clear();  // (a str in a set: discarding it cannot fail but for a MemoryError, which the error below wins)
  }
  PyErr_Restore(type, value, traceback);
}

/// Calls the registry's definition listener (the packet refresh of _ops.py) with `qualname` if `lib`'s namespace
/// is watched; throws the error it raised.
void tellDefinitionListener(const PythonRegistry& registry, const Library& lib, PyObject* qualname) {
  if (registry.listener == nullptr) {
    return;
  }
  int watched = registry.watched == nullptr ? 1 : PyDict_Contains(registry.watched, namespaceStr(lib).ptr());
  if (watched < 0 ||
      (watched == 1 && !py::reinterpret_steal<py::object>(PyObject_CallOneArg(registry.listener, qualname)))) {
    throw py::error_already_set();
  }
}

/// tellDefinitionListener after a definition was taken back, so a packet that saw it forgets it; an error it
/// raises is dropped (the packet still refreshes at its next call: its generation is stale).
void retellDefinitionListener(const PythonRegistry& registry, const Library& lib, PyObject* qualname) {
  try {
    tellDefinitionListener(registry, lib, qualname);
  } catch (const py::error_already_set&) {
  }
}

/// RuntimeError unless `kind` is "", "FROM_SCHEMA" or "CONSERVATIVE": the
/// alias_analysis values Library.define accepts. PyTorch: torch.library.Library.define.
void checkAliasAnalysis(PyObject* kind, std::string_view text) {
  if (text.empty() || text == "FROM_SCHEMA" || text == "CONSERVATIVE") {
    return;
  }
  py::object repr = py::reinterpret_steal<py::object>(PyObject_Repr(kind));
  if (!repr) {
    throw py::error_already_set();
  }
  throw Error(detail::str("Invalid alias_analysis type ", strView(repr.ptr(), "repr"),
                          "; expected '', FROM_SCHEMA or CONSERVATIVE"));
}

} // namespace

/// _library_define(lib, schema, alias_analysis, tags, site, owner_defs): Note [Registration fast path].
PyObject* libraryDefine(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  return pythonEntry([&]() -> PyObject* {
    OPDISPATCH_CHECK_TYPE(nargs == 6,
                          "_library_define(lib, schema, alias_analysis, tags, site, owner_defs) takes 6 arguments, "
                          "got ",
                          nargs);
    Library& lib = py::cast<Library&>(py::handle(args[0]));
    checkOwnerTable(args[5]);
    std::string_view alias_analysis = strView(args[2], "alias_analysis");
    checkAliasAnalysis(args[2], alias_analysis);
    std::vector<std::string> tags;
    PyObject* seq = PySequence_Fast(args[3], "_library_define: tags must be an iterable of str");
    if (seq == nullptr) {
      throw py::error_already_set();
    }
    py::object owned = py::reinterpret_steal<py::object>(seq);
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); ++i) {
      tags.push_back(strArg(PySequence_Fast_GET_ITEM(seq, i), "a tag"));
    }
    const size_t mark = lib._registrationCount();
    OperatorName name = defineFromPython(lib, strView(args[1], "schema"), alias_analysis, tags, args[4]);
    const PythonRegistry& registry = pythonRegistry();
    py::object qualname;
    try {
      qualname = qualifiedStr(lib, name);
      addToTables(args[5], registry.defs, qualname.ptr());
      tellDefinitionListener(registry, lib, qualname.ptr());
    } catch (...) {
      // All-or-nothing (issue 29, item 7): a failure after the definition (a KeyboardInterrupt in the packet's
      // refresh, a MemoryError in the tables) takes it back before the error propagates.
      lib._undoTo(mark);
      if (qualname) {
        discardFromTables(args[5], registry.defs, qualname.ptr());
        retellDefinitionListener(registry, lib, qualname.ptr());
      }
      throw;
    }
    return qualname.release().ptr();
  });
}

/// _library_impl(lib, name, dispatch, func, with_keyset, check_aliasing, site, owner_impls): Note [Registration
/// fast path]. owner_impls None: a kernel outside the registry's tables (a replacement: its owner holds the slot).
PyObject* libraryImpl(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  return pythonEntry([&]() -> PyObject* {
    OPDISPATCH_CHECK_TYPE(nargs == 8,
                          "_library_impl(lib, name, dispatch, func, with_keyset, check_aliasing, site, owner_impls) "
                          "takes 8 arguments, got ",
                          nargs);
    Library& lib = py::cast<Library&>(py::handle(args[0]));
    std::string_view name = strView(args[1], "name");
    std::string_view dispatch = strView(args[2], "dispatch");
    py::object slot = pythonKernelSlot(lib.ns(), name, dispatch);
    Site site = registrationSite(args[6]);  // (once: the slot check names it, the kernel records it)
    const PythonRegistry& registry = pythonRegistry();
    const bool in_tables = args[7] != Py_None;  // (None: a replacement, whose slot its owner holds already)
    if (in_tables) {
      checkOwnerTable(args[7]);
    }
    if (in_tables && registry.check_kernel_slot != nullptr) {
      int taken = registry.impls == nullptr ? 0 : PySet_Contains(registry.impls, slot.ptr());
      if (taken < 0) {
        throw py::error_already_set();
      }
      // (The keys whose kernels are checked even in a free slot are the registry's: _set_python_registry.)
      if (taken == 0 && registry.checked_keys != nullptr) {
        taken = PySet_Contains(registry.checked_keys, args[2]);
        if (taken < 0) {
          throw py::error_already_set();
        }
      }
      if (taken == 1) {
        py::object ns = namespaceStr(lib);
        PyObject* check_args[] = {slot.ptr(), ns.ptr(), args[1], args[2], site.text.ptr()};
        if (!py::reinterpret_steal<py::object>(
                PyObject_Vectorcall(registry.check_kernel_slot, check_args, 5, nullptr))) {
          throw py::error_already_set();
        }
      }
    }
    py::object recorded = implFromPython(lib, std::string(name), std::string(dispatch), args[3], boolArg(args[4]),
                                         boolArg(args[5]), std::move(site), /*warn_override=*/in_tables);
    if (in_tables) {
      addToTables(args[7], registry.impls, slot.ptr());
    }
    return recorded.release().ptr();
  });
}

namespace {

PyMethodDef kRegistrationMethods[] = {
    {"_library_define", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(libraryDefine)), METH_FASTCALL,
     "_library_define(lib, schema, alias_analysis, tags, site, owner_defs) -> str: lib.define with positional "
     "arguments, keeping the Python registry's tables (Note [Registration fast path]); returns the qualified name."},
    {"_library_impl", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(libraryImpl)), METH_FASTCALL,
     "_library_impl(lib, name, dispatch, func, with_keyset, check_aliasing, site, owner_impls) -> str: lib.impl "
     "with positional arguments, keeping the Python registry's tables (Note [Registration fast path]); returns the "
     "site recorded."},
    {nullptr, nullptr, 0, nullptr},
};
} // namespace

void initDispatchBindings(py::module_& m) {
  // --- keys ---------------------------------------------------------------------
  py::enum_<DispatchKey> keys(m, "DispatchKey", "Dispatch keys: runtime keys by priority, then alias keys.");
  for (int i = 0; i < kNumDispatchKeys; ++i) {
    auto k = static_cast<DispatchKey>(i);
    keys.value(toString(k), k);
  }
  // Pickled by name (getattr(DispatchKey, "CPU")): the numbers change when keys are added.
  keys.def("__reduce__", [](DispatchKey k) {
    return py::make_tuple(py::module_::import("builtins").attr("getattr"),
                          py::make_tuple(py::type::of<DispatchKey>(), toString(k)));
  });

  py::class_<DispatchKeySet>(m, "DispatchKeySet", "A set of runtime dispatch keys (one bit each).")
      .def(py::init(&keySetOf), py::arg("key"),
           "The set of one runtime key; empty for Undefined and for an alias key, as in PyTorch (use "
           "_dispatch_get_runtime_keyset for the runtime keys an alias key stands for).")
      .def("__or__", &DispatchKeySet::operator|, py::is_operator())
      .def("__sub__", &DispatchKeySet::operator-, py::is_operator())
      .def("__and__", &DispatchKeySet::operator&, py::is_operator())
      .def(
          "__eq__", [](DispatchKeySet a, DispatchKeySet b) { return a == b; }, py::is_operator())
      .def("__hash__", [](DispatchKeySet a) { return a.raw_repr(); })
      .def("highestPriorityTypeId", &DispatchKeySet::highestPriorityTypeId)
      .def("remove", [](DispatchKeySet s, DispatchKey k) { return s.remove(runtimeKey(k, "DispatchKeySet.remove")); })
      .def("add", [](DispatchKeySet s, DispatchKey k) { return s.add(runtimeKey(k, "DispatchKeySet.add")); })
      .def("has", &DispatchKeySet::has)
      .def("empty", &DispatchKeySet::empty)
      .def("raw_repr", &DispatchKeySet::raw_repr)
      .def("__iter__",
           [](DispatchKeySet s) { return py::iter(py::cast(std::vector<DispatchKey>(s.begin(), s.end()))); })
      .def("__repr__", [](DispatchKeySet s) { return toString(s); })
      // Pickled as its key names, lowest priority first: the bits change when keys are added.
      .def(py::pickle(
          [](DispatchKeySet s) {
            py::list names;
            for (DispatchKey k : s) {
              names.append(toString(k));
            }
            return py::make_tuple(py::tuple(names));
          },
          [](const py::tuple& state) {
            OPDISPATCH_CHECK_VALUE(state.size() == 1 && py::isinstance<py::tuple>(state[0]),
                                   "a pickled DispatchKeySet is a tuple of key names");
            DispatchKeySet s;
            for (py::handle name : state[0].cast<py::tuple>()) {
              s = s.add(runtimeKey(parseDispatchKey(py::str(name)), "DispatchKeySet (unpickling)"));
            }
            return s;
          }));

  m.attr("_dispatch_autogradother_backends") = py::cast(autogradother_backends);
  m.attr("_after_autograd_keyset") = py::cast(after_autograd_keyset);
  m.attr("_after_ADInplaceOrView_keyset") = py::cast(after_ADInplaceOrView_keyset);

  m.def("_dispatch_key_name", [](DispatchKey k) { return std::string(toString(k)); });
  m.def("_dispatch_key_parse", [](DispatchKey k) { return k; });
  m.def("_dispatch_key_for_device", [](const std::string& device_type) {
    Device d(device_type);
    OPDISPATCH_CHECK_VALUE(!d.has_index(), "Expected device_type string to not have a device index; got ", device_type);
    return std::string(toString(backendKeyForDevice(d.type())));
  });
  m.def("_rename_privateuse1_backend", &register_privateuse1_backend, py::arg("backend_name"),
        "Names the PrivateUse1 device type (once per process). PyTorch: torch._C._rename_privateuse1_backend.");
  m.def("_get_privateuse1_backend_name", &get_privateuse1_backend,
        "PrivateUse1's device-type name. PyTorch: torch._C._get_privateuse1_backend_name.");
  m.def("_parse_dispatch_key", [](const std::string& name) -> std::optional<DispatchKey> {
    try {
      return parseDispatchKey(name);
    } catch (const ValueError&) {
      return std::nullopt;
    }
  });
  m.def("_dispatch_is_alias_key", &isAliasDispatchKey);
  m.def("_dispatch_is_included_in_alias", &isIncludedInAlias);
  m.def("_dispatch_keyset_full", [] { return DispatchKeySet(DispatchKeySet::FULL); });
  m.def("_dispatch_keyset_full_after", [](DispatchKey k) {
    return DispatchKeySet(DispatchKeySet::FULL_AFTER, runtimeKey(k, "_dispatch_keyset_full_after"));
  });
  m.def("_dispatch_keyset_to_string", [](DispatchKeySet ks) { return toString(ks); });
  m.def("_dispatch_get_backend_keyset_from_autograd", &getBackendKeySetFromAutograd);
  m.def("_dispatch_get_runtime_keyset", &getRuntimeDispatchKeySet);
  m.def("_dispatch_keys", [](const Tensor& t) {
    OPDISPATCH_CHECK_VALUE(t.defined(), "_dispatch_keys needs a tensor");
    return t.key_set();
  });
  m.def(
      "_dispatch_pystub",
      [](const std::string& name, const std::string& overload) {
        return Dispatcher::singleton().getPyStub(OperatorName(name, overload));
      },
      py::arg("name"), py::arg("overload"),
      "(pymodule, context) that a C++ library recorded with set_python_module for the operator, or None. "
      "PyTorch: torch._C._dispatch_pystub.");
  m.def("_dispatch_has_backend_fallback",
        [](DispatchKey k) { return Dispatcher::singleton().hasBackendFallbackForDispatchKey(k); });

  // --- TLS ---------------------------------------------------------------------------
  m.def("_dispatch_tls_set_dispatch_key_excluded", &tls_set_dispatch_key_excluded);
  m.def("_dispatch_tls_is_dispatch_key_excluded", &tls_is_dispatch_key_excluded);
  m.def("_dispatch_tls_set_dispatch_key_included", &tls_set_dispatch_key_included);
  m.def("_dispatch_tls_is_dispatch_key_included", &tls_is_dispatch_key_included);
  m.def("_dispatch_tls_local_include_set", [] { return tls_local_dispatch_key_set().included_; });
  m.def(
      "_dispatch_default_included_set", [] { return default_included_set; },
      "The keys every thread includes until it excludes them (Note [BackendSelect is included by default]).");
  m.def("_dispatch_tls_local_exclude_set", [] { return tls_local_dispatch_key_set().excluded_; });
  // Each takes a DispatchKeySet or a DispatchKey (PyTorch's exclude guard takes only the first, its include
  // guard only the second).
  bindGuard<ExcludeDispatchKeyGuard, DispatchKeySet>(
      m, "_ExcludeDispatchKeyGuard",
      "with _ExcludeDispatchKeyGuard(keys): excludes the keys (a DispatchKeySet or one DispatchKey) for the block.")
      .def(py::init(&guardOfKey<ExcludeDispatchKeyGuard>), py::arg("key"));
  bindGuard<IncludeDispatchKeyGuard, DispatchKeySet>(
      m, "_IncludeDispatchKeyGuard",
      "with _IncludeDispatchKeyGuard(keys): includes the keys (a DispatchKey or a DispatchKeySet) for the block.")
      .def(py::init(&guardOfKey<IncludeDispatchKeyGuard>), py::arg("key"));
  bindHeldGuard<AutoDispatchBelowAutograd>(
      m, "_AutoDispatchBelowAutograd",
      "_AutoDispatchBelowAutograd(): excludes the autograd keys from its construction until __exit__ or its "
      "destruction; usable as `with _AutoDispatchBelowAutograd():`. PyTorch: same name.");
  m.def(
      "is_grad_enabled", &GradMode::is_enabled,
      "Whether grad mode is on in this thread (Note [Grad mode is its own flag]). PyTorch: torch._C.is_grad_enabled.");
  m.def("_set_grad_enabled", &GradMode::set_enabled, py::arg("enabled"),
        "Sets this thread's grad mode. PyTorch: torch._C._set_grad_enabled.");
  m.def(
      "_set_autograd_fallback_mode",
      [](std::string_view mode) {
        if (mode == "nothing" || mode == "warn") {
          setAutogradFallbackMode(mode == "warn" ? AutogradFallbackMode::Warn : AutogradFallbackMode::Nothing);
        } else if (mode == "error") {
          throw NotImplementedError(
              "_set_autograd_fallback_mode: mode 'error' is not implemented (nor is it in "
              "PyTorch 2.13); use 'warn' or 'nothing'");
        } else {
          throw ValueError(
              detail::str("_set_autograd_fallback_mode: unsupported mode '", mode, "'; expected 'warn' or 'nothing'"));
        }
      },
      py::arg("mode"),
      "Sets, for the process, what an operator with no autograd kernel gives outputs computed from a tensor "
      "that requires grad: 'warn' (the default), a grad_fn that warns at backward and passes no gradient on; "
      "'nothing', no grad_fn. PyTorch: torch._C._set_autograd_fallback_mode.");
  m.def(
      "_get_autograd_fallback_mode",
      [] { return getAutogradFallbackMode() == AutogradFallbackMode::Warn ? "warn" : "nothing"; },
      "The autograd fallback's mode, 'warn' or 'nothing'. PyTorch: torch._C._get_autograd_fallback_mode.");

  // --- registry inspection ---------------------------------------------------------
  m.def("_dispatch_dump", [](const std::string& name) {
    auto op = findOp(name);
    return op ? op->dumpState() : std::string();
  });
  m.def("_dispatch_dump_table", [](const std::string& name) {
    auto op = findOp(name);
    return op ? op->dumpComputedTable() : std::string();
  });
  m.def("_dispatch_check_invariants", [](const std::string& name) {
    if (auto op = findOp(name)) {
      op->checkInvariants();
    }
  });
  m.def("_dispatch_check_all_invariants", [] { Dispatcher::singleton().checkInvariants(); });
  m.def("_dispatch_has_kernel", [](const std::string& name) { return findOp(name).has_value(); });
  m.def("_dispatch_has_kernel_for_dispatch_key",
        [](const std::string& name, DispatchKey k) { return findOpOrThrow(name).hasKernelForDispatchKey(k); });
  m.def(
      "_dispatch_kernel_debug",
      [](const std::string& name, DispatchKey k) { return Dispatcher::singleton().kernelDebug(parseOpName(name), k); },
      "Where the newest kernel registered at the key for the operator was registered ('registered at file:line'), "
      "or None if it has none (or the operator does not exist).");
  m.def("_dispatch_kernel_for_dispatch_key_is_fallthrough",
        [](const std::string& name, DispatchKey k) { return findOpOrThrow(name).isKernelFallthroughKernel(k); });
  m.def("_dispatch_has_kernel_for_any_dispatch_key",
        [](const std::string& name, DispatchKeySet ks) { return findOpOrThrow(name).hasKernelForAnyDispatchKey(ks); });
  m.def("_dispatch_has_computed_kernel_for_dispatch_key",
        [](const std::string& name, DispatchKey k) { return findOpOrThrow(name).hasComputedKernelForDispatchKey(k); });
  m.def("_dispatch_find_dangling_impls", [] {
    std::vector<std::string> out;
    for (const auto& op : Dispatcher::singleton().findDanglingImpls()) {
      out.push_back(op.dumpState());
    }
    return out;
  });
  m.def("_dispatch_get_all_op_names", [] {
    std::vector<std::string> out;
    for (const auto& n : Dispatcher::singleton().getAllOpNames()) {
      out.push_back(n.toString());
    }
    return out;
  });
  m.def(
      "_dispatch_get_defined_op_names",
      [] {
        std::vector<std::string> out;
        Dispatcher& d = Dispatcher::singleton();
        for (const auto& n : d.getAllOpNames()) {
          if (d.findSchema(n)) {
            out.push_back(n.toString());
          }
        }
        return out;
      },
      "Names ('ns::name' or 'ns::name.overload') of the operators that have a schema, in the order their "
      "entries were first registered (unlike _dispatch_get_all_op_names, no impl-only operators).");
  m.def(
      "_dispatch_find_overload_names",
      [](const std::string& name) { return Dispatcher::singleton().findOverloadNames(name); },
      "The overload names ('' for the default) of the operators named `name` ('ns::op') that have a schema, in "
      "the order their entries were first registered; costs the number of overloads, not of operators.");
  m.def(
      "_dispatch_registration_generation", [] { return Dispatcher::singleton().registrationGeneration(); },
      "A counter that changes whenever an operator is defined or undefined.");
  m.def("_dispatch_take_static_registration_errors", &detail::takeStaticRegistrationErrors,
        "Errors of OPDISPATCH_LIBRARY blocks that failed while a shared library loaded (cleared by the call).");

  // --- operator handles -------------------------------------------------------------
  py::class_<OperatorHandle>(m, "_OperatorHandle", "A handle to a defined operator.")
      // The guards keep the schema while it is copied (Note [Reclaiming retired kernels]).
      // schema() and debug() are methods, as PyTorch's _OperatorHandle has them.
      .def("schema",
           [](const OperatorHandle& op) {
             CallGuard guard;
             return op.schema();
           })
      .def_property_readonly("name", [](const OperatorHandle& op) { return op.operator_name().name; })
      .def_property_readonly("overload_name", [](const OperatorHandle& op) { return op.operator_name().overload_name; })
      .def_property_readonly("tags",
                             [](const OperatorHandle& op) {
                               CallGuard guard;
                               return op.tags();
                             })
      .def("debug",
           [](const OperatorHandle& op) {
             CallGuard guard;
             return op.debug();
           })
      .def("has_schema", &OperatorHandle::hasSchema)
      .def(
          "call_boxed",
          [](const OperatorHandle& op, const py::args& args, const py::kwargs& kwargs) {
            return callHandle(op, nullptr, args, kwargs);
          },
          "Calls the operator as calling its OpOverload does (Note [One call path]).")
      .def(
          "redispatch_boxed",
          [](const OperatorHandle& op, DispatchKeySet ks, const py::args& args, const py::kwargs& kwargs) {
            return callHandle(op, &ks, args, kwargs);
          },
          "Calls the kernel for `keyset` (already restricted by the caller), as OpOverload.redispatch does.")
      .def("has_kernel_for_dispatch_key", &OperatorHandle::hasKernelForDispatchKey)
      .def("has_kernel_for_any_dispatch_key", &OperatorHandle::hasKernelForAnyDispatchKey)
      .def("has_computed_kernel_for_dispatch_key", &OperatorHandle::hasComputedKernelForDispatchKey)
      .def("dump_state", &OperatorHandle::dumpState)
      .def("dump_table", &OperatorHandle::dumpComputedTable)
      .def(
          "__eq__", [](const OperatorHandle& a, const OperatorHandle& b) { return a == b; }, py::is_operator())
      .def("__repr__",
           [](const OperatorHandle& op) { return "<_OperatorHandle " + op.operator_name().toString() + ">"; });
  m.def("_dispatch_find_schema_or_throw", [](const std::string& name, const std::string& overload) {
    return Dispatcher::singleton().findSchemaOrThrow(name, overload);
  });

  // --- libraries ------------------------------------------------------------------------
  m.def(
      "_set_fallthrough_kernel",
      [](py::object f) -> py::object {
        PyObject* previous = gFallthroughKernel;
        gFallthroughKernel = f.is_none() ? nullptr : f.release().ptr();
        return previous ? py::reinterpret_steal<py::object>(previous) : py::none();
      },
      "Registers the Python object that means 'fallthrough' when passed as a kernel (None: no such object); "
      "returns the previous one (or None).");
  m.def(
      "_set_python_registry",
      [](py::object defs, py::object impls, py::object check_kernel_slot, py::object checked_keys) {
        OPDISPATCH_CHECK_TYPE(PySet_Check(defs.ptr()) && PySet_Check(impls.ptr()) && PyAnySet_Check(checked_keys.ptr()),
                              "_set_python_registry needs the registry's defs and impls sets and a set of checked "
                              "keys");
        OPDISPATCH_CHECK_TYPE(PyCallable_Check(check_kernel_slot.ptr()),
                              "_set_python_registry needs a callable check_kernel_slot, not ",
                              pyTypeName(check_kernel_slot.ptr()));
        PythonRegistry& registry = pythonRegistry();
        setReference(registry.defs, defs.ptr());
        setReference(registry.impls, impls.ptr());
        setReference(registry.check_kernel_slot, check_kernel_slot.ptr());
        setReference(registry.checked_keys, checked_keys.ptr());
      },
      py::arg("defs"), py::arg("impls"), py::arg("check_kernel_slot"), py::arg("checked_keys"),
      "The Python registry's tables that _library_define / _library_impl keep, and the check a kernel's slot "
      "gets where it may be taken: check_kernel_slot(slot, ns, op_name, dispatch, site), run where the slot "
      "(_python_kernel_slot) is taken and for every kernel whose dispatch key (as passed) is in the set "
      "checked_keys (Note [Registration fast path]).");
  m.def(
      "_python_kernel_slot",
      [](py::handle ns, py::handle name, py::handle dispatch) {
        return pythonKernelSlot(strView(ns.ptr(), "ns"), strView(name.ptr(), "op_name"),
                                strView(dispatch.ptr(), "dispatch_key"));
      },
      py::arg("ns"), py::arg("op_name"), py::arg("dispatch_key"),
      "The Python registry's slot of a kernel that a library of namespace `ns` registers for `op_name` "
      "('name[.overload]', optionally 'ns::'-qualified) at `dispatch_key` (as passed; '' for none): "
      "'<ns>/<name[.overload]>/<dispatch_key>', seed 000's torch.library._impls key. The one place of that rule "
      "(_library_impl keeps registry.impls by it).");
  m.def(
      "_set_definition_listener",
      [](py::object listener, py::object watched) {
        OPDISPATCH_CHECK_TYPE(listener.is_none() || PyCallable_Check(listener.ptr()),
                              "_set_definition_listener needs a callable listener(qualname) or None, not ",
                              pyTypeName(listener.ptr()));
        OPDISPATCH_CHECK_TYPE(watched.is_none() || PyDict_Check(watched.ptr()),
                              "_set_definition_listener: watched must be a dict or None, not ",
                              pyTypeName(watched.ptr()));
        PythonRegistry& registry = pythonRegistry();
        setReference(registry.listener, listener.ptr());
        setReference(registry.watched, watched.ptr());
      },
      py::arg("listener"), py::arg("watched") = py::none(),
      "listener(qualname) runs after _library_define defined an operator of a namespace that is a key of the dict "
      "`watched` (None: of any namespace); None: no listener.");
  m.def(
      "_set_opoverload_resolver",
      [](py::object f) -> py::object {
        OPDISPATCH_CHECK_TYPE(f.is_none() || PyCallable_Check(f.ptr()),
                              "_set_opoverload_resolver needs a callable f(name, overload_name) or None, not ",
                              pyTypeName(f.ptr()));
        PyObject* previous = setOpOverloadResolver(f.ptr());
        return previous ? py::reinterpret_steal<py::object>(previous) : py::none();
      },
      "Registers f(name, overload_name) -> OpOverload, used for the op argument of Python fallbacks (None "
      "removes it); returns the previous one (or None).");
  m.def(
      "_dispatch_set_call_site_skip_paths",
      [](std::vector<std::string> paths) {
        SkippedSources& skipped = skippedSources();
        std::vector<std::string> previous = std::move(skipped.paths);
        skipped.paths = std::move(paths);
        ++skipped.version;
        return previous;
      },
      py::arg("paths"),
      "Sets the source files (and directories, ending in '/') whose frames are not a user's registration site "
      "(_python_call_site and the 'registered at' of Python kernels skip them); returns the previous list.");
  m.def(
      "_python_call_site_text", []() { return pythonCallSiteText(); },
      "'file:line' of _python_call_site (one str per site, cached), or None; what registrations record.");
  m.def(
      "_python_call_site", []() -> std::optional<std::pair<std::string, int>> { return pythonCallSiteFrame(); },
      "(file, line) of the innermost Python frame outside the paths of _dispatch_set_call_site_skip_paths (the "
      "user's registration site), or None. The same frame Python kernels record as 'registered at file:line'.");

  py::class_<Library>(m, "_DispatchLibrary",
                      "A set of registrations for one namespace, undone by reset() or "
                      "when the object dies.")
      .def(
          "define",
          [](Library& lib, const std::string& schema, const std::string& alias_analysis,
             const std::vector<std::string>& tags,
             py::handle site) { return defineFromPython(lib, schema, alias_analysis, tags, site).name; },
          py::arg("schema"), py::arg("alias_analysis") = "", py::arg("tags") = std::vector<std::string>{},
          py::arg("site") = "",
          "Defines an operator. site: where ('file:line', for debug output and duplicate-definition errors); "
          "'' (default): where the library was created; None: the innermost Python frame outside opdispatch.")
      .def(
          "impl",
          [](Library& lib, const std::string& name, const std::string& dispatch, py::handle func, bool with_keyset,
             bool check_aliasing, py::handle site) {
            return implFromPython(lib, name, dispatch, func, with_keyset, check_aliasing, registrationSite(site));
          },
          py::arg("name"), py::arg("dispatch"), py::arg("func"), py::arg("with_keyset") = false,
          py::arg("check_aliasing") = false, py::arg("site") = py::none(),
          "Registers the Python function `func` as the kernel of `name` at `dispatch`. check_aliasing: its tensor "
          "outputs may not share memory with its inputs or each other (Note [Post-kernel effects]). "
          "site: where it was registered ('file:line', for debug output), if the caller knows it already; "
          "None (default): the innermost Python frame outside opdispatch. Returns the site recorded.")
      .def(
          "fallback",
          [](Library& self, const std::string& dispatch, py::object func, bool with_keyset) {
            OPDISPATCH_CHECK_TYPE(PyCallable_Check(func.ptr()), "fallback(): the kernel must be callable, not ",
                                  pyTypeName(func.ptr()));
            DispatchKey key = effectiveKey(self, dispatch);
            self.fallback(withKey(
                dispatch, CppFunction::makeFromKernelFunction(
                              PythonKernelHolder::makeKernel(func.ptr(), key, with_keyset, /*is_fallback=*/true))
                              .debug(pythonCallSite())));
          },
          py::arg("dispatch"), py::arg("func"), py::arg("with_keyset") = false)
      .def(
          "fallback_fallthrough",
          [](Library& self, const std::string& dispatch) {
            self.fallback(withKey(dispatch, CppFunction::makeFallthrough()));
          },
          py::arg("dispatch") = "")
      .def("reset", &Library::reset)
      .def_property_readonly("ns", &Library::ns)
      .def_property_readonly(
          "kind",
          [](const Library& l) {
            return std::string(l.kind() == Library::DEF ? "DEF" : l.kind() == Library::IMPL ? "IMPL" : "FRAGMENT");
          })
      .def_property_readonly("dispatch_key", &Library::dispatch_key)
      .def(
          "def_",
          [](py::object self, const std::string& schema, const std::string& alias) {
            AliasAnalysisKind kind = parseAliasAnalysisKind(alias);
            defineWithAliasAnalysis(self.cast<Library&>(), parseSchema(schema), kind);
            return self;
          },
          py::arg("schema"), py::arg("alias") = "")
      .def(
          "def_legacy",
          [](py::object self, const std::string& schema) {
            // PyTorch defines it with a schema that specifies no kind: CONSERVATIVE (default).
            defineWithAliasAnalysis(self.cast<Library&>(), parseSchema(schema), std::nullopt);
            return self;
          },
          py::arg("schema"))
      .def(
          "def_name_t_t",
          [](py::object self, const std::string& name, const std::string& dispatch, const std::string& debug) {
            Library& lib = self.cast<Library&>();
            lib._def(parseName(name), identityKernel(dispatch, debug));
            // A schema inferred from the C++ function is CONSERVATIVE, as in PyTorch.
            Dispatcher::singleton().setAliasAnalysis(qualifiedIn(lib, parseName(name)),
                                                     AliasAnalysisKind::CONSERVATIVE);
            return self;
          },
          py::arg("name"), py::arg("dispatch") = "", py::arg("debug") = "default_def_name_t_t")
      .def(
          "def_schema_t_t",
          [](py::object self, const std::string& schema, const std::string& dispatch, const std::string& alias,
             const std::string& debug) {
            AliasAnalysisKind kind = parseAliasAnalysisKind(alias);
            FunctionSchema parsed = parseSchema(schema);
            Library& lib = self.cast<Library&>();
            OperatorName name = qualifiedIn(lib, parsed.operator_name());
            lib._def(std::move(parsed), identityKernel(dispatch, debug));
            Dispatcher::singleton().setAliasAnalysis(name, kind);
            return self;
          },
          py::arg("name"), py::arg("dispatch") = "", py::arg("alias") = "", py::arg("debug") = "default_def_schema_t_t")
      .def(
          "impl_t_t",
          [](py::object self, const std::string& name, const std::string& dispatch, const std::string& debug) {
            self.cast<Library&>().impl(name, identityKernel(dispatch, debug));
            return self;
          },
          py::arg("name"), py::arg("dispatch") = "", py::arg("debug") = "impl_t_t");

  m.def(
      "_dispatch_library",
      [](const std::string& kind, const std::string& ns, const std::string& dispatch, const std::string& file,
         uint32_t linenum) {
        return std::make_unique<Library>(parseKind(kind), ns, optionalKey(dispatch), file.c_str(), linenum);
      },
      py::arg("kind"), py::arg("name"), py::arg("dispatch"), py::arg("file") = "/dev/null", py::arg("linenum") = 0,
      "A registration library: kind 'DEF' | 'IMPL' | 'FRAGMENT', namespace, dispatch key name ('' for none).");

  if (PyModule_AddFunctions(m.ptr(), kRegistrationMethods) < 0) {
    throw py::error_already_set();
  }

  py::class_<RegistrationHandles>(m, "_RegistrationHandles",
                                  "Registrations undone by remove() or when the object dies.")
      .def("remove", &RegistrationHandles::remove, "Undoes the registrations (idempotent).");
  m.def(
      "_dispatch_register_default_fallback",
      [](const std::string& dispatch, py::object func, bool with_keyset, const std::string& debug) {
        OPDISPATCH_CHECK_TYPE(PyCallable_Check(func.ptr()),
                              "_dispatch_register_default_fallback(): the kernel must be callable, not ",
                              pyTypeName(func.ptr()));
        DispatchKey key = parseDispatchKey(dispatch);
        DispatchKeySet keys = getRuntimeDispatchKeySet(key);
        OPDISPATCH_CHECK_VALUE(!keys.empty(), "cannot register a fallback for dispatch key ", key);
        // One kernel for every runtime key of an alias key, as Library::fallback does.
        KernelFunction kernel = PythonKernelHolder::makeKernel(func.ptr(), key, with_keyset, /*is_fallback=*/true);
        auto out = std::make_unique<RegistrationHandles>();
        for (DispatchKey k : keys) {
          out->handles.push_back(Dispatcher::singleton().registerFallback(k, kernel, debug, FallbackKind::Default));
        }
        return out;
      },
      py::arg("dispatch"), py::arg("func"), py::arg("with_keyset") = false, py::arg("debug"),
      "Registers fn([keyset,] op, *args, **kwargs) as a default backend fallback of `dispatch` (each runtime key "
      "of an alias key): one opdispatch installs, which a user's fallback for the same key replaces (Note "
      "[Default fallbacks]). Returns the registrations (_RegistrationHandles); keep them alive.");
}

namespace {
/// What the call-site search needs to know about a code object, computed once
/// per code object (registrations in a loop or at import revisit the same ones).
struct CodeInfo {
  std::string file;
  bool internal = false;
  /// The SkippedSources version `internal` was computed for.
  uint64_t version = ~uint64_t(0);
  /// The last instruction offsets asked for, newest first, with their line
  /// and (once asked for) their "file:line" str (a strong reference): line
  /// numbers are computed by walking the code's line table, which is slow in
  /// long modules, and a loop registering a definition and a kernel asks for
  /// two offsets in turn.
  static constexpr int kRecent = 4;
  int recent_lasti[kRecent] = {-1, -1, -1, -1};
  int recent_line[kRecent] = {0, 0, 0, 0};
  PyObject* recent_text[kRecent] = {nullptr, nullptr, nullptr, nullptr};
  /// (Once asked for) "registered at <file>:<line>" of the recent ones.
  InternedString recent_debug[kRecent];
};

CodeInfo& codeInfo(PyCodeObject* code) {
  // Keyed by code objects kept alive by the map itself, so addresses are never reused.
  static std::unordered_map<PyCodeObject*, CodeInfo> infos;
  auto it = infos.find(code);
  if (it == infos.end()) {
    CodeInfo fresh;
    fresh.file = displayText(code->co_filename);  // (a path may hold undecodable bytes: surrogates)
    Py_INCREF(code);
    it = infos.emplace(code, std::move(fresh)).first;
  }
  CodeInfo& info = it->second;
  const SkippedSources& skipped = skippedSources();
  if (info.version != skipped.version) {
    info.internal = skipped.skips(info.file);
    info.version = skipped.version;
  }
  return info;
}

/// Moves `frame`'s instruction offset to the front of `info`'s recent ones
/// (computing its line if it is not among them).
void touchRecent(PyFrameObject* frame, CodeInfo& info) {
#if PY_VERSION_HEX >= 0x030B0000
  const int lasti = PyFrame_GetLasti(frame);
#else
  const int lasti = frame->f_lasti;
#endif
  int i = 0;
  while (i < CodeInfo::kRecent - 1 && info.recent_lasti[i] != lasti) {
    ++i;
  }
  int line;
  PyObject* text;
  InternedString debug;
  if (info.recent_lasti[i] == lasti) {
    line = info.recent_line[i];
    text = info.recent_text[i];
    debug = std::move(info.recent_debug[i]);
  } else {  // the oldest goes
    line = PyFrame_GetLineNumber(frame);
    text = nullptr;
    Py_XDECREF(info.recent_text[i]);
  }
  for (; i > 0; --i) {
    info.recent_lasti[i] = info.recent_lasti[i - 1];
    info.recent_line[i] = info.recent_line[i - 1];
    info.recent_text[i] = info.recent_text[i - 1];
    info.recent_debug[i] = std::move(info.recent_debug[i - 1]);
  }
  info.recent_lasti[0] = lasti;
  info.recent_line[0] = line;
  info.recent_text[0] = text;
  info.recent_debug[0] = std::move(debug);
}

/// The CodeInfo of the innermost Python frame outside the skipped sources
/// (where the user registered), from `from` (null: the current frame)
/// outwards, its offset first among its recent ones; null if none.
CodeInfo* callSiteInfo(PyFrameObject* from) {
  // (Registrations walk it several times each: the file names are read in place, without copies.)
  PyFrameObject* frame = from != nullptr ? from : PyEval_GetFrame();
  Py_XINCREF(frame);
  while (frame != nullptr) {
    PyCodeObject* code = PyFrame_GetCode(frame);
    CodeInfo& info = codeInfo(code);
    Py_DECREF(code);
    if (!info.internal) {
      touchRecent(frame, info);
      Py_DECREF(frame);
      return &info;
    }
    PyFrameObject* back = PyFrame_GetBack(frame);
    Py_DECREF(frame);
    frame = back;
  }
  return nullptr;
}
} // namespace

std::optional<std::pair<std::string, int>> pythonCallSiteFrame() {
  if (CodeInfo* info = callSiteInfo(nullptr)) {
    return std::make_pair(info->file, info->recent_line[0]);
  }
  return std::nullopt;
}

namespace {
/// The "file:line" str of `info`'s newest offset (made once).
PyObject* recentText(CodeInfo& info) {
  if (info.recent_text[0] == nullptr) {
    std::string text = info.file + ":" + std::to_string(info.recent_line[0]);
    info.recent_text[0] = PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "surrogateescape");
    if (info.recent_text[0] == nullptr) {
      throw py::error_already_set();
    }
  }
  return info.recent_text[0];
}

Site pythonCallSiteFrom(PyFrameObject* from) {
  CodeInfo* info = callSiteInfo(from);
  if (info == nullptr) {
    return {py::none(), {}};
  }
  py::object text = py::reinterpret_borrow<py::object>(recentText(*info));
  if (info->recent_debug[0].empty()) {
    info->recent_debug[0] = registeredAt(text);
  }
  return {std::move(text), info->recent_debug[0]};
}
} // namespace

py::object pythonCallSiteText(PyFrameObject* from) {
  CodeInfo* info = callSiteInfo(from);
  return info == nullptr ? py::none() : py::reinterpret_borrow<py::object>(recentText(*info));
}

std::string pythonCallSite() {
  if (auto site = pythonCallSiteFrame()) {
    return "registered at " + site->first + ":" + std::to_string(site->second);
  }
  return "registered from Python";
}

} // namespace opdispatch::python
