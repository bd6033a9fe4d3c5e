// Python <-> IValue conversion driven by schema types: a call's argument
// values (binding them to the schema is PythonCall.h's) and its results.
#pragma once

#include <Python.h>

#include <string>

#include <opdispatch/core/Stack.h>
#include <opdispatch/schema/FunctionSchema.h>

namespace opdispatch::python {

/// Converts `obj` to an IValue of schema type `type` (`N` is the fixed
/// length of an `int[N]`, which also accepts a single int). Throws TypeError
/// "<op>(): argument '<name>' (position <i>) must be <type>, not <pytype>"
/// using `op` and `arg` for the message.
IValue toIValue(PyObject* obj, const Argument& arg, const FunctionSchema& schema, size_t position);
/// Converts without a schema argument (type Any): tensors, numbers, strings, None, lists; other objects opaque.
IValue toIValueAny(PyObject* obj);

/// New reference to the Python value of `v`; `type` (may be null) refines
/// ints that are ScalarTypes into dtype objects.
PyObject* toPyObject(const IValue& v, TypePtr type = nullptr);

/// New reference to the Python result of a call whose results are the top of
/// `stack`: None for no return, the value for one, a tuple for several.
/// Pops them.
PyObject* popResultsToPython(const FunctionSchema& schema, Stack& stack);

/// Checks a Python kernel's result against the schema's returns and pushes it
/// (one value, or a tuple/list of them). Throws TypeError naming the operator,
/// the dispatch key and the return index.
void pushPythonResults(const FunctionSchema& schema, PyObject* result, const char* where, Stack& stack);

/// The Python type name of `obj` for messages ("Tensor", "int", ...).
std::string pyTypeName(PyObject* obj);

} // namespace opdispatch::python
