// The Python side of the one call path (Note [One call path]): a Python
// call's arguments bound to an operator's schema (BoundArguments), the call
// frame that holds them (PythonCallFrame), and the arguments a Python kernel
// receives (PythonKernelArguments).
#pragma once

#include <Python.h>

#include <cstdint>
#include <new>
#include <utility>
#include <vector>

#include <pybind11/pybind11.h>

#include <opdispatch/core/SmallVector.h>
#include <opdispatch/dispatch/AnnotatedSchema.h>
#include <opdispatch/dispatch/ArgumentTensors.h>
#include <opdispatch/dispatch/KernelRef.h>
#include <opdispatch/dispatch/OperatorHandle.h>

#include "PythonTensor.h"

namespace opdispatch {

/// The tensors of a Python value: a Tensor, or the tensors in a list or tuple
/// (one level, as arguments and results hold them). See forEachTensor.
template <>
struct TensorsOf<PyObject*> {
  template <class F>
  static void visit(PyObject* obj, F&& f) {
    if (python::isTensor(obj)) {
      f(*python::unpackImpl(obj));
    } else if (PyList_Check(obj) || PyTuple_Check(obj)) {
      PyObject** items = PySequence_Fast_ITEMS(obj);
      for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(obj); ++i) {
        if (python::isTensor(items[i])) {
          f(*python::unpackImpl(items[i]));
        }
      }
    }
  }
};

namespace python {

/// A Python call's arguments in the vectorcall convention: `args[0..nargs)`
/// positional, then one value per name of `kwnames` (a tuple, or null).
struct PyCallArguments {
  PyObject* const* args;
  size_t nargs;
  PyObject* kwnames;
};

// Note [Python call arguments]
// A Python call binds its arguments to the schema once (counts, names,
// defaults, types: the errors name the operator and the argument), and keeps
// each argument in the form that costs least: the caller's own object when
// converting it to an IValue and back would return that very object (a
// Tensor — subclasses included —, None for an optional, an exact int that
// fits in 64 bits, a bool, an exact float, a valid str, or a Scalar of
// those), else the converted IValue. A list is never kept: the round trip
// gives a new list, which the kernel may change without changing the
// caller's. Which kernel runs decides the rest, a choice of conversion and
// not a second path: a Python kernel receives the kept objects and the
// IValues' Python values (PythonKernelArguments), so exactly what a full
// IValue round trip would give it; a C++ kernel receives IValues (the kept
// objects convert then). The key set is gathered while binding (a kept
// Tensor's keys, a value's tensors through forEachTensor), so it does not
// depend on the form either. A call from C++ that reaches a Python kernel
// binds the popped IValues the same way, so a Python kernel sees one
// convention whoever calls it.

/// The arguments of one call bound to an operator's schema. See Note [Python call arguments].
class BoundArguments final {
 public:
  /// Free slots before the first argument object, for what a Python kernel
  /// may take first (the key set, the OpOverload; PythonKernelHolder::call).
  static constexpr size_t kPrefix = 2;

  /// Binds a Python call. Throws TypeError naming the operator and the
  /// argument for a wrong count, name or type, ValueError for a value out of
  /// range; nothing has run then.
  BoundArguments(const AnnotatedSchema& schema, PyCallArguments call);
  /// Pops the arguments of a boxed call (the top of `stack`).
  BoundArguments(const AnnotatedSchema& schema, Stack& stack);
  BoundArguments(const BoundArguments&) = delete;
  BoundArguments& operator=(const BoundArguments&) = delete;
  ~BoundArguments();

  const AnnotatedSchema& schema() const { return schema_; }
  size_t size() const { return flags_.size(); }
  /// The caller's object for argument `i` when it was kept (for a tensor-like
  /// argument: a Tensor or None), else null and value(i) holds the argument.
  PyObject* kept(size_t i) const { return (flags_[i] & kKept) ? objects_[kPrefix + i] : nullptr; }
  /// The value of argument `i` when it was not kept.
  const IValue& value(size_t i) const { return values_[i].get(); }
  /// The union of the key sets of the arguments' tensors (forEachTensor), computed while binding.
  DispatchKeySet keySet() const { return key_set_; }
  /// Pushes the arguments as IValues (for a C++ kernel).
  void pushIValues(Stack& stack) const;
  /// Whether argument `i` equals its schema default (PyTorch drops such
  /// trailing arguments when it calls a Python kernel).
  bool equalsDefault(size_t i) const;
  /// The Python object of argument `i`: the kept one, or one made from its
  /// value (owned by this object). Throws if the value has no Python form.
  PyObject* pythonObject(size_t i) {
    PyObject* obj = objects_[kPrefix + i];
    return obj != nullptr ? obj : convertToPython(i);
  }
  /// Whether every argument was passed and kept (pythonObject converts nothing).
  bool allKept() const { return !needs_cleanup_; }
  /// kPrefix free slots, then pythonObject(i) for each i < n that was asked for.
  PyObject** pythonObjects() { return objects_.data(); }

 private:
  PyObject* convertToPython(size_t i);
  /// Makes `v` the value of argument `i` (not kept) and adds its tensors' keys.
  void setValue(size_t i, IValue v);
  /// Destroys the values and drops the references of the first `n` arguments.
  void release(size_t n);

  /// Room for an IValue, constructed only for the arguments that have one
  /// (kValue): kept arguments, the common case, cost no IValue at all.
  struct ValueSlot {
    alignas(IValue) unsigned char bytes[sizeof(IValue)];
    IValue& get() { return *std::launder(reinterpret_cast<IValue*>(bytes)); }
    const IValue& get() const { return *std::launder(reinterpret_cast<const IValue*>(bytes)); }
  };
  enum Flags : uint16_t {
    kGiven = 1, ///< the caller passed it (else the value is the schema default)
    kKept = 2,  ///< objects_ holds the caller's object (borrowed)
    kValue = 4, ///< values_ holds the argument
    kOwned = 8, ///< objects_ holds a reference made from the value
  };
  const AnnotatedSchema& schema_;
  SmallVector<PyObject*, kPrefix + 10> objects_;
  SmallVector<ValueSlot, 10> values_;
  /// (Not a char type: its stores would alias every other member.)
  SmallVector<uint16_t, 10> flags_;
  DispatchKeySet key_set_;
  /// Whether some flag is kValue or kOwned (the destructor has work).
  bool needs_cleanup_ = false;
};

/// The arguments a Python kernel receives, PyTorch's convention
/// (parseIValuesToPyArgsKwargs): positional arguments up to the last one
/// that differs from its default; keyword-only arguments that differ from
/// their defaults, as keywords. The objects come from the BoundArguments
/// (no copy when there are no keywords), with BoundArguments::kPrefix free
/// slots before them.
class PythonKernelArguments final {
 public:
  explicit PythonKernelArguments(BoundArguments& args);
  PythonKernelArguments(const PythonKernelArguments&) = delete;
  PythonKernelArguments& operator=(const PythonKernelArguments&) = delete;

  /// The schema the arguments were bound to.
  const FunctionSchema& schema() const { return schema_; }
  /// kPrefix free slots, then the positional values, then the keyword values.
  PyObject** buffer() { return buffer_; }
  size_t numPositional() const { return num_positional_; }
  /// The keyword names (a tuple) or null.
  PyObject* kwnames() const { return kwnames_.ptr(); }

 private:
  const FunctionSchema& schema_;
  PyObject** buffer_;
  size_t num_positional_ = 0;
  /// The buffer when there are keywords (the keyword values must follow the positional ones).
  SmallVector<PyObject*, BoundArguments::kPrefix + 10> with_keywords_;
  pybind11::object kwnames_;
};

/// The args tuple and kwargs dict a call passes to Python code standing in
/// for its kernel (a __torch_dispatch__ handler, a Python dispatcher's
/// kernel). When they go, the next such call reuses them if nothing else
/// refers to them: Note [Reused handler arguments] in PythonCall.cpp.
struct HandlerArguments {
  pybind11::tuple args;
  pybind11::dict kwargs;
  HandlerArguments(pybind11::tuple a, pybind11::dict k) : args(std::move(a)), kwargs(std::move(k)) {}
  HandlerArguments(const HandlerArguments&) = delete;
  HandlerArguments& operator=(const HandlerArguments&) = delete;
  ~HandlerArguments();
};

/// The arguments of a boxed call (the top of `stack`, popped) as a Python
/// kernel receives them (PythonKernelArguments), as an args tuple and a
/// kwargs dict: for callers that pass them on as objects (__torch_dispatch__,
/// the Python dispatcher's kernels). Throws as BoundArguments::pythonObject.
HandlerArguments popArgumentsToPython(const AnnotatedSchema& schema, Stack& stack);
/// Same, for arguments bound from a Python call.
HandlerArguments argumentsToPython(BoundArguments& bound);

/// `out`, the result of Python code standing in for a kernel of `schema`
/// (`where` names it in errors), as the caller receives it: `out` itself when
/// converting it to the schema's returns and back would give it unchanged
/// (one Tensor; None for no returns), else that round trip. Throws
/// TypeError/ValueError for a result the returns do not accept.
pybind11::object checkedPythonResult(const FunctionSchema& schema, pybind11::object out, const char* where);

/// A boxed kernel's entry point for Python calls: the same work on the bound
/// arguments, returning the result object. See Note [Python call entries].
using PythonCallEntry = pybind11::object (*)(const OperatorHandle& op, DispatchKeySet ks, BoundArguments& args);
/// Makes Python calls that reach the boxed kernel function `boxed` run `entry`
/// instead. Called once per kernel function at module initialisation.
void setPythonCallEntry(KernelRef::BoxedKernelFunction* boxed, PythonCallEntry entry);

/// The call frame of a Python call (Note [One call path]): its bound
/// arguments; the result is a new Python object.
class PythonCallFrame final {
 public:
  using Result = pybind11::object;
  /// The caller holds the kept objects; the bound values hold the rest.
  static constexpr bool kArgumentsOutliveKernel = true;
  explicit PythonCallFrame(BoundArguments& args) : args_(args) {}

  DispatchKeySet argumentKeySet() const { return args_.keySet(); }
  template <class F>
  void forEachArgumentTensor(F&& f) const {
    for (uint32_t i : args_.schema().tensor_arg_indices) {
      if (PyObject* kept = args_.kept(i)) {
        if (kept != Py_None) {  // kept at a tensor-like argument: a Tensor (Note [Python call arguments])
          f(i, *unpackImpl(kept));
        }
      } else {
        forEachTensor(args_.value(i), [&](TensorImpl& t) { f(i, t); });
      }
    }
  }
  /// A Python kernel gets the Python arguments, any other kernel IValues.
  pybind11::object invoke(const OperatorHandle& op, const KernelRef& kernel, DispatchKeySet ks);
  /// (One loop for one return, the result itself, and for a tuple of them:
  /// `f` is written into the caller once per place forEachTensor calls it.)
  template <class F>
  void forEachResultTensor(const pybind11::object& result, F&& f) const {
    const size_t n = args_.schema().num_returns;
    for (size_t i = 0; i < n; ++i) {
      forEachTensor(n == 1 ? result.ptr() : PyTuple_GET_ITEM(result.ptr(), i), [&](TensorImpl& t) { f(i, t); });
    }
  }

 private:
  BoundArguments& args_;
};

/// Calls `op` with bound arguments (Note [One call path]): dispatched on them
/// and the thread-local state, or, with `redispatch_ks`, the kernel of that
/// (caller-restricted) key set. Returns the result (a new reference).
pybind11::object callBound(const OperatorHandle& op, BoundArguments& args,
                           const DispatchKeySet* redispatch_ks = nullptr);

/// Binds and calls: what calling an OpOverload does. Throws Error if the
/// operator's definition was removed.
pybind11::object callFromPython(const OperatorHandle& op, PyCallArguments call,
                                const DispatchKeySet* redispatch_ks = nullptr);

/// The schema calls bind to; throws Error naming the operator if its definition was removed.
const AnnotatedSchema& schemaForCall(const OperatorEntry& e);

/// The vectorcall form of an args tuple and a kwargs dict (either may be null).
class PyCallArgumentsFromTuple final {
 public:
  PyCallArgumentsFromTuple(PyObject* args, PyObject* kwargs);
  PyCallArguments get() const { return {flat_.data(), nargs_, kwnames_.ptr()}; }

 private:
  std::vector<PyObject*> flat_;
  size_t nargs_;
  pybind11::object kwnames_;
  /// References to the keyword values (a tuple).
  pybind11::object kwvalues_;
};

} // namespace python
} // namespace opdispatch
