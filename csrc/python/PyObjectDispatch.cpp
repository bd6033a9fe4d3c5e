// Note [PyObject dispatch]
// When a Python call reaches a Python kernel, converting the arguments to
// IValues and back is pure overhead. This path checks the arguments against
// the schema without converting them, computes the dispatch key set straight
// from the tensor objects, and hands the caller's own objects to the kernel.
// It applies only where the IValue round trip would give the kernel exactly
// those objects: a positional call; every argument a Tensor (or None for
// Tensor?), an exact int that fits int64, a bool, an ASCII str or an exact
// float, or a Scalar of those (other values may fail to convert); the last
// argument passed not equal to its default (the round trip drops trailing
// defaults, as PyTorch's parseIValuesToPyArgsKwargs does); no keyword-only
// argument without a default. Mutated arguments get their versions bumped as
// on the generic path (Note [Version counters of mutated arguments]). Results
// that are one Tensor (or nothing) pass through after a type check; others
// take the generic conversion. A call that reaches a C++ kernel is boxed with
// the key set computed here. Anything else goes the generic way, so
// the behaviour is the same on both paths; that includes the per-call checks
// a kernel may ask for (Note [Custom op kernel checks]). PyTorch's "PyObject
// dispatch".
#include "PyObjectDispatch.h"

#include <unordered_map>
#include <vector>

#include <pybind11/pybind11.h>

#include <opdispatch/core/Exception.h>
#include <opdispatch/dispatch/Dispatcher.h>

#include "Exceptions.h"
#include "IValueConversion.h"
#include "PythonKernelHolder.h"
#include "PythonTensor.h"

namespace py = pybind11;

namespace opdispatch::python {

enum class ArgKind : uint8_t { Tensor, OptionalTensor, Int, Bool, Float, Str, Scalar };

struct FastArg {
  ArgKind kind;
  /// The default, when it is one the fast path can compare against (else the
  /// argument may not be the last one passed).
  std::optional<IValue> comparable_default;
  bool has_default;
};

struct FastCallInfo {
  bool eligible = false;
  bool returns_tensor = false; ///< exactly one Tensor return (else: none)
  std::vector<FastArg> args; ///< the positional arguments
  /// Positional arguments written to (Note [Version counters of mutated arguments]).
  std::vector<uint32_t> mutated;
};

namespace {

std::optional<ArgKind> kindOf(TypePtr t) {
  switch (t->kind()) {
    case TypeKind::Tensor:
      return ArgKind::Tensor;
    case TypeKind::Int:
    case TypeKind::SymInt:
      return ArgKind::Int;
    case TypeKind::Bool:
      return ArgKind::Bool;
    case TypeKind::Float:
      return ArgKind::Float;
    case TypeKind::Str:
      return ArgKind::Str;
    case TypeKind::Scalar:
      return ArgKind::Scalar;
    case TypeKind::Optional:
      if (t->elem()->kind() == TypeKind::Tensor) {
        return ArgKind::OptionalTensor;
      }
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

FastCallInfo computeInfo(const FunctionSchema& schema) {
  FastCallInfo info;
  const auto& returns = schema.returns();
  if (returns.size() > 1 || (returns.size() == 1 && returns[0].type()->kind() != TypeKind::Tensor)) {
    return info;
  }
  info.returns_tensor = returns.size() == 1;
  for (const Argument& a : schema.arguments()) {
    if (a.kwarg_only()) {
      if (!a.default_value()) {
        return info;
      }
      continue;
    }
    auto kind = kindOf(a.type());
    if (!kind) {
      return info;
    }
    if (a.is_write()) {
      info.mutated.push_back(static_cast<uint32_t>(info.args.size()));
    }
    FastArg fa{*kind, std::nullopt, a.default_value().has_value()};
    if (fa.has_default) {
      const IValue& d = *a.default_value();
      if (d.isNone() || d.isInt() || d.isBool() || d.isDouble()) {
        fa.comparable_default = d;
      }
    }
    info.args.push_back(std::move(fa));
  }
  info.eligible = true;
  return info;
}

const FastCallInfo* infoFor(const AnnotatedSchema* s, FastCallCache& cache) {
  if (cache.schema == s) {
    return cache.info;
  }
  // Schemas are never freed (Note [Kernel lifetime]), so their addresses are stable keys.
  static std::unordered_map<const AnnotatedSchema*, FastCallInfo> infos;
  auto it = infos.find(s);
  if (it == infos.end()) {
    it = infos.emplace(s, computeInfo(s->schema)).first;
  }
  cache.schema = s;
  cache.info = &it->second;
  return cache.info;
}

/// Whether `obj` is an int that fits int64 (larger ones raise OverflowError on the generic path).
bool isInt64(PyObject* obj) {
  if (!PyLong_CheckExact(obj)) {
    return false;
  }
  int overflow = 0;
  PyLong_AsLongLongAndOverflow(obj, &overflow);
  return overflow == 0;
}

/// Whether `obj` is the value the IValue round trip of `kind` returns
/// unchanged (and that converts without error: ints that fit int64, ASCII
/// strings; the generic path reports the others).
bool passesUnchanged(ArgKind kind, PyObject* obj) {
  switch (kind) {
    case ArgKind::Tensor:
      return isTensor(obj);
    case ArgKind::OptionalTensor:
      return obj == Py_None || isTensor(obj);
    case ArgKind::Int:
      return isInt64(obj);
    case ArgKind::Bool:
      return PyBool_Check(obj);
    case ArgKind::Float:
      return PyFloat_CheckExact(obj);
    case ArgKind::Str:
      return PyUnicode_CheckExact(obj) && PyUnicode_IS_ASCII(obj);
    case ArgKind::Scalar:
      return isInt64(obj) || PyFloat_CheckExact(obj) || PyBool_Check(obj);
  }
  return false;
}

bool equalsDefault(PyObject* obj, const IValue& d) {
  if (d.isNone()) {
    return obj == Py_None;
  }
  if (d.isBool()) {
    return PyBool_Check(obj) && (obj == Py_True) == d.toBool();
  }
  if (d.isInt()) {
    if (!PyLong_CheckExact(obj)) {
      return false;
    }
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
    return overflow == 0 && v == d.toInt();
  }
  return PyFloat_CheckExact(obj) && PyFloat_AS_DOUBLE(obj) == d.toDouble();
}

} // namespace

bool tryPyObjectDispatch(OperatorEntry& entry, FastCallCache& cache, PyObject* const* args, size_t nargs,
                         const DispatchKeySet* redispatch_ks, PyObject** result) {
  const AnnotatedSchema* s = entry.schemaPtr();
  if (s == nullptr) {
    return false;
  }
  const FastCallInfo& info = *infoFor(s, cache);
  if (!info.eligible || nargs > info.args.size()) {
    return false;
  }
  for (size_t i = nargs; i < info.args.size(); ++i) {
    if (!info.args[i].has_default) {
      return false;
    }
  }
  if (nargs > 0) {
    const FastArg& last = info.args[nargs - 1];
    if (last.has_default && (!last.comparable_default || equalsDefault(args[nargs - 1], *last.comparable_default))) {
      return false;
    }
  }
  DispatchKeySet tensor_keys;
  for (size_t i = 0; i < nargs; ++i) {
    PyObject* a = args[i];
    if (!passesUnchanged(info.args[i].kind, a)) {
      return false;
    }
    if (info.args[i].kind <= ArgKind::OptionalTensor && a != Py_None) {
      tensor_keys = tensor_keys | unpackImpl(a)->key_set();
    }
  }
  DispatchKeySet ks = redispatch_ks ? (*redispatch_ks & entry.nonFallthroughKeys())
                                    : entry.computeDispatchKeySet(tensor_keys);
  PythonKernelHolder* holder = PythonKernelHolder::of(entry.lookup(ks));
  if (holder == nullptr) {
    // A C++ kernel: box the arguments (they bind, as checked above) and call
    // the kernel of `ks`, without extracting the key set a second time.
    *result = pythonEntry([&]() -> PyObject* {
      Stack stack;
      pushArgumentsForSchema(s->schema, args, nargs, nullptr, stack);
      entry.callKernelBoxed(OperatorHandle(&entry), *s, ks, &stack);
      return popResultsToPython(s->schema, stack);
    });
    return true;
  }
  py::object func = holder->function();
  if (!func) {
    return false;  // retired: the generic path redispatches
  }
  PyObject* out = holder->callPython(func, OperatorHandle(&entry), ks, args, nargs, nullptr);
  if (out == nullptr) {
    *result = nullptr;
    return true;
  }
  if (!info.mutated.empty() && entry.bumpsVersions(ks)) {
    for (uint32_t i : info.mutated) {
      if (i < nargs && args[i] != Py_None) {
        unpackImpl(args[i])->bump_version();
      }
    }
  }
  const KernelChecks& checks = holder->checks();
  auto isTensorArg = [&](size_t i) { return info.args[i].kind <= ArgKind::OptionalTensor && args[i] != Py_None; };
  if (info.returns_tensor ? isTensor(out) : out == Py_None) {
    if (checks.aliasing && out != Py_None) {
      const TensorImpl* o = unpackImpl(out);
      for (size_t i = 0; i < nargs; ++i) {
        if (isTensorArg(i) && o->sharesMemoryWith(*unpackImpl(args[i]))) {
          bool same = o == unpackImpl(args[i]);
          Py_DECREF(out);
          *result = pythonEntry([&]() -> PyObject* {
            throwOutputAliases(s->schema, holder->where(), 0, false, s->schema.arguments()[i].name(), same);
          });
          return true;
        }
      }
    }
    *result = out;
    return true;
  }
  *result = pythonEntry([&]() -> PyObject* {
    py::object owned = py::reinterpret_steal<py::object>(out);
    Stack stack;
    pushPythonResults(s->schema, out, holder->where().c_str(), stack);
    if (checks.aliasing) {
      ArgumentTensors arg_tensors;
      for (size_t i = 0; i < nargs; ++i) {
        if (isTensorArg(i)) {
          arg_tensors.emplace_back(i, unpackTensor(args[i]));
        }
      }
      checkResultsDoNotAlias(s->schema, holder->where(), arg_tensors, stack);
    }
    return popResultsToPython(s->schema, stack);
  });
  return true;
}

} // namespace opdispatch::python
