// The exceptions opdispatch throws, and the OPDISPATCH_CHECK* macros that
// build their messages. The Python bindings map each class to a Python type.
#pragma once

#include <exception>
#include <sstream>
#include <string>

#include <opdispatch/Macros.h>

namespace opdispatch {

/// Base of every opdispatch error; reaches Python as RuntimeError.
class Error : public std::exception {
 public:
  explicit Error(std::string msg) : msg_(std::move(msg)) {}
  const char* what() const noexcept override { return msg_.c_str(); }
  const std::string& msg() const { return msg_; }

 private:
  std::string msg_;
};

/// No kernel for a dispatch key, or a feature that is not supported; Python NotImplementedError.
class NotImplementedError : public Error {
  using Error::Error;
};
/// An argument of the wrong type; Python TypeError.
class TypeError : public Error {
  using Error::Error;
};
/// An argument with a bad value (including unparseable names); Python ValueError.
class ValueError : public Error {
  using Error::Error;
};
/// A function schema that does not parse; Python opdispatch._C.SchemaParseError,
/// a ValueError that is also a RuntimeError (PyTorch raises RuntimeError,
/// which code ported from it catches).
class SchemaParseError : public ValueError {
  using ValueError::ValueError;
};
/// An argument that does not fit an operator's schema (a wrong type, a
/// missing, extra or unknown argument); Python opdispatch._C.ArgumentTypeError,
/// a TypeError that is also a RuntimeError (PyTorch's torch.ops raises
/// RuntimeError, which code ported from it catches).
class ArgumentTypeError : public TypeError {
  using TypeError::TypeError;
};
/// An argument value PyTorch rejects with RuntimeError (a device string or
/// index that does not parse); Python opdispatch._C.ArgumentValueError, a
/// ValueError that is also a RuntimeError.
class ArgumentValueError : public ValueError {
  using ValueError::ValueError;
};
/// An index out of range; Python IndexError.
class IndexError : public Error {
  using Error::Error;
};
/// A number that does not fit the type it converts to (an int beyond int64);
/// Python OverflowError.
class OverflowError : public Error {
  using Error::Error;
};

namespace detail {
/// Concatenates its arguments with operator<<.
template <class... Args>
std::string str(const Args&... args) {
  std::ostringstream ss;
  (ss << ... << args);
  return ss.str();
}
inline std::string str() { return std::string(); }
inline const std::string& str(const std::string& s) { return s; }
inline std::string str(const char* s) { return s; }

/// The message of a failed OPDISPATCH_CHECK: `failed` (which names the
/// condition) when the check has no message arguments, else the arguments
/// concatenated. PyTorch: c10::detail::torchCheckMsgImpl.
inline const char* checkMessage(const char* failed) { return failed; }
template <class... Args>
std::string checkMessage(const char* /*failed*/, const Args&... args) {
  return str(args...);
}
} // namespace detail

} // namespace opdispatch

// Note [Messages of failed checks]
// OPDISPATCH_CHECK(cond, args...) throws with the arguments concatenated by
// operator<<, as TORCH_CHECK does. With no message arguments the message names
// the failed condition in PyTorch's words ("Expected x > 0 to be true, but got
// false. ..."), so a bare OPDISPATCH_CHECK(x > 0) ported from TORCH_CHECK(x > 0)
// still says what went wrong.
#define OPDISPATCH_CHECK_WITH(ErrorType, cond, ...)                                                \
  do {                                                                                             \
    if (OPDISPATCH_UNLIKELY(!(cond))) {                                                            \
      throw ::opdispatch::ErrorType(::opdispatch::detail::checkMessage(                          \
          "Expected " #cond " to be true, but got false.  (Could this error message be improved?  " \
          "If so, please report an enhancement request to opdispatch.)",                         \
          ##__VA_ARGS__)); \
    }                                                                                              \
  } while (false)

/// Throws opdispatch::Error(message) unless `cond` holds; see Note [Messages of failed checks].
#define OPDISPATCH_CHECK(cond, ...) OPDISPATCH_CHECK_WITH(Error, cond, ##__VA_ARGS__)
#define OPDISPATCH_CHECK_TYPE(cond, ...) OPDISPATCH_CHECK_WITH(TypeError, cond, ##__VA_ARGS__)
#define OPDISPATCH_CHECK_VALUE(cond, ...) OPDISPATCH_CHECK_WITH(ValueError, cond, ##__VA_ARGS__)
#define OPDISPATCH_CHECK_INDEX(cond, ...) OPDISPATCH_CHECK_WITH(IndexError, cond, ##__VA_ARGS__)
#define OPDISPATCH_CHECK_OVERFLOW(cond, ...) OPDISPATCH_CHECK_WITH(OverflowError, cond, ##__VA_ARGS__)
#define OPDISPATCH_CHECK_NOT_IMPLEMENTED(cond, ...) OPDISPATCH_CHECK_WITH(NotImplementedError, cond, ##__VA_ARGS__)
/// OPDISPATCH_CHECK_EQ(a, b, args...) and its NE / LT / LE / GT / GE kin: throw
/// opdispatch::Error("Check failed: a == b (1 vs. 2). args...") unless the
/// comparison holds; on failure the operands are evaluated again for the
/// message. PyTorch's TORCH_CHECK_EQ family gives the same text (and aborts
/// the process; ours throws).
#define OPDISPATCH_CHECK_OP(a, b, op, ...) \
  OPDISPATCH_CHECK((a)op(b), "Check failed: " #a " " #op " " #b " (", (a), " vs. ", (b), "). ", ##__VA_ARGS__)
#define OPDISPATCH_CHECK_EQ(a, b, ...) OPDISPATCH_CHECK_OP(a, b, ==, ##__VA_ARGS__)
#define OPDISPATCH_CHECK_NE(a, b, ...) OPDISPATCH_CHECK_OP(a, b, !=, ##__VA_ARGS__)
#define OPDISPATCH_CHECK_LT(a, b, ...) OPDISPATCH_CHECK_OP(a, b, <, ##__VA_ARGS__)
#define OPDISPATCH_CHECK_LE(a, b, ...) OPDISPATCH_CHECK_OP(a, b, <=, ##__VA_ARGS__)
#define OPDISPATCH_CHECK_GT(a, b, ...) OPDISPATCH_CHECK_OP(a, b, >, ##__VA_ARGS__)
#define OPDISPATCH_CHECK_GE(a, b, ...) OPDISPATCH_CHECK_OP(a, b, >=, ##__VA_ARGS__)
/// ATen's older spellings, kept by kernels written for it: AT_ERROR(msg...)
/// throws Error(msg); AT_ASSERTM(cond, msg...) asserts as OPDISPATCH_INTERNAL_ASSERT.
/// PyTorch: AT_ERROR, AT_ASSERTM (c10/util/Exception.h, deprecated there).
#define OPDISPATCH_ERROR(...) OPDISPATCH_CHECK(false, ##__VA_ARGS__)
#define OPDISPATCH_ASSERTM(cond, ...) OPDISPATCH_INTERNAL_ASSERT(cond, ##__VA_ARGS__)
/// For conditions that only a bug in opdispatch can break.
#define OPDISPATCH_INTERNAL_ASSERT(cond, ...)                                               \
  OPDISPATCH_CHECK_WITH(Error, cond, "INTERNAL ASSERT FAILED at ", __FILE__, ":", __LINE__, \
                        ": " #cond ". ", ##__VA_ARGS__)
