// Python <-> IValue conversion driven by schema types: a call's argument
// values (binding them to the schema is PythonCall.h's) and its results.
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

/// Throws TypeError for the first of the `num_kw` names in `kwnames` (a
/// tuple of str) that names no argument of `schema`, suggesting a close one.
void checkKeywordsKnown(const FunctionSchema& schema, PyObject* kwnames, size_t num_kw);
/// New reference to the Python value of `v`, argument `position` of
/// `schema`; throws as toPyObject, naming the operator and the argument.
PyObject* argumentToPyObject(const IValue& v, const FunctionSchema& schema, size_t position);

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
