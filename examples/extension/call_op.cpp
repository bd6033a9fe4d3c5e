// Kernels that call other operators through the dispatcher, by name: any
// operator taking one Tensor and returning one Tensor, whether its kernels
// are in C++ or in Python. call_op_in_thread makes the call from a new
// std::thread: it releases the GIL while it waits, and a Python kernel
// reached from that thread takes the GIL itself.
//
// Both are registered as CompositeImplicitAutograd kernels: they work for
// every backend, and the operator they call does its own dispatch.
#include "myext.h"

#include <exception>
#include <thread>

#include <opdispatch/core/Exception.h>

namespace myext {
namespace {

/// The operator named "ns::op" or "ns::op.overload". Throws Error if it is not defined.
opdispatch::OperatorHandle findOperator(const std::string& name) {
  const size_t ns_end = name.find("::");
  const size_t dot = name.find('.', ns_end == std::string::npos ? 0 : ns_end);
  if (dot == std::string::npos) {
    return opdispatch::Dispatcher::singleton().findSchemaOrThrow(name, "");
  }
  return opdispatch::Dispatcher::singleton().findSchemaOrThrow(name.substr(0, dot), name.substr(dot + 1));
}

Tensor callOp(const Tensor& x, const std::string& name) {
  opdispatch::OperatorHandle op = findOperator(name);
  const opdispatch::FunctionSchema& schema = op.schema();
  OPDISPATCH_CHECK_TYPE(schema.arguments().size() == 1 && schema.returns().size() == 1, qualified("call_op"),
                        ": operator ", name, " must take one Tensor and return one Tensor; its schema is ", schema);
  // A boxed call: works for any kernel (C++ or Python) without knowing a C++ signature.
  opdispatch::Stack stack{x};
  op.callBoxed(&stack);
  OPDISPATCH_CHECK_TYPE(stack.size() == 1 && stack[0].isTensor(), qualified("call_op"), ": operator ", name,
                        " did not return a Tensor");
  return stack[0].toTensor();
}

Tensor callOpInThread(const Tensor& x, const std::string& name) {
  Tensor result;
  std::exception_ptr error;
  {
    // Without this, a Python kernel in the worker would wait for the GIL this
    // thread holds while this thread waits for the worker: a deadlock.
    opdispatch::ReleaseGIL nogil;
    std::thread worker([&] {
      try {
        result = callOp(x, name);
      } catch (...) {
        error = std::current_exception();
      }
    });
    worker.join();
  }
  if (error) {
    std::rethrow_exception(error);  // with the GIL held again: a Python error passes through unchanged
  }
  return result;
}

} // namespace
} // namespace myext

OPDISPATCH_LIBRARY_IMPL(OPDISPATCH_EXAMPLE_NS, CompositeImplicitAutograd, m) {
  m.impl("call_op", OPDISPATCH_FN(myext::callOp));
  m.impl("call_op_in_thread", OPDISPATCH_FN(myext::callOpInThread));
}
