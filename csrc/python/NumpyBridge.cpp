// The bridge between tensors and NumPy (see NumpyBridge.h), written against
// NumPy's C API as pybind11 exposes it (npy_api), so no NumPy headers are needed.
#include "NumpyBridge.h"

#include <array>
#include <vector>

#include <pybind11/numpy.h>
#include <structmember.h>

#include <opdispatch/core/CheckedArithmetic.h>
#include <opdispatch/core/Exception.h>

#include "Exceptions.h"
#include "PythonTensor.h"
#include "PythonTypePromotion.h"
#include "PythonTypes.h"
#include "StaticType.h"

namespace py = pybind11;

namespace opdispatch::python {

namespace {

using NpyApi = py::detail::npy_api;

/// NumPy's limit on dimensions (NPY_MAXDIMS of NumPy 2).
constexpr int kMaxNumpyDims = 64;
constexpr int kCOrder = 0; // NPY_CORDER

// Note [NumPy floating-point errors in kernels]
// NumPy reports overflow, division by zero and invalid operations as
// warnings (or errors, after np.seterr); PyTorch's kernels give inf and nan
// silently. A kernel's NumPy calls therefore run with NumPy's error state set
// to "ignore" — the value np.errstate(all="ignore") would install in NumPy's
// context variable (_numpy.py hands over the variable and the value once:
// they are NumPy internals, and it knows where they live). Setting a context
// variable builds a new context per call (np.errstate costs that plus a
// Python context manager); instead each thread keeps one context, a copy of
// its context when it first ran a kernel with the variable set to "ignore",
// and enters it around the call (two pointer swaps). Kernels run NumPy
// functions, which read no other context variable; a call made while the
// variable already reads "ignore" (a kernel inside a kernel) runs as it is.
PyObject* gErrstateVar = nullptr;
PyObject* gIgnoreAll = nullptr;
/// Key of the per-thread kernel context in the thread-state dict.
PyObject* gContextKey = nullptr;

/// Borrowed: this thread's kernel context (see Note [NumPy floating-point errors in kernels]).
PyObject* kernelContext() {
  PyObject* dict = PyThreadState_GetDict();
  if (dict == nullptr) {
    throw Error("no thread state to keep the kernel context in");
  }
  PyObject* ctx = PyDict_GetItemWithError(dict, gContextKey);
  if (ctx != nullptr) {
    return ctx;
  }
  if (PyErr_Occurred()) {
    throw py::error_already_set();
  }
  py::object made = py::reinterpret_steal<py::object>(PyContext_CopyCurrent());
  if (!made || PyContext_Enter(made.ptr()) < 0) {
    throw py::error_already_set();
  }
  PyObject* token = PyContextVar_Set(gErrstateVar, gIgnoreAll);
  Py_XDECREF(token);
  if (PyContext_Exit(made.ptr()) < 0 || token == nullptr || PyDict_SetItem(dict, gContextKey, made.ptr()) < 0) {
    throw py::error_already_set();
  }
  return made.ptr();
}

NpyApi& npy() { return NpyApi::get(); }

bool isArray(PyObject* obj) { return npy().PyArray_Check_(obj); }

/// The ScalarType of a NumPy descr: by type number (filled on first use from
/// the dtypes opdispatch supports), else by kind and size.
ScalarType scalarTypeOfDescr(PyObject* descr) {
  static std::array<int8_t, 64> byTypeNum = [] {
    std::array<int8_t, 64> t{};
    t.fill(-1);
    for (ScalarType st : kAllScalarTypes) {
      int num = py::detail::array_descriptor_proxy(numpyDtype(st).ptr())->type_num;
      if (num >= 0 && num < static_cast<int>(t.size())) {
        t[num] = static_cast<int8_t>(st);
      }
    }
    return t;
  }();
  int num = py::detail::array_descriptor_proxy(descr)->type_num;
  if (num >= 0 && num < static_cast<int>(byTypeNum.size()) && byTypeNum[num] >= 0) {
    return static_cast<ScalarType>(byTypeNum[num]);
  }
  return fromNumpyDtype(descr);
}

/// A new reference to a C-contiguous, aligned, writeable, native-order array
/// with the values of `result` (itself when it already is one): what a
/// tensor can own. NumPy scalars become 0-d arrays.
PyObject* ownableArray(PyObject* result) {
  NpyApi& api = npy();
  PyObject* arr = nullptr;
  if (isArray(result)) {
    Py_INCREF(result);
    arr = result;
  } else {
    arr = api.PyArray_FromAny_(result, nullptr, 0, 0, NpyApi::NPY_ARRAY_ENSUREARRAY_, nullptr);
    if (arr == nullptr) {
      throw py::error_already_set();
    }
  }
  constexpr int kNeeded = NpyApi::NPY_ARRAY_C_CONTIGUOUS_ | NpyApi::NPY_ARRAY_ALIGNED_ | NpyApi::NPY_ARRAY_WRITEABLE_;
  const auto* proxy = py::detail::array_proxy(arr);
  if ((proxy->flags & kNeeded) == kNeeded && py::detail::array_descriptor_proxy(proxy->descr)->byteorder != '>') {
    return arr;
  }
  PyObject* copy = api.PyArray_NewCopy_(arr, kCOrder);
  Py_DECREF(arr);
  if (copy == nullptr) {
    throw py::error_already_set();
  }
  return copy;
}

/// New references held for one _call_numpy call and released at its end: a
/// few inline (the common call has at most a handful of arguments), so a call
/// allocates nothing for them.
class CallRefs {
 public:
  CallRefs() = default;
  CallRefs(const CallRefs&) = delete;
  CallRefs& operator=(const CallRefs&) = delete;
  ~CallRefs() {
    for (size_t i = 0; i < size_; ++i) {
      Py_DECREF(at(i));
    }
  }
  /// Keeps the new reference `obj` (not null) until the call ends.
  void push(PyObject* obj) {
    if (size_ < inline_.size()) {
      inline_[size_] = obj;
    } else {
      overflow_.push_back(obj);
    }
    ++size_;
  }

 private:
  PyObject* at(size_t i) const { return i < inline_.size() ? inline_[i] : overflow_[i - inline_.size()]; }

  std::array<PyObject*, 8> inline_{};
  std::vector<PyObject*> overflow_;
  size_t size_ = 0;
};

/// The arrays _call_numpy made for tensor arguments, with their tensors
/// (both borrowed from the call's CallRefs and arguments).
class MadeArrays {
 public:
  void add(PyObject* array, PyObject* tensor) {
    if (size_ < inline_.size()) {
      inline_[size_++] = {array, tensor};
    } else {
      overflow_.emplace_back(array, tensor);
    }
  }
  /// The tensor object `obj` was made from, or null.
  PyObject* tensorOf(PyObject* obj) const {
    for (size_t i = 0; i < size_; ++i) {
      if (inline_[i].first == obj) {
        return inline_[i].second;
      }
    }
    for (const auto& [arr, t] : overflow_) {
      if (arr == obj) {
        return t;
      }
    }
    return nullptr;
  }

 private:
  std::array<std::pair<PyObject*, PyObject*>, 4> inline_{};
  std::vector<std::pair<PyObject*, PyObject*>> overflow_;
  size_t size_ = 0;
};

/// New reference: the tensor object for one value a kernel's NumPy code
/// returned. An array made from an argument gives back that argument (an
/// in-place kernel returns its `self`); None and tensors pass through.
PyObject* tensorOfResult(PyObject* value, const MadeArrays& made) {
  if (value == Py_None || isTensor(value)) {
    Py_INCREF(value);
    return value;
  }
  if (PyObject* t = made.tensorOf(value)) {
    Py_INCREF(t);
    return t;
  }
  py::object arr = py::reinterpret_steal<py::object>(ownableArray(value));
  PyObject* t = wrapTensor(tensorOfArray(arr.ptr()));
  auto* obj = reinterpret_cast<TensorObject*>(t);
  if (obj->kernel_array == nullptr) { // a new tensor object: its memory is exactly arr's
    obj->kernel_array = arr.release().ptr();
  }
  return t;
}

// Note [Kernel arrays]
// Every tensor a kernel reads is seen by NumPy as an ndarray view; making one
// (with the object that keeps the storage alive) costs about as much as a
// small ufunc call. A tensor object therefore keeps the view _call_numpy made
// for it (TensorObject::kernel_array), and a tensor made from a kernel's
// result keeps that result array: its next kernel gets it for free. These
// arrays never reach users (numpy() makes a new one each time), so nothing
// changes their shape or flags behind the tensor's back. What changes a
// TensorImpl under its array: the bindings that change its sizes, strides or
// storage in place (_resize_, _set_sizes_and_strides,
// _functionalize_unsafe_set) drop the tensor's array; a storage that grows
// (resize_ of another tensor sharing it) moves the data, so an array whose
// data pointer is not the tensor's is made again.

/// New reference: the kernel array of tensor object `obj` (see Note [Kernel arrays]).
PyObject* kernelArray(PyObject* obj) {
  auto* t = reinterpret_cast<TensorObject*>(obj);
  if (t->kernel_array != nullptr &&
      py::detail::array_proxy(t->kernel_array)->data != static_cast<char*>(unpackImpl(obj)->data_ptr())) {
    Py_CLEAR(t->kernel_array);
  }
  if (t->kernel_array == nullptr) {
    t->kernel_array = arrayOfTensor(obj);
  }
  Py_INCREF(t->kernel_array);
  return t->kernel_array;
}

/// New reference: the value for NumPy of one argument of _call_numpy (an
/// array for a tensor; a list of those for a list holding tensors).
PyObject* argumentForNumpy(PyObject* obj, CallRefs& owners, MadeArrays& made) {
  if (isTensor(obj)) {
    PyObject* arr = kernelArray(obj);
    made.add(arr, obj);
    return arr;
  }
  if (PyList_CheckExact(obj)) {
    Py_ssize_t n = PyList_GET_SIZE(obj);
    bool any = false;
    for (Py_ssize_t i = 0; i < n && !any; ++i) {
      any = isTensor(PyList_GET_ITEM(obj, i));
    }
    if (any) {
      py::list out(n);
      for (Py_ssize_t i = 0; i < n; ++i) {
        PyObject* item = PyList_GET_ITEM(obj, i);
        if (isTensor(item)) {
          PyObject* arr = kernelArray(item);
          Py_INCREF(arr);
          owners.push(arr);
          made.add(arr, item);
          PyList_SET_ITEM(out.ptr(), i, arr);
        } else {
          Py_INCREF(item);
          PyList_SET_ITEM(out.ptr(), i, item);
        }
      }
      return out.release().ptr();
    }
  }
  Py_INCREF(obj);
  return obj;
}

/// Calls `fn` with NumPy's floating-point error reporting off (Note [NumPy
/// floating-point errors in kernels]); returns its new reference or null with the error set.
PyObject* callIgnoringFloatErrors(PyObject* fn, PyObject* const* args, size_t nargs, PyObject* kwnames) {
  if (gErrstateVar == nullptr) {
    return PyObject_Vectorcall(fn, args, nargs, kwnames);
  }
  PyObject* current = nullptr;
  if (PyContextVar_Get(gErrstateVar, nullptr, &current) < 0) {
    return nullptr;
  }
  Py_XDECREF(current);
  if (current == gIgnoreAll) {
    return PyObject_Vectorcall(fn, args, nargs, kwnames);
  }
  PyObject* ctx = kernelContext();
  if (PyContext_Enter(ctx) < 0) {
    return nullptr;
  }
  PyObject* result = PyObject_Vectorcall(fn, args, nargs, kwnames);
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  if (PyContext_Exit(ctx) < 0) {
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(traceback);
    Py_XDECREF(result);
    return nullptr;
  }
  PyErr_Restore(type, value, traceback);
  return result;
}

/// New reference: `fn` run on `args` (`nargs` positional, then the values of
/// `kwnames`) as _call_numpy runs it (see its docstring). Throws what fn raises.
PyObject* callNumpyOn(PyObject* fn, PyObject* const* args, size_t nargs, PyObject* kwnames) {
  size_t total = nargs + (kwnames ? static_cast<size_t>(PyTuple_GET_SIZE(kwnames)) : 0);
  CallRefs owners;
  MadeArrays made;
  std::array<PyObject*, 16> small{};
  std::vector<PyObject*> large;
  PyObject** converted = small.data();
  if (total > small.size()) {
    large.resize(total);
    converted = large.data();
  }
  for (size_t i = 0; i < total; ++i) {
    converted[i] = argumentForNumpy(args[i], owners, made);
    owners.push(converted[i]);
  }
  py::object result = py::reinterpret_steal<py::object>(callIgnoringFloatErrors(fn, converted, nargs, kwnames));
  if (!result) {
    throw py::error_already_set();
  }
  if (PyTuple_Check(result.ptr())) {
    Py_ssize_t n = PyTuple_GET_SIZE(result.ptr());
    py::tuple out(n);
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyTuple_SET_ITEM(out.ptr(), i, tensorOfResult(PyTuple_GET_ITEM(result.ptr(), i), made));
    }
    return out.release().ptr();
  }
  return tensorOfResult(result.ptr(), made);
}

/// _call_numpy(fn, *args, **kwargs): see the binding's docstring.
PyObject* callNumpy(PyObject*, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  return pythonEntry([&]() -> PyObject* {
    size_t nargs = static_cast<size_t>(PyVectorcall_NARGS(nargsf));
    OPDISPATCH_CHECK_TYPE(nargs >= 1, "_call_numpy(fn, *args, **kwargs) needs a function");
    return callNumpyOn(args[0], args + 1, nargs - 1, kwnames);
  });
}

// Note [NumPy kernels]
// Most built-in CPU kernels are one NumPy function on their arguments, and a
// Python function around _call_numpy spends about 800 instructions of a tiny
// call in its own frame (a tenth of `x + y`). A _NumpyKernel is that kernel
// as a C callable: a call of the expected form (a number of positional
// arguments, no keywords, tensors of a number of dimensions) runs fn through
// callNumpyOn directly when NumPy computes in the dtype PyTorch's promotion
// gives (Note [Promotion on the fast path] in PythonTypePromotion.cpp). Every
// other call, and a call in which fn raises ValueError (NumPy refusing the
// operands' shapes) or OverflowError (a Python int out of the tensors'
// range, which PyTorch wraps), goes to the kernel written in Python, which
// runs the same fn and names the operator in its errors: the fast path only
// skips a frame, it decides nothing. Kernels with side
// effects (in-place ones) stay in Python: falling back after a ValueError
// would run them twice.
struct NumpyKernelObject {
  PyObject_HEAD vectorcallfunc vectorcall;
  PyObject* dict;         ///< instance attributes (__name__)
  PyObject* fn;           ///< the NumPy function
  PyObject* fallback;     ///< the Python kernel (also __wrapped__)
  Py_ssize_t nargs;       ///< positional arguments of the fast path; -1: any call (keywords too)
  int ndim;               ///< dimensions every tensor argument must have; -1: any
  bool contiguous;        ///< every tensor argument must be C-contiguous (Note [Output strides])
  FastPathDtypes dtypes;  ///< the operands' dtypes the fast path takes
};

PyTypeObject gNumpyKernelType = staticTypeObject();

/// Whether the fast path of `k` takes this call (Note [NumPy kernels]).
bool numpyKernelFits(const NumpyKernelObject* k, PyObject* const* args, Py_ssize_t n, PyObject* kwnames) {
  if (k->nargs >= 0 && (n != k->nargs || kwnames != nullptr)) {
    return false;
  }
  if (k->ndim >= 0 || k->contiguous) {
    for (Py_ssize_t i = 0; i < n; ++i) {
      if (!isTensor(args[i])) {
        continue;
      }
      const TensorImpl* impl = unpackImpl(args[i]);
      if ((k->ndim >= 0 && impl->dim() != k->ndim) || (k->contiguous && !impl->is_contiguous())) {
        return false;
      }
    }
  }
  return operandsFit(k->dtypes, args, n);
}

PyObject* numpyKernelCall(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  auto* k = reinterpret_cast<NumpyKernelObject*>(self);
  Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  if (numpyKernelFits(k, args, n, kwnames)) {
    PyObject* out = pythonEntry(
        [&]() -> PyObject* { return callNumpyOn(k->fn, args, static_cast<size_t>(n), kwnames); });
    if (out != nullptr || !(PyErr_ExceptionMatches(PyExc_ValueError) || PyErr_ExceptionMatches(PyExc_OverflowError))) {
      return out;
    }
    PyErr_Clear();
  }
  return PyObject_Vectorcall(k->fallback, args, nargsf, kwnames);
}

PyObject* numpyKernelNew(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  static const char* kwlist[] = {"fn", "fallback", "nargs", "ndim", "dtypes", "contiguous", nullptr};
  PyObject *fn, *fallback;
  Py_ssize_t nargs = -1;
  int ndim = -1;
  int dtypes = static_cast<int>(FastPathDtypes::Any);
  int contiguous = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|niip:_NumpyKernel", const_cast<char**>(kwlist), &fn, &fallback,
                                   &nargs, &ndim, &dtypes, &contiguous)) {
    return nullptr;
  }
  if (!PyCallable_Check(fn) || !PyCallable_Check(fallback)) {
    PyErr_SetString(PyExc_TypeError, "_NumpyKernel(fn, fallback, ...): fn and fallback must be callable");
    return nullptr;
  }
  if (nargs < -1 || ndim < -1) {
    PyErr_SetString(PyExc_ValueError, "_NumpyKernel: nargs and ndim must be >= 0, or -1 for any");
    return nullptr;
  }
  if (dtypes < static_cast<int>(FastPathDtypes::Any) || dtypes > static_cast<int>(FastPathDtypes::SameFloating)) {
    PyErr_SetString(PyExc_ValueError, "_NumpyKernel: dtypes must be 0 (any), 1 (same) or 2 (same floating)");
    return nullptr;
  }
  auto* k = reinterpret_cast<NumpyKernelObject*>(type->tp_alloc(type, 0));
  if (k == nullptr) {
    return nullptr;
  }
  k->vectorcall = numpyKernelCall;
  Py_INCREF(fn);
  k->fn = fn;
  Py_INCREF(fallback);
  k->fallback = fallback;
  k->nargs = nargs;
  k->ndim = ndim;
  k->dtypes = static_cast<FastPathDtypes>(dtypes);
  k->contiguous = contiguous != 0;
  return reinterpret_cast<PyObject*>(k);
}

int numpyKernelTraverse(PyObject* self, visitproc visit, void* arg) {
  auto* k = reinterpret_cast<NumpyKernelObject*>(self);
  Py_VISIT(k->dict);
  Py_VISIT(k->fn);
  Py_VISIT(k->fallback);
  return 0;
}

int numpyKernelClear(PyObject* self) {
  auto* k = reinterpret_cast<NumpyKernelObject*>(self);
  Py_CLEAR(k->dict);
  Py_CLEAR(k->fn);
  Py_CLEAR(k->fallback);
  return 0;
}

void numpyKernelDealloc(PyObject* self) {
  PyObject_GC_UnTrack(self);
  numpyKernelClear(self);
  Py_TYPE(self)->tp_free(self);
}

PyMemberDef kNumpyKernelMembers[] = {
    {"fn", T_OBJECT, offsetof(NumpyKernelObject, fn), READONLY, "The NumPy function of the fast path."},
    {"__wrapped__", T_OBJECT, offsetof(NumpyKernelObject, fallback), READONLY,
     "The kernel written in Python, which takes every other call."},
    {nullptr, 0, 0, 0, nullptr},
};

PyMethodDef kModuleMethods[] = {
    {"_call_numpy", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(callNumpy)),
     METH_FASTCALL | METH_KEYWORDS,
     "_call_numpy(fn, *args, **kwargs): how built-in CPU kernels run NumPy. Calls fn with every tensor argument "
     "(also inside a list argument) replaced by a writeable ndarray view of its memory, with NumPy's "
     "floating-point error reporting off (overflow gives inf, as in PyTorch), and returns fn's result as tensors: "
     "an ndarray or NumPy scalar becomes a tensor owning it (copied to C order when it is not C-contiguous, "
     "aligned and writeable), a tuple a tuple of those; an array made for an argument returns that argument "
     "itself (an in-place kernel's out=), None and tensors pass through. Raises what fn raises, and RuntimeError "
     "for a tensor without data (meta, wrapper subclasses)."},
    {nullptr, nullptr, 0, nullptr},
};

} // namespace

namespace {
/// What an array's base holds: the storage and the memory of it the array views.
struct ExportedMemory {
  intrusive_ptr<StorageImpl> storage;
  void* data;
};
} // namespace

bool isArrayWithDimensions(PyObject* obj) { return isArray(obj) && py::detail::array_proxy(obj)->nd > 0; }

PyObject* arrayOfTensor(PyObject* tensor) {
  TensorImpl* impl = unpackImpl(tensor);
  OPDISPATCH_CHECK(impl->device().is_cpu(), "numpy() needs a cpu tensor; this tensor is on ", impl->device(),
                   (impl->device().is_meta() ? " (meta tensors have no data)" : ""));
  void* data = impl->data_ptr(); // throws for a tensor without storage (a wrapper subclass)
  int64_t nd = impl->dim();
  OPDISPATCH_CHECK_VALUE(nd <= kMaxNumpyDims, "numpy(): a tensor of ", nd,
                         " dimensions has no NumPy view (NumPy "
                         "allows at most ",
                         kMaxNumpyDims, ")");
  std::array<Py_intptr_t, kMaxNumpyDims> dims{}, strides{};
  auto itemsize = static_cast<int64_t>(impl->itemsize());
  IntArrayRef sizes = impl->sizes(), tstrides = impl->strides();
  for (int64_t i = 0; i < nd; ++i) {
    dims[i] = static_cast<Py_intptr_t>(sizes[i]);
    // Only a stride that addresses no other element can overflow in bytes
    // (Note [Checked size arithmetic]); NumPy ignores it, so 0 will do.
    int64_t bytes = 0;
    if (mulOverflows(tstrides[i], itemsize, &bytes)) {
      OPDISPATCH_INTERNAL_ASSERT(sizes[i] <= 1 || impl->numel() == 0, "stride overflow in numpy()");
      bytes = 0;
    }
    strides[i] = static_cast<Py_intptr_t>(bytes);
  }
  NpyApi& api = npy();
  PyObject* descr = numpyDtype(impl->dtype()).inc_ref().ptr(); // stolen by PyArray_NewFromDescr
  PyObject* arr = api.PyArray_NewFromDescr_(api.PyArray_Type_, descr, static_cast<int>(nd), dims.data(), strides.data(),
                                            data, NpyApi::NPY_ARRAY_WRITEABLE_, nullptr);
  if (arr == nullptr) {
    throw py::error_already_set();
  }
  // The base keeps the storage's memory alive, not the tensor object: an
  // array outlives the tensor without holding its autograd state
  // (tests/test_tensor_basics.py), and a grown storage keeps the memory the
  // array views (Note [Growing a storage and the arrays that view it]).
  auto* keep = new ExportedMemory{impl->storage(), nullptr};
  keep->data = keep->storage->exportData();
  PyObject* base = PyCapsule_New(keep, nullptr, [](PyObject* capsule) {
    auto* exported = static_cast<ExportedMemory*>(PyCapsule_GetPointer(capsule, nullptr));
    exported->storage->releaseExport(exported->data);
    delete exported;
  });
  if (base == nullptr) {
    delete keep;
    Py_DECREF(arr);
    throw py::error_already_set();
  }
  if (api.PyArray_SetBaseObject_(arr, base) < 0) { // steals the reference to base
    Py_DECREF(arr);
    throw py::error_already_set();
  }
  return arr;
}

Tensor tensorOfArray(PyObject* array) {
  const auto* proxy = py::detail::array_proxy(array);
  ScalarType st = scalarTypeOfDescr(proxy->descr);
  OPDISPATCH_CHECK_VALUE(py::detail::array_descriptor_proxy(proxy->descr)->byteorder != '>',
                         "from_numpy: big-endian arrays are not supported; convert with "
                         "array.astype(array.dtype.newbyteorder('='))");
  auto itemsize = static_cast<int64_t>(elementSize(st));
  const int nd = proxy->nd;
  OPDISPATCH_CHECK_VALUE(nd <= kMaxNumpyDims, "from_numpy: an array of ", nd, " dimensions (at most ", kMaxNumpyDims,
                         " are supported)");
  std::array<int64_t, kMaxNumpyDims> sizes{}, strides{};
  for (int i = 0; i < nd; ++i) {
    sizes[i] = proxy->dimensions[i];
    int64_t s = proxy->strides[i];
    OPDISPATCH_CHECK_VALUE(s >= 0, "from_numpy: stride ", s, " of dimension ", i,
                           " is negative, which tensors do not support; pass numpy.ascontiguousarray(array) (a "
                           "copy) instead");
    OPDISPATCH_CHECK_VALUE(s % itemsize == 0, "from_numpy: stride ", s, " of dimension ", i,
                           " is not a multiple of the element size ", itemsize,
                           "; pass numpy.ascontiguousarray(array) (a copy) instead");
    strides[i] = s / itemsize;
  }
  if (proxy->flags & NpyApi::NPY_ARRAY_C_CONTIGUOUS_) {
    // NumPy leaves the strides of size-0 and size-1 dimensions of a C-order
    // array unnormalised; they address no other element. Use the strides
    // contiguousStrides gives, so a C-order array yields exactly the tensor
    // a Meta kernel describes. (NumPy keeps the product of the nonzero
    // sizes within intp, so this product cannot overflow; checked anyway.)
    int64_t step = 1;
    for (int i = nd; i-- > 0;) {
      strides[i] = step;
      OPDISPATCH_CHECK(!mulOverflows(step, sizes[i] > 1 ? sizes[i] : 1, &step),
                       "from_numpy: the contiguous "
                       "strides of the array's shape overflow int64");
    }
  }
  Py_INCREF(array);
  return from_blob(
      proxy->data, IntArrayRef(sizes.data(), static_cast<size_t>(nd)),
      IntArrayRef(strides.data(), static_cast<size_t>(nd)), st,
      [](void* ctx, void*) { pyInterpreterHooks().decref(ctx); }, array);
}

void initNumpyBridgeBindings(py::module_& m) {
  if (PyModule_AddFunctions(m.ptr(), kModuleMethods) < 0) {
    throw py::error_already_set();
  }
  PyTypeObject& t = gNumpyKernelType;
  t.tp_name = "opdispatch._C._NumpyKernel";
  t.tp_basicsize = sizeof(NumpyKernelObject);
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL;
  t.tp_doc =
      "_NumpyKernel(fn, fallback, nargs=-1, ndim=-1, dtypes=0, contiguous=False): a CPU kernel that runs fn "
      "through _call_numpy when called with exactly nargs positional arguments and no keywords (-1: any call) whose "
      "tensors all have ndim dimensions (-1: any), are all C-contiguous if contiguous is true (an elementwise "
      "operator's output follows a non-contiguous input's layout, which the fallback lays out: Note [Output "
      "strides] in _builtins/_output_strides.py), and whose operands' dtypes fit dtypes (0: any; 1: one dtype for "
      "every tensor "
      "and no Python number of a higher category; 2: as 1, and that dtype floating or complex: Note [Promotion "
      "on the fast path]), and calls fallback, the same kernel written in Python, for every other call and when "
      "fn raises ValueError or OverflowError (Note [NumPy kernels]). TypeError if fn or fallback is not "
      "callable; ValueError if nargs or ndim is below -1 or dtypes is not 0, 1 or 2.";
  t.tp_new = numpyKernelNew;
  t.tp_dealloc = numpyKernelDealloc;
  t.tp_traverse = numpyKernelTraverse;
  t.tp_clear = numpyKernelClear;
  t.tp_call = PyVectorcall_Call;
  t.tp_vectorcall_offset = offsetof(NumpyKernelObject, vectorcall);
  t.tp_dictoffset = offsetof(NumpyKernelObject, dict);
  t.tp_members = kNumpyKernelMembers;
  addStaticType(m, t, "_NumpyKernel");
  m.def(
      "_set_numpy_errstate",
      [](py::object var, py::object ignore_all) {
        OPDISPATCH_CHECK_TYPE(PyContextVar_CheckExact(var.ptr()),
                              "_set_numpy_errstate(var, value): var must be a contextvars.ContextVar");
        Py_XDECREF(gErrstateVar);
        Py_XDECREF(gIgnoreAll);
        gErrstateVar = var.release().ptr();
        gIgnoreAll = ignore_all.release().ptr();
        // Contexts made with a previous variable are stale: a new key orphans them.
        Py_XSETREF(gContextKey, PyUnicode_FromFormat("opdispatch.kernel_context.%p", gErrstateVar));
        if (gContextKey == nullptr) {
          throw py::error_already_set();
        }
      },
      py::arg("var"), py::arg("ignore_all"),
      "Sets the context variable holding NumPy's floating-point error state and the value that ignores every "
      "error: _call_numpy sets it for each call (Note [NumPy floating-point errors in kernels]).");
}

} // namespace opdispatch::python
