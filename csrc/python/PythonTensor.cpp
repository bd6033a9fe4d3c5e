// opdispatch._C.TensorBase: the Python object of a TensorImpl, its
// attributes, and the NumPy bridge (from_numpy / numpy share memory).
#include "PythonTensor.h"

#include <array>

#include <structmember.h>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <opdispatch/core/CheckedArithmetic.h>
#include <opdispatch/core/Exception.h>
#include <opdispatch/core/GradMode.h>
#include <opdispatch/core/SmallVector.h>
#include <opdispatch/dispatch/LocalDispatchKeySet.h>

#include "Exceptions.h"
#include "IValueConversion.h"
#include "NumpyBridge.h"
#include "PythonFallbackKernel.h"
#include "PythonTypes.h"
#include "StaticType.h"

namespace py = pybind11;

namespace opdispatch::python {

PyTypeObject* TensorBaseType = nullptr;
PyTypeObject* gTensorClass = nullptr;

namespace {

PyTypeObject gTensorBaseType = staticTypeObject();

TensorImpl* selfImpl(PyObject* self) { return unpackImpl(self); }

PyObject* tensorNew(PyTypeObject* type, PyObject*, PyObject*) {
  PyErr_Format(PyExc_TypeError,
               "%s cannot be constructed directly; use opdispatch.tensor(data), opdispatch.empty(shape), "
               "opdispatch.from_numpy(array), or Tensor._make_subclass(cls, tensor) for a subclass",
               type->tp_name);
  return nullptr;
}

// Note [Tensor objects and the garbage collector]
// Autograd keeps its state (grad, grad_fn) in the TensorImpl's
// autograd_meta slot, so a cycle such as output -> grad_fn -> saved output
// runs through the TensorImpl, where the collector cannot see it. A tensor
// object therefore reports the autograd meta as its own reference, but only
// while it is the TensorImpl's sole owner (as PyTorch's THPVariable_traverse):
// if C++ also holds the TensorImpl, the meta is reachable from outside Python
// and must not be cleared.
int tensorTraverse(PyObject* self, visitproc visit, void* arg) {
  auto* obj = reinterpret_cast<TensorObject*>(self);
  TensorImpl* impl = obj->impl;
  if (impl != nullptr && impl->use_count() == 1) {
    Py_VISIT(static_cast<PyObject*>(impl->autograd_meta().get()));
  }
  return 0;
}

int tensorClear(PyObject* self) {
  auto* obj = reinterpret_cast<TensorObject*>(self);
  TensorImpl* impl = obj->impl;
  if (impl != nullptr && impl->use_count() == 1) {
    impl->autograd_meta().reset();
  }
  return 0;
}

// Note [Preserving tensor subclass objects]
// A TensorImpl surfaces in Python as one object while that object lives;
// when it dies, the next conversion makes a plain opdispatch.Tensor. For an
// instance of a subclass that would lose its class and attributes while C++
// still holds the tensor, e.g. between a __torch_dispatch__ handler returning
// a wrapper subclass object and its caller receiving it. So when the last
// Python reference to such an object goes while C++ still holds the
// TensorImpl, the object is resurrected and ownership flips: the TensorImpl
// owns the object (owns_pyobj) and the object borrows the TensorImpl. The
// next wrapTensor flips it back (the object owns the TensorImpl again and the
// caller gets the TensorImpl's reference); if C++ drops the tensor instead,
// ownership flips back as the last C++ reference goes (the object takes that
// reference over, TensorImpl::handOffLastReference) and the object is
// released: it dies for good, and its deallocation deletes the TensorImpl,
// unless its finalizer keeps it (a list, C++ again), which keeps it whole.
// The check must come before CPython runs the object's finalizer and clears
// its __slots__ and attributes, so each subclass gets subclassDealloc as its
// tp_dealloc when it is made, and opdispatch.Tensor too (its own objects are
// never preserved; one slot for all, as CPython's `obj.__class__ = cls`
// needs): the check, then CPython's subtype_dealloc (Note [The instance dict
// of tensor subclasses]). Classes
// made otherwise than by a class statement (static types of extensions) keep
// their own slots and their objects are not preserved. PyTorch:
// THPVariable_tryResurrect, THPVariable_subclass_dealloc and PyObject
// preservation in c10's PyObjectSlot.

/// Whether `obj` owns its TensorImpl and C++ holds the TensorImpl too: then
/// the object outlives its last Python reference (tryResurrect) and counts as
/// reachable from C++ (subclassTraverse). PyTorch: isResurrectable.
bool cppHoldsImpl(TensorObject* obj) {
  TensorImpl* impl = obj->impl;
  return impl != nullptr && impl->pyobj() == obj && !impl->owns_pyobj() && impl->use_count() > 1;
}

// Note [Subclass objects and the garbage collector]
// While a subclass object owns its TensorImpl and C++ holds the TensorImpl
// too, the object is as good as referenced from C++: if its last Python
// reference goes, it is preserved (Note [Preserving tensor subclass
// objects]). The collector cannot see C++ references, so a cycle through the
// object's attributes (obj.__dict__ -> obj, obj -> list -> obj) with no other
// Python reference would look like garbage: it would clear the attributes,
// and the object would then be preserved empty. So the subclass's
// tp_traverse reports nothing while C++ holds the TensorImpl: the object
// then counts as a root, and everything it refers to as reachable. Once C++
// lets go, it reports its references again and a cycle that is garbage is
// collected. PyTorch: THPVariable_subclass_traverse.

/// Resurrects `self` (refcount 0, in dealloc) if C++ still holds its TensorImpl.
bool tryResurrect(TensorObject* obj) {
  if (!cppHoldsImpl(obj)) {
    return false;
  }
  PyObject* self = reinterpret_cast<PyObject*>(obj);
  TensorImpl* impl = obj->impl;
  Py_INCREF(self);
  impl->set_owns_pyobj(true);
  intrusive_ptr<TensorImpl>::reclaim(impl);  // the object's reference; C++ owners keep impl alive
  return true;
}

void tensorDealloc(PyObject* self);

/// Calls f(slot, member) for each object __slots__ member of the heap types
/// from `self`'s class up to TensorBase; returns the first nonzero result.
template <class F>
int forEachObjectSlot(PyObject* self, F&& f) {
  for (PyTypeObject* base = Py_TYPE(self); base != TensorBaseType && base != nullptr; base = base->tp_base) {
    if (base->tp_flags & Py_TPFLAGS_HEAPTYPE) {
      PyMemberDef* members = base->tp_members;  // a heap type: its Py_SIZE(base) members, __slots__ first
      for (Py_ssize_t i = 0; i < Py_SIZE(base); ++i) {
        if (members[i].type != T_OBJECT_EX) {
          continue;
        }
        if (int err = f(reinterpret_cast<PyObject**>(reinterpret_cast<char*>(self) + members[i].offset), members[i])) {
          return err;
        }
      }
    }
  }
  return 0;
}

/// Clears `self`'s writable object __slots__.
void clearSlots(PyObject* self) {
  forEachObjectSlot(self, [](PyObject** slot, const PyMemberDef& member) {
    if (!(member.flags & READONLY)) {
      Py_CLEAR(*slot);
    }
    return 0;
  });
}

/// CPython's subtype_dealloc and subtype_traverse: the slots of a class
/// defined by a class statement, taken from the first tensor subclass whose
/// objects are preserved.
destructor gSubtypeDealloc = nullptr;
traverseproc gSubtypeTraverse = nullptr;

/// Visits `self`'s object __slots__.
int visitSlots(PyObject* self, visitproc visit, void* arg) {
  return forEachObjectSlot(self, [&](PyObject** slot, const PyMemberDef&) {
    Py_VISIT(*slot);
    return 0;
  });
}

// Note [The instance dict of tensor subclasses]
// TensorBase has no __dict__ of its own: CPython gives opdispatch.Tensor, a
// class statement's class, the instance dict of a Python class (3.11+: a
// managed dict whose attribute values an object made by object.__new__
// holds inline, which the interpreter's specialised attribute loads and
// stores read and write directly, with no dict object made per instance;
// 3.10: a dict at tp_dictoffset). A subclass object whose class's slots are
// subclassDealloc and subclassTraverse passes to CPython's subtype_dealloc
// and subtype_traverse, which free and visit that dict, and which call the
// class's slot back as their base's (the class is the nearest base whose
// slot differs from theirs). They leave to it what they do only for the
// classes they walk (the __slots__ of the heap classes, the reference to the
// class) and, being called on a class whose base has the same dict, part of
// the dict: 3.10 all of it; 3.11 the visit of a dict made from the inline
// values (vars(obj) makes one), while it visits the values; 3.12+ the visit
// of either. The callbacks do that (visitSkippedDict, clearSkippedDict).

/// Visits the part of `self`'s instance dict that subtype_traverse leaves to
/// its callback: Note [The instance dict of tensor subclasses].
int visitSkippedDict(PyObject* self, visitproc visit, void* arg) {
#if PY_VERSION_HEX < 0x030B0000
  PyObject** dict = _PyObject_GetDictPtr(self);  // the dict at tp_dictoffset: no dict is made
  Py_VISIT(dict ? *dict : nullptr);
#else
  if (!(Py_TYPE(self)->tp_flags & Py_TPFLAGS_MANAGED_DICT)) {
    return 0;
  }
#if PY_VERSION_HEX < 0x030C0000
  // 3.11 has no function for it: its managed dict pointer (CPython's
  // _PyObject_ManagedDictPointer) is the word three pointers before the object.
  Py_VISIT(*(reinterpret_cast<PyObject**>(self) - 3));
#elif PY_VERSION_HEX < 0x030D0000
  return _PyObject_VisitManagedDict(self, visit, arg);
#else
  return PyObject_VisitManagedDict(self, visit, arg);
#endif
#endif
  return 0;
}

/// Frees the part of `self`'s instance dict that subtype_dealloc leaves to
/// its callback (3.10: the dict; 3.11+: none, it frees a managed dict whole).
void clearSkippedDict(PyObject* self) {
#if PY_VERSION_HEX < 0x030B0000
  if (PyObject** dict = _PyObject_GetDictPtr(self)) {
    Py_CLEAR(*dict);
  }
#else
  static_cast<void>(self);
#endif
}

/// Stands in `shape` of a plain tensor object while CPython's subtype_dealloc
/// runs on it, so subclassDealloc knows the call back; never dereferenced.
/// Nothing else reads the field meanwhile: the object has no references, no
/// finalizer runs, and weak references give None.
char gPlainDeallocMark;

PyObject* plainDeallocMark() { return reinterpret_cast<PyObject*>(&gPlainDeallocMark); }

/// The end of a deallocation, when CPython's subtype_dealloc calls the slot
/// back as its base's tp_dealloc.
void finishDealloc(PyObject* self, PyTypeObject* type) {
  clearSlots(self);
  clearSkippedDict(self);
  tensorDealloc(self);
  Py_DECREF(type);  // an instance of a heap type owns a reference to it
}

} // namespace

/// tp_dealloc of opdispatch.Tensor and its subclasses: the preservation check
/// (subclasses only), then CPython's subtype_dealloc, which calls this slot
/// back as its base's tp_dealloc. CPython's trashcan bounds nested
/// deallocation (a long chain of objects freeing the next one) by deferring
/// the deeper ones; subtype_dealloc applies it only as the class's own
/// tp_dealloc, so this slot does.
void subclassDealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  auto* obj = reinterpret_cast<TensorObject*>(self);
  if (type == gTensorClass && type->tp_finalize == nullptr) {
    // A plain tensor: never preserved, and marked by its `shape` (cheaper than the thread-local below, which
    // every plain tensor would otherwise pay for).
    if (obj->shape == plainDeallocMark()) {
      obj->shape = nullptr;
      finishDealloc(self, type);
      return;
    }
    PyObject_GC_UnTrack(self);
    Py_TRASHCAN_BEGIN(self, subclassDealloc)
      Py_CLEAR(obj->shape);
      obj->shape = plainDeallocMark();
      gSubtypeDealloc(self);
    Py_TRASHCAN_END
    return;
  }
  thread_local PyObject* base_call = nullptr;  // the object whose subtype_dealloc is running here
  if (base_call == self) {
    base_call = nullptr;
    finishDealloc(self, type);
    return;
  }
  if (type != gTensorClass && tryResurrect(obj)) {
    if (!PyObject_GC_IsTracked(self)) {
      PyObject_GC_Track(self);  // a deallocation the trashcan deferred (below) untracked it
    }
    return;
  }
  PyObject_GC_UnTrack(self);
  Py_TRASHCAN_BEGIN(self, subclassDealloc)
    PyObject* outer = base_call;
    base_call = self;
    gSubtypeDealloc(self);
    base_call = outer;
  Py_TRASHCAN_END
}

namespace {

/// tp_traverse of tensor subclasses: nothing while C++ holds the TensorImpl
/// (Note [Subclass objects and the garbage collector]), else CPython's
/// subtype_traverse, which calls this slot back as its base's tp_traverse.
int subclassTraverse(PyObject* self, visitproc visit, void* arg) {
  thread_local PyObject* base_call = nullptr;  // the object whose subtype_traverse is running here
  if (base_call == self) {
    base_call = nullptr;
    if (int err = visitSlots(self, visit, arg)) {
      return err;
    }
    if (int err = visitSkippedDict(self, visit, arg)) {
      return err;
    }
    Py_VISIT(Py_TYPE(self));  // an instance of a heap type owns a reference to it
    return tensorTraverse(self, visit, arg);
  }
  if (cppHoldsImpl(reinterpret_cast<TensorObject*>(self))) {
    return 0;
  }
  PyObject* outer = base_call;
  base_call = self;
  int err = gSubtypeTraverse(self, visit, arg);
  base_call = outer;
  return err;
}

void tensorDealloc(PyObject* self) {
  auto* obj = reinterpret_cast<TensorObject*>(self);
  PyObject_GC_UnTrack(self);
  if (obj->weakrefs != nullptr) {
    PyObject_ClearWeakRefs(self);
  }
  Py_CLEAR(obj->kernel_array);
  Py_CLEAR(obj->shape);
  if (TensorImpl* impl = obj->impl) {
    obj->impl = nullptr;
    if (impl->pyobj() == self) {
      impl->set_pyobj(nullptr);
      if (impl->owns_pyobj()) {
        impl->set_owns_pyobj(false);  // the TensorImpl is being destroyed and released us: borrowed
        impl = nullptr;
      }
    }
    if (impl != nullptr) {
      intrusive_ptr<TensorImpl>::reclaim(impl);
    }
  }
  Py_TYPE(self)->tp_free(self);
}

/// New reference to the live object of `impl` (precondition: impl->pyobj()
/// set). If the TensorImpl owned it, ownership flips back: the object takes
/// `impl_ref` (a reference to impl the caller gives up, or null to add one)
/// and the caller gets the TensorImpl's reference to the object.
PyObject* existingObject(TensorImpl* impl, TensorImpl* impl_ref) {
  auto* existing = static_cast<PyObject*>(impl->pyobj());
  if (impl->owns_pyobj()) {
    impl->set_owns_pyobj(false);
    if (impl_ref == nullptr) {
      intrusive_ptr<TensorImpl>(impl).release();
    }
    return existing;
  }
  if (impl_ref != nullptr) {
    intrusive_ptr<TensorImpl>::reclaim(impl_ref);
  }
  Py_INCREF(existing);
  return existing;
}

/// Gives `cls` the slots of Note [Preserving tensor subclass objects] if it
/// has none yet and its objects are preserved: a class statement's class (its
/// slots are CPython's, as opdispatch.Tensor's are) other than opdispatch.Tensor.
/// Done when the class is made (Tensor.__init_subclass__, as PyTorch's
/// THPVariableMetaType_init), so that `obj.__class__ = cls` finds it ready,
/// and again before an object is made (a subclass whose own
/// __init_subclass__ does not call super()'s).
void preparePreservingClass(PyTypeObject* cls) {
  if (gSubtypeDealloc == nullptr || cls->tp_dealloc != gSubtypeDealloc || cls == gTensorClass ||
      !(cls->tp_flags & Py_TPFLAGS_HEAPTYPE) || cls->tp_traverse != gTensorClass->tp_traverse) {
    return;
  }
  gSubtypeTraverse = cls->tp_traverse;
  cls->tp_dealloc = subclassDealloc;
  cls->tp_traverse = subclassTraverse;  // See Note [Subclass objects and the garbage collector]
}

/// A new zeroed object of `cls` (new reference), or null with an exception
/// set. A preserving class's object is made by object.__new__, which also
/// gives it inline attribute values (Note [The instance dict of tensor
/// subclasses]); object.__new__ refuses an abstract class, whose object is
/// allocated directly (its attributes then go to a dict).
PyObject* allocateObject(PyTypeObject* cls) {
  static PyObject* no_args = PyTuple_New(0);  // never freed; null if it could not be made
  if (cls == gTensorClass || cls->tp_dealloc != subclassDealloc || (cls->tp_flags & Py_TPFLAGS_IS_ABSTRACT) ||
      no_args == nullptr) {
    return cls->tp_alloc(cls, 0);
  }
  return PyBaseObject_Type.tp_new(cls, no_args, nullptr);
}

/// Wraps `impl` (one reference, given to the new object) in a new object of class `cls`.
PyObject* newWrapper(PyTypeObject* cls, TensorImpl* impl) {
  preparePreservingClass(cls);
  PyObject* obj = allocateObject(cls);
  if (obj == nullptr) {
    intrusive_ptr<TensorImpl>::reclaim(impl);
    throw py::error_already_set();
  }
  reinterpret_cast<TensorObject*>(obj)->impl = impl;
  impl->set_pyobj(obj);
  return obj;
}

/// A new tuple of the ints `v`, or null with MemoryError set.
PyObject* intTuple(IntArrayRef v) {
  PyObject* t = PyTuple_New(static_cast<Py_ssize_t>(v.size()));
  for (size_t i = 0; t != nullptr && i < v.size(); ++i) {
    PyObject* item = PyLong_FromLongLong(v[i]);
    if (item == nullptr) {
      Py_CLEAR(t);
      break;
    }
    PyTuple_SET_ITEM(t, i, item);
  }
  return t;
}

// --- attributes -------------------------------------------------------------

/// Whether `tuple` (a tuple of ints made by intTuple) holds the ints `v`.
bool holdsInts(PyObject* tuple, IntArrayRef v) {
  if (static_cast<size_t>(PyTuple_GET_SIZE(tuple)) != v.size()) {
    return false;
  }
  for (size_t i = 0; i < v.size(); ++i) {
    if (PyLong_AsLongLong(PyTuple_GET_ITEM(tuple, static_cast<Py_ssize_t>(i))) != v[i]) {
      return false;
    }
  }
  return true;
}

PyObject* getShape(PyObject* self, void*) {
  auto* obj = reinterpret_cast<TensorObject*>(self);
  IntArrayRef sizes = obj->impl->sizes();
  if (obj->shape == nullptr || !holdsInts(obj->shape, sizes)) {
    PyObject* shape = intTuple(sizes);
    if (shape == nullptr) {
      return nullptr;
    }
    Py_XSETREF(obj->shape, shape);
  }
  Py_INCREF(obj->shape);
  return obj->shape;
}
PyObject* getDtype(PyObject* self, void*) {
  return pythonEntry([&] { return dtypeObject(selfImpl(self)->dtype()); });
}
PyObject* getDevice(PyObject* self, void*) {
  return pythonEntry([&] { return deviceObject(selfImpl(self)->device()); });
}
PyObject* getNdim(PyObject* self, void*) { return PyLong_FromLongLong(selfImpl(self)->dim()); }
PyObject* getRequiresGrad(PyObject* self, void*) { return PyBool_FromLong(selfImpl(self)->requires_grad()); }
int setRequiresGrad(PyObject* self, PyObject* value, void*) {
  if (value == nullptr || !PyBool_Check(value)) {
    PyErr_SetString(PyExc_TypeError, "requires_grad must be a bool");
    return -1;
  }
  PyObject* r = pythonEntry([&] {
    selfImpl(self)->set_requires_grad(value == Py_True);
    Py_RETURN_NONE;
  });
  if (r == nullptr) {
    return -1;
  }
  Py_DECREF(r);
  return 0;
}
PyObject* getVersion(PyObject* self, void*) { return PyLong_FromUnsignedLong(selfImpl(self)->version()); }
PyObject* getIsMeta(PyObject* self, void*) { return PyBool_FromLong(selfImpl(self)->device().is_meta()); }
PyObject* getAutogradMeta(PyObject* self, void*) {
  void* meta = selfImpl(self)->autograd_meta().get();
  PyObject* obj = meta ? static_cast<PyObject*>(meta) : Py_None;
  Py_INCREF(obj);
  return obj;
}
int setAutogradMeta(PyObject* self, PyObject* value, void*) {
  OwnedPyObject& slot = selfImpl(self)->autograd_meta();
  if (value == nullptr || value == Py_None) {
    slot.reset();
  } else {
    Py_INCREF(value);
    slot = OwnedPyObject::steal(value);
  }
  return 0;
}

PyGetSetDef kGetSets[] = {
    {"shape", getShape, nullptr, "The sizes, a tuple of ints.", nullptr},
    {"dtype", getDtype, nullptr, "The element type (opdispatch.float32, ...).", nullptr},
    {"device", getDevice, nullptr, "The device (opdispatch.device).", nullptr},
    {"ndim", getNdim, nullptr, "Number of dimensions.", nullptr},
    {"requires_grad", getRequiresGrad, setRequiresGrad,
     "Whether autograd records operations on this tensor; setting it changes the dispatch key set.", nullptr},
    {"_version", getVersion, nullptr, "The in-place modification counter (shared with views).", nullptr},
    {"is_meta", getIsMeta, nullptr, "Whether the tensor is on the meta device (no data).", nullptr},
    {"_autograd_meta", getAutogradMeta, setAutogradMeta, "Autograd state owned by the Python layer.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

// --- methods ------------------------------------------------------------------

/// stride(dim=None) / size(dim=None): all of them as a tuple, or the one of `dim`.
template <IntArrayRef (TensorImpl::*All)() const, int64_t (Tensor::*One)(int64_t) const>
PyObject* perDimension(PyObject* self, PyObject* args, const char* format) {
  PyObject* dim = Py_None;
  if (!PyArg_ParseTuple(args, format, &dim)) {
    return nullptr;
  }
  return pythonEntry([&]() -> PyObject* {
    if (dim == Py_None) {
      return intTuple((selfImpl(self)->*All)());
    }
    int64_t d = 0;
    OPDISPATCH_CHECK_TYPE(toInt64(dim, d), "dim must be an int, not ", pyTypeName(dim));
    return PyLong_FromLongLong((unpackTensor(self).*One)(d));
  });
}
PyObject* methStride(PyObject* self, PyObject* args) {
  return perDimension<&TensorImpl::strides, &Tensor::stride>(self, args, "|O:stride");
}
PyObject* methSize(PyObject* self, PyObject* args) {
  return perDimension<&TensorImpl::sizes, &Tensor::size>(self, args, "|O:size");
}
PyObject* methNumel(PyObject* self, PyObject*) { return PyLong_FromLongLong(selfImpl(self)->numel()); }
PyObject* methDim(PyObject* self, PyObject*) { return PyLong_FromLongLong(selfImpl(self)->dim()); }
PyObject* methIsContiguous(PyObject* self, PyObject*) { return PyBool_FromLong(selfImpl(self)->is_contiguous()); }
PyObject* methStorageOffset(PyObject* self, PyObject*) { return PyLong_FromLongLong(selfImpl(self)->storage_offset()); }
PyObject* methDataPtr(PyObject* self, PyObject*) {
  return pythonEntry([&] { return PyLong_FromVoidPtr(selfImpl(self)->data_ptr()); });
}
PyObject* methBumpVersion(PyObject* self, PyObject*) {
  selfImpl(self)->bump_version();
  Py_RETURN_NONE;
}
PyObject* methHasStorage(PyObject* self, PyObject*) { return PyBool_FromLong(selfImpl(self)->has_storage()); }
PyObject* methStorageNbytes(PyObject* self, PyObject*) {
  const auto* impl = selfImpl(self);
  if (!impl->has_storage()) {
    Py_RETURN_NONE;
  }
  return PyLong_FromSize_t(impl->storage()->nbytes());
}
PyObject* methIsSame(PyObject* self, PyObject* other) {
  return PyBool_FromLong(isTensor(other) && unpackImpl(other) == selfImpl(self));
}
PyObject* methSharesStorage(PyObject* self, PyObject* other) {
  if (!isTensor(other)) {
    PyErr_SetString(PyExc_TypeError, "_shares_storage expects a tensor");
    return nullptr;
  }
  const auto& a = selfImpl(self)->storage();
  const auto& b = unpackImpl(other)->storage();
  return PyBool_FromLong(a.defined() && a == b);
}

PyObject* methSharesMemory(PyObject* self, PyObject* other) {
  if (!isTensor(other)) {
    PyErr_SetString(PyExc_TypeError, "_shares_memory expects a tensor");
    return nullptr;
  }
  return PyBool_FromLong(selfImpl(self)->sharesMemoryWith(*unpackImpl(other)));
}

PyObject* methNumpy(PyObject* self, PyObject* args, PyObject* kwargs) {
  int force = 0;
  if (PyTuple_GET_SIZE(args) != 0 || (kwargs != nullptr && PyDict_GET_SIZE(kwargs) != 0)) {
    static const char* kwlist[] = {"force", nullptr};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$p:numpy", const_cast<char**>(kwlist), &force)) {
      return nullptr;
    }
  }
  return pythonEntry([&] {
    TensorImpl* impl = selfImpl(self);
    // PyTorch's rule: refused only while grad mode is on. Deliberately also
    // allowed below autograd (the autograd keys excluded), where grad mode
    // stays on (Note [Grad mode is its own flag]): opdispatch's kernels are
    // NumPy code that reads the tensors it is given.
    OPDISPATCH_CHECK(force || !impl->requires_grad() || !GradMode::is_enabled() ||
                         tls_is_dispatch_key_excluded(DispatchKey::AutogradCPU),
                     "Can't call numpy() on a tensor that requires grad while grad mode is enabled. Use "
                     "tensor.detach().numpy() instead (or numpy(force=True)).");
    return arrayOfTensor(self);
  });
}

PyMethodDef kMethods[] = {
    {"stride", methStride, METH_VARARGS, "stride(dim=None): the strides in elements, or one of them."},
    {"size", methSize, METH_VARARGS, "size(dim=None): the sizes, or one of them."},
    {"numel", methNumel, METH_NOARGS, "Number of elements."},
    {"dim", methDim, METH_NOARGS, "Number of dimensions."},
    {"is_contiguous", methIsContiguous, METH_NOARGS, "Whether the layout is C-contiguous."},
    {"storage_offset", methStorageOffset, METH_NOARGS, "Offset of element 0 in the storage, in elements."},
    {"data_ptr", methDataPtr, METH_NOARGS, "Address of element 0 (raises for meta tensors)."},
    {"_bump_version", methBumpVersion, METH_NOARGS, "Records an in-place modification."},
    {"_is_same", methIsSame, METH_O, "Whether both objects wrap the same TensorImpl."},
    {"_storage_nbytes", methStorageNbytes, METH_NOARGS,
     "The size in bytes of the tensor's storage; None if it has none (meta tensors, wrapper subclasses, fake "
     "tensors). PyTorch: Tensor.untyped_storage().nbytes()."},
    {"_has_storage", methHasStorage, METH_NOARGS,
     "Whether the tensor has data (meta tensors, wrapper subclasses and fake tensors have none)."},
    {"_shares_storage", methSharesStorage, METH_O, "Whether both tensors use the same storage."},
    {"_shares_memory", methSharesMemory, METH_O,
     "Whether writing through one tensor may change the other: the same tensor, a view of it (also on meta), or "
     "overlapping memory (TensorImpl::sharesMemoryWith)."},
    {"numpy", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(methNumpy)), METH_VARARGS | METH_KEYWORDS,
     "numpy(*, force=False): a NumPy array sharing this tensor's memory (cpu only). Raises for a tensor that "
     "requires grad while grad mode is enabled, unless force=True (as PyTorch)."},
    {nullptr, nullptr, 0, nullptr},
};

// --- factories ------------------------------------------------------------------

Tensor fromNumpy(py::handle obj) {
  OPDISPATCH_CHECK_TYPE(py::isinstance<py::array>(obj), "from_numpy expects a numpy.ndarray, not ",
                        Py_TYPE(obj.ptr())->tp_name);
  if (!py::reinterpret_borrow<py::array>(obj).writeable()) {
    // PyTorch: torch.from_numpy warns the same way. Tensors have no read-only flag.
    if (PyErr_WarnEx(PyExc_UserWarning,
                     "from_numpy: the given NumPy array is not writable, and tensors have no read-only mode: "
                     "writing to the tensor (or to tensor.numpy()) writes into memory NumPy considers "
                     "read-only. Pass array.copy() to protect its data.",
                     1) < 0) {
      throw py::error_already_set();
    }
  }
  Tensor t = tensorOfArray(obj.ptr());
  t.unsafeGetTensorImpl()->storage()->set_resizable(false); // its memory is the array's (PyTorch: the same)
  return t;
}

/// toInt64 of `obj`, the argument `what` (e.g. "empty(): shape[1]"): false if
/// `obj` is not an integer; an int beyond int64 is an OverflowError naming `what`.
bool toNamedInt64(PyObject* obj, int64_t& out, const std::string& what) {
  try {
    return toInt64(obj, out);
  } catch (const OverflowError& e) {
    throw OverflowError(detail::str(what, ": ", e.what()));
  }
}

/// The ints of `value` (an int, or a sequence of ints), the argument `what`
/// (e.g. "empty(): shape"). Throws TypeError / OverflowError naming it.
std::vector<int64_t> toInts(py::handle value, const char* what) {
  int64_t one = 0;
  if (PyLong_Check(value.ptr())) {
    toNamedInt64(value.ptr(), one, what);
    return {one};
  }
  OPDISPATCH_CHECK_TYPE(py::isinstance<py::sequence>(value), what, " must be an int or a sequence of ints, not ",
                        pyTypeName(value.ptr()));
  py::list items = py::reinterpret_steal<py::list>(PySequence_List(value.ptr()));
  if (!items) {
    throw py::error_already_set();
  }
  std::vector<int64_t> out(items.size());
  for (size_t i = 0; i < out.size(); ++i) {
    PyObject* item = PyList_GET_ITEM(items.ptr(), i);
    OPDISPATCH_CHECK_TYPE(PyLong_Check(item), what, " must contain ints, not ", pyTypeName(item));
    toNamedInt64(item, out[i], detail::str(what, "[", i, "]"));
  }
  return out;
}

// --- subclass constructors ---------------------------------------------------------
// Tensor._make_subclass and Tensor._make_wrapper_subclass: a tensor subclass
// object over a view of existing data, or over metadata alone. Instances of a
// class with __torch_dispatch__ carry the Python keys (Note [The Python key]).

PyTypeObject* tensorSubclass(PyObject* cls, const char* api) {
  // The registered class (opdispatch.Tensor), not TensorBase: every tensor
  // object has the Python methods (Note [Every tensor is an opdispatch.Tensor]
  // in python/opdispatch/_tensor_type.py). PyTorch: the check against
  // THPVariableClass in THPVariable_make_subclass.
  OPDISPATCH_CHECK_TYPE(PyType_Check(cls) && PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(cls), gTensorClass), api,
                        ": cls must be a subclass of opdispatch.Tensor, not ", pyTypeName(cls));
  return reinterpret_cast<PyTypeObject*>(cls);
}

/// Geometry of _make_wrapper_subclass: inline up to this many dimensions, as in a TensorImpl.
using WrapperGeometry = SmallVector<int64_t, 5>;

/// Appends the ints of `seq` (a sequence of ints) for argument `name` of
/// _make_wrapper_subclass to `out`; each must be >= 0. Throws TypeError / ValueError.
void nonNegativeInts(PyObject* seq, const char* name, WrapperGeometry& out) {
  OPDISPATCH_CHECK_TYPE(PySequence_Check(seq) && !PyUnicode_Check(seq), "_make_wrapper_subclass(): argument '", name,
                        "' must be a sequence of ints, not ", pyTypeName(seq));
  py::object fast = py::reinterpret_steal<py::object>(PySequence_Fast(seq, "a sequence"));
  if (!fast) {
    throw py::error_already_set();
  }
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast.ptr());
  PyObject** items = PySequence_Fast_ITEMS(fast.ptr());
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = items[i];
    py::object index;
    if (PyLong_CheckExact(item)) {
      index = py::reinterpret_borrow<py::object>(item);
    } else {
      OPDISPATCH_CHECK_TYPE(PyIndex_Check(item) && !PyBool_Check(item), "_make_wrapper_subclass(): ", name, "[", i,
                            "] must be an int, not ", pyTypeName(item));
      index = py::reinterpret_steal<py::object>(PyNumber_Index(item));
      if (!index) {
        throw py::error_already_set();
      }
    }
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
    OPDISPATCH_CHECK_VALUE(overflow == 0 && !(v == -1 && PyErr_Occurred()), "_make_wrapper_subclass(): ", name, "[", i,
                           "] = ", py::repr(item).cast<std::string>(), " does not fit in int64");
    OPDISPATCH_CHECK_VALUE(v >= 0, "_make_wrapper_subclass(): ", name, "[", i, "] = ", v,
                           " is negative; sizes and strides must be >= 0");
    out.push_back(v);
  }
}

/// Throws ValueError unless the element count and the furthest element
/// offset of (sizes, strides, offset) fit in int64.
void checkExtentFits(IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  int64_t numel = 1;
  int64_t last = offset;
  bool overflow = false;
  for (size_t i = 0; i < sizes.size(); ++i) {
    overflow |= __builtin_mul_overflow(numel, sizes[i], &numel);
    if (sizes[i] > 0) {
      int64_t step = 0;
      overflow |= __builtin_mul_overflow(sizes[i] - 1, strides[i], &step);
      overflow |= __builtin_add_overflow(last, step, &last);
    }
  }
  OPDISPATCH_CHECK_VALUE(!overflow, "_make_wrapper_subclass(): size ",
                         py::repr(py::cast(sizes.vec())).cast<std::string>(), " with strides ",
                         py::repr(py::cast(strides.vec())).cast<std::string>(), " and storage_offset ", offset,
                         " overflows int64 (too many elements or too large an offset)");
}

/// toScalarType, with the dtype singletons (opdispatch.float32, ...) found by identity first: a wrapper
/// subclass is made per operator call, usually with `dtype=elem.dtype`.
ScalarType wrapperDtype(PyObject* dtype) {
  static const std::vector<std::pair<PyObject*, ScalarType>> singletons = [] {
    std::vector<std::pair<PyObject*, ScalarType>> out;
    for (ScalarType t : kAllScalarTypes) {
      out.emplace_back(dtypeObject(t), t);  // kept: the singletons live as long as the module
    }
    return out;
  }();
  static size_t last = 0;  // the singleton found last: a program's wrappers mostly share one dtype
  if (singletons[last].first == dtype) {
    return singletons[last].second;
  }
  for (size_t i = 0; i < singletons.size(); ++i) {
    if (singletons[i].first == dtype) {
      last = i;
      return singletons[i].second;
    }
  }
  return toScalarType(dtype, "_make_wrapper_subclass(): dtype");
}

/// Binds a METH_FASTCALL | METH_KEYWORDS call to `names` (the first
/// `required` of them required): `out[i]` is the value or null. Keywords are
/// matched by identity with interned names first (no string is built per call,
/// unlike PyArg_ParseTupleAndKeywords). Throws TypeError naming `api`.
template <size_t N>
void bindArguments(const char* api, const std::array<const char*, N>& names, size_t required, PyObject* const* args,
                   Py_ssize_t nargsf, PyObject* kwnames, std::array<PyObject*, N>& out) {
  static std::array<PyObject*, N> interned = [&] {
    std::array<PyObject*, N> r{};
    for (size_t i = 0; i < N; ++i) {
      r[i] = PyUnicode_InternFromString(names[i]);
    }
    return r;
  }();
  size_t nargs = static_cast<size_t>(PyVectorcall_NARGS(nargsf));
  OPDISPATCH_CHECK_TYPE(nargs <= N, api, " takes at most ", N, " arguments (", nargs, " given)");
  out.fill(nullptr);
  for (size_t i = 0; i < nargs; ++i) {
    out[i] = args[i];
  }
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t k = 0; k < nkw; ++k) {
    PyObject* key = PyTuple_GET_ITEM(kwnames, k);
    size_t i = 0;
    while (i < N && interned[i] != key) {
      ++i;
    }
    if (i == N) {  // a name built at run time: compare the text
      i = 0;
      while (i < N && PyUnicode_Compare(interned[i], key) != 0) {
        ++i;
      }
    }
    OPDISPATCH_CHECK_TYPE(i < N, api, " got an unexpected keyword argument '", py::str(key).cast<std::string>(), "'");
    OPDISPATCH_CHECK_TYPE(out[i] == nullptr, api, " got multiple values for argument '", names[i], "'");
    out[i] = args[nargs + static_cast<size_t>(k)];
  }
  for (size_t i = 0; i < required; ++i) {
    OPDISPATCH_CHECK_TYPE(out[i] != nullptr, api, " missing required argument '", names[i], "'");
  }
}

bool truthy(PyObject* obj) {
  int r = obj ? PyObject_IsTrue(obj) : 0;
  if (r < 0) {
    throw py::error_already_set();
  }
  return r == 1;
}

/// Checks the _make_wrapper_subclass keywords PyTorch 2.13 takes that describe
/// what an opdispatch tensor always is (see the docstring); throws naming the one
/// that asks for something else.
void checkWrapperOnlyKeywords(PyObject* memory_format, PyObject* layout, PyObject* pin_memory, PyObject* policy,
                              PyObject* extra_keys) {
  OPDISPATCH_CHECK_VALUE(memory_format == nullptr || memory_format == Py_None,
                         "_make_wrapper_subclass(): memory_format is not supported (opdispatch has no memory formats); "
                         "pass strides instead");
  if (layout != nullptr && layout != Py_None) {
    static PyObject* strided = py::object(py::module_::import("opdispatch._layout").attr("strided")).release().ptr();
    OPDISPATCH_CHECK_VALUE(layout == strided,
                           "_make_wrapper_subclass(): layout must be opdispatch.strided (the only "
                           "layout), not ",
                           py::repr(layout).cast<std::string>());
  }
  OPDISPATCH_CHECK_VALUE(!truthy(pin_memory),
                         "_make_wrapper_subclass(): pin_memory=True needs a CUDA host "
                         "allocator, which opdispatch does not have");
  if (policy != nullptr && policy != Py_None) {
    OPDISPATCH_CHECK_TYPE(PyUnicode_Check(policy),
                          "_make_wrapper_subclass(): dispatch_sizes_strides_policy must be "
                          "a str or None, not ",
                          pyTypeName(policy));
    std::string value = py::str(policy).cast<std::string>();
    OPDISPATCH_CHECK_VALUE(
        value == "sizes" || value == "strides",
        "_make_wrapper_subclass(): dispatch_sizes_strides_policy must be 'sizes' or 'strides', not '", value, "'");
  }
  if (extra_keys != nullptr && extra_keys != Py_None) {
    OPDISPATCH_CHECK_TYPE(py::isinstance<DispatchKeySet>(extra_keys),
                          "_make_wrapper_subclass(): _extra_dispatch_keys must be a DispatchKeySet or None, not ",
                          pyTypeName(extra_keys));
    OPDISPATCH_CHECK_VALUE(py::cast<DispatchKeySet>(extra_keys).empty(),
                           "_make_wrapper_subclass(): _extra_dispatch_keys is not supported (an opdispatch tensor's "
                           "key set follows from its device, requires_grad and class)");
  }
}

PyObject* makeWrapperSubclass(PyObject*, PyObject* const* argv, Py_ssize_t nargsf, PyObject* kwnames) {
  return pythonEntry([&] {
    // PyTorch 2.13's parameters, in its order (torch/_C/__init__.pyi).
    static const std::array<const char*, 15> names = {"cls",
                                                      "size",
                                                      "strides",
                                                      "storage_offset",
                                                      "memory_format",
                                                      "dtype",
                                                      "layout",
                                                      "device",
                                                      "pin_memory",
                                                      "requires_grad",
                                                      "dispatch_sizes_strides_policy",
                                                      "dispatch_device",
                                                      "dispatch_layout",
                                                      "_extra_dispatch_keys",
                                                      "storage_size"};
    std::array<PyObject*, 15> a{};
    bindArguments("_make_wrapper_subclass()", names, 2, argv, nargsf, kwnames, a);
    PyObject* cls = a[0];
    PyObject* size = a[1];
    PyObject* strides = a[2] ? a[2] : Py_None;
    PyObject* offset = a[3] ? a[3] : Py_None;
    PyObject* dtype = a[5] ? a[5] : Py_None;
    PyObject* device = a[7] ? a[7] : Py_None;
    bool requires_grad = truthy(a[9]);
    checkWrapperOnlyKeywords(a[4], a[6], a[8], a[10], a[13]);
    PyTypeObject* type = tensorSubclass(cls, "_make_wrapper_subclass()");
    OPDISPATCH_CHECK_TYPE(hasTorchDispatch(cls), "_make_wrapper_subclass(): ", type->tp_name,
                          " must define __torch_dispatch__: a wrapper subclass has no data of its own, so its "
                          "__torch_dispatch__ must handle every operator called on it");
    WrapperGeometry sizes;
    nonNegativeInts(size, "size", sizes);
    WrapperGeometry stride_values;
    if (strides == Py_None) {
      stride_values.resizeForOverwrite(sizes.size());
      contiguousStrides(IntArrayRef(sizes.data(), sizes.size()), stride_values.data());
    } else {
      nonNegativeInts(strides, "strides", stride_values);
    }
    OPDISPATCH_CHECK_VALUE(stride_values.size() == sizes.size(), "_make_wrapper_subclass(): got ", sizes.size(),
                           " sizes but ", stride_values.size(), " strides; give one stride per dimension");
    int64_t storage_offset = 0;
    if (offset != Py_None) {
      OPDISPATCH_CHECK_TYPE(toNamedInt64(offset, storage_offset, "_make_wrapper_subclass(): storage_offset"),
                            "_make_wrapper_subclass(): storage_offset must be an int or None, not ",
                            pyTypeName(offset));
      OPDISPATCH_CHECK_VALUE(storage_offset >= 0, "_make_wrapper_subclass(): storage_offset = ", storage_offset,
                             " is negative");
    }
    IntArrayRef size_ref(sizes.data(), sizes.size());
    IntArrayRef stride_ref(stride_values.data(), stride_values.size());
    checkExtentFits(size_ref, stride_ref, storage_offset);
    ScalarType st = dtype == Py_None ? ScalarType::Float : wrapperDtype(dtype);
    Device dev = device == Py_None ? Device() : toDevice(device, "_make_wrapper_subclass(): device");
    auto impl = make_intrusive<TensorImpl>(intrusive_ptr<StorageImpl>(), st, dev, size_ref, stride_ref, storage_offset);
    if (requires_grad) {
      impl->set_requires_grad(true);
    }
    impl->set_python_dispatch(true);
    return newWrapper(type, impl.release());
  });
}

PyObject* makeSubclass(PyObject*, PyObject* const* argv, Py_ssize_t nargsf, PyObject* kwnames) {
  return pythonEntry([&] {
    static const std::array<const char*, 3> names = {"cls", "data", "require_grad"};
    std::array<PyObject*, 3> a{};
    bindArguments("_make_subclass()", names, 2, argv, nargsf, kwnames, a);
    PyObject* cls = a[0];
    PyObject* data = a[1];
    bool require_grad = truthy(a[2]);
    PyTypeObject* type = tensorSubclass(cls, "_make_subclass()");
    OPDISPATCH_CHECK_TYPE(isTensor(data), "_make_subclass(): data must be a tensor, not ", pyTypeName(data));
    Tensor source = unpackTensor(data);
    Tensor alias = source.as_strided(source.sizes(), source.strides(), source.storage_offset());
    alias.set_requires_grad(require_grad);
    alias.unsafeGetTensorImpl()->set_python_dispatch(hasTorchDispatch(cls));
    return newWrapper(type, alias.unsafeReleaseTensorImpl());
  });
}

/// _set_subclass(tensor, cls): changes the class of a plain tensor object
/// that nothing else has seen yet (a fresh alias) to `cls`, as
/// Tensor.as_subclass needs. The object was made by newWrapper for
/// gTensorClass without inline attribute values (allocateObject), so only its
/// type changes.
PyObject* setSubclass(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  return pythonEntry([&]() -> PyObject* {
    OPDISPATCH_CHECK_TYPE(nargs == 2 && isTensor(args[0]), "_set_subclass(tensor: Tensor, cls: type)");
    PyTypeObject* type = tensorSubclass(args[1], "as_subclass()");
    PyTypeObject* old = Py_TYPE(args[0]);
    OPDISPATCH_CHECK_VALUE(old == gTensorClass, "_set_subclass(): the tensor must be a plain ", gTensorClass->tp_name,
                           ", not ", old->tp_name);
    OPDISPATCH_CHECK_TYPE(type->tp_basicsize == old->tp_basicsize && type->tp_itemsize == old->tp_itemsize &&
                              type->tp_dictoffset == old->tp_dictoffset &&
                              type->tp_weaklistoffset == old->tp_weaklistoffset && type->tp_free == old->tp_free,
                          "as_subclass(): ", type->tp_name, " adds __slots__ or a C layout to ", old->tp_name,
                          "; as_subclass needs a subclass with the same object layout (make instances with "
                          "Tensor._make_subclass(cls, tensor) instead)");
    preparePreservingClass(type);
    Py_INCREF(type);
    Py_SET_TYPE(args[0], type);
    Py_DECREF(old);
    unpackImpl(args[0])->set_python_dispatch(hasTorchDispatch(args[1]));
    Py_RETURN_NONE;
  });
}

/// _set_version_counter_of(dst, src): dst shares src's version counter.
PyObject* setVersionCounterOf(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  return pythonEntry([&] {
    OPDISPATCH_CHECK_TYPE(nargs == 2 && isTensor(args[0]) && isTensor(args[1]),
                          "_set_version_counter_of(dst: Tensor, src: Tensor)");
    unpackImpl(args[0])->set_version_counter(unpackImpl(args[1])->version_counter());
    Py_RETURN_NONE;
  });
}

/// Drops the kernel array of `impl`'s Python object, if any, after its
/// geometry or storage changed (Note [Kernel arrays] in NumpyBridge.cpp).
void forgetKernelArray(TensorImpl* impl) {
  if (auto* obj = static_cast<TensorObject*>(impl->pyobj())) {
    Py_CLEAR(obj->kernel_array);
  }
}

/// _functionalize_unsafe_set(dst, src): dst uses src's storage from now on,
/// keeping its own sizes, strides, offset and dtype; a src without storage
/// (a wrapper subclass, meta) has its version counter as its memory's
/// identity (TensorImpl::sharesMemoryWith), so dst shares that instead.
PyObject* functionalizeUnsafeSet(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  return pythonEntry([&] {
    OPDISPATCH_CHECK_TYPE(nargs == 2 && isTensor(args[0]) && isTensor(args[1]),
                          "_functionalize_unsafe_set(dst: Tensor, src: Tensor)");
    TensorImpl* dst = unpackImpl(args[0]);
    TensorImpl* src = unpackImpl(args[1]);
    dst->set_storage_keep_dtype(src->storage());
    forgetKernelArray(dst);
    if (!src->has_storage()) {
      dst->set_version_counter(src->version_counter());
    }
    Py_RETURN_NONE;
  });
}

PyObject* prepareSubclass(PyObject*, PyObject* cls) {
  return pythonEntry([&]() -> PyObject* {
    OPDISPATCH_CHECK_TYPE(PyType_Check(cls) && gTensorClass != nullptr &&
                              PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(cls), gTensorClass),
                          "_prepare_subclass(cls): cls must be a subclass of opdispatch.Tensor, not ", pyTypeName(cls));
    preparePreservingClass(reinterpret_cast<PyTypeObject*>(cls));
    Py_RETURN_NONE;
  });
}

PyMethodDef kSubclassConstructors[] = {
    {"_prepare_subclass", prepareSubclass, METH_O,
     "_prepare_subclass(cls): readies a new subclass of opdispatch.Tensor for its objects to be preserved while C++ "
     "holds their tensor (Tensor.__init_subclass__ calls it). PyTorch: THPVariableMetaType_init."},
    {"_make_subclass", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(makeSubclass)),
     METH_FASTCALL | METH_KEYWORDS,
     "_make_subclass(cls, data, require_grad=False): a new object of class cls viewing data's memory (shares its "
     "storage and version counter); carries the Python keys if cls has __torch_dispatch__. PyTorch: "
     "Tensor._make_subclass."},
    {"_make_wrapper_subclass", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(makeWrapperSubclass)),
     METH_FASTCALL | METH_KEYWORDS,
     "_make_wrapper_subclass(cls, size, strides=None, storage_offset=None, memory_format=None, dtype=None, "
     "layout=strided, device=None, pin_memory=False, requires_grad=False, dispatch_sizes_strides_policy=None, "
     "dispatch_device=False, dispatch_layout=False, _extra_dispatch_keys=None, storage_size=None): a new object of "
     "class cls with this metadata and no data (reading its data raises); it carries the Python keys. The "
     "dispatch_* keywords and storage_size are accepted and change nothing: sizes, strides, device and layout are "
     "the wrapper's own, never asked of __torch_dispatch__ (opdispatch has no SymInts). TypeError if cls does not "
     "define __torch_dispatch__; TypeError / ValueError for sizes or strides that are not ints, negative, of "
     "different lengths or overflowing int64, a memory_format, a layout other than strided, pin_memory=True, a "
     "policy other than 'sizes' / 'strides' or non-empty _extra_dispatch_keys. PyTorch: "
     "Tensor._make_wrapper_subclass."},
    {"_set_subclass", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(setSubclass)), METH_FASTCALL,
     "_set_subclass(tensor, cls): makes the tensor object, which nothing else refers to yet, an instance of cls "
     "(a subclass of opdispatch.Tensor of the same object layout), with the Python keys if cls has "
     "__torch_dispatch__: Tensor.as_subclass on a fresh alias."},
    {"_set_version_counter_of", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(setVersionCounterOf)),
     METH_FASTCALL,
     "_set_version_counter_of(dst, src): dst shares src's version counter, so it counts as a view of src "
     "(_shares_memory, in-place updates): how a wrapper subclass (a FakeTensor) aliases what it stands for."},
    {"_functionalize_unsafe_set", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(functionalizeUnsafeSet)),
     METH_FASTCALL,
     "_functionalize_unsafe_set(dst, src): dst uses src's storage from now on, keeping its own sizes, strides, "
     "offset and dtype (IndexError if they reach past it); if src has no storage (a wrapper subclass), dst shares "
     "its version counter instead, so both count as one memory (_shares_memory). No operator runs. PyTorch: "
     "torch._functionalize_unsafe_set."},
    {nullptr, nullptr, 0, nullptr},
};

void initSubclassConstructors(py::module_& m) {
  if (PyModule_AddFunctions(m.ptr(), kSubclassConstructors) < 0) {
    throw py::error_already_set();
  }
}

} // namespace

PyObject* wrapTensor(const Tensor& t) {
  if (!t.defined()) {
    Py_RETURN_NONE;
  }
  TensorImpl* impl = t.unsafeGetTensorImpl();
  if (impl->pyobj() != nullptr) {
    return existingObject(impl, nullptr);
  }
  return newWrapper(gTensorClass, intrusive_ptr<TensorImpl>(impl).release());
}

PyObject* wrapTensor(Tensor&& t) {
  if (!t.defined()) {
    Py_RETURN_NONE;
  }
  TensorImpl* impl = t.unsafeGetTensorImpl();
  if (impl->pyobj() != nullptr) {
    return existingObject(impl, t.unsafeReleaseTensorImpl());
  }
  return newWrapper(gTensorClass, t.unsafeReleaseTensorImpl());
}

void initTensorBindings(py::module_& m) {
  PyTypeObject& t = gTensorBaseType;
  t.tp_name = "opdispatch._C.TensorBase";
  t.tp_basicsize = sizeof(TensorObject);
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC;
  t.tp_traverse = tensorTraverse;
  t.tp_clear = tensorClear;
  t.tp_doc = "The C++ tensor (a TensorImpl); opdispatch.Tensor adds the Python methods.";
  t.tp_new = tensorNew;
  t.tp_dealloc = tensorDealloc;
  t.tp_getset = kGetSets;
  t.tp_methods = kMethods;
  t.tp_weaklistoffset = offsetof(TensorObject, weakrefs);
  addStaticType(m, t, "TensorBase");
  TensorBaseType = &t;
  gTensorClass = &t;

  m.def(
      "_set_tensor_class",
      [](py::object cls) {
        OPDISPATCH_CHECK_TYPE(PyType_Check(cls.ptr()) &&
                                  PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(cls.ptr()), TensorBaseType),
                              "_set_tensor_class needs a subclass of TensorBase");
        auto* type = reinterpret_cast<PyTypeObject*>(cls.release().ptr());
        gTensorClass = type;
        if ((type->tp_flags & Py_TPFLAGS_HEAPTYPE) && type->tp_dealloc != subclassDealloc) {
          // Tensor and its subclasses share one tp_dealloc, so CPython allows `obj.__class__ = cls` between
          // them (compatible_for_assignment); Tensor's own objects are never preserved.
          gSubtypeDealloc = type->tp_dealloc;
          type->tp_dealloc = subclassDealloc;
        }
      },
      "Sets the class that wraps tensors created in C++ (opdispatch.Tensor).");
  initSubclassConstructors(m);
  m.def(
      "_as_strided",
      [](const Tensor& self, py::handle sizes, py::handle strides, py::handle storage_offset) {
        OPDISPATCH_CHECK_VALUE(self.defined(), "_as_strided needs a tensor");
        OPDISPATCH_CHECK_TYPE(PyLong_Check(storage_offset.ptr()), "_as_strided(): storage_offset must be an int, not ",
                              pyTypeName(storage_offset.ptr()));
        int64_t offset = toInts(storage_offset, "_as_strided(): storage_offset")[0];
        return self.as_strided(toInts(sizes, "_as_strided(): size"), toInts(strides, "_as_strided(): stride"), offset);
      },
      py::arg("self"), py::arg("size"), py::arg("stride"), py::arg("storage_offset"),
      "A view of self's storage with the given sizes, strides (in elements) and offset: shares the storage and "
      "the version counter, does not require grad. Raises IndexError if it reaches past the storage.");
  m.def(
      "_resize_",
      [](py::handle self, py::handle sizes, py::handle strides) {
        OPDISPATCH_CHECK_TYPE(isTensor(self.ptr()), "_resize_(self, size, stride): self must be a tensor, not ",
                              pyTypeName(self.ptr()));
        TensorImpl* impl = unpackImpl(self.ptr());
        impl->resize(toInts(sizes, "_resize_(): size"), toInts(strides, "_resize_(): stride"));
        forgetKernelArray(impl);  // it has the old shape
      },
      py::arg("self"), py::arg("size"), py::arg("stride"),
      "Gives self the sizes and strides (in elements), keeping its storage offset, and grows its storage in place "
      "when they reach past it (new memory holding the old bytes; every tensor sharing the storage sees it). "
      "ValueError for a bad geometry, RuntimeError for a storage that is not resizable (from_numpy, from_dlpack) or "
      "sizes whose extent overflows. PyTorch: resize_impl_cpu_.");
  m.def(
      "_set_sizes_and_strides",
      [](const Tensor& self, py::handle sizes, py::handle strides, py::handle storage_offset) {
        OPDISPATCH_CHECK_VALUE(self.defined(), "_set_sizes_and_strides needs a tensor");
        OPDISPATCH_CHECK_TYPE(PyLong_Check(storage_offset.ptr()),
                              "_set_sizes_and_strides(): storage_offset must be an int, not ",
                              pyTypeName(storage_offset.ptr()));
        int64_t offset = toInts(storage_offset, "_set_sizes_and_strides(): storage_offset")[0];
        self.unsafeGetTensorImpl()->set_sizes_and_strides(toInts(sizes, "_set_sizes_and_strides(): size"),
                                                          toInts(strides, "_set_sizes_and_strides(): stride"), offset);
        forgetKernelArray(self.unsafeGetTensorImpl());
      },
      py::arg("self"), py::arg("size"), py::arg("stride"), py::arg("storage_offset"),
      "Gives self new sizes, strides (in elements) and storage offset in place, keeping its storage, dtype and "
      "version counter: the metadata update of an in-place view operator (transpose_, as_strided_, ...). "
      "ValueError for a bad geometry, IndexError if it reaches past the storage; the tensor is unchanged then. "
      "PyTorch: TensorImpl::set_sizes_and_strides.");
  m.def(
      "empty_strided",
      [](py::handle shape, py::handle stride, py::handle dtype, py::handle device) {
        ScalarType st = dtype.is_none() ? ScalarType::Float : toScalarType(dtype, "empty_strided(): dtype");
        Device dev = device.is_none() ? Device() : toDevice(device, "empty_strided(): device");
        return empty_strided(toInts(shape, "empty_strided(): shape"), toInts(stride, "empty_strided(): stride"), st,
                             dev);
      },
      py::arg("shape"), py::arg("stride"), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      "A new uninitialised tensor with the given strides (in elements).");
  m.def("from_numpy", &fromNumpy, py::arg("array"),
        "A tensor sharing memory with a numpy.ndarray (which it keeps alive). Raises TypeError for unsupported "
        "dtypes and ValueError for negative or unaligned strides; warns (UserWarning) for a read-only array.");
  m.def(
      "empty",
      [](py::handle shape, py::handle dtype, py::handle device) {
        ScalarType st = dtype.is_none() ? ScalarType::Float : toScalarType(dtype, "empty(): dtype");
        Device dev = device.is_none() ? Device() : toDevice(device, "empty(): device");
        return empty(toInts(shape, "empty(): shape"), st, dev);
      },
      py::arg("shape"), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      "A new uninitialised tensor of `shape` (int or sequence of ints), dtype (default float32) and device "
      "(default cpu; meta tensors have no memory).");
}

} // namespace opdispatch::python
