// Binding a Python call's arguments to a schema and running it through the
// call unit (Note [Python call arguments], Note [One call path]).
#include "PythonCall.h"

#include <algorithm>
#include <array>
#include <utility>

#include <opdispatch/core/Exception.h>
#include <opdispatch/dispatch/CallUnit.h>

#include "IValueConversion.h"
#include "PythonKernelHolder.h"

namespace py = pybind11;

namespace opdispatch::python {

namespace {

/// An exact int that fits in 64 bits.
bool isInt64(PyObject* obj) {
  if (!PyLong_CheckExact(obj)) {
    return false;
  }
#if PY_VERSION_HEX >= 0x030C0000
  if (PyUnstable_Long_IsCompact(reinterpret_cast<PyLongObject*>(obj))) {
    return true;  // one digit
  }
#else
  if (Py_SIZE(obj) >= -2 && Py_SIZE(obj) <= 2) {
    return true;  // at most two 30-bit digits
  }
#endif
  int overflow = 0;
  PyLong_AsLongLongAndOverflow(obj, &overflow);
  return overflow == 0;
}

constexpr uint32_t bitOf(TypeKind k) { return 1u << static_cast<unsigned>(k); }

/// Whether converting `obj` to an IValue of an argument's type and back
/// gives `obj` itself (so the conversion can be skipped for a Python kernel).
/// (Bit tests, most common kind first: a switch compiles to a jump table
/// whose indirect branch mispredicts from one argument to the next.)
bool keptAsIs(PyObject* obj, const ArgumentInfo& info) {
  if (info.optional && obj == Py_None) {
    return true;
  }
  const uint32_t kind = bitOf(info.kind);
  if (kind & bitOf(TypeKind::Tensor)) {
    return isTensor(obj);
  }
  if (kind & (bitOf(TypeKind::Int) | bitOf(TypeKind::SymInt))) {
    return isInt64(obj);
  }
  if (kind & bitOf(TypeKind::Float)) {
    return PyFloat_CheckExact(obj);
  }
  if (kind & (bitOf(TypeKind::Bool) | bitOf(TypeKind::SymBool))) {
    return PyBool_Check(obj);
  }
  if (kind & bitOf(TypeKind::Scalar)) {
    return PyBool_Check(obj) || PyFloat_CheckExact(obj) || isInt64(obj);
  }
  if (kind & bitOf(TypeKind::Str)) {
    if (PyUnicode_CheckExact(obj) && PyUnicode_AsUTF8AndSize(obj, nullptr) != nullptr) {
      return true;
    }
    PyErr_Clear();  // not valid UTF-8: the conversion raises the error that names the argument
  }
  return false;
}

} // namespace

BoundArguments::BoundArguments(const AnnotatedSchema& s, PyCallArguments call) : schema_(s) {
  // Every argument's entries are set below.
  objects_.resizeForOverwrite(kPrefix + s.num_arguments);
  values_.resizeForOverwrite(s.num_arguments);
  flags_.resizeForOverwrite(s.num_arguments);
  const FunctionSchema& schema = s.schema;
  const auto& arguments = schema.arguments();
  const size_t num_positional = s.num_positional;
  if (call.nargs > num_positional) {
    throw ArgumentTypeError(detail::str(schema.operator_name(), "() takes ", num_positional, " positional argument",
                                        num_positional == 1 ? "" : "s", " but ", call.nargs,
                                        " were given. Declaration: ", schema));
  }
  const size_t num_kw = call.kwnames ? static_cast<size_t>(PyTuple_GET_SIZE(call.kwnames)) : 0;
  size_t kw_used = 0;
  size_t i = 0;
  try {
    for (; i < s.num_arguments; ++i) {
      objects_[kPrefix + i] = nullptr;
      flags_[i] = 0;
      PyObject* value = i < call.nargs ? call.args[i] : nullptr;
      for (size_t k = 0; k < num_kw; ++k) {
        const std::string& name = arguments[i].name();
        if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(call.kwnames, k), name.c_str()) == 0) {
          if (value != nullptr) {
            throw ArgumentTypeError(
                detail::str(schema.operator_name(), "() got multiple values for argument '", name, "'"));
          }
          value = call.args[call.nargs + k];
          ++kw_used;
        }
      }
      const ArgumentInfo& info = s.argument_info[i];
      if (value != nullptr) {
        if (keptAsIs(value, info)) {
          objects_[kPrefix + i] = value;
          flags_[i] = kGiven | kKept;
          if (info.kind == TypeKind::Tensor && value != Py_None) {
            key_set_ = key_set_ | unpackImpl(value)->key_set();
          }
        } else {
          flags_[i] = kGiven;
          setValue(i, toIValue(value, arguments[i], schema, i));
        }
      } else if (info.has_default) {
        setValue(i, *arguments[i].default_value());
      } else {
        // A misspelled keyword explains the missing value: report it first (as Python does).
        checkKeywordsKnown(schema, call.kwnames, num_kw);
        throw ArgumentTypeError(detail::str(schema.operator_name(), "() missing value for argument '",
                                            arguments[i].name(), "'. Declaration: ", schema));
      }
    }
    if (kw_used != num_kw) {
      checkKeywordsKnown(schema, call.kwnames, num_kw);
    }
  } catch (...) {
    release(std::min<size_t>(i + 1, s.num_arguments));  // the destructor does not run when a constructor throws
    throw;
  }
}

BoundArguments::BoundArguments(const AnnotatedSchema& s, Stack& stack) : schema_(s) {
  objects_.resizeForOverwrite(kPrefix + s.num_arguments);
  values_.resizeForOverwrite(s.num_arguments);
  flags_.resizeForOverwrite(s.num_arguments);
  IValue* values = stack.data() + (stack.size() - s.num_arguments);
  for (size_t i = 0; i < s.num_arguments; ++i) {
    objects_[kPrefix + i] = nullptr;
    flags_[i] = kGiven;
    setValue(i, std::move(values[i]));
  }
  drop(stack, s.num_arguments);
}

void BoundArguments::setValue(size_t i, IValue v) {
  new (values_[i].bytes) IValue(std::move(v));
  flags_[i] |= kValue;
  needs_cleanup_ = true;
  forEachTensor(values_[i].get(), [&](TensorImpl& t) { key_set_ = key_set_ | t.key_set(); });
}

BoundArguments::~BoundArguments() { release(size()); }

void BoundArguments::release(size_t n) {
  if (!needs_cleanup_) {
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    if (flags_[i] & kOwned) {
      Py_DECREF(objects_[kPrefix + i]);
    }
    if (flags_[i] & kValue) {
      values_[i].get().~IValue();
    }
  }
}

void BoundArguments::pushIValues(Stack& stack) const {
  const FunctionSchema& schema = schema_.schema;
  for (size_t i = 0; i < size(); ++i) {
    if (PyObject* obj = kept(i)) {
      stack.push_back(toIValue(obj, schema.arguments()[i], schema, i));
    } else {
      stack.push_back(value(i));
    }
  }
}

bool BoundArguments::equalsDefault(size_t i) const {
  if (!(flags_[i] & kGiven)) {
    return true;
  }
  if (!schema_.argument_info[i].has_default) {
    return false;
  }
  const Argument& arg = schema_.schema.arguments()[i];
  const auto& d = arg.default_value();
  PyObject* obj = kept(i);
  if (obj == nullptr) {
    return value(i).equals(*d);
  }
  if (obj == Py_None) {
    return d->isNone();
  }
  return toIValue(obj, arg, schema_.schema, i).equals(*d);
}

PyObject* BoundArguments::convertToPython(size_t i) {
  PyObject*& slot = objects_[kPrefix + i];
  slot = argumentToPyObject(value(i), schema_.schema, i);
  flags_[i] |= kOwned;
  needs_cleanup_ = true;
  return slot;
}

PythonKernelArguments::PythonKernelArguments(BoundArguments& args)
    : schema_(args.schema().schema),
      buffer_(args.pythonObjects()) {
  const auto& arguments = schema_.arguments();
  const size_t n = arguments.size();
  const size_t num_positional = args.schema().num_positional;
  num_positional_ = num_positional;
  if (!args.schema().has_defaults && num_positional == n && args.allKept()) {
    return;  // every argument positional, given and kept: the bound objects as they are
  }
  while (num_positional_ > 0 && args.equalsDefault(num_positional_ - 1)) {
    --num_positional_;
  }
  if (!args.allKept()) {
    for (size_t i = 0; i < num_positional_; ++i) {
      args.pythonObject(i);
    }
  }
  size_t num_keywords = 0;
  for (size_t i = num_positional; i < n; ++i) {
    num_keywords += args.equalsDefault(i) ? 0 : 1;
  }
  if (num_keywords == 0) {
    return;
  }
  // The keyword values follow the positional ones: a buffer of their own.
  with_keywords_.resize(BoundArguments::kPrefix + num_positional_ + num_keywords);
  std::copy(buffer_ + BoundArguments::kPrefix, buffer_ + BoundArguments::kPrefix + num_positional_,
            with_keywords_.data() + BoundArguments::kPrefix);
  buffer_ = with_keywords_.data();
  kwnames_ = py::reinterpret_steal<py::object>(PyTuple_New(static_cast<Py_ssize_t>(num_keywords)));
  if (!kwnames_) {
    throw py::error_already_set();
  }
  size_t k = 0;
  for (size_t i = num_positional; i < n; ++i) {
    if (args.equalsDefault(i)) {
      continue;
    }
    PyObject* name = PyUnicode_FromStringAndSize(arguments[i].name().data(),
                                                 static_cast<Py_ssize_t>(arguments[i].name().size()));
    if (name == nullptr) {
      throw py::error_already_set();
    }
    PyTuple_SET_ITEM(kwnames_.ptr(), static_cast<Py_ssize_t>(k), name);
    buffer_[BoundArguments::kPrefix + num_positional_ + k] = args.pythonObject(i);
    ++k;
  }
}

// Note [Reused handler arguments]
// Each call through the Python key gives its handler a new args tuple and
// kwargs dict, as PyTorch's does. Most handlers drop both before they return
// (they unpack them, func(*args, **kwargs)); then only the call refers to
// them, and it keeps them for the next call, as CPython's zip() reuses its
// result tuple that nobody kept: a tuple of each small size with its items
// cleared, and an empty dict. A handler that keeps either (a tracer storing
// args in its graph) leaves a second reference, and the next call makes new
// ones; a dict the handler filled is not kept. The GIL orders the takers:
// a call nested in a handler finds the spare taken and makes its own.
// A spare is untracked by the collector while it waits, so no Python code
// can reach it (gc.get_objects(), gc.get_referrers()): a waiting tuple's
// items are null, and a reachable spare could be kept and then changed by
// the next call. A tuple is tracked again when it is handed out (its items
// may be containers); a dict tracks itself when a container goes in.

namespace {
/// Spare args tuples by size (1 .. kSpareTupleSizes), items null, owned (never freed); null when taken.
constexpr Py_ssize_t kSpareTupleSizes = 4;
std::array<PyObject*, kSpareTupleSizes + 1> gSpareTuples{};
/// A spare empty kwargs dict, owned (never freed); null when taken.
PyObject* gSpareDict = nullptr;

/// The spare object in `spare` (null if none), leaving the slot empty.
PyObject* takeSpare(PyObject*& spare) { return std::exchange(spare, nullptr); }

/// A new args tuple of `n` items (all null), the spare one if there is one.
py::tuple newArgsTuple(size_t n) {
  if (n >= 1 && n <= static_cast<size_t>(kSpareTupleSizes)) {
    if (PyObject* t = takeSpare(gSpareTuples[n])) {
      PyObject_GC_Track(t);
      return py::reinterpret_steal<py::tuple>(t);
    }
  }
  return py::tuple(n);
}

/// A new empty kwargs dict, the spare one if there is one.
py::dict newKwargsDict() {
  if (PyObject* d = takeSpare(gSpareDict)) {
    return py::reinterpret_steal<py::dict>(d);
  }
  return py::dict();
}
} // namespace

HandlerArguments::~HandlerArguments() {
  PyObject* t = args.ptr();
  const Py_ssize_t n = PyTuple_GET_SIZE(t);
  if (n >= 1 && n <= kSpareTupleSizes && Py_REFCNT(t) == 1 && gSpareTuples[n] == nullptr) {
    // Untracked before its items go: dropping one may run Python code, which must not find the tuple.
    PyObject_GC_UnTrack(t);  // (the collector may have untracked a tuple of untracked items already)
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* item = PyTuple_GET_ITEM(t, i);
      PyTuple_SET_ITEM(t, i, nullptr);
      Py_XDECREF(item);  // may run Python code, which may fill the spare slot meanwhile
    }
    if (gSpareTuples[n] == nullptr) {
      gSpareTuples[n] = args.release().ptr();
    }
  }
  PyObject* d = kwargs.ptr();
  if (Py_REFCNT(d) == 1 && PyDict_GET_SIZE(d) == 0 && gSpareDict == nullptr) {
    PyObject_GC_UnTrack(d);
    gSpareDict = kwargs.release().ptr();
  }
}

HandlerArguments popArgumentsToPython(const AnnotatedSchema& schema, Stack& stack) {
  BoundArguments bound(schema, stack);
  return argumentsToPython(bound);
}

HandlerArguments argumentsToPython(BoundArguments& bound) {
  PythonKernelArguments arguments(bound);
  PyObject* const* values = arguments.buffer() + BoundArguments::kPrefix;
  const size_t n = arguments.numPositional();
  py::tuple args = newArgsTuple(n);
  for (size_t i = 0; i < n; ++i) {
    Py_INCREF(values[i]);
    PyTuple_SET_ITEM(args.ptr(), static_cast<Py_ssize_t>(i), values[i]);
  }
  py::dict kwargs = newKwargsDict();
  if (PyObject* names = arguments.kwnames()) {
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(names); ++k) {
      if (PyDict_SetItem(kwargs.ptr(), PyTuple_GET_ITEM(names, k), values[n + static_cast<size_t>(k)]) != 0) {
        throw py::error_already_set();
      }
    }
  }
  return {std::move(args), std::move(kwargs)};
}

py::object checkedPythonResult(const FunctionSchema& schema, py::object out, const char* where) {
  const auto& returns = schema.returns();
  if (returns.empty() ? out.is_none()
                      : returns.size() == 1 && returns[0].type()->kind() == TypeKind::Tensor && isTensor(out.ptr())) {
    return out;
  }
  Stack stack;
  pushPythonResults(schema, out.ptr(), where, stack);
  PyObject* converted = popResultsToPython(schema, stack);
  if (converted == nullptr) {
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::object>(converted);
}

// Note [Python call entries]
// A Python call that reaches a boxed kernel converts its arguments to IValues
// and the results back. Some boxed kernels only pass the call on to Python
// code or further down the dispatcher: the Python key's fallback (which
// converts the IValues straight back to objects for __torch_dispatch__) and
// the PythonTLSSnapshot fallback in front of it. Such a kernel function may
// give Python calls an entry of its own that does the same work on the bound
// objects, so a call on a tensor subclass never makes IValues. The entry is
// chosen by the kernel's boxed function, like a Python kernel by its functor:
// a choice of conversion, the kernel and its effects stay the same.

namespace {
struct PythonCallEntries {
  static constexpr size_t kMax = 4;
  std::array<std::pair<KernelRef::BoxedKernelFunction*, PythonCallEntry>, kMax> entries{};
  size_t size = 0;
};
PythonCallEntries gPythonCallEntries;

PythonCallEntry pythonCallEntryOf(const KernelRef& kernel) {
  for (size_t i = 0; i < gPythonCallEntries.size; ++i) {
    if (gPythonCallEntries.entries[i].first == kernel.boxedFunction()) {
      return gPythonCallEntries.entries[i].second;
    }
  }
  return nullptr;
}
} // namespace

void setPythonCallEntry(KernelRef::BoxedKernelFunction* boxed, PythonCallEntry entry) {
  OPDISPATCH_INTERNAL_ASSERT(gPythonCallEntries.size < PythonCallEntries::kMax, "too many Python call entries");
  gPythonCallEntries.entries[gPythonCallEntries.size++] = {boxed, entry};
}

py::object PythonCallFrame::invoke(const OperatorHandle& op, const KernelRef& kernel, DispatchKeySet ks) {
  PythonKernelHolder* holder = PythonKernelHolder::of(kernel);
  if (holder == nullptr) {
    if (PythonCallEntry entry = pythonCallEntryOf(kernel)) {
      return entry(op, ks, args_);
    }
    Stack stack;
    stack.reserve(args_.size());
    args_.pushIValues(stack);
    kernel.callBoxed(op, ks, &stack);
    PyObject* out = popResultsToPython(args_.schema().schema, stack);
    if (out == nullptr) {
      throw py::error_already_set();
    }
    return py::reinterpret_steal<py::object>(out);
  }
  py::object func = holder->function();
  if (!func) {
    // Deregistered while this call was on its way here: run the table's
    // kernel now (no second round of effects: they belong to this call).
    DispatchKeySet now_ks;
    const KernelRef& now = op.entry().table().lookup(ks, &now_ks);
    holder->checkNotStillChosen(op, now);
    return invoke(op, now, now_ks);
  }
  PythonKernelArguments python_args(args_);
  return holder->call(func, op, ks, python_args);
}

const AnnotatedSchema& schemaForCall(const OperatorEntry& e) {
  const AnnotatedSchema* s = e.schemaPtr();
  OPDISPATCH_CHECK(s != nullptr, "operator ", e.operator_name(),
                   " has no schema: its definition was removed (the Library that defined it was destroyed)");
  return *s;
}

py::object callBound(const OperatorHandle& op, BoundArguments& args, const DispatchKeySet* redispatch_ks) {
  PythonCallFrame frame(args);
  if (redispatch_ks != nullptr) {
    return redispatchOperator(op, *redispatch_ks, frame);
  }
  return callOperator(op, frame);
}

py::object callFromPython(const OperatorHandle& op, PyCallArguments call, const DispatchKeySet* redispatch_ks) {
  BoundArguments args(schemaForCall(op.entry()), call);
  return callBound(op, args, redispatch_ks);
}

PyCallArgumentsFromTuple::PyCallArgumentsFromTuple(PyObject* args, PyObject* kwargs) {
  nargs_ = args ? static_cast<size_t>(PyTuple_GET_SIZE(args)) : 0;
  const size_t nkw = kwargs ? static_cast<size_t>(PyDict_GET_SIZE(kwargs)) : 0;
  flat_.resize(nargs_ + nkw);
  for (size_t i = 0; i < nargs_; ++i) {
    flat_[i] = PyTuple_GET_ITEM(args, i);
  }
  if (nkw == 0) {
    return;
  }
  // Converting a value can run Python code that changes `kwargs`: hold the names and values.
  kwnames_ = py::reinterpret_steal<py::object>(PyTuple_New(static_cast<Py_ssize_t>(nkw)));
  kwvalues_ = py::reinterpret_steal<py::object>(PyTuple_New(static_cast<Py_ssize_t>(nkw)));
  if (!kwnames_ || !kwvalues_) {
    throw py::error_already_set();
  }
  Py_ssize_t pos = 0;
  PyObject *key, *value;
  size_t k = 0;
  while (k < nkw && PyDict_Next(kwargs, &pos, &key, &value)) {
    Py_INCREF(key);
    PyTuple_SET_ITEM(kwnames_.ptr(), static_cast<Py_ssize_t>(k), key);
    Py_INCREF(value);
    PyTuple_SET_ITEM(kwvalues_.ptr(), static_cast<Py_ssize_t>(k), value);
    flat_[nargs_ + k] = value;
    ++k;
  }
}

} // namespace opdispatch::python
