// The backward engine's loop (see Engine.h). PyTorch: torch/csrc/autograd/engine.cpp
// (compute_dependencies, evaluate_function, validate_outputs) and
// functions/accumulate_grad.h.
#include "Engine.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <opdispatch/core/Exception.h>
#include <opdispatch/core/GradMode.h>
#include <opdispatch/dispatch/Dispatcher.h>

#include "AutogradMeta.h"
#include "CheckedCApi.h"
#include "Exceptions.h"
#include "OpNode.h"
#include "PythonTensor.h"
#include "PythonTypes.h"
#include "StaticType.h"

namespace py = pybind11;

namespace opdispatch::python {

namespace {

// What _set_engine_callbacks installs (engine.py, at import).
PyObject* gAccumulateRetained = nullptr;  ///< engine._accumulate_retained(node, grads, create_graph)
PyObject* gOpNodeInputMetadata = nullptr; ///< graph.OpNode.input_metadata: its nodes' metadata are read here

// Attribute names, interned once.
PyObject* gNextFunctions = nullptr;
PyObject* gNumOutputs = nullptr;
PyObject* gApply = nullptr;
PyObject* gRelease = nullptr;
PyObject* gRetained = nullptr;
PyObject* gRunsWithoutGrads = nullptr;
PyObject* gInputMetadata = nullptr;
PyObject* gOutputsMeta = nullptr;
PyObject* gVariable = nullptr;
PyObject* gName = nullptr;
PyObject* gTo = nullptr;

/// `existing + g`, or `g` where there is nothing yet (None).
py::object accumulate(PyObject* existing, PyObject* g) {
  if (existing == nullptr || existing == Py_None) {
    return py::reinterpret_borrow<py::object>(g);
  }
  return steal(PyNumber_Add(existing, g));
}

/// One entry of a node's next_functions: (node, input_nr), borrowed from `entry`
/// (or from `holder`, which keeps a non-tuple entry's items alive).
std::pair<PyObject*, PyObject*> unpackEdge(PyObject* entry, py::object& holder) {
  if (!PyTuple_Check(entry)) {
    holder = fastSequence(entry, "next_functions entries must be (node, input_nr) pairs");
    entry = holder.ptr();
  }
  OPDISPATCH_CHECK_VALUE(PySequence_Fast_GET_SIZE(entry) == 2,
                         "next_functions entries must be (node, input_nr) pairs, got one of length ",
                         PySequence_Fast_GET_SIZE(entry));
  return {PySequence_Fast_GET_ITEM(entry, 0), PySequence_Fast_GET_ITEM(entry, 1)};
}

/// node.num_outputs.
Py_ssize_t numOutputs(PyObject* node) {
  py::object n = attr(node, gNumOutputs);
  Py_ssize_t v = PyNumber_AsSsize_t(n.ptr(), PyExc_OverflowError);
  if (v == -1 && PyErr_Occurred()) {
    throw py::error_already_set();
  }
  OPDISPATCH_CHECK_VALUE(v >= 0, "a node's num_outputs must be >= 0, got ", v);
  return v;
}

/// A new list of `n` Nones.
py::object noneList(Py_ssize_t n) {
  py::object list = steal(PyList_New(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    Py_INCREF(Py_None);
    PyList_SET_ITEM(list.ptr(), i, Py_None);
  }
  return list;
}

/// Whether an ordinary tensor `g` already has the shape, dtype and device of
/// what `nxt` expects at input `nr` (an AccumulateGrad's leaf; an OpNode's
/// outputs_meta entry), so engine._validate would return it unchanged. False
/// where _validate must decide (a subclass, another node type, a mismatch).
bool passesAsIs(PyObject* nxt, Py_ssize_t nr, PyObject* g) {
  if (Py_TYPE(g) != gTensorClass) {
    return false;
  }
  TensorImpl* gi = unpackImpl(g);
  PyTypeObject* type = Py_TYPE(nxt);
  if (reinterpret_cast<PyObject*>(type) == accumulateGradClass()) {
    py::object variable = attr(nxt, gVariable);
    if (Py_TYPE(variable.ptr()) != gTensorClass) {
      return false;
    }
    TensorImpl* vi = unpackImpl(variable.ptr());
    return gi->sizes() == vi->sizes() && gi->dtype() == vi->dtype() && gi->device() == vi->device();
  }
  if (gOpNodeInputMetadata == nullptr || _PyType_Lookup(type, gInputMetadata) != gOpNodeInputMetadata) {
    return false;
  }
  py::object metas = attr(nxt, gOutputsMeta);
  if (!PyTuple_Check(metas.ptr()) || nr >= PyTuple_GET_SIZE(metas.ptr())) {
    return false;
  }
  PyObject* expected = PyTuple_GET_ITEM(metas.ptr(), nr);
  if (expected == Py_None) {
    return true;
  }
  if (!PyTuple_Check(expected) || PyTuple_GET_SIZE(expected) < 2) {
    return false;
  }
  PyObject* shape = PyTuple_GET_ITEM(expected, 0);
  IntArrayRef sizes = gi->sizes();
  if (!PyTuple_Check(shape) || PyTuple_GET_SIZE(shape) != static_cast<Py_ssize_t>(sizes.size())) {
    return false;
  }
  for (size_t d = 0; d < sizes.size(); ++d) {
    PyObject* s = PyTuple_GET_ITEM(shape, static_cast<Py_ssize_t>(d));
    if (!PyLong_CheckExact(s)) {
      return false;
    }
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(s, &overflow);
    if (overflow != 0 || v != sizes[d]) {
      return false;
    }
  }
  py::object dtype = steal(dtypeObject(gi->dtype()));
  if (dtype.ptr() != PyTuple_GET_ITEM(expected, 1)) {
    return false;
  }
  if (PyTuple_GET_SIZE(expected) > 2) {
    py::object device = steal(deviceObject(gi->device()));
    PyObject* want = PyTuple_GET_ITEM(expected, 2);
    if (device.ptr() != want) {
      int eq = PyObject_RichCompareBool(device.ptr(), want, Py_EQ);
      if (eq < 0) {
        throw py::error_already_set();
      }
      return eq != 0;
    }
  }
  return true;
}

/// `sizes` as Python prints a list of ints: "[2, 3]".
std::string listString(IntArrayRef sizes) {
  std::string out = "[";
  for (size_t d = 0; d < sizes.size(); ++d) {
    out += (d ? ", " : "") + std::to_string(sizes[d]);
  }
  return out + "]";
}

/// What a gradient arriving at one input of a node must be: (shape, dtype[,
/// device]) from the node's input_metadata (`known` false where it gives None).
struct ExpectedGrad {
  bool known = false;
  std::vector<int64_t> sizes;
  py::object dtype;
  py::object device; ///< null where the metadata gives no device
};

/// The metadata of input `nr` of `nxt`: read from an AccumulateGrad's leaf and
/// an OpNode's outputs_meta directly, else nxt.input_metadata(nr).
ExpectedGrad expectedGrad(PyObject* nxt, PyObject* nr_obj, Py_ssize_t nr) {
  ExpectedGrad e;
  PyTypeObject* type = Py_TYPE(nxt);
  if (reinterpret_cast<PyObject*>(type) == accumulateGradClass()) {
    py::object variable = attr(nxt, gVariable);
    if (isTensor(variable.ptr())) {
      TensorImpl* vi = unpackImpl(variable.ptr());
      e.known = true;
      e.sizes = vi->sizes().vec();
      e.dtype = steal(dtypeObject(vi->dtype()));
      e.device = steal(deviceObject(vi->device()));
      return e;
    }
  }
  py::object meta;
  if (nr >= 0 && gOpNodeInputMetadata != nullptr && _PyType_Lookup(type, gInputMetadata) == gOpNodeInputMetadata) {
    py::object metas = attr(nxt, gOutputsMeta);
    if (PyTuple_Check(metas.ptr()) && nr < PyTuple_GET_SIZE(metas.ptr())) {
      meta = py::reinterpret_borrow<py::object>(PyTuple_GET_ITEM(metas.ptr(), nr));
    }
  }
  if (!meta) {
    meta = callMethod(nxt, gInputMetadata, nr_obj);
  }
  if (meta.ptr() == Py_None) {
    return e;
  }
  py::object items = fastSequence(meta.ptr(), "a node's input_metadata must return (shape, dtype[, device]) or None");
  Py_ssize_t n = PySequence_Fast_GET_SIZE(items.ptr());
  OPDISPATCH_CHECK_VALUE(n == 2 || n == 3,
                         "a node's input_metadata must return (shape, dtype[, device]) or None, "
                         "got a sequence of length ",
                         n);
  py::object shape = fastSequence(PySequence_Fast_GET_ITEM(items.ptr(), 0), "input_metadata: shape must be a sequence");
  for (Py_ssize_t d = 0; d < PySequence_Fast_GET_SIZE(shape.ptr()); ++d) {
    Py_ssize_t s = PyNumber_AsSsize_t(PySequence_Fast_GET_ITEM(shape.ptr(), d), PyExc_OverflowError);
    if (s == -1 && PyErr_Occurred()) {
      throw py::error_already_set();
    }
    e.sizes.push_back(s);
  }
  e.known = true;
  e.dtype = py::reinterpret_borrow<py::object>(PySequence_Fast_GET_ITEM(items.ptr(), 1));
  if (n == 3) {
    e.device = py::reinterpret_borrow<py::object>(PySequence_Fast_GET_ITEM(items.ptr(), 2));
  }
  return e;
}

/// Whether a tensor of sizes `shape` broadcasts to `to`.
bool expandable(IntArrayRef shape, IntArrayRef to) {
  if (shape.size() > to.size()) {
    return false;
  }
  size_t lead = to.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] != 1 && shape[d] != to[lead + d]) {
      return false;
    }
  }
  return true;
}

/// od::sum.dim_IntList(t, dims, keepdim), called through the dispatcher (a
/// mode, a subclass and create_graph's recording see it, as at::sum_to's sum).
Tensor sumDims(Tensor t, std::vector<int64_t> dims, bool keepdim) {
  static const OperatorHandle op = Dispatcher::singleton().findSchemaOrThrow("od::sum", "dim_IntList");
  Stack stack{IValue(std::move(t)), IValue(std::move(dims)), IValue(keepdim), IValue()};
  op.callBoxed(&stack);
  OPDISPATCH_INTERNAL_ASSERT(stack.size() == 1 && stack[0].isTensor(), "od::sum.dim_IntList returned no tensor");
  return stack[0].toTensor();
}

/// `g` summed over the dimensions broadcasting added to or stretched in
/// `shape` (precondition: expandable(shape, g's sizes)). PyTorch: at::sum_to.
Tensor sumTo(Tensor g, IntArrayRef shape) {
  IntArrayRef sizes = g.sizes();
  int64_t lead = static_cast<int64_t>(sizes.size() - shape.size());
  std::vector<int64_t> stretched;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1 && sizes[lead + d] != 1) {
      stretched.push_back(lead + static_cast<int64_t>(d));
    }
  }
  if (!stretched.empty()) {
    g = sumDims(std::move(g), std::move(stretched), true);
  }
  if (lead > 0) {
    std::vector<int64_t> leading(static_cast<size_t>(lead));
    std::iota(leading.begin(), leading.end(), 0);
    g = sumDims(std::move(g), std::move(leading), false);
  }
  return g;
}

/// What the engine keeps per node reached from the roots.
struct NodeState {
  Py_ssize_t dependencies = 0; ///< edges from nodes that have not run yet
  py::object buffer;           ///< the gradients arrived so far (a list, one per node output), or null
  bool queued = false;         ///< pushed on the ready stack
};

class Backward {
 public:
  Backward(bool retain_graph, bool create_graph, PyObject* captures)
      : retain_graph_(retain_graph),
        create_graph_(create_graph),
        captures_(captures) {}

  void run(PyObject* roots, PyObject* root_grads) {
    py::object roots_seq = fastSequence(roots, "_run_backward: roots must be a sequence of edges");
    py::object grads_seq = fastSequence(root_grads, "_run_backward: root_grads must be a sequence");
    Py_ssize_t n_roots = std::min(PySequence_Fast_GET_SIZE(roots_seq.ptr()), PySequence_Fast_GET_SIZE(grads_seq.ptr()));
    countDependencies(roots_seq.ptr());
    for (Py_ssize_t i = 0; i < n_roots; ++i) {
      py::object holder;
      auto [node, nr] = unpackEdge(PySequence_Fast_GET_ITEM(roots_seq.ptr(), i), holder);
      if (node != Py_None) {
        addToBuffer(node, nr, PySequence_Fast_GET_ITEM(grads_seq.ptr(), i));
      }
    }
    for (Py_ssize_t i = 0; i < n_roots; ++i) {
      py::object holder;
      PyObject* node = unpackEdge(PySequence_Fast_GET_ITEM(roots_seq.ptr(), i), holder).first;
      if (node == Py_None) {
        continue;
      }
      NodeState& state = nodes_.at(node);
      if (state.buffer && state.dependencies == 0 && !state.queued) {
        state.queued = true;
        ready_.push_back(py::reinterpret_borrow<py::object>(node));
      }
    }
    AutoGradMode mode(create_graph_);
    while (!ready_.empty()) {
      py::object node = std::move(ready_.back());
      ready_.pop_back();
      evaluate(node.ptr());
    }
  }

 private:
  /// Counts, for every node reachable from the roots, the edges that lead into it.
  void countDependencies(PyObject* roots_seq) {
    std::vector<PyObject*> stack;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(roots_seq); ++i) {
      py::object holder;
      PyObject* node = unpackEdge(PySequence_Fast_GET_ITEM(roots_seq, i), holder).first;
      if (node != Py_None && reach(node)) {
        stack.push_back(node);
      }
    }
    while (!stack.empty()) {
      PyObject* node = stack.back();
      stack.pop_back();
      py::object fns = fastSequence(attr(node, gNextFunctions).ptr(), "next_functions must be a sequence");
      for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fns.ptr()); ++i) {
        py::object holder;
        PyObject* nxt = unpackEdge(PySequence_Fast_GET_ITEM(fns.ptr(), i), holder).first;
        if (nxt == Py_None) {
          continue;
        }
        if (reach(nxt)) {
          stack.push_back(nxt);
        }
        ++nodes_.at(nxt).dependencies;
      }
    }
  }

  /// Records `node` as reached (keeping it alive for the pass); whether it was new.
  bool reach(PyObject* node) {
    if (!nodes_.try_emplace(node).second) {
      return false;
    }
    keep_alive_.push_back(py::reinterpret_borrow<py::object>(node));
    return true;
  }

  /// Adds `g` to the gradient arriving at output `nr_obj` of `node`.
  void addToBuffer(PyObject* node, PyObject* nr_obj, PyObject* g) {
    NodeState& state = nodes_.at(node);
    if (!state.buffer) {
      state.buffer = noneList(numOutputs(node));
    }
    Py_ssize_t nr = PyNumber_AsSsize_t(nr_obj, PyExc_IndexError);
    if (nr == -1 && PyErr_Occurred()) {
      throw py::error_already_set();
    }
    PyObject* buffer = state.buffer.ptr();
    if (nr < 0 || nr >= PyList_GET_SIZE(buffer)) {
      PyErr_Format(PyExc_IndexError, "a gradient arrived at input %zd of a node with %zd outputs", nr,
                   PyList_GET_SIZE(buffer));
      throw py::error_already_set();
    }
    py::object sum = accumulate(PyList_GET_ITEM(buffer, nr), g);
    PyList_SetItem(buffer, nr, sum.release().ptr()); // steals; cannot fail for an index in range
  }

  /// Runs one node whose dependencies have all run, and passes its gradients on.
  void evaluate(PyObject* node) {
    NodeState& state = nodes_.at(node);
    py::object grads = std::move(state.buffer);
    if (!grads || PyList_GET_SIZE(grads.ptr()) == 0) {
      grads = noneList(numOutputs(node));
    }
    PyObject* grad_list = grads.ptr();
    Py_ssize_t n_grads = PyList_GET_SIZE(grad_list);
    if (truth(attr(node, gRetained).ptr())) {
      PyObject* args[] = {node, grad_list, create_graph_ ? Py_True : Py_False};
      steal(PyObject_Vectorcall(gAccumulateRetained, args, 3, nullptr));
    }
    if (captures_ != nullptr) {
      capture(node, grad_list);
    }
    PyObject* acc_class = accumulateGradClass();
    bool is_accumulator = acc_class != nullptr && reinterpret_cast<PyObject*>(Py_TYPE(node)) == acc_class;
    if (!is_accumulator && acc_class != nullptr) {
      int is = PyObject_IsInstance(node, acc_class);
      if (is < 0) {
        throw py::error_already_set();
      }
      is_accumulator = is != 0;
    }
    if (is_accumulator) {
      if (captures_ == nullptr && n_grads > 0 && PyList_GET_ITEM(grad_list, 0) != Py_None) {
        accumulateGrad(attr(node, gVariable).ptr(), PyList_GET_ITEM(grad_list, 0), create_graph_);
      }
      return;
    }
    // Note [Nodes without incoming gradients] in engine.py.
    bool all_none = true;
    for (Py_ssize_t i = 0; i < n_grads && all_none; ++i) {
      all_none = PyList_GET_ITEM(grad_list, i) == Py_None;
    }
    py::object outs;
    if (!all_none || truth(attr(node, gRunsWithoutGrads).ptr())) {
      py::object result = runsOpNodeApply(Py_TYPE(node)) ? applyOpNode(node, grad_list)
                                                         : callMethod(node, gApply, grad_list);
      outs = fastSequence(result.ptr(), "a node's apply must return a sequence");
    }
    if (!retain_graph_) {
      if (runsOpNodeRelease(Py_TYPE(node))) {
        releaseOpNode(node);
      } else {
        callMethod(node, gRelease);
      }
    }
    py::object fns = fastSequence(attr(node, gNextFunctions).ptr(), "next_functions must be a sequence");
    Py_ssize_t n_edges = PySequence_Fast_GET_SIZE(fns.ptr());
    if (outs) {
      n_edges = std::min(n_edges, PySequence_Fast_GET_SIZE(outs.ptr()));
    }
    for (Py_ssize_t index = 0; index < n_edges; ++index) {
      py::object holder;
      auto [nxt, nr_obj] = unpackEdge(PySequence_Fast_GET_ITEM(fns.ptr(), index), holder);
      if (nxt == Py_None) {
        continue;
      }
      auto it = nodes_.find(nxt);
      OPDISPATCH_CHECK(it != nodes_.end(), "backward: a node's next_functions changed while the graph ran");
      PyObject* g = outs ? PySequence_Fast_GET_ITEM(outs.ptr(), index) : Py_None;
      if (g != Py_None) {
        py::object valid = validate(node, index, nxt, nr_obj, g);
        addToBuffer(nxt, nr_obj, valid.ptr());
      }
      NodeState& next_state = it->second;
      if (--next_state.dependencies == 0 && !next_state.queued) {
        next_state.queued = true;
        ready_.push_back(py::reinterpret_borrow<py::object>(nxt));
      }
    }
  }

  /// `g` (gradient `index` of `node`) as the gradient of input `nr_obj` of
  /// `nxt`: summed down to that tensor's shape if the tensor broadcasts to it
  /// (a formula may return the gradient of a broadcast input unreduced), cast
  /// to its dtype (a float32 input of a float64 result gets a float32
  /// gradient). RuntimeError naming `node` and `index` for any other shape, or
  /// a device other than the tensor's (a meta gradient of a CPU tensor), with
  /// PyTorch's messages; TypeError for a gradient that is not a tensor.
  /// PyTorch: validate_outputs in torch/csrc/autograd/engine.cpp.
  py::object validate(PyObject* node, Py_ssize_t index, PyObject* nxt, PyObject* nr_obj, PyObject* g) {
    Py_ssize_t nr = PyLong_Check(nr_obj) ? PyLong_AsSsize_t(nr_obj) : -1;
    if (nr == -1 && PyErr_Occurred()) {
      PyErr_Clear();
    }
    if (nr >= 0 && passesAsIs(nxt, nr, g)) {
      return py::reinterpret_borrow<py::object>(g);
    }
    ExpectedGrad expected = expectedGrad(nxt, nr_obj, nr);
    if (!expected.known) {
      return py::reinterpret_borrow<py::object>(g);
    }
    auto invalid = [&](const std::string& what) {
      return "Function " + strOf(callMethod(node, gName).ptr()) + " returned an invalid gradient at index " +
             std::to_string(index) + " - " + what;
    };
    OPDISPATCH_CHECK_TYPE(isTensor(g), invalid(std::string("got ") + Py_TYPE(g)->tp_name + ", expected a Tensor"));
    py::object out = py::reinterpret_borrow<py::object>(g);
    IntArrayRef sizes = unpackImpl(g)->sizes();
    if (!(sizes == IntArrayRef(expected.sizes))) {
      OPDISPATCH_CHECK(
          expandable(expected.sizes, sizes),
          invalid("got " + listString(sizes) + " but expected shape compatible with " + listString(expected.sizes)));
      out = steal(wrapTensor(sumTo(unpackTensor(g), expected.sizes)));
    }
    if (steal(dtypeObject(unpackImpl(out.ptr())->dtype())).ptr() != expected.dtype.ptr()) {
      out = callMethod(out.ptr(), gTo, expected.dtype.ptr());
      OPDISPATCH_CHECK_TYPE(isTensor(out.ptr()), "Tensor.to returned ", Py_TYPE(out.ptr())->tp_name);
    }
    if (expected.device) {
      py::object device = steal(deviceObject(unpackImpl(out.ptr())->device()));
      int same = PyObject_RichCompareBool(device.ptr(), expected.device.ptr(), Py_EQ);
      if (same < 0) {
        throw py::error_already_set();
      }
      OPDISPATCH_CHECK(same,
                       invalid("expected device " + strOf(expected.device.ptr()) + " but got " + strOf(device.ptr())));
    }
    return out;
  }

  /// autograd.grad and backward(inputs=...): the gradients arriving at `node`'s
  /// outputs that are among the captured edges are summed there.
  void capture(PyObject* node, PyObject* grad_list) {
    for (Py_ssize_t nr = 0; nr < PyList_GET_SIZE(grad_list); ++nr) {
      PyObject* g = PyList_GET_ITEM(grad_list, nr);
      if (g == Py_None) {
        continue;
      }
      py::object nr_obj = steal(PyLong_FromSsize_t(nr));
      py::object key = steal(PyTuple_Pack(2, node, nr_obj.ptr()));
      PyObject* existing = PyDict_GetItemWithError(captures_, key.ptr()); // borrowed
      if (existing == nullptr) {
        if (PyErr_Occurred()) {
          throw py::error_already_set();
        }
        continue;
      }
      py::object sum = accumulate(existing, g);
      if (PyDict_SetItem(captures_, key.ptr(), sum.ptr()) < 0) {
        throw py::error_already_set();
      }
    }
  }

  bool retain_graph_;
  bool create_graph_;
  PyObject* captures_; ///< a dict {edge: gradient or None}, or null
  std::unordered_map<PyObject*, NodeState> nodes_;
  std::vector<py::object> keep_alive_;
  std::vector<py::object> ready_;
};

/// _run_backward(roots, root_grads, retain_graph, create_graph, captures): see the binding's docstring.
PyObject* runBackward(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  return pythonEntry([&]() -> PyObject* {
    OPDISPATCH_CHECK_TYPE(nargs == 5 && PyBool_Check(args[2]) && PyBool_Check(args[3]) &&
                              (args[4] == Py_None || PyDict_Check(args[4])),
                          "_run_backward(roots, root_grads, retain_graph: bool, create_graph: bool, "
                          "captures: dict | None)");
    OPDISPATCH_CHECK(gAccumulateRetained != nullptr,
                     "_run_backward: no engine callbacks are installed (opdispatch.autograd.engine installs them)");
    Backward backward(args[2] == Py_True, args[3] == Py_True, args[4] == Py_None ? nullptr : args[4]);
    backward.run(args[0], args[1]);
    Py_RETURN_NONE;
  });
}

PyMethodDef kModuleMethods[] = {
    {"_run_backward", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(runBackward)), METH_FASTCALL,
     "_run_backward(roots, root_grads, retain_graph, create_graph, captures): runs the graph backward from the "
     "(node, input_nr) edges `roots` with one gradient per root, grad mode set to create_graph: each node runs "
     "once every node feeding it a gradient has run, the gradients arriving at one node output are summed, leaves "
     "accumulate into .grad (with captures, a dict {edge: None}, the gradients reaching those edges are summed "
     "there instead and no .grad changes), and without retain_graph each node is released after it ran. "
     "PyTorch: torch/csrc/autograd/engine.cpp."},
    {nullptr, nullptr, 0, nullptr},
};

} // namespace

void initEngineBindings(py::module_& m) {
  intern(gNextFunctions, "next_functions");
  intern(gNumOutputs, "num_outputs");
  intern(gApply, "apply");
  intern(gRelease, "release");
  intern(gRetained, "_retained");
  intern(gRunsWithoutGrads, "runs_without_grads");
  intern(gInputMetadata, "input_metadata");
  intern(gOutputsMeta, "outputs_meta");
  intern(gVariable, "variable");
  intern(gName, "name");
  intern(gTo, "to");
  if (PyModule_AddFunctions(m.ptr(), kModuleMethods) < 0) {
    throw py::error_already_set();
  }
  m.def(
      "_set_engine_callbacks",
      [](py::object accumulate_retained, py::object op_node_input_metadata) {
        Py_XSETREF(gAccumulateRetained, accumulate_retained.release().ptr());
        Py_XSETREF(gOpNodeInputMetadata, op_node_input_metadata.release().ptr());
      },
      py::arg("accumulate_retained"), py::arg("op_node_input_metadata"),
      "Installs what _run_backward calls: accumulate_retained(node, grads, create_graph) (a node with outputs "
      "that retain_grad()), and the input_metadata function of the nodes whose outputs_meta it reads.");
}

} // namespace opdispatch::python
