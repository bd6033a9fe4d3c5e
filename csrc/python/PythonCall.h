// The Python side of the one call path (Note [One call path]): a Python
// call's arguments bound to an operator's schema (BoundArguments), the call
// frame that holds them (PythonCallFrame), and the arguments a Python kernel
// receives (PythonKernelArguments).
#pragma once

#include <Python.h>

#include <cstdint>
#include <vector>

#include <pybind11/pybind11.h>

#include <opdispatch/dispatch/AnnotatedSchema.h>
#include <opdispatch/dispatch/ArgumentTensors.h>
#include <opdispatch/dispatch/KernelRef.h>
#include <opdispatch/dispatch/OperatorHandle.h>

#include "InlineVector.h"
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
// those), else the converted IValue. Which kernel runs decides the rest, a
// choice of conversion and not a second path: a Python kernel receives the
// kept objects and the IValues' Python values (PythonKernelArguments), so
// exactly what a full IValue round trip would give it; a C++ kernel receives
// IValues (the kept objects convert then). The key set comes from the same
// bound arguments (forEachTensor), so it does not depend on the form either.
// A call from C++ that reaches a Python kernel binds the popped IValues the
// same way, so a Python kernel sees one convention whoever calls it.

/// One argument bound to its schema slot: `object` (borrowed from the
/// caller) when kept, else `value`.
struct BoundArgument {
  PyObject* object = nullptr;
  IValue value;
  /// Whether the caller passed it (else `value` is the schema default).
  bool given = false;
};

/// The arguments of one call bound to an operator's schema. See Note [Python call arguments].
class BoundArguments final {
 public:
  /// Binds a Python call. Throws TypeError naming the operator and the
  /// argument for a wrong count, name or type, ValueError for a value out of
  /// range; nothing has run then.
  BoundArguments(const AnnotatedSchema& schema, PyCallArguments call);
  /// Pops the arguments of a boxed call (the top of `stack`).
  BoundArguments(const AnnotatedSchema& schema, Stack& stack);
  BoundArguments(const BoundArguments&) = delete;
  BoundArguments& operator=(const BoundArguments&) = delete;

  const AnnotatedSchema& schema() const { return schema_; }
  size_t size() const { return args_.size(); }
  const BoundArgument& operator[](size_t i) const { return args_[i]; }
  /// Pushes the arguments as IValues (for a C++ kernel).
  void pushIValues(Stack& stack) const;
  /// Whether argument `i` equals its schema default (PyTorch drops such
  /// trailing arguments when it calls a Python kernel).
  bool equalsDefault(size_t i) const;

 private:
  const AnnotatedSchema& schema_;
  InlineVector<BoundArgument, 8> args_;
};

/// The arguments a Python kernel receives, PyTorch's convention
/// (parseIValuesToPyArgsKwargs): positional arguments up to the last one
/// that differs from its default; keyword-only arguments that differ from
/// their defaults, as keywords. Two leading slots are free for the key set
/// and the OpOverload a kernel may take first (PythonKernelHolder::callPython).
class PythonKernelArguments final {
 public:
  explicit PythonKernelArguments(const BoundArguments& args);
  PythonKernelArguments(const PythonKernelArguments&) = delete;
  PythonKernelArguments& operator=(const PythonKernelArguments&) = delete;
  ~PythonKernelArguments();

  static constexpr size_t kPrefix = 2;
  /// The schema the arguments were bound to.
  const FunctionSchema& schema() const { return schema_; }
  /// kPrefix free slots, then the positional values, then the keyword values.
  PyObject** buffer() { return buffer_.data(); }
  size_t numPositional() const { return num_positional_; }
  /// The keyword names (a tuple) or null.
  PyObject* kwnames() const { return kwnames_.ptr(); }

 private:
  /// Appends argument `i` (its kept object, or a new reference to its value).
  void append(const BoundArguments& args, size_t i);
  const FunctionSchema& schema_;
  InlineVector<PyObject*, kPrefix + 10> buffer_;
  size_t size_ = kPrefix;
  /// Which buffer entries are references this object owns (converted values).
  InlineVector<uint8_t, kPrefix + 10> owned_;
  size_t num_positional_ = 0;
  pybind11::object kwnames_;
};

/// The call frame of a Python call (Note [One call path]): its bound
/// arguments; the result is a new Python object.
class PythonCallFrame final {
 public:
  using Result = pybind11::object;
  explicit PythonCallFrame(const BoundArguments& args) : args_(args) {}

  DispatchKeySet argumentKeySet() const {
    DispatchKeySet ks;
    forEachArgumentTensor([&](uint32_t, TensorImpl& t) { ks = ks | t.key_set(); });
    return ks;
  }
  template <class F>
  void forEachArgumentTensor(F&& f) const {
    for (uint32_t i : args_.schema().tensor_arg_indices) {
      const BoundArgument& a = args_[i];
      auto indexed = [&](TensorImpl& t) { f(i, t); };
      if (a.object != nullptr) {
        forEachTensor(a.object, indexed);
      } else {
        forEachTensor(a.value, indexed);
      }
    }
  }
  /// A Python kernel gets the Python arguments, any other kernel IValues.
  pybind11::object invoke(const OperatorHandle& op, KernelRef kernel, DispatchKeySet ks);
  template <class F>
  void forEachResultTensor(const pybind11::object& result, F&& f) const {
    const size_t n = args_.schema().schema.returns().size();
    if (n == 1) {
      forEachTensor(result.ptr(), [&](TensorImpl& t) { f(size_t(0), t); });
      return;
    }
    for (size_t i = 0; i < n; ++i) {
      forEachTensor(PyTuple_GET_ITEM(result.ptr(), i), [&](TensorImpl& t) { f(i, t); });
    }
  }

 private:
  const BoundArguments& args_;
};

/// Calls `op` with bound arguments (Note [One call path]): dispatched on them
/// and the thread-local state, or, with `redispatch_ks`, the kernel of that
/// (caller-restricted) key set. Returns the result (a new reference).
pybind11::object callBound(const OperatorHandle& op, const BoundArguments& args,
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
};

} // namespace python
} // namespace opdispatch
