// The fast path of a Python call that reaches a Python kernel: dispatch on
// the Python objects themselves, with no IValue round trip. See Note
// [PyObject dispatch].
#pragma once

#include <Python.h>

#include <opdispatch/dispatch/OperatorEntry.h>

namespace opdispatch::python {

struct FastCallInfo;

/// Per-operator-object cache of the fast-path facts of its current schema.
struct FastCallCache {
  const AnnotatedSchema* schema = nullptr;
  const FastCallInfo* info = nullptr;
};

/// Tries the fast path for a positional call (`args[0..nargs)`, GIL held).
/// `redispatch_ks`: the caller-restricted key set of a redispatch, or null
/// for a normal call. Returns false if the generic path must handle the
/// call (nothing has happened then); returns true after the call, with
/// `*result` a new reference, or null with the Python error set.
bool tryPyObjectDispatch(OperatorEntry& entry, FastCallCache& cache, PyObject* const* args, size_t nargs,
                         const DispatchKeySet* redispatch_ks, PyObject** result);

} // namespace opdispatch::python
