// Python <-> IValue conversion driven by schema types, and binding a Python
// call's arguments to an operator's schema (positional, keyword, defaults).
#pragma once

#include <Python.h>

#include <string>

#include <opdispatch/core/Stack.h>
#include <opdispatch/schema/FunctionSchema.h>

namespace opdispatch::python {

/// Converts `obj` to an IValue of the type of `arg` (an `int[N]` also
/// accepts a single int). Throws TypeError "<op>(): argument '<name>'
/// (position <i>) must be <type>, not <pytype>", OverflowError for an int
/// beyond int64 and ValueError for a value the type cannot hold (a str with
/// lone surrogates, an unknown device), each naming the operator and the
/// argument (Note [Conversion errors name the argument]).
IValue toIValue(PyObject* obj, const Argument& arg, const FunctionSchema& schema, size_t position);
/// Converts without a schema argument (type Any): tensors, numbers, strings,
/// None; other objects opaque. Throws as toIValue, without the names.
IValue toIValueAny(PyObject* obj);

/// New reference to the Python value of `v` (never null); `type` (may be
/// null) refines ints that are ScalarTypes into dtype objects. Throws
/// ValueError for a str that is not valid UTF-8, py::error_already_set
/// (MemoryError) if Python cannot allocate.
PyObject* toPyObject(const IValue& v, TypePtr type = nullptr);

// --- Python scalars -> C++ (shared by argument conversion and the tensor API) ---

/// Whether `obj` is an integer (an int, a bool, or an object with
/// __index__ that is not a float or tensor, e.g. numpy.int64); sets `out`.
/// Throws OverflowError (opdispatch) if it does not fit int64, and
/// py::error_already_set if __index__ raises something other than TypeError.
bool toInt64(PyObject* obj, int64_t& out);
/// Whether `obj` is a real number (a float, an integer as toInt64, or an
/// object with __float__; not complex); sets `out`. Throws
/// py::error_already_set for an int too large for a float (OverflowError)
/// or when __index__ / __float__ raise.
bool toDouble(PyObject* obj, double& out);
/// The UTF-8 text of the str `str`. Throws ValueError for a str with lone
/// surrogates (which UTF-8 cannot encode).
std::string utf8String(PyObject* str);
/// `str` as UTF-8 for messages: lone surrogates escaped (backslashreplace);
/// "<unprintable>" for a non-str.
std::string displayText(PyObject* str);

/// Pushes the arguments of a call onto `stack`: `args` positional values
/// (`nargs` of them), then `kwnames` (a tuple of names, may be null) for the
/// values that follow in `args`; defaults fill the rest. Throws TypeError
/// naming the operator and argument on a count, name or type problem; the
/// stack is unchanged then.
void pushArgumentsForSchema(const FunctionSchema& schema, PyObject* const* args, size_t nargs, PyObject* kwnames,
                            Stack& stack);
/// Same with an args tuple and a kwargs dict (either may be null).
void pushArgumentsForSchema(const FunctionSchema& schema, PyObject* args, PyObject* kwargs, Stack& stack);

/// New reference to the Python result of a call whose results are the top of
/// `stack`: None for no return, the value for one, a tuple for several.
/// Pops them.
PyObject* popResultsToPython(const FunctionSchema& schema, Stack& stack);

/// Converts a call's arguments (top of `stack`, popped) to Python: PyTorch's
/// convention (parseIValuesToPyArgsKwargs) — positional args as a tuple,
/// trailing positional args equal to their defaults dropped, kwarg-only args
/// as a dict unless equal to their defaults. Returns (args, kwargs), new refs.
std::pair<PyObject*, PyObject*> popArgumentsToPython(const FunctionSchema& schema, Stack& stack);

/// Checks a Python kernel's result against the schema's returns and pushes it
/// (one value, or a tuple/list of them). Throws TypeError naming the operator,
/// the dispatch key and the return index.
void pushPythonResults(const FunctionSchema& schema, PyObject* result, const char* where, Stack& stack);

/// The Python type name of `obj` for messages ("Tensor", "int", ...).
std::string pyTypeName(PyObject* obj);

} // namespace opdispatch::python
