// The Python-kernel trampoline.
//
// Note [Custom op kernel checks]
// A kernel registered by opdispatch.library.custom_op promises that its
// tensor outputs share memory with no input and no other output
// (KernelChecks::aliasing); it is checked on every call. PyTorch wraps every
// custom_op kernel in a Python function for it (torch/_library/custom_ops.py);
// checking here keeps the user's own function as the registered kernel, so a
// call runs no extra Python frame. (The versions of mutated arguments need no
// check: the dispatcher bumps them, Note [Version counters of mutated
// arguments].) "Shares memory" is
// TensorImpl::sharesMemoryWith (the same tensor, a view of it — meta tensors
// included — or overlapping storage bytes). The boxed trampoline below checks
// the IValues; the PyObject fast path (Note [PyObject dispatch]) checks the
// caller's objects. Kernels without checks pay one branch.
#include "PythonKernelHolder.h"

#include <unordered_map>

#include <pybind11/pybind11.h>

#include <opdispatch/core/Exception.h>
#include <opdispatch/dispatch/Dispatcher.h>

#include "Exceptions.h"
#include "IValueConversion.h"

namespace py = pybind11;

namespace opdispatch::python {

namespace {
PyObject* gOpOverloadResolver = nullptr;


/// Arguments prepended to a call: at most the OpOverload and the key set.
constexpr size_t kMaxPrepended = 2;
/// Calls with more arguments than this build their argument array on the heap.
constexpr size_t kInlineArgs = 16;

/// (index, tensor) for each tensor in `v` (a Tensor, a list of tensors, or neither).
void appendTensors(const IValue& v, size_t index, ArgumentTensors& out) {
  if (v.isTensor()) {
    out.emplace_back(index, v.toTensor());
  } else if (v.isTensorList()) {
    for (const Tensor& t : v.toTensorList()) {
      out.emplace_back(index, t);
    }
  } else if (v.isOptionalTensorList()) {
    for (const auto& t : v.toOptionalTensorList()) {
      if (t && t->defined()) {
        out.emplace_back(index, *t);
      }
    }
  }
}

/// (index, tensor) for each tensor among the last `n` values of `stack`.
ArgumentTensors topTensors(const Stack& stack, size_t n) {
  ArgumentTensors out;
  const IValue* first = stack.data() + (stack.size() - n);
  for (size_t i = 0; i < n; ++i) {
    appendTensors(first[i], i, out);
  }
  return out;
}
} // namespace

void checkResultsDoNotAlias(const FunctionSchema& schema, const std::string& where, const ArgumentTensors& args,
                            const Stack& stack) {
  auto results = topTensors(stack, schema.returns().size());
  for (size_t k = 0; k < results.size(); ++k) {
    const TensorImpl& out = *results[k].second.unsafeGetTensorImpl();
    for (const auto& [index, arg] : args) {
      if (out.sharesMemoryWith(*arg.unsafeGetTensorImpl())) {
        throwOutputAliases(schema, where, results[k].first, false, schema.arguments()[index].name(),
                           &out == arg.unsafeGetTensorImpl());
      }
    }
    for (size_t j = 0; j < k; ++j) {
      if (out.sharesMemoryWith(*results[j].second.unsafeGetTensorImpl())) {
        throwOutputAliases(schema, where, results[k].first, true, std::to_string(results[j].first),
                           &out == results[j].second.unsafeGetTensorImpl());
      }
    }
  }
}

void throwOutputAliases(const FunctionSchema& schema, const std::string& where, size_t return_index,
                        bool other_is_return, const std::string& other, bool same_tensor) {
  std::string what = other_is_return ? "return " + other : "argument '" + other + "'";
  throw Error(detail::str(
      schema.operator_name(), ": return ", return_index, " of the ", where,
      same_tensor ? " is the same tensor as " : " shares memory with ", what,
      ". The output of a custom operator must not be one of its inputs and may not alias its inputs or its other "
      "outputs (the result would silently change when they do). Return a new tensor instead, e.g. `return ",
      other_is_return ? "out" : other, ".clone()`, or define the operator with a schema that declares the alias."));
}

PyObject* setOpOverloadResolver(PyObject* resolver) {
  if (resolver == Py_None) {
    resolver = nullptr;
  }
  Py_XINCREF(resolver);
  PyObject* previous = gOpOverloadResolver;
  gOpOverloadResolver = resolver;
  return previous;
}

PyObject* dispatchKeySetObject(DispatchKeySet ks) {
  // Key sets seen by kernels are few (a handful per program); the cache holds
  // one object each for the life of the process.
  static std::unordered_map<uint64_t, PyObject*> cache;
  auto it = cache.find(ks.raw_repr());
  if (it != cache.end()) {
    return it->second;
  }
  PyObject* obj = py::cast(ks).release().ptr();
  cache.emplace(ks.raw_repr(), obj);
  return obj;
}


PythonKernelHolder::PythonKernelHolder(PyObject* func, DispatchKey key, bool with_keyset, bool is_fallback,
                                       KernelChecks checks)
    : func_(func),
      where_(detail::str(is_fallback ? "Python fallback" : "Python kernel", " registered at ", key)),
      with_keyset_(with_keyset),
      is_fallback_(is_fallback),
      checks_(checks) {
  Py_INCREF(func_);
}

PythonKernelHolder::~PythonKernelHolder() { retire(); }

void PythonKernelHolder::retire() {
  if (!interpreterAlive()) {
    func_ = nullptr;
    return;
  }
  py::gil_scoped_acquire gil;
  PyObject* f = func_;
  func_ = nullptr;
  Py_XDECREF(f);
}

KernelFunction PythonKernelHolder::makeKernel(PyObject* func, DispatchKey key, bool with_keyset, bool is_fallback,
                                             KernelChecks checks) {
  return KernelFunction::makeFromBoxedFunctor(
      std::make_unique<PythonKernelHolder>(func, key, with_keyset, is_fallback, checks));
}

PythonKernelHolder* PythonKernelHolder::of(const KernelFunction& k) {
  return k.isBoxedFunctor<PythonKernelHolder>() ? static_cast<PythonKernelHolder*>(k.functor()) : nullptr;
}

PyObject* PythonKernelHolder::callPython(const py::object& func, const OperatorHandle& op, DispatchKeySet ks,
                                         PyObject* const* args, size_t nargs, PyObject* kwargs) const {
  if (!with_keyset_ && !is_fallback_) {
    return PyObject_VectorcallDict(func.ptr(), args, nargs, kwargs);
  }
  PyObject* inline_buf[kMaxPrepended + kInlineArgs];
  std::vector<PyObject*> heap_buf;
  PyObject** buf = inline_buf;
  if (nargs > kInlineArgs) {
    heap_buf.resize(nargs + kMaxPrepended);
    buf = heap_buf.data();
  }
  // PyTorch's order: fn(keyset, op, *args, **kwargs).
  size_t n = 0;
  if (with_keyset_) {
    buf[n++] = dispatchKeySetObject(ks);
  }
  py::object overload;
  if (is_fallback_) {
    OPDISPATCH_CHECK(gOpOverloadResolver != nullptr, "cannot call the ", where_, " for ", op.operator_name(),
                     ": no OpOverload resolver is installed (opdispatch.ops installs one; or call "
                     "opdispatch._C._set_opoverload_resolver(f) with f(name, overload_name) -> OpOverload)");
    overload = py::reinterpret_borrow<py::object>(gOpOverloadResolver)(op.operator_name().name,
                                                                        op.operator_name().overload_name);
    buf[n++] = overload.ptr();
  }
  for (size_t i = 0; i < nargs; ++i) {
    buf[n++] = args[i];
  }
  return PyObject_VectorcallDict(func.ptr(), buf, n, kwargs);
}

void PythonKernelHolder::operator()(const OperatorHandle& op, DispatchKeySet ks, Stack* stack) {
  py::gil_scoped_acquire gil;
  if (OPDISPATCH_UNLIKELY(func_ == nullptr)) {
    // Deregistered while this call was on its way here: use the new table
    // entry. If the table still leads here, redispatching would recurse forever.
    const KernelFunction& now = op.entry().lookup(ks & op.entry().nonFallthroughKeys());
    OPDISPATCH_CHECK(now.functor() != this, "the ", where_, " for ", op.operator_name(),
                     " was removed while this call was being dispatched to it; call the operator again");
    py::gil_scoped_release nogil;
    op.redispatchBoxed(ks, stack);
    return;
  }
  // A strong reference for the whole call: converting the arguments can run
  // Python code (a collection, the OpOverload resolver), during which another
  // thread may retire this kernel and drop func_.
  py::object func = function();
  const FunctionSchema& schema = op.schema();
  ArgumentTensors arg_tensors;
  if (checks_.aliasing) {
    arg_tensors = topTensors(*stack, schema.arguments().size());
  }
  auto [args, kwargs] = popArgumentsToPython(schema, *stack);
  py::tuple args_tuple = py::reinterpret_steal<py::tuple>(args);
  py::dict kwargs_dict = py::reinterpret_steal<py::dict>(kwargs);
  PyObject* result = callPython(func, op, ks, &PyTuple_GET_ITEM(args_tuple.ptr(), 0),
                                static_cast<size_t>(PyTuple_GET_SIZE(args_tuple.ptr())),
                                PyDict_GET_SIZE(kwargs_dict.ptr()) ? kwargs_dict.ptr() : nullptr);
  if (result == nullptr) {
    throw py::error_already_set();
  }
  py::object owned = py::reinterpret_steal<py::object>(result);
  pushPythonResults(schema, result, where_.c_str(), *stack);
  if (checks_.aliasing) {
    checkResultsDoNotAlias(schema, where_, arg_tensors, *stack);
  }
}

} // namespace opdispatch::python
