// The backward call of the nodes of operators with an autograd formula
// (graph.OpNode) and the saved tensors of a formula's context, in C: the
// engine calls an OpNode's formula without a Python frame of its own. The
// node stays the Python object graph.py defines (its attributes, the
// formula's ctx); graph.OpNode.apply and BackwardContext.saved_tensors are
// these functions.
#pragma once

#include <Python.h>

#include <pybind11/pybind11.h>

namespace opdispatch::python {

/// Whether nodes of `type` run OpNode.apply (the class installed by _set_op_node_class, or a subclass
/// that keeps its apply).
bool runsOpNodeApply(PyTypeObject* type);
/// Whether nodes of `type` release with OpNode.release (which drops the saved tensors).
bool runsOpNodeRelease(PyTypeObject* type);
/// OpNode.apply(node, grad_outputs): see the _apply_op_node binding.
pybind11::object applyOpNode(PyObject* node, PyObject* grad_outputs);
/// OpNode.release(node): frees the tensors the formula saved.
void releaseOpNode(PyObject* node);

void initOpNodeBindings(pybind11::module_& m);

} // namespace opdispatch::python
