// The call unit: how every call of an operator runs — key-set extraction,
// table lookup, kernel, post-kernel effects — for any representation of its
// arguments (a call frame). See Note [One call path].
#pragma once

#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include <opdispatch/Macros.h>
#include <opdispatch/core/Stack.h>
#include <opdispatch/dispatch/ArgumentTensors.h>
#include <opdispatch/dispatch/DispatchKeyExtractor.h>
#include <opdispatch/dispatch/LocalDispatchKeySet.h>
#include <opdispatch/dispatch/OperatorHandle.h>
#include <opdispatch/dispatch/PostKernelEffects.h>
#include <opdispatch/dispatch/Reclaimer.h>

namespace opdispatch {

// Note [One call path]
// A call from Python, a typed or boxed call from C++ and a redispatch all run
// through callOperator / redispatchOperator below. They differ only in how
// the arguments are held, a call frame:
//   BoxedCallFrame            IValues on a Stack (OperatorHandle::callBoxed)
//   TypedCallFrame            typed C++ arguments (TypedOperatorHandle::call)
//   python::PythonCallFrame   Python objects bound to the schema
//                             (csrc/python/PythonCall.h): kept as they are
//                             for a Python kernel, converted to IValues for
//                             a C++ kernel — a choice of conversion.
// The call unit does the rest, once for all of them:
//   1. the key set: the keys of the arguments' tensors | TLS included - TLS
//      excluded (a redispatch takes its caller's key set instead);
//   2. the lookup: that set masked to the non-fallthrough keys, and the
//      table entry of its highest key (DispatchTable::lookup);
//   3. the kernel, invoked through the frame;
//   4. the post-kernel effects, if the entry has any (Note [Post-kernel effects]).
// A missing kernel is a table entry that raises (OperatorEntry::reportError),
// so every form fails the same way; so does a Python kernel's wrong result,
// which the Python kernel's calling convention checks in either representation.
//
// A frame provides:
//   using Result = ...;     what invoke returns (void: results stay in the frame)
//   static constexpr bool kArgumentsOutliveKernel;  whether the argument tensors stay alive and in
//                                                   place through invoke (Note [Post-kernel effects])
//   DispatchKeySet argumentKeySet() const;
//   template <class F> void forEachArgumentTensor(F&& f) const;   f(argument index, TensorImpl&)
//   Result invoke(const OperatorHandle&, const KernelRef&, DispatchKeySet);
//   template <class F> void forEachResultTensor(const Result&, F&& f) const;    f(return index, TensorImpl&)
// and, for a void Result (results left in the frame), instead of the last:
//   Mark resultsMark() const;      taken before invoke: where the results will be
//   template <class F> void forEachResultTensor(Mark, F&& f) const;
// with forEachTensor (ArgumentTensors.h) listing the tensors of each value.

namespace detail {

/// Steps 3 and 4 for an entry with effects (kept out of line: the common call
/// has none). `frame` by value, so that the caller's copy need not live in
/// memory: a typed call keeps it in registers.
template <class Frame>
OPDISPATCH_NOINLINE typename Frame::Result invokeWithEffects(const OperatorHandle& op, const KernelRef& kernel,
                                                             DispatchKeySet ks, Frame frame) {
  PostKernelEffects<!Frame::kArgumentsOutliveKernel> effects(op.entry().schemaPtr(), kernel);
  if constexpr (!Frame::kArgumentsOutliveKernel) {
    frame.forEachArgumentTensor([&](uint32_t index, TensorImpl& t) { effects.recordArgument(index, t); });
  }
  // The argument tensors after the kernel returned (Note [Post-kernel effects]).
  auto arguments = [&](auto&& f) {
    if constexpr (Frame::kArgumentsOutliveKernel) {
      frame.forEachArgumentTensor(f);
    } else {
      effects.forEachRecordedArgument(f);
    }
  };
  if constexpr (std::is_void_v<typename Frame::Result>) {
    const auto mark = frame.resultsMark();
    frame.invoke(op, kernel, ks);
    if (effects.checksResults()) {
      effects.checkResults([&](auto&& f) { frame.forEachResultTensor(mark, f); }, arguments);
    }
    effects.commit(arguments);
  } else {
    typename Frame::Result result = frame.invoke(op, kernel, ks);
    if (effects.checksResults()) {
      effects.checkResults([&](auto&& f) { frame.forEachResultTensor(result, f); }, arguments);
    }
    effects.commit(arguments);
    return result;
  }
}

} // namespace detail

/// Runs `kernel`, a table entry (or a kernel standing in for one, with its
/// effects), with key set `ks`: steps 3 and 4 of Note [One call path]. A
/// table entry is passed as the table's own (DispatchTable::lookup): the
/// call reads the entry points and flags from there and copies nothing.
template <class Frame>
OPDISPATCH_ALWAYS_INLINE typename Frame::Result invokeKernel(const OperatorHandle& op, const KernelRef& kernel,
                                                             DispatchKeySet ks, Frame& frame) {
  if (OPDISPATCH_LIKELY(!kernel.hasEffects())) {
    return frame.invoke(op, kernel, ks);
  }
  return detail::invokeWithEffects(op, kernel, ks, std::move(frame));
}

namespace detail {

/// redispatchOperator for a caller already inside a CallGuard (which covers
/// what it read before, e.g. the schema of a boxed call).
template <class Frame>
OPDISPATCH_ALWAYS_INLINE typename Frame::Result redispatchInCall(const OperatorHandle& op, DispatchKeySet ks,
                                                                 Frame& frame) {
  DispatchKeySet masked;
  const KernelRef& kernel = op.entry().table().lookup(ks, &masked);
  return invokeKernel(op, kernel, masked, frame);
}

/// callOperator for a caller already inside a CallGuard.
template <class Frame>
OPDISPATCH_ALWAYS_INLINE typename Frame::Result callInCall(const OperatorHandle& op, Frame& frame) {
  return redispatchInCall(op, applyLocalDispatchKeySet(frame.argumentKeySet()), frame);
}

} // namespace detail

/// Calls the kernel of `ks` (a key set the caller restricted, e.g. with
/// FULL_AFTER; it is masked to the non-fallthrough keys here): steps 2-4 of
/// Note [One call path].
template <class Frame>
OPDISPATCH_ALWAYS_INLINE typename Frame::Result redispatchOperator(const OperatorHandle& op, DispatchKeySet ks,
                                                                   Frame& frame) {
  CallGuard guard;  // Note [Reclaiming retired kernels]
  return detail::redispatchInCall(op, ks, frame);
}

/// Dispatches a call on its arguments and the thread-local state: Note [One call path].
template <class Frame>
OPDISPATCH_ALWAYS_INLINE typename Frame::Result callOperator(const OperatorHandle& op, Frame& frame) {
  CallGuard guard;  // Note [Reclaiming retired kernels]
  return detail::callInCall(op, frame);
}

namespace detail {
/// Throws Error: a boxed call of `e` found no schema (`s` null) or fewer than
/// its arguments on a stack of `stack_size` values.
[[noreturn]] void throwBadBoxedCall(const OperatorEntry& e, const AnnotatedSchema* s, size_t stack_size);

/// The schema of a boxed call of `e` with arguments on `stack` (inside a
/// CallGuard): the checks every boxed call makes before it reads the stack.
OPDISPATCH_ALWAYS_INLINE const AnnotatedSchema* boxedCallSchema(const OperatorEntry& e, const Stack* stack) {
  const AnnotatedSchema* s = e.schemaPtr();
  if (OPDISPATCH_UNLIKELY(s == nullptr || stack->size() < s->num_arguments)) {
    throwBadBoxedCall(e, s, stack->size());
  }
  return s;
}

/// Throws Error: the boxed kernel of `schema`'s operator left `left` values
/// (may be negative: it popped more than its arguments) where the schema
/// declares schema.num_returns results.
[[noreturn]] void throwBadBoxedResultCount(const AnnotatedSchema& schema, int64_t left);
} // namespace detail

/// The arguments of a boxed call: the top `schema->num_arguments` values of a
/// stack, replaced by the results when the kernel returns.
class BoxedCallFrame final {
 public:
  using Result = void;
  /// The kernel pops the arguments.
  static constexpr bool kArgumentsOutliveKernel = false;
  /// `schema` may be null for a redispatch racing the removal of the definition (then no tensor is listed);
  /// else `stack` holds at least its arguments.
  BoxedCallFrame(const AnnotatedSchema* schema, Stack* stack)
      : BoxedCallFrame(schema, schema ? schema->boxed_call_summary : BoxedCallSummary(), stack) {}
  /// `summary`: the operator entry's (Note [Boxed call summary]), used if its argument count is `schema`'s.
  BoxedCallFrame(const AnnotatedSchema* schema, BoxedCallSummary summary, Stack* stack)
      : schema_(schema),
        summary_(summary),
        stack_(stack) {}

  DispatchKeySet argumentKeySet() const {
    if (schema_ == nullptr) {
      return DispatchKeySet();
    }
    if (OPDISPATCH_LIKELY(summary_.valid() && summary_.numArguments() == schema_->num_arguments)) {
      // The first argument by the summary's count: the schema's load is not on the way to the tensors.
      return detail::keySetOfIndexed(stack_->data() + (stack_->size() - summary_.numArguments()), summary_, *schema_);
    }
    return detail::keySetOfIndexedOutOfLine(arguments(), schema_->tensor_arg_indices);
  }
  template <class F>
  void forEachArgumentTensor(F&& f) const {
    if (schema_ == nullptr) {
      return;
    }
    const IValue* args = arguments();
    for (uint32_t i : schema_->tensor_arg_indices) {
      forEachTensor(args[i], [&](TensorImpl& t) { f(i, t); });
    }
  }
  void invoke(const OperatorHandle& op, const KernelRef& kernel, DispatchKeySet ks) {
    kernel.callBoxed(op, ks, stack_);
  }
  /// The stack index of the first argument, which the first result takes (taken before the kernel runs).
  size_t resultsMark() const { return schema_ == nullptr ? 0 : stack_->size() - schema_->num_arguments; }
  /// `start`: resultsMark() before the kernel ran.
  template <class F>
  void forEachResultTensor(size_t start, F&& f) const {
    if (schema_ == nullptr) {
      return;
    }
    // A boxed kernel replaces its arguments by exactly its results; one that
    // leaves another number (a user's boxed kernel can) would have the walk
    // read past the stack or take the caller's values for results.
    const size_t n = schema_->num_returns;
    if (OPDISPATCH_UNLIKELY(stack_->size() != start + n)) {
      detail::throwBadBoxedResultCount(*schema_, static_cast<int64_t>(stack_->size()) - static_cast<int64_t>(start));
    }
    const IValue* results = stack_->data() + start;
    for (size_t i = 0; i < n; ++i) {
      forEachTensor(results[i], [&](TensorImpl& t) { f(i, t); });
    }
  }

 private:
  /// The first argument (schema_ not null).
  const IValue* arguments() const { return stack_->data() + (stack_->size() - schema_->num_arguments); }
  const AnnotatedSchema* schema_;
  BoxedCallSummary summary_;
  Stack* stack_;
};

// Note [The boxed call is inline]
// OperatorHandle::callBoxed is compiled into its caller, as the typed call
// is (TypedOperatorHandle::call) and as PyTorch's Dispatcher::callBoxed is.
// Out of line, in libopdispatch, it cost a call through the PLT and the
// saving and restoring of six registers around the kernel call: inline,
// callgrind counts 686 -> 660 instructions for one round of the six cases of
// benchmarks/cpp/bench_dispatch.cpp (boxed_1 alone: 158 -> 137), and the
// boxed rows of benchmarks/cpp_bench.py read ~1.3-2.5 ns less (thread CPU
// time, alternating runs). What it inlines is the call unit the typed call
// inlines already; the rare paths (errors, post-kernel effects, lists among
// the arguments) stay out of line.

inline void OperatorHandle::callBoxed(Stack* stack) const {
  CallGuard guard;  // Note [Reclaiming retired kernels]
  BoxedCallFrame frame(detail::boxedCallSchema(*entry_, stack), entry_->boxedCallSummary(), stack);
  detail::callInCall(*this, frame);
}

/// The arguments of a typed call, by reference (a TypedOperatorHandle's parameters).
template <class Return, class... Args>
class TypedCallFrame final {
 public:
  using Result = Return;
  /// Const references to the caller's values stay alive and in place; a
  /// by-value class argument (a Tensor, say) may be moved into the kernel, a
  /// `Tensor&` rebound by it.
  static constexpr bool kArgumentsOutliveKernel =
      (((std::is_lvalue_reference_v<Args> && std::is_const_v<std::remove_reference_t<Args>>) ||
        std::is_arithmetic_v<std::decay_t<Args>>) &&
       ...);
  explicit TypedCallFrame(Args&&... args) : args_(std::forward<Args>(args)...) {}

  DispatchKeySet argumentKeySet() const {
    return std::apply([](const auto&... a) { return detail::multiDispatchKeySet(a...); }, args_);
  }
  template <class F>
  void forEachArgumentTensor(F&& f) const {
    std::apply([&](const auto&... a) { forEachTensorIndexed(f, a...); }, args_);
  }
  Return invoke(const OperatorHandle& op, const KernelRef& kernel, DispatchKeySet ks) {
    return std::apply(
        [&](auto&... a) -> Return { return kernel.template call<Return, Args...>(op, ks, std::forward<Args>(a)...); },
        args_);
  }
  template <class R, class F>
  void forEachResultTensor(const R& result, F&& f) const {
    opdispatch::forEachResultTensor(result, f);
  }
  /// (A void result holds no tensors.)
  struct NoResults {};
  NoResults resultsMark() const { return {}; }
  template <class F>
  void forEachResultTensor(NoResults, F&&) const {}

 private:
  /// A by-value scalar is held by value, anything else by reference: a
  /// reference to the caller's scalar makes the scalar live in memory, which
  /// the CallGuard's compiler barrier then forces the kernel call to reload
  /// (8-argument typed call: 7 instructions fewer).
  template <class A>
  using Slot = std::conditional_t<std::is_arithmetic_v<A> || std::is_enum_v<A>, A, A&&>;
  std::tuple<Slot<Args>...> args_;
};

} // namespace opdispatch
