// _C._PlainAutogradKernel: the Autograd-key kernel of an operator with a
// formula whose schema is plain — every tensor input a required Tensor, one
// Tensor result, nothing mutated (Note [Recording a call] in
// python/opdispatch/_library/autograd.py). It does in C what a Python
// kernel would do per recorded call; the graph (nodes, setup_context,
// formulas, the engine) stays Python.
#include "AutogradKernel.h"

#include <array>
#include <iterator>

#include <opdispatch/core/Exception.h>
#include <opdispatch/core/GradMode.h>
#include <opdispatch/dispatch/Dispatcher.h>

#include "AutogradMeta.h"
#include "Exceptions.h"
#include "PythonTensor.h"
#include "PythonTypes.h"
#include "StaticType.h"
#include "TorchDispatchModeTLS.h"

namespace py = pybind11;

namespace opdispatch::python {

namespace {

/// Tensor inputs a plain kernel handles (make_autograd_kernel uses the Python kernel beyond).
constexpr size_t kMaxTensors = 16;

struct PlainKernelObject {
  PyObject_HEAD vectorcallfunc vectorcall;
  PyObject* dict;
  PyObject* run_below;      ///< op._redispatch_below_autograd
  PyObject* formula;        ///< graph.Formula
  PyObject* node_class;     ///< graph.OpNode (its instances are made without __init__: see makeNode)
  PyObject* layout;         ///< the node's input_layout (a tuple)
  PyObject* needs_table;    ///< needs_input_grad by bit mask of the tensor inputs that require grad
  PyObject* setup;          ///< setup_context, or null
  PyObject* kwarg_defaults; ///< the keyword-only inputs' defaults (a dict)
  PyObject* full_inputs;    ///< full_inputs(args, kwargs) -> (inputs, keyword_only_inputs)
  PyObject* view_name;      ///< the operator's name if it returns a view, else null
  Py_ssize_t n_positional;
  Py_ssize_t n_tensors;
  std::array<Py_ssize_t, kMaxTensors> positions; ///< the positional indices of the tensor inputs
  bool keyword_only;        ///< setup_context takes keyword_only_inputs
  bool grad_mode_below;     ///< a recorded call runs below autograd with grad mode on (else off)
};

PyTypeObject gPlainKernelType = staticTypeObject();

// Attribute names, interned once.
PyObject* gFormula = nullptr;
PyObject* gNeeds = nullptr;
PyObject* gNextFunctions = nullptr;
PyObject* gInputLayout = nullptr;
PyObject* gNumPassed = nullptr;
PyObject* gOutputsMeta = nullptr;
PyObject* gNonDifferentiable = nullptr;
PyObject* gIsNonDifferentiable = nullptr;
PyObject* gSaved = nullptr;
PyObject* gSavedOutputs = nullptr;

/// A new node for this call: an instance of node_class with the attributes
/// OpNode.__init__ would set, made without running __init__ (a Python frame).
py::object makeNode(PlainKernelObject* k, PyObject* needs, PyObject* edges, Py_ssize_t nargs) {
  auto* cls = reinterpret_cast<PyTypeObject*>(k->node_class);
  py::object node = py::reinterpret_steal<py::object>(cls->tp_alloc(cls, 0));
  py::object num_passed = py::reinterpret_steal<py::object>(PyLong_FromSsize_t(nargs));
  if (!node || !num_passed || PyObject_SetAttr(node.ptr(), gFormula, k->formula) < 0 ||
      PyObject_SetAttr(node.ptr(), gNeeds, needs) < 0 || PyObject_SetAttr(node.ptr(), gNextFunctions, edges) < 0 ||
      PyObject_SetAttr(node.ptr(), gInputLayout, k->layout) < 0 ||
      PyObject_SetAttr(node.ptr(), gNumPassed, num_passed.ptr()) < 0) {
    throw py::error_already_set();
  }
  return node;
}

/// Calls setup_context(node, inputs, [keyword_only_inputs,] out).
void callSetup(PlainKernelObject* k, PyObject* node, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
               PyObject* out) {
  py::tuple passed(nargs);
  for (Py_ssize_t i = 0; i < nargs; ++i) {
    Py_INCREF(args[i]);
    PyTuple_SET_ITEM(passed.ptr(), i, args[i]);
  }
  py::dict kwargs;
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t i = 0; i < nkw; ++i) {
    kwargs[py::handle(PyTuple_GET_ITEM(kwnames, i))] = py::handle(args[nargs + i]);
  }
  py::object inputs = passed;
  if (nargs != k->n_positional) {
    inputs = py::reinterpret_borrow<py::object>(k->full_inputs)(passed, kwargs)[py::int_(0)];
  }
  py::object result;
  if (k->keyword_only) {
    py::dict keyword_only_inputs = py::reinterpret_borrow<py::dict>(PyDict_Copy(k->kwarg_defaults));
    if (PyDict_Update(keyword_only_inputs.ptr(), kwargs.ptr()) < 0) {
      throw py::error_already_set();
    }
    PyObject* call_args[] = {node, inputs.ptr(), keyword_only_inputs.ptr(), out};
    result = py::reinterpret_steal<py::object>(PyObject_Vectorcall(k->setup, call_args, 4, nullptr));
  } else {
    PyObject* call_args[] = {node, inputs.ptr(), out};
    result = py::reinterpret_steal<py::object>(PyObject_Vectorcall(k->setup, call_args, 3, nullptr));
  }
  if (!result) {
    throw py::error_already_set();
  }
}

/// Whether setup_context marked `out` non-differentiable.
bool markedNonDifferentiable(PyObject* node, PyObject* out) {
  py::object marked = py::reinterpret_steal<py::object>(PyObject_GetAttr(node, gNonDifferentiable));
  if (!marked) {
    throw py::error_already_set();
  }
  int any = PyObject_IsTrue(marked.ptr());
  if (any < 0) {
    throw py::error_already_set();
  }
  if (!any) {
    return false;
  }
  PyObject* call_args[] = {node, out};
  py::object result = py::reinterpret_steal<py::object>(
      PyObject_VectorcallMethod(gIsNonDifferentiable, call_args, 2 | PY_VECTORCALL_ARGUMENTS_OFFSET, nullptr));
  int is = result ? PyObject_IsTrue(result.ptr()) : -1;
  if (is < 0) {
    throw py::error_already_set();
  }
  return is != 0;
}

/// New reference: a tensor sharing the memory and version counter of tensor
/// object `t`, without history. While a dispatch mode is active, or for a
/// tensor that handles dispatch in Python (a FakeTensor, a wrapper subclass),
/// it is od::detach called through the dispatcher, so the mode records it and
/// the subclass makes one of its kind (PyTorch: SavedVariable saves
/// tensor_data(), whose shallow_copy_and_detach dispatches detach to the mode
/// or the Python tensor); otherwise the alias is made here.
PyObject* detachedAlias(PyObject* t) {
  Tensor tensor = unpackTensor(t);
  if (tensor.unsafeGetTensorImpl()->key_set().has(DispatchKey::Python) || dispatchModeEnabled()) {
    Stack stack{IValue(tensor)};
    Dispatcher::singleton().findSchemaOrThrow("od::detach", "").callBoxed(&stack);
    OPDISPATCH_INTERNAL_ASSERT(stack.size() == 1 && stack[0].isTensor(), "od::detach returned no tensor");
    tensor = stack[0].toTensor();
  } else {
    tensor = tensor.as_strided(tensor.sizes(), tensor.strides(), tensor.storage_offset());
  }
  PyObject* alias = wrapTensor(std::move(tensor));
  if (alias == nullptr) {
    throw py::error_already_set();
  }
  return alias;
}

/// See the _unsave_outputs binding.
void unsaveOutputs(PyObject* node, PyObject* const* outputs, Py_ssize_t n_outputs) {
  py::object saved = py::reinterpret_steal<py::object>(PyObject_GetAttr(node, gSaved));
  if (!saved) {
    throw py::error_already_set();
  }
  if (!PyTuple_Check(saved.ptr()) || PyTuple_GET_SIZE(saved.ptr()) == 0) {
    return;
  }
  py::object replaced;
  py::list found;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(saved.ptr()); ++i) {
    PyObject* t = PyTuple_GET_ITEM(saved.ptr(), i);
    for (Py_ssize_t nr = 0; nr < n_outputs; ++nr) {
      if (t != outputs[nr] || !isTensor(t) || gradFnOf(t) != node) {
        continue;
      }
      if (!replaced) {
        replaced = py::reinterpret_steal<py::object>(PyTuple_GetSlice(saved.ptr(), 0, PyTuple_GET_SIZE(saved.ptr())));
      }
      PyObject* alias = detachedAlias(t);
      PyObject* previous = PyTuple_GET_ITEM(replaced.ptr(), i);
      PyTuple_SET_ITEM(replaced.ptr(), i, alias);
      Py_DECREF(previous);
      found.append(py::make_tuple(i, nr));
      break;
    }
  }
  if (replaced && (PyObject_SetAttr(node, gSaved, replaced.ptr()) < 0 ||
                   PyObject_SetAttr(node, gSavedOutputs, py::tuple(found).ptr()) < 0)) {
    throw py::error_already_set();
  }
}

/// _unsave_outputs(node, outputs): see the binding's docstring.
PyObject* unsaveOutputsBinding(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  return pythonEntry([&]() -> PyObject* {
    OPDISPATCH_CHECK_TYPE(nargs == 2 && PySequence_Check(args[1]), "_unsave_outputs(node, outputs: sequence)");
    py::tuple outputs = py::reinterpret_steal<py::tuple>(PySequence_Tuple(args[1]));
    if (!outputs) {
      throw py::error_already_set();
    }
    unsaveOutputs(args[0], &PyTuple_GET_ITEM(outputs.ptr(), 0), PyTuple_GET_SIZE(outputs.ptr()));
    Py_RETURN_NONE;
  });
}

PyMethodDef kModuleMethods[] = {
    {"_unsave_outputs", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(unsaveOutputsBinding)),
     METH_FASTCALL,
     "_unsave_outputs(node, outputs): replaces the outputs of node (those whose grad_fn it is) among the tensors it "
     "saved (node._saved) by "
     "detached aliases (same memory and version counter, no history), and records where they are and which "
     "output each is in node._saved_outputs, so that no reference cycle output -> node -> output forms. "
     "BackwardContext.saved_tensors gives them their history back when backward is differentiated. PyTorch: "
     "SavedVariable's is_output (it saves outputs without their grad_fn)."},
    {nullptr, nullptr, 0, nullptr},
};

PyObject* plainCall(PyObject* self, PyObject* const* argv, size_t nargsf, PyObject* kwnames) {
  return pythonEntry([&]() -> PyObject* {
    auto* k = reinterpret_cast<PlainKernelObject*>(self);
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    OPDISPATCH_CHECK_TYPE(nargs >= 1, "an autograd kernel is called with the dispatch key set first");
    // argv[0] is the key set; the operator's arguments follow.
    PyObject* const* args = argv + 1;
    Py_ssize_t n_args = nargs - 1;
    // Grad mode off (a formula's operators in backward without create_graph):
    // nothing is recorded (Note [Grad mode is its own flag]).
    if (!GradMode::is_enabled()) {
      return PyObject_Vectorcall(k->run_below, argv, nargs, kwnames);
    }
    std::array<PyObject*, kMaxTensors> edges{};
    size_t mask = 0;
    auto releaseEdges = [&] {
      for (Py_ssize_t i = 0; i < k->n_tensors; ++i) {
        Py_XDECREF(edges[i]);
      }
    };
    try {
      for (Py_ssize_t i = 0; i < k->n_tensors; ++i) {
        Py_ssize_t p = k->positions[i];
        OPDISPATCH_CHECK_TYPE(p < n_args, "the autograd kernel of a plain schema needs its tensor argument ", p);
        edges[i] = gradientEdge(args[p]);
        if (PyTuple_GET_ITEM(edges[i], 0) != Py_None) {
          mask |= size_t{1} << i;
        }
      }
    } catch (...) {
      releaseEdges();
      throw;
    }
    // Reached through the Autograd key, so normally an input requires grad.
    if (mask == 0) {
      releaseEdges();
      return PyObject_Vectorcall(k->run_below, argv, nargs, kwnames);
    }
    py::tuple edge_tuple(k->n_tensors);
    for (Py_ssize_t i = 0; i < k->n_tensors; ++i) {
      PyTuple_SET_ITEM(edge_tuple.ptr(), i, edges[i]); // steals
    }
    py::object out;
    {
      AutoGradMode below(k->grad_mode_below);
      out = py::reinterpret_steal<py::object>(PyObject_Vectorcall(k->run_below, argv, nargs, kwnames));
    }
    if (!out) {
      throw py::error_already_set();
    }
    OPDISPATCH_CHECK_TYPE(isTensor(out.ptr()), "the kernel below autograd returned ", Py_TYPE(out.ptr())->tp_name,
                          " where the schema returns a Tensor");
    py::object node = makeNode(k, PyTuple_GET_ITEM(k->needs_table, static_cast<Py_ssize_t>(mask)), edge_tuple.ptr(),
                               n_args);
    if (k->setup != nullptr) {
      callSetup(k, node.ptr(), args, n_args, kwnames, out.ptr());
    }
    TensorImpl* impl = unpackImpl(out.ptr());
    IntArrayRef sizes = impl->sizes();
    py::tuple shape(sizes.size());
    for (size_t i = 0; i < sizes.size(); ++i) {
      PyObject* size = PyLong_FromLongLong(sizes[i]);
      if (size == nullptr) {
        throw py::error_already_set();
      }
      PyTuple_SET_ITEM(shape.ptr(), static_cast<Py_ssize_t>(i), size);
    }
    py::tuple meta = py::make_tuple(py::make_tuple(shape, py::reinterpret_steal<py::object>(dtypeObject(impl->dtype())),
                                                   py::reinterpret_steal<py::object>(deviceObject(impl->device()))));
    if (PyObject_SetAttr(node.ptr(), gOutputsMeta, meta.ptr()) < 0) {
      throw py::error_already_set();
    }
    if ((isFloatingType(impl->dtype()) || isComplexType(impl->dtype())) &&
        !markedNonDifferentiable(node.ptr(), out.ptr())) {
      setHistory(out.ptr(), node.ptr(), 0);
      if (k->view_name != nullptr) {
        setViewOf(out.ptr(), k->view_name, n_args > 0 ? args[0] : nullptr);
      }
    }
    PyObject* outs[] = {out.ptr()};
    unsaveOutputs(node.ptr(), outs, 1);
    return out.release().ptr();
  });
}

PyObject* plainNew(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  static const char* kwlist[] = {"run_below",   "formula",         "node_class",   "positions",      "layout",
                                 "needs_table", "setup",           "keyword_only", "kwarg_defaults", "full_inputs",
                                 "view_name",   "grad_mode_below", nullptr};
  PyObject *run_below, *formula, *node_class, *positions, *layout, *needs_table, *setup, *kwarg_defaults, *full_inputs,
      *view_name;
  int keyword_only = 0;
  int grad_mode_below = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOO!O!O!O!OpO!OOp:_PlainAutogradKernel", const_cast<char**>(kwlist),
                                   &run_below, &formula, &PyType_Type, &node_class, &PyTuple_Type, &positions,
                                   &PyTuple_Type, &layout, &PyTuple_Type, &needs_table, &setup, &keyword_only,
                                   &PyDict_Type, &kwarg_defaults, &full_inputs, &view_name, &grad_mode_below)) {
    return nullptr;
  }
  Py_ssize_t n = PyTuple_GET_SIZE(positions);
  if (n < 1 || static_cast<size_t>(n) > kMaxTensors || PyTuple_GET_SIZE(needs_table) != (Py_ssize_t{1} << n)) {
    PyErr_Format(PyExc_ValueError,
                 "_PlainAutogradKernel: expected 1 to %d tensor positions and a needs table of 2**n entries",
                 static_cast<int>(kMaxTensors));
    return nullptr;
  }
  auto* k = reinterpret_cast<PlainKernelObject*>(type->tp_alloc(type, 0));
  if (k == nullptr) {
    return nullptr;
  }
  k->vectorcall = plainCall;
  for (Py_ssize_t i = 0; i < n; ++i) {
    k->positions[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(positions, i));
  }
  if (PyErr_Occurred()) {
    Py_DECREF(k);
    return nullptr;
  }
  k->n_tensors = n;
  k->n_positional = PyTuple_GET_SIZE(layout);
  k->keyword_only = keyword_only != 0;
  k->grad_mode_below = grad_mode_below != 0;
  PyObject** slots[] = {&k->run_below,   &k->formula,        &k->node_class, &k->layout,
                        &k->needs_table, &k->kwarg_defaults, &k->full_inputs};
  PyObject* values[] = {run_below, formula, node_class, layout, needs_table, kwarg_defaults, full_inputs};
  for (size_t i = 0; i < std::size(slots); ++i) {
    Py_INCREF(values[i]);
    *slots[i] = values[i];
  }
  k->setup = setup == Py_None ? nullptr : (Py_INCREF(setup), setup);
  k->view_name = view_name == Py_None ? nullptr : (Py_INCREF(view_name), view_name);
  return reinterpret_cast<PyObject*>(k);
}

/// The object fields of a kernel, which the collector visits and clears.
PyObject* PlainKernelObject::* const kObjectFields[] = {
    &PlainKernelObject::dict,       &PlainKernelObject::run_below,      &PlainKernelObject::formula,
    &PlainKernelObject::node_class, &PlainKernelObject::layout,         &PlainKernelObject::needs_table,
    &PlainKernelObject::setup,      &PlainKernelObject::kwarg_defaults, &PlainKernelObject::full_inputs,
    &PlainKernelObject::view_name,
};

int plainTraverse(PyObject* self, visitproc visit, void* arg) {
  auto* k = reinterpret_cast<PlainKernelObject*>(self);
  for (auto field : kObjectFields) {
    Py_VISIT(k->*field);
  }
  return 0;
}

int plainClear(PyObject* self) {
  auto* k = reinterpret_cast<PlainKernelObject*>(self);
  for (auto field : kObjectFields) {
    Py_CLEAR(k->*field);
  }
  return 0;
}

void plainDealloc(PyObject* self) {
  PyObject_GC_UnTrack(self);
  plainClear(self);
  Py_TYPE(self)->tp_free(self);
}

} // namespace

void initAutogradKernelBindings(py::module_& m) {
  intern(gFormula, "formula");
  intern(gNeeds, "needs_input_grad");
  intern(gNextFunctions, "next_functions");
  intern(gInputLayout, "input_layout");
  intern(gNumPassed, "num_passed");
  intern(gOutputsMeta, "outputs_meta");
  intern(gNonDifferentiable, "_non_differentiable");
  intern(gIsNonDifferentiable, "_is_non_differentiable");
  intern(gSaved, "_saved");
  intern(gSavedOutputs, "_saved_outputs");
  PyTypeObject& t = gPlainKernelType;
  t.tp_name = "opdispatch._C._PlainAutogradKernel";
  t.tp_basicsize = sizeof(PlainKernelObject);
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL;
  t.tp_doc =
      "_PlainAutogradKernel(run_below, formula, node_class, positions, layout, needs_table, setup, "
      "keyword_only, kwarg_defaults, full_inputs, view_name, grad_mode_below): the Autograd kernel "
      "(keyset, *args, **kwargs) of an operator with a plain schema and a formula; see "
      "opdispatch._library.autograd._plain_kernel for the arguments.";
  t.tp_new = plainNew;
  t.tp_dealloc = plainDealloc;
  t.tp_traverse = plainTraverse;
  t.tp_clear = plainClear;
  t.tp_call = PyVectorcall_Call;
  t.tp_vectorcall_offset = offsetof(PlainKernelObject, vectorcall);
  t.tp_dictoffset = offsetof(PlainKernelObject, dict);
  addStaticType(m, t, "_PlainAutogradKernel");
  if (PyModule_AddFunctions(m.ptr(), kModuleMethods) < 0) {
    throw py::error_already_set();
  }
}

} // namespace opdispatch::python
