// The autograd state of a tensor (see AutogradMeta.h). PyTorch:
// torch/csrc/autograd/variable.h (AutogradMeta), gradient_edge and set_history
// in torch/csrc/autograd/functions/utils.h.
#include "AutogradMeta.h"

#include <structmember.h>

#include <opdispatch/core/Exception.h>

#include "Exceptions.h"
#include "PythonTensor.h"
#include "StaticType.h"

namespace py = pybind11;

namespace opdispatch::python {

namespace {

struct AutogradMetaObject {
  PyObject_HEAD PyObject* grad; ///< the accumulated gradient (leaves, retained non-leaves), or null (None)
  PyObject* grad_fn; ///< the node that computed the tensor, or null (None): a leaf
  PyObject* grad_accumulator; ///< weak reference to a leaf's AccumulateGrad node, or null (None)
  PyObject* view_of; ///< name of the view operator that made the tensor while recording, or null (None)
  PyObject* view_base; ///< the tensor a recorded view views (never itself a recorded view), or null (None)
  long long output_nr; ///< which output of grad_fn the tensor is
  char retains_grad; ///< keeps .grad although not a leaf
  PyObject* weakrefs;
};

PyTypeObject gAutogradMetaType = staticTypeObject();

/// graph.AccumulateGrad, the class of a leaf's node (Python).
PyObject* gAccumulateGradClass = nullptr;

/// The edge of a tensor that gets no gradient.
PyObject* gNoEdge = nullptr;
/// "variable", the attribute of an AccumulateGrad that holds its leaf.
PyObject* gVariableName = nullptr;

bool isMeta(PyObject* obj) { return Py_TYPE(obj) == &gAutogradMetaType; }

PyObject* metaNew(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  static const char* kwlist[] = {"grad_fn", "output_nr", nullptr};
  PyObject* grad_fn = Py_None;
  long long output_nr = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OL:_AutogradMeta", const_cast<char**>(kwlist), &grad_fn,
                                   &output_nr)) {
    return nullptr;
  }
  auto* self = reinterpret_cast<AutogradMetaObject*>(type->tp_alloc(type, 0));
  if (self == nullptr) {
    return nullptr;
  }
  if (grad_fn != Py_None) {
    Py_INCREF(grad_fn);
    self->grad_fn = grad_fn;
  }
  self->output_nr = output_nr;
  return reinterpret_cast<PyObject*>(self);
}

int metaTraverse(PyObject* obj, visitproc visit, void* arg) {
  auto* self = reinterpret_cast<AutogradMetaObject*>(obj);
  Py_VISIT(self->grad);
  Py_VISIT(self->grad_fn);
  Py_VISIT(self->grad_accumulator);
  Py_VISIT(self->view_of);
  Py_VISIT(self->view_base);
  return 0;
}

int metaClear(PyObject* obj) {
  auto* self = reinterpret_cast<AutogradMetaObject*>(obj);
  Py_CLEAR(self->grad);
  Py_CLEAR(self->grad_fn);
  Py_CLEAR(self->grad_accumulator);
  Py_CLEAR(self->view_of);
  Py_CLEAR(self->view_base);
  return 0;
}

void metaDealloc(PyObject* obj) {
  PyObject_GC_UnTrack(obj);
  if (reinterpret_cast<AutogradMetaObject*>(obj)->weakrefs != nullptr) {
    PyObject_ClearWeakRefs(obj);
  }
  metaClear(obj);
  Py_TYPE(obj)->tp_free(obj);
}

PyMemberDef kMembers[] = {
    {"grad", T_OBJECT, offsetof(AutogradMetaObject, grad), 0, "The accumulated gradient, or None."},
    {"grad_fn", T_OBJECT, offsetof(AutogradMetaObject, grad_fn), 0,
     "The node that computed the tensor (None: a leaf)."},
    {"grad_accumulator", T_OBJECT, offsetof(AutogradMetaObject, grad_accumulator), 0,
     "A weak reference to the leaf's AccumulateGrad node, or None."},
    {"view_of", T_OBJECT, offsetof(AutogradMetaObject, view_of), 0,
     "The view operator that made the tensor while recording, or None."},
    {"view_base", T_OBJECT, offsetof(AutogradMetaObject, view_base), 0,
     "The tensor a recorded view views (the base of a chain of views), or None. PyTorch: DifferentiableViewMeta."},
    {"output_nr", T_LONGLONG, offsetof(AutogradMetaObject, output_nr), 0, "Which output of grad_fn the tensor is."},
    {"retains_grad", T_BOOL, offsetof(AutogradMetaObject, retains_grad), 0, "Whether a non-leaf keeps .grad."},
    {nullptr, 0, 0, 0, nullptr},
};

/// The autograd state of a tensor object: its own, or null if it has none.
/// TypeError if the slot holds something else.
AutogradMetaObject* metaOf(TensorImpl* impl) {
  auto* meta = static_cast<PyObject*>(impl->autograd_meta().get());
  if (meta == nullptr) {
    return nullptr;
  }
  OPDISPATCH_CHECK_TYPE(isMeta(meta), "a tensor's _autograd_meta must be an opdispatch._C._AutogradMeta, not ",
                        Py_TYPE(meta)->tp_name);
  return reinterpret_cast<AutogradMetaObject*>(meta);
}

/// A new autograd state with grad_fn `grad_fn` (borrowed; may be null).
AutogradMetaObject* newMeta(PyObject* grad_fn, long long output_nr) {
  auto* meta = PyObject_GC_New(AutogradMetaObject, &gAutogradMetaType);
  if (meta == nullptr) {
    throw py::error_already_set();
  }
  meta->grad = meta->grad_accumulator = meta->view_of = meta->view_base = meta->weakrefs = nullptr;
  meta->retains_grad = 0;
  Py_XINCREF(grad_fn);
  meta->grad_fn = grad_fn;
  meta->output_nr = output_nr;
  PyObject_GC_Track(meta);
  return meta;
}

/// New reference: the edge (node, 0).
PyObject* edgeTo(PyObject* node) {
  PyObject* edge = Py_BuildValue("(Oi)", node, 0);
  if (edge == nullptr) {
    throw py::error_already_set();
  }
  return edge;
}

} // namespace

void setHistory(PyObject* tensor, PyObject* node, long long output_nr) {
  TensorImpl* impl = unpackImpl(tensor);
  AutogradMetaObject* meta = metaOf(impl);
  impl->set_requires_grad(true); // throws for a dtype that cannot require grad, before anything changed
  if (meta == nullptr) {
    impl->autograd_meta() = OwnedPyObject::steal(newMeta(node, output_nr));
  } else {
    Py_INCREF(node);
    Py_XSETREF(meta->grad_fn, node);
    meta->output_nr = output_nr;
    Py_CLEAR(meta->grad_accumulator);
  }
}

PyObject* gradFnOf(PyObject* tensor) {
  AutogradMetaObject* meta = metaOf(unpackImpl(tensor));
  return meta == nullptr || meta->grad_fn == Py_None ? nullptr : meta->grad_fn;
}

void setViewOf(PyObject* tensor, PyObject* name, PyObject* input) {
  AutogradMetaObject* meta = metaOf(unpackImpl(tensor));
  OPDISPATCH_CHECK(meta != nullptr, "setViewOf: the tensor has no autograd state");
  Py_INCREF(name);
  Py_XSETREF(meta->view_of, name);
  if (input != nullptr && isTensor(input)) {
    // A view of a view views the first one's base (PyTorch: the base of a DifferentiableViewMeta is never a view).
    AutogradMetaObject* input_meta = metaOf(unpackImpl(input));
    PyObject* base = input_meta != nullptr && input_meta->view_base != nullptr ? input_meta->view_base : input;
    Py_INCREF(base);
    Py_XSETREF(meta->view_base, base);
  }
}

PyObject* gradientEdge(PyObject* value) {
  if (!isTensor(value) || !unpackImpl(value)->requires_grad()) {
    Py_INCREF(gNoEdge);
    return gNoEdge;
  }
  TensorImpl* impl = unpackImpl(value);
  AutogradMetaObject* meta = metaOf(impl);
  if (meta != nullptr) {
    if (meta->grad_fn != nullptr && meta->grad_fn != Py_None) {
      PyObject* nr = PyLong_FromLongLong(meta->output_nr);
      if (nr == nullptr) {
        throw py::error_already_set();
      }
      PyObject* edge = PyTuple_Pack(2, meta->grad_fn, nr);
      Py_DECREF(nr);
      if (edge == nullptr) {
        throw py::error_already_set();
      }
      return edge;
    }
    if (meta->grad_accumulator != nullptr && PyWeakref_Check(meta->grad_accumulator)) {
      PyObject* acc = PyWeakref_GetObject(meta->grad_accumulator); // borrowed
      if (acc != nullptr && acc != Py_None) {
        return edgeTo(acc);
      }
    }
  }
  // A leaf without a live AccumulateGrad: make one. The leaf refers to it
  // weakly (it refers to the leaf), so it lives as long as the graph that uses it.
  OPDISPATCH_CHECK(gAccumulateGradClass != nullptr,
                   "_gradient_edge: no AccumulateGrad class is installed (opdispatch.autograd.graph installs it)");
  // AccumulateGrad(value), without the Python __init__ frame: the class keeps
  // next_functions (empty) at class level, and the instance has only `variable`.
  auto* cls = reinterpret_cast<PyTypeObject*>(gAccumulateGradClass);
  py::object acc = py::reinterpret_steal<py::object>(cls->tp_alloc(cls, 0));
  if (!acc || PyObject_SetAttr(acc.ptr(), gVariableName, value) < 0) {
    throw py::error_already_set();
  }
  PyObject* ref = PyWeakref_NewRef(acc.ptr(), nullptr);
  if (ref == nullptr) {
    throw py::error_already_set();
  }
  if (meta == nullptr) {
    meta = newMeta(nullptr, 0);
    impl->autograd_meta() = OwnedPyObject::steal(meta);
  }
  Py_XSETREF(meta->grad_accumulator, ref);
  return edgeTo(acc.ptr());
}

PyObject* accumulateGradClass() { return gAccumulateGradClass; }

void accumulateGrad(PyObject* tensor, PyObject* grad, bool create_graph) {
  OPDISPATCH_CHECK_TYPE(isTensor(tensor), "accumulating a gradient: the leaf is ", Py_TYPE(tensor)->tp_name,
                        ", not a Tensor");
  py::object g = py::reinterpret_borrow<py::object>(grad);
  if (!create_graph) {
    // Gradients computed without create_graph carry no history already (grad mode is off).
    bool
      requires
    = false;
    if (isTensor(grad)) {
      requires = unpackImpl(grad)->requires_grad();
    } else {
      py::object flag = py::reinterpret_steal<py::object>(PyObject_GetAttrString(grad, "requires_grad"));
      int truth = flag ? PyObject_IsTrue(flag.ptr()) : -1;
      if (truth < 0) {
        throw py::error_already_set();
      }
      requires = truth != 0;
    }
    if (requires) {
      g = py::reinterpret_steal<py::object>(PyObject_CallMethod(grad, "detach", nullptr));
      if (!g) {
        throw py::error_already_set();
      }
    }
  }
  TensorImpl* impl = unpackImpl(tensor);
  AutogradMetaObject* meta = metaOf(impl);
  if (meta == nullptr) {
    meta = newMeta(nullptr, 0);
    impl->autograd_meta() = OwnedPyObject::steal(meta);
  }
  if (meta->grad == nullptr || meta->grad == Py_None) {
    Py_XSETREF(meta->grad, g.release().ptr());
    return;
  }
  PyObject* sum = PyNumber_Add(meta->grad, g.ptr());
  if (sum == nullptr) {
    throw py::error_already_set();
  }
  Py_XSETREF(meta->grad, sum);
}

namespace {

/// _set_history(tensor, node, output_nr): see the binding's docstring.
PyObject* setHistoryBinding(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  return pythonEntry([&]() -> PyObject* {
    OPDISPATCH_CHECK_TYPE(nargs == 3 && isTensor(args[0]) && PyLong_Check(args[2]),
                          "_set_history(tensor, node, output_nr: int)");
    long long output_nr = PyLong_AsLongLong(args[2]);
    if (output_nr == -1 && PyErr_Occurred()) {
      throw py::error_already_set();
    }
    setHistory(args[0], args[1], output_nr);
    Py_RETURN_NONE;
  });
}

/// _gradient_edge(value): see the binding's docstring.
PyObject* gradientEdgeBinding(PyObject*, PyObject* value) {
  return pythonEntry([&]() -> PyObject* { return gradientEdge(value); });
}

/// _saved_versions(values): see the binding's docstring.
PyObject* savedVersions(PyObject*, PyObject* values) {
  return pythonEntry([&]() -> PyObject* {
    OPDISPATCH_CHECK_TYPE(PyTuple_Check(values), "_saved_versions(values: tuple)");
    Py_ssize_t n = PyTuple_GET_SIZE(values);
    py::tuple out(n);
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* v = PyTuple_GET_ITEM(values, i);
      PyObject* version = PyLong_FromUnsignedLong(isTensor(v) ? unpackImpl(v)->version() : 0);
      if (version == nullptr) {
        throw py::error_already_set();
      }
      PyTuple_SET_ITEM(out.ptr(), i, version);
    }
    return out.release().ptr();
  });
}

/// _accumulate_grad(tensor, grad, create_graph): see the binding's docstring.
PyObject* accumulateGradBinding(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  return pythonEntry([&]() -> PyObject* {
    OPDISPATCH_CHECK_TYPE(nargs == 3 && isTensor(args[0]) && PyBool_Check(args[2]),
                          "_accumulate_grad(tensor, grad, create_graph: bool)");
    accumulateGrad(args[0], args[1], args[2] == Py_True);
    Py_RETURN_NONE;
  });
}

PyMethodDef kModuleMethods[] = {
    {"_accumulate_grad", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(accumulateGradBinding)),
     METH_FASTCALL,
     "_accumulate_grad(tensor, grad, create_graph): adds grad to tensor.grad, out of place (a .grad handed out is "
     "never changed): tensor.grad = grad if it has none, else tensor.grad + grad. Without create_graph, a grad "
     "that requires grad (a formula returned an input) is detached first. PyTorch: AccumulateGrad::accumulateGrad."},
    {"_set_history", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(setHistoryBinding)), METH_FASTCALL,
     "_set_history(tensor, node, output_nr): makes the tensor the output_nr-th output of node: its autograd "
     "state (created if it has none) gets grad_fn=node and forgets any AccumulateGrad, and the tensor requires "
     "grad. RuntimeError for a dtype that cannot require grad (nothing changes then)."},
    {"_saved_versions", savedVersions, METH_O,
     "_saved_versions(values: tuple) -> tuple of int: the version counter of each tensor among values (0 for "
     "anything else), as save_for_backward records them."},
    {"_gradient_edge", gradientEdgeBinding, METH_O,
     "_gradient_edge(value) -> (node, input_nr): where the gradient of value flows: (grad_fn, output_nr) for a "
     "computed tensor, (its AccumulateGrad, 0) for a leaf that requires grad (made with the installed class, "
     "and kept by the leaf as a weak reference, if the leaf has no live one), (None, 0) for anything else."},
    {nullptr, nullptr, 0, nullptr},
};

} // namespace

void initAutogradMetaBindings(py::module_& m) {
  PyTypeObject& t = gAutogradMetaType;
  t.tp_name = "opdispatch._C._AutogradMeta";
  t.tp_basicsize = sizeof(AutogradMetaObject);
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC;
  t.tp_doc =
      "_AutogradMeta(grad_fn=None, output_nr=0): the autograd state of one tensor (its "
      "TensorBase._autograd_meta). PyTorch: torch::autograd::AutogradMeta.";
  t.tp_new = metaNew;
  t.tp_dealloc = metaDealloc;
  t.tp_traverse = metaTraverse;
  t.tp_clear = metaClear;
  t.tp_members = kMembers;
  t.tp_weaklistoffset = offsetof(AutogradMetaObject, weakrefs);
  addStaticType(m, t, "_AutogradMeta");
  gNoEdge = Py_BuildValue("(Oi)", Py_None, 0);
  gVariableName = PyUnicode_InternFromString("variable");
  if (gNoEdge == nullptr || gVariableName == nullptr || PyModule_AddFunctions(m.ptr(), kModuleMethods) < 0) {
    throw py::error_already_set();
  }
  m.def(
      "_set_accumulate_grad_class",
      [](py::object cls) {
        Py_XDECREF(gAccumulateGradClass);
        gAccumulateGradClass = cls.release().ptr();
      },
      py::arg("cls"),
      "Sets the class of leaves' nodes (a Python class whose instances hold their leaf as `variable`): "
      "_gradient_edge makes one for a leaf without one.");
}

} // namespace opdispatch::python
