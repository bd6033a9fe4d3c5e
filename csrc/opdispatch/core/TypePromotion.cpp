// Type promotion as PyTorch does it (see TypePromotion.h).
#include <opdispatch/core/TypePromotion.h>

namespace opdispatch {

namespace {

/// Row/column of each dtype in kPromotion (-1: none).
int promotionIndex(ScalarType t) {
  switch (t) {
    case ScalarType::Byte:
      return 0;
    case ScalarType::Char:
      return 1;
    case ScalarType::Short:
      return 2;
    case ScalarType::Int:
      return 3;
    case ScalarType::Long:
      return 4;
    case ScalarType::Half:
      return 5;
    case ScalarType::Float:
      return 6;
    case ScalarType::Double:
      return 7;
    case ScalarType::ComplexFloat:
      return 8;
    case ScalarType::ComplexDouble:
      return 9;
    case ScalarType::Bool:
      return 10;
    default:
      return -1;
  }
}

constexpr ScalarType u1 = ScalarType::Byte;
constexpr ScalarType i1 = ScalarType::Char;
constexpr ScalarType i2 = ScalarType::Short;
constexpr ScalarType i4 = ScalarType::Int;
constexpr ScalarType i8 = ScalarType::Long;
constexpr ScalarType f2 = ScalarType::Half;
constexpr ScalarType f4 = ScalarType::Float;
constexpr ScalarType f8 = ScalarType::Double;
constexpr ScalarType c4 = ScalarType::ComplexFloat;
constexpr ScalarType c8 = ScalarType::ComplexDouble;
constexpr ScalarType b1 = ScalarType::Bool;

/// promoteTypes for every pair, in promotionIndex order (symmetric). Recorded
/// from torch.promote_types of PyTorch 2.13 (tests/cpp/test_TypePromotion.cpp
/// checks the rules it follows).
// clang-format off
constexpr ScalarType kPromotion[11][11] = {
    /*        u1  i1  i2  i4  i8  f2  f4  f8  c4  c8  b1 */
    /* u1 */ {u1, i2, i2, i4, i8, f2, f4, f8, c4, c8, u1},
    /* i1 */ {i2, i1, i2, i4, i8, f2, f4, f8, c4, c8, i1},
    /* i2 */ {i2, i2, i2, i4, i8, f2, f4, f8, c4, c8, i2},
    /* i4 */ {i4, i4, i4, i4, i8, f2, f4, f8, c4, c8, i4},
    /* i8 */ {i8, i8, i8, i8, i8, f2, f4, f8, c4, c8, i8},
    /* f2 */ {f2, f2, f2, f2, f2, f2, f4, f8, c4, c8, f2},
    /* f4 */ {f4, f4, f4, f4, f4, f4, f4, f8, c4, c8, f4},
    /* f8 */ {f8, f8, f8, f8, f8, f8, f8, f8, c8, c8, f8},
    /* c4 */ {c4, c4, c4, c4, c4, c4, c4, c8, c4, c8, c4},
    /* c8 */ {c8, c8, c8, c8, c8, c8, c8, c8, c8, c8, c8},
    /* b1 */ {u1, i1, i2, i4, i8, f2, f4, f8, c4, c8, b1},
};
// clang-format on

/// promoteTypes where Undefined stands for "no operand yet".
ScalarType promoteSkipUndefined(ScalarType a, ScalarType b) {
  if (a == ScalarType::Undefined) {
    return b;
  }
  if (b == ScalarType::Undefined) {
    return a;
  }
  return promoteTypes(a, b);
}

/// The result of a higher priority class and a lower one (Note [Result type]).
/// PyTorch: combine_categories in TypeProperties.cpp.
ScalarType combineCategories(ScalarType higher, ScalarType lower) {
  if (isComplexType(higher)) {
    return higher;
  }
  if (isComplexType(lower)) {
    return isFloatingType(higher) ? toComplexType(higher) : lower;
  }
  if (isFloatingType(higher)) {
    return higher;
  }
  if (higher == ScalarType::Bool || isFloatingType(lower)) {
    return promoteSkipUndefined(higher, lower);
  }
  return higher != ScalarType::Undefined ? higher : lower;
}

} // namespace

TypeCategory typeCategory(ScalarType t) {
  if (isComplexType(t)) {
    return TypeCategory::Complex;
  }
  if (isFloatingType(t)) {
    return TypeCategory::Floating;
  }
  return t == ScalarType::Bool ? TypeCategory::Bool : TypeCategory::Integral;
}

ScalarType promoteTypes(ScalarType a, ScalarType b) {
  int i = promotionIndex(a), j = promotionIndex(b);
  if (i < 0 || j < 0) {
    return ScalarType::Undefined;
  }
  return kPromotion[i][j];
}

bool canCast(ScalarType from, ScalarType to) {
  if (to == ScalarType::Bool) {
    return from == ScalarType::Bool;
  }
  return typeCategory(from) <= typeCategory(to);
}

ScalarType toComplexType(ScalarType t) {
  switch (t) {
    case ScalarType::Half: // PyTorch gives ComplexHalf, a dtype opdispatch does not have
    case ScalarType::Float:
      return ScalarType::ComplexFloat;
    case ScalarType::Double:
      return ScalarType::ComplexDouble;
    default:
      return t;
  }
}

void ResultTypeState::addTensor(ScalarType t, int64_t dim) {
  ScalarType& slot = dim > 0 ? dimResult : zeroResult;
  slot = promoteSkipUndefined(slot, t);
}

void ResultTypeState::addNumber(ScalarType t) {
  if (isComplexType(t)) {
    t = kDefaultComplexType;
  } else if (isFloatingType(t)) {
    t = kDefaultFloatType;
  }
  wrappedResult = promoteSkipUndefined(wrappedResult, t);
}

ScalarType ResultTypeState::result() const {
  return combineCategories(dimResult, combineCategories(zeroResult, wrappedResult));
}

} // namespace opdispatch
