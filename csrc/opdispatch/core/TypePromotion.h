// Type promotion: the dtype an operation on tensors and Python numbers of
// different dtypes computes in, as PyTorch decides it (c10/core/ScalarType.h
// promoteTypes and canCast; aten/src/ATen/native/TypeProperties.cpp
// ResultTypeState, update_result_type_state, result_type).
#pragma once

#include <opdispatch/core/ScalarType.h>

namespace opdispatch {

/// The four kinds of dtype, lowest first: an operand of a lower category
/// never raises the result's category on its own.
enum class TypeCategory : int8_t { Bool = 0, Integral = 1, Floating = 2, Complex = 3 };

TypeCategory typeCategory(ScalarType t);

/// The smallest dtype both `a` and `b` convert to without losing their kind
/// (int8 with uint8 gives int16; any integer with float16 gives float16;
/// float64 with complex64 gives complex128). Undefined if either is.
/// PyTorch: c10::promoteTypes.
ScalarType promoteTypes(ScalarType a, ScalarType b);

/// Whether a result of dtype `from` may be written into a tensor of dtype
/// `to`: never to a lower category (float to an integer, complex to a float,
/// anything but bool to bool). PyTorch: c10::canCast.
bool canCast(ScalarType from, ScalarType to);

/// The complex dtype with the value type of the floating dtype `t`
/// (float32 -> complex64); complex dtypes are returned as they are.
ScalarType toComplexType(ScalarType t);

/// The default dtypes of Python numbers (PyTorch's torch.get_default_dtype()
/// and its complex counterpart; opdispatch has no setter for them).
constexpr ScalarType kDefaultFloatType = ScalarType::Float;
constexpr ScalarType kDefaultComplexType = ScalarType::ComplexFloat;

// Note [Result type]
// An elementwise operation's dtype comes from its operands in three
// priority classes: tensors with dimensions, 0-d tensors, and Python numbers
// ("wrapped numbers": bool, int -> int64, float -> the default float dtype,
// complex -> the default complex dtype). Each class's dtypes are promoted
// among themselves (promoteTypes); then a lower class counts only if its
// category is higher than the higher class's (a float 0-d tensor makes an
// integer tensor's result float, a float64 0-d tensor leaves a float32
// tensor's result float32), and a complex lower class keeps a floating
// higher class's precision (float32 tensor with a complex128 0-d tensor:
// complex64). A bool higher class always promotes with the lower one.
// PyTorch: at::native::ResultTypeState and result_type(ResultTypeState).

/// The operands seen so far, by priority class (see Note [Result type]).
struct ResultTypeState {
  ScalarType dimResult = ScalarType::Undefined;     ///< promotion of the tensors with dimensions
  ScalarType zeroResult = ScalarType::Undefined;    ///< promotion of the 0-d tensors
  ScalarType wrappedResult = ScalarType::Undefined; ///< promotion of the Python numbers' dtypes

  /// Adds a tensor of dtype `t` with `dim` dimensions.
  void addTensor(ScalarType t, int64_t dim);
  /// Adds a Python number whose own dtype is `t` (Bool, Long, Double or
  /// ComplexDouble): floating and complex numbers count as the default dtypes.
  void addNumber(ScalarType t);
  /// The result dtype (Undefined when nothing was added).
  ScalarType result() const;
};

} // namespace opdispatch
