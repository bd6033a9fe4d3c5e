// The Python-kernel trampoline: calling a Python function as a kernel, from
// a Python call (with its bound objects) or a boxed call (with IValues).
#include "PythonKernelHolder.h"

#include <unordered_map>
#include <vector>

#include <opdispatch/core/Exception.h>
#include <opdispatch/dispatch/OperatorHandle.h>

#include "Exceptions.h"
#include "IValueConversion.h"
#include "PythonCall.h"

namespace py = pybind11;

namespace opdispatch::python {

namespace {
PyObject* gOpOverloadResolver = nullptr;
} // namespace

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

namespace {
/// "Python kernel registered at <key>" or "Python fallback registered at
/// <key>": one string per kind and key, which every kernel of them shares
/// (a string per kernel was a heap block per registration).
const std::string* whereText(bool is_fallback, DispatchKey key) {
  static const std::vector<std::string> texts = [] {
    std::vector<std::string> t;
    t.reserve(2 * static_cast<size_t>(kNumDispatchKeys));
    for (const char* kind : {"Python kernel", "Python fallback"}) {
      for (int i = 0; i < kNumDispatchKeys; ++i) {
        t.push_back(std::string(kind) + " registered at " + toString(static_cast<DispatchKey>(i)));
      }
    }
    return t;
  }();
  return &texts[static_cast<size_t>((is_fallback ? kNumDispatchKeys : 0) + static_cast<int>(key))];
}
} // namespace

PythonKernelHolder::PythonKernelHolder(PyObject* func, DispatchKey key, bool with_keyset, bool is_fallback)
    : func_(func),
      where_(whereText(is_fallback, key)),
      with_keyset_(with_keyset),
      is_fallback_(is_fallback) {
  Py_INCREF(func_);
}

PythonKernelHolder::~PythonKernelHolder() {
  // Usually retired at deregistration already; the Reclaimer frees it later
  // on any thread, which must then not wait for the GIL for nothing.
  if (func_ != nullptr) {
    retire();
  }
}

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

KernelFunction PythonKernelHolder::makeKernel(PyObject* func, DispatchKey key, bool with_keyset, bool is_fallback) {
  return KernelFunction::makeFromBoxedFunctor(
      std::make_unique<PythonKernelHolder>(func, key, with_keyset, is_fallback));
}

void PythonKernelHolder::checkNotStillChosen(const OperatorHandle& op, KernelRef now) const {
  OPDISPATCH_CHECK(now.functor() != this, "the ", *where_, " for ", op.operator_name(),
                   " was removed while this call was being dispatched to it; call the operator again");
}

py::object PythonKernelHolder::callRaw(const py::object& func, const OperatorHandle& op, DispatchKeySet ks,
                                       PythonKernelArguments& args) const {
  // PyTorch's order: fn(keyset, op, *args, **kwargs), in the free leading slots.
  PyObject** buffer = args.buffer();
  size_t first = BoundArguments::kPrefix;
  py::object overload;
  if (is_fallback_) {
    OPDISPATCH_CHECK(gOpOverloadResolver != nullptr, "cannot call the ", *where_, " for ", op.operator_name(),
                     ": no OpOverload resolver is installed (opdispatch.ops installs one; or call "
                     "opdispatch._C._set_opoverload_resolver(f) with f(name, overload_name) -> OpOverload)");
    overload = py::reinterpret_borrow<py::object>(gOpOverloadResolver)(op.operator_name().name,
                                                                       op.operator_name().overload_name);
    buffer[--first] = overload.ptr();
  }
  if (with_keyset_) {
    buffer[--first] = dispatchKeySetObject(ks);
  }
  size_t nargs = BoundArguments::kPrefix - first + args.numPositional();
  if (first > 0) {
    nargs |= PY_VECTORCALL_ARGUMENTS_OFFSET;  // buffer[first - 1] is free for the callee
  }
  PyObject* out = PyObject_Vectorcall(func.ptr(), buffer + first, nargs, args.kwnames());
  if (out == nullptr) {
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::object>(out);
}

py::object PythonKernelHolder::call(const py::object& func, const OperatorHandle& op, DispatchKeySet ks,
                                    PythonKernelArguments& args) const {
  return checkedPythonResult(args.schema(), callRaw(func, op, ks, args), where_->c_str());
}

void PythonKernelHolder::operator()(const OperatorHandle& op, DispatchKeySet ks, Stack* stack) {
  py::gil_scoped_acquire gil;
  // A strong reference for the whole call: converting the arguments can run
  // Python code (a collection, the OpOverload resolver), during which another
  // thread may retire this kernel and drop func_.
  py::object func = function();
  if (OPDISPATCH_UNLIKELY(!func)) {
    // Deregistered while this call was on its way here: run the table's kernel now.
    DispatchKeySet now_ks;
    const KernelRef& now = op.entry().table().lookup(ks, &now_ks);
    checkNotStillChosen(op, now);
    py::gil_scoped_release nogil;
    now.callBoxed(op, now_ks, stack);
    return;
  }
  BoundArguments bound(schemaForCall(op.entry()), *stack);
  PythonKernelArguments args(bound);
  py::object out = callRaw(func, op, ks, args);
  pushPythonResults(args.schema(), out.ptr(), where_->c_str(), *stack);
}

} // namespace opdispatch::python
