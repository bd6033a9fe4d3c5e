// staticTypeObject(): the starting value of a PyTypeObject defined in C++.
#pragma once

#include <Python.h>

namespace opdispatch::python {

/// A type object with every slot empty and the object header PyType_Ready
/// expects (what `{PyVarObject_HEAD_INIT(nullptr, 0)}` gives, with no slot
/// left to implicit initialisation). Fill in the slots, then PyType_Ready.
inline PyTypeObject staticTypeObject() {
  PyTypeObject t{};
  PyVarObject head = {PyObject_HEAD_INIT(nullptr) 0};
  t.ob_base = head;
  return t;
}

} // namespace opdispatch::python
