// The PythonDispatcher key's fallback and the guards that turn the Python
// dispatcher on and off. See Note [The Python dispatcher].
//
// Note [The Python dispatcher]
// OpOverload.py_impl(key) kernels are data until the Python dispatcher is on
// (opdispatch._dispatch.python.enable_python_dispatcher, a per-thread state):
// then the thread includes the PythonDispatcher key, the highest key, so
// every call reaches this fallback first. It
//  1. takes k, the highest key of the call's key set below PythonDispatcher:
//     the kernel the call would reach without the Python dispatcher;
//  2. asks the OpOverload which handler serves k: its `_dispatch_cache`
//     dict (one lookup), else `_get_dispatch(k)` (resolve_key over the C++
//     registrations and the py_impl kernels, cached). Every (de)registration
//     of a kernel or fallback anywhere drops all cached answers
//     (Dispatcher::kernelGeneration); py_impl drops the operator's own;
//  3. a Python callable (a py_impl kernel; for the Python key, the handler
//     that runs the active mode's py_impl(ModeClass) kernel) gets the call's
//     arguments as PyTorch converts them for Python kernels, and its result is
//     checked against the schema's returns;
//  4. a DispatchKey means "no Python kernel": the C++ table's kernel for k
//     runs (resolve_key agrees with the table), with the call's key set
//     unchanged, PythonDispatcher included. Its redispatches therefore come
//     back here (Note [FULL_AFTER keeps the Python dispatcher]), so py_impl
//     kernels are consulted at every key a call passes, e.g. the CPU kernel
//     after an autograd kernel.
// The call takes on the post-kernel effects of k's table entry (version
// bumps, the alias check) whichever of 3 and 4 runs, so mutated arguments
// are bumped once. With the Python dispatcher off, no key set
// has PythonDispatcher and calls never come here: they cost what they cost
// without it.
#include "PythonDispatcher.h"

#include "ContextManager.h"

#include <memory>
#include <string>
#include <utility>

#include <opdispatch/core/Exception.h>
#include <opdispatch/dispatch/CallUnit.h>
#include <opdispatch/dispatch/Dispatcher.h>
#include <opdispatch/dispatch/LocalDispatchKeySet.h>

#include "DispatchKeyCaster.h"
#include "IValueConversion.h"
#include "PythonCall.h"
#include "PythonFallbackKernel.h"

namespace py = pybind11;

namespace opdispatch::python {

namespace {

/// opdispatch._ops._clear_dispatch_caches and the kernel generation it last ran at (GIL held).
struct CacheState {
  py::object clear;
  uint64_t generation = ~uint64_t(0);
};

/// The handler serving key `k` of `op` (GIL held): a DispatchKey or a Python callable.
py::object handlerFor(const OperatorHandle& op, DispatchKey k) {
  static CacheState* state = new CacheState();  // never freed: holds a Python object past finalisation
  uint64_t generation = Dispatcher::singleton().kernelGeneration();
  if (generation != state->generation) {
    if (!state->clear) {
      state->clear = py::module_::import("opdispatch._ops").attr("_clear_dispatch_caches");
    }
    state->clear();
    state->generation = generation;
  }
  py::object func = opOverload(op);
  py::object cache = func.attr("_dispatch_cache");
  OPDISPATCH_CHECK_TYPE(PyDict_Check(cache.ptr()), op.operator_name(),
                        "._dispatch_cache must be a dict (it maps DispatchKey -> handler)");
  py::object key = py::cast(k);
  PyObject* hit = PyDict_GetItemWithError(cache.ptr(), key.ptr());
  if (hit != nullptr) {
    return py::reinterpret_borrow<py::object>(hit);
  }
  if (PyErr_Occurred()) {
    throw py::error_already_set();
  }
  return func.attr("_get_dispatch")(key);
}

/// A py_impl kernel standing in for the table entry of a key for one call.
class PythonHandlerKernel final : public OperatorKernel {
 public:
  PythonHandlerKernel(py::object handler, DispatchKey k)
      : handler_(std::move(handler)),
        where_(detail::str("Python dispatcher's kernel for ", k)) {}
  std::string describe() const override { return where_; }

  /// The boxed entry (GIL held): calls the handler with the arguments as
  /// Python kernels receive them and pushes its checked results.
  static void call(OperatorKernel* functor, const OperatorHandle& op, DispatchKeySet, Stack* stack) {
    auto& self = *static_cast<PythonHandlerKernel*>(functor);
    auto [args, kwargs] = popArgumentsToPython(schemaForCall(op.entry()), *stack);
    PyObject* result = PyObject_Call(self.handler_.ptr(), args.ptr(), kwargs.ptr());
    if (result == nullptr) {
      throw py::error_already_set();
    }
    py::object owned = py::reinterpret_steal<py::object>(result);
    pushPythonResults(op.schema(), result, self.where_.c_str(), *stack);
  }

 private:
  py::object handler_;
  std::string where_;
};

void pythonDispatcherFallback(const OperatorHandle& op, DispatchKeySet ks, Stack* stack) {
  const DispatchKey k = ks.remove(DispatchKey::PythonDispatcher).highestPriorityTypeId();
  const OperatorEntry& entry = op.entry();
  // The call goes on as the table entry of k would take it, that entry's
  // post-kernel effects included (Note [Post-kernel effects]): k's kernel,
  // or the py_impl kernel serving k in its place.
  const KernelRef below = entry.table().entry(static_cast<int>(k));
  BoxedCallFrame frame(entry.schemaPtr(), stack);
  {
    py::gil_scoped_acquire gil;
    py::object handler = handlerFor(op, k);
    if (!py::isinstance<DispatchKey>(handler)) {
      PythonHandlerKernel kernel(std::move(handler), k);
      invokeKernel(op, KernelRef(&kernel, &PythonHandlerKernel::call, nullptr, below.effects()), ks, frame);
      return;
    }
  }
  if (!entry.hasComputedKernelForDispatchKey(k)) {
    op.reportError(k);  // the error a call without the Python dispatcher raises, naming k
  }
  invokeKernel(op, below, ks, frame);
}

/// Sets whether this thread includes PythonDispatcher for its lifetime and
/// restores the previous state when destroyed. PyTorch: EnablePythonDispatcher
/// / DisablePythonDispatcher (c10::impl::PythonDispatcherTLS).
class PythonDispatcherGuard {
 public:
  explicit PythonDispatcherGuard(bool enabled)
      : previous_(tls_is_dispatch_key_included(DispatchKey::PythonDispatcher)) {
    tls_set_dispatch_key_included(DispatchKey::PythonDispatcher, enabled);
  }
  PythonDispatcherGuard(const PythonDispatcherGuard&) = delete;
  PythonDispatcherGuard& operator=(const PythonDispatcherGuard&) = delete;
  ~PythonDispatcherGuard() { tls_set_dispatch_key_included(DispatchKey::PythonDispatcher, previous_); }

 private:
  bool previous_;
};

/// The guards of _EnablePythonDispatcher and _DisablePythonDispatcher.
struct EnablePythonDispatcher : PythonDispatcherGuard {
  EnablePythonDispatcher() : PythonDispatcherGuard(true) {}
};
struct DisablePythonDispatcher : PythonDispatcherGuard {
  DisablePythonDispatcher() : PythonDispatcherGuard(false) {}
};

} // namespace

void initPythonDispatcherBindings(py::module_& m) {
  bindHeldGuard<EnablePythonDispatcher>(
      m, "_EnablePythonDispatcher",
      "_EnablePythonDispatcher(): turns the Python dispatcher on for this thread (operators consult their py_impl "
      "kernels) from construction until __exit__ (or until the object is destroyed), then restores the previous "
      "state. Usable as `with _EnablePythonDispatcher():`. See Note [The Python dispatcher]. PyTorch: same name.");
  bindHeldGuard<DisablePythonDispatcher>(
      m, "_DisablePythonDispatcher",
      "_DisablePythonDispatcher(): turns the Python dispatcher off for this thread, as "
      "_EnablePythonDispatcher turns it on. PyTorch: same name.");
  // Kept for the life of the process (never deregistered, like PyTorch's TORCH_LIBRARY_IMPL(_, PythonDispatcher, m)).
  new RegistrationHandleRAII(Dispatcher::singleton().registerFallback(
      DispatchKey::PythonDispatcher, KernelFunction::makeFromBoxedFunctionWithKeyset<&pythonDispatcherFallback>(),
      "Python dispatcher fallback (csrc/python/PythonDispatcher.cpp)"));
}

} // namespace opdispatch::python
