// opdispatch._C._AutogradMeta, the autograd state of one tensor (kept in its
// TensorImpl's autograd-metadata slot), and the two things every recorded
// operator call does with it: _set_history and _gradient_edge, and what the
// engine does with a leaf's gradient (accumulateGrad). In C because they run
// once per tensor per recorded call; the nodes are Python
// (python/opdispatch/autograd/graph.py), the engine's loop C++ (Engine.cpp).
#pragma once

#include <pybind11/pybind11.h>

namespace opdispatch::python {

/// New reference: the (node, input_nr) edge of `value`, as _C._gradient_edge. Throws on error.
PyObject* gradientEdge(PyObject* value);
/// Makes tensor object `tensor` the `output_nr`-th output of `node`, as _C._set_history. Throws on error.
void setHistory(PyObject* tensor, PyObject* node, long long output_nr);
/// Borrowed: the grad_fn of tensor object `tensor`, or null if it has none (a leaf).
PyObject* gradFnOf(PyObject* tensor);
/// Adds gradient object `grad` to the .grad of tensor object `tensor` (out of place: a .grad handed out is never
/// changed; `existing + grad` runs through the dispatcher). Without `create_graph`, a `grad` that requires grad (a
/// formula returned an input) is detached first. Throws on error.
void accumulateGrad(PyObject* tensor, PyObject* grad, bool create_graph);
/// Borrowed: the class of leaves' nodes (_set_accumulate_grad_class), or null before it is installed.
PyObject* accumulateGradClass();
/// Sets the view_of of tensor object `tensor` (which has autograd state) to `name` (a str), and its view_base to
/// the base of tensor object `input` (the view operator's self; may be null): input's view_base, else input.
void setViewOf(PyObject* tensor, PyObject* name, PyObject* input);

void initAutogradMetaBindings(pybind11::module_& m);

} // namespace opdispatch::python
