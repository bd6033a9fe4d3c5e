// The process-wide Python hooks (empty until opdispatch._C loads).
#include <opdispatch/core/PyInterpreter.h>

namespace opdispatch {

PyInterpreterHooks& pyInterpreterHooks() {
  static PyInterpreterHooks hooks;
  return hooks;
}

} // namespace opdispatch
