// Stack: the argument/result vector of a boxed call, and helpers to push and
// pop IValues on it.
#pragma once

#include <vector>

#include <opdispatch/core/IValue.h>

namespace opdispatch {

using Stack = std::vector<IValue>;

/// Pushes each argument, converted to an IValue.
template <class... Args>
void push(Stack& stack, Args&&... args) {
  (stack.emplace_back(std::forward<Args>(args)), ...);
}
/// Removes and returns the top value.
inline IValue pop(Stack& stack) {
  IValue v = std::move(stack.back());
  stack.pop_back();
  return v;
}
/// Removes and returns the top `n` values, in stack order.
inline std::vector<IValue> pop(Stack& stack, size_t n) {
  std::vector<IValue> out(std::make_move_iterator(stack.end() - n), std::make_move_iterator(stack.end()));
  stack.erase(stack.end() - n, stack.end());
  return out;
}
/// Drops the top `n` values. (resize, not a pop_back per value: the vector's
/// end is then read and written once, not reloaded after every destructor;
/// erase would do the same but is not inlined.)
inline void drop(Stack& stack, size_t n) { stack.resize(stack.size() - n); }
/// The `i`-th of the top `n` values (0 is the deepest of them).
inline IValue& peek(Stack& stack, size_t i, size_t n) { return stack[stack.size() - n + i]; }

} // namespace opdispatch
