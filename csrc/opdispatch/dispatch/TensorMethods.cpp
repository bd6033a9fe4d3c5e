// The computing methods of Tensor, its arithmetic operators and ATen's
// factory functions (Functions.h): each a typed call of a built-in `od`
// operator through the dispatcher, found once.
#include <opdispatch/Functions.h>

#include <opdispatch/core/Exception.h>
#include <opdispatch/dispatch/Dispatcher.h>
#include <opdispatch/dispatch/TypedOperatorHandle.h>

namespace opdispatch {

namespace {
/// The built-in operator `od::name.overload` typed as `Sig`. Throws Error
/// saying what to do when the `od` library is not registered yet.
template <class Sig>
TypedOperatorHandle<Sig> builtin(const char* name, const char* overload) {
  auto handle = Dispatcher::singleton().findSchema(OperatorName(detail::str("od::", name), overload));
  OPDISPATCH_CHECK(handle.has_value(), "od::", name, overload[0] ? "." : "", overload,
                   " is not registered: the built-in operators behind opdispatch::Tensor's computing methods and "
                   "factories are registered by the Python package (import opdispatch before calling them)");
  return handle->typed<Sig>();
}

using Unary = Tensor(const Tensor&);
using Binary = Tensor(const Tensor&, const Tensor&);
using BinaryAlpha = Tensor(const Tensor&, const Tensor&, const Scalar&);
using WithScalar = Tensor(const Tensor&, const Scalar&);
using WithScalarAlpha = Tensor(const Tensor&, const Scalar&, const Scalar&);
using ReduceWithIndices = std::tuple<Tensor, Tensor>(const Tensor&, int64_t, bool);
using Scan = Tensor(const Tensor&, int64_t, std::optional<ScalarType>);
// In-place operators take and return the tensor they write by non-const
// reference, as ATen's kernels do (`Tensor& copy_(Tensor& self, ...)`): a typed
// handle fixes the operator's C++ signature, which every C++ kernel must share.
using InplaceUnary = Tensor&(Tensor&);
using InplaceBinary = Tensor&(Tensor&, const Tensor&);
using InplaceBinaryAlpha = Tensor&(Tensor&, const Tensor&, const Scalar&);
using InplaceWithScalar = Tensor&(Tensor&, const Scalar&);
using InplaceWithScalarAlpha = Tensor&(Tensor&, const Scalar&, const Scalar&);

/// Calls the in-place operator `op` on (a handle of) `self`, returns `self`.
template <class Op, class... Args>
const Tensor& inplace(const Op& op, const Tensor& self, const Args&... args) {
  Tensor target = self;
  op.call(target, args...);
  return self;
}

using Factory = Tensor(IntArrayRef, std::optional<ScalarType>, std::optional<int64_t>, std::optional<Device>,
                       std::optional<bool>);
using LikeFactory = Tensor(const Tensor&, std::optional<ScalarType>, std::optional<int64_t>, std::optional<Device>,
                           std::optional<bool>, std::optional<int64_t>);

std::optional<int64_t> layoutArg(const TensorOptions& options) {
  return options.layout_opt() ? std::optional<int64_t>(static_cast<int64_t>(*options.layout_opt())) : std::nullopt;
}

Tensor like(const char* name, const Tensor& self, const TensorOptions& options) {
  return builtin<LikeFactory>(name, "").call(self, options.dtype_opt(), layoutArg(options), options.device_opt(),
                                             std::nullopt, std::nullopt);
}
} // namespace

// --- methods ---------------------------------------------------------------------

Tensor Tensor::contiguous() const {
  static const auto op = builtin<Tensor(const Tensor&, int64_t)>("contiguous", "");
  return op.call(*this, static_cast<int64_t>(MemoryFormat::Contiguous));
}

Tensor Tensor::clone() const {
  static const auto op = builtin<Tensor(const Tensor&, std::optional<int64_t>)>("clone", "");
  return op.call(*this, std::nullopt);
}

Tensor Tensor::to(ScalarType dtype) const {
  static const auto op = builtin<Tensor(const Tensor&, ScalarType, bool, bool, std::optional<int64_t>)>("to", "dtype");
  return op.call(*this, dtype, false, false, std::nullopt);
}

Tensor Tensor::view(IntArrayRef size) const {
  static const auto op = builtin<Tensor(const Tensor&, IntArrayRef)>("view", "");
  return op.call(*this, size);
}

Tensor Tensor::reshape(IntArrayRef shape) const {
  static const auto op = builtin<Tensor(const Tensor&, IntArrayRef)>("reshape", "");
  return op.call(*this, shape);
}

Tensor Tensor::transpose(int64_t dim0, int64_t dim1) const {
  static const auto op = builtin<Tensor(const Tensor&, int64_t, int64_t)>("transpose", "int");
  return op.call(*this, dim0, dim1);
}

Tensor Tensor::permute(IntArrayRef dims) const {
  static const auto op = builtin<Tensor(const Tensor&, IntArrayRef)>("permute", "");
  return op.call(*this, dims);
}

Tensor Tensor::unsqueeze(int64_t dim) const {
  static const auto op = builtin<Tensor(const Tensor&, int64_t)>("unsqueeze", "");
  return op.call(*this, dim);
}

Tensor Tensor::squeeze() const {
  static const auto op = builtin<Unary>("squeeze", "");
  return op.call(*this);
}

Tensor Tensor::squeeze(int64_t dim) const {
  static const auto op = builtin<Tensor(const Tensor&, int64_t)>("squeeze", "dim");
  return op.call(*this, dim);
}

Tensor Tensor::select(int64_t dim, int64_t index) const {
  static const auto op = builtin<Tensor(const Tensor&, int64_t, int64_t)>("select", "int");
  return op.call(*this, dim, index);
}

Tensor Tensor::index_select(int64_t dim, const Tensor& index) const {
  static const auto op = builtin<Tensor(const Tensor&, int64_t, const Tensor&)>("index_select", "");
  return op.call(*this, dim, index);
}

Tensor Tensor::narrow(int64_t dim, int64_t start, int64_t length) const {
  OPDISPATCH_CHECK_INDEX(length >= 0, "narrow(): length must be non-negative, got ", length);
  static const auto op =
      builtin<Tensor(const Tensor&, int64_t, std::optional<int64_t>, std::optional<int64_t>, int64_t)>("slice",
                                                                                                       "Tensor");
  int64_t size = this->size(dim);
  int64_t begin = start < 0 ? start + size : start;
  OPDISPATCH_CHECK_INDEX(begin >= 0 && begin <= size - length, "start (", start, ") + length (", length,
                         ") exceeds dimension size (", size, ").");
  return op.call(*this, dim, begin, begin + length, 1);
}

Tensor Tensor::sum() const {
  static const auto op = builtin<Tensor(const Tensor&, std::optional<ScalarType>)>("sum", "");
  return op.call(*this, std::nullopt);
}

Tensor Tensor::sum(IntArrayRef dim, bool keepdim) const {
  static const auto op = builtin<Tensor(const Tensor&, std::optional<IntArrayRef>, bool, std::optional<ScalarType>)>(
      "sum", "dim_IntList");
  return op.call(*this, dim, keepdim, std::nullopt);
}

Tensor Tensor::neg() const {
  static const auto op = builtin<Unary>("neg", "");
  return op.call(*this);
}

Tensor Tensor::mm(const Tensor& mat2) const {
  static const auto op = builtin<Binary>("mm", "");
  return op.call(*this, mat2);
}

Tensor Tensor::add(const Tensor& other, const Scalar& alpha) const {
  static const auto op = builtin<BinaryAlpha>("add", "Tensor");
  return op.call(*this, other, alpha);
}

Tensor Tensor::sub(const Tensor& other, const Scalar& alpha) const {
  static const auto op = builtin<BinaryAlpha>("sub", "Tensor");
  return op.call(*this, other, alpha);
}

Tensor Tensor::mul(const Tensor& other) const {
  static const auto op = builtin<Binary>("mul", "Tensor");
  return op.call(*this, other);
}

Tensor Tensor::div(const Tensor& other) const {
  static const auto op = builtin<Binary>("div", "Tensor");
  return op.call(*this, other);
}

Tensor Tensor::div(const Tensor& other, std::optional<std::string_view> rounding_mode) const {
  static const auto op = builtin<Tensor(const Tensor&, const Tensor&, std::optional<std::string_view>)>("div",
                                                                                                        "Tensor_mode");
  return op.call(*this, other, rounding_mode);
}

Tensor Tensor::div(const Scalar& other, std::optional<std::string_view> rounding_mode) const {
  static const auto op = builtin<Tensor(const Tensor&, const Scalar&, std::optional<std::string_view>)>("div",
                                                                                                        "Scalar_mode");
  return op.call(*this, other, rounding_mode);
}

std::tuple<Tensor, Tensor> Tensor::max(int64_t dim, bool keepdim) const {
  static const auto op = builtin<ReduceWithIndices>("max", "dim");
  return op.call(*this, dim, keepdim);
}

std::tuple<Tensor, Tensor> Tensor::min(int64_t dim, bool keepdim) const {
  static const auto op = builtin<ReduceWithIndices>("min", "dim");
  return op.call(*this, dim, keepdim);
}

Tensor Tensor::argmax(std::optional<int64_t> dim, bool keepdim) const {
  static const auto op = builtin<Tensor(const Tensor&, std::optional<int64_t>, bool)>("argmax", "");
  return op.call(*this, dim, keepdim);
}

Tensor Tensor::cumsum(int64_t dim, std::optional<ScalarType> dtype) const {
  static const auto op = builtin<Scan>("cumsum", "");
  return op.call(*this, dim, dtype);
}

Tensor Tensor::cumprod(int64_t dim, std::optional<ScalarType> dtype) const {
  static const auto op = builtin<Scan>("cumprod", "");
  return op.call(*this, dim, dtype);
}

Tensor Tensor::pow(const Scalar& exponent) const {
  static const auto op = builtin<WithScalar>("pow", "Tensor_Scalar");
  return op.call(*this, exponent);
}

Tensor Tensor::pow(const Tensor& exponent) const {
  static const auto op = builtin<Binary>("pow", "Tensor_Tensor");
  return op.call(*this, exponent);
}

Tensor Tensor::ceil() const {
  static const auto op = builtin<Unary>("ceil", "");
  return op.call(*this);
}

Tensor Tensor::min(const Tensor& other) const {
  static const auto op = builtin<Binary>("min", "other");
  return op.call(*this, other);
}

Tensor Tensor::max(const Tensor& other) const {
  static const auto op = builtin<Binary>("max", "other");
  return op.call(*this, other);
}

const Tensor& Tensor::pow_(const Scalar& exponent) const {
  static const auto op = builtin<InplaceWithScalar>("pow_", "Scalar");
  return inplace(op, *this, exponent);
}

const Tensor& Tensor::pow_(const Tensor& exponent) const {
  static const auto op = builtin<InplaceBinary>("pow_", "Tensor");
  return inplace(op, *this, exponent);
}

const Tensor& Tensor::fill_(const Scalar& value) const {
  static const auto op = builtin<InplaceWithScalar>("fill_", "Scalar");
  return inplace(op, *this, value);
}

const Tensor& Tensor::zero_() const {
  static const auto op = builtin<InplaceUnary>("zero_", "");
  return inplace(op, *this);
}

const Tensor& Tensor::copy_(const Tensor& src, bool non_blocking) const {
  static const auto op = builtin<Tensor&(Tensor&, const Tensor&, bool)>("copy_", "");
  return inplace(op, *this, src, non_blocking);
}

const Tensor& Tensor::add_(const Tensor& other, const Scalar& alpha) const {
  static const auto op = builtin<InplaceBinaryAlpha>("add_", "Tensor");
  return inplace(op, *this, other, alpha);
}

const Tensor& Tensor::sub_(const Tensor& other, const Scalar& alpha) const {
  static const auto op = builtin<InplaceBinaryAlpha>("sub_", "Tensor");
  return inplace(op, *this, other, alpha);
}

const Tensor& Tensor::mul_(const Tensor& other) const {
  static const auto op = builtin<InplaceBinary>("mul_", "Tensor");
  return inplace(op, *this, other);
}

const Tensor& Tensor::div_(const Tensor& other) const {
  static const auto op = builtin<InplaceBinary>("div_", "Tensor");
  return inplace(op, *this, other);
}

const Tensor& Tensor::operator+=(const Scalar& other) const {
  static const auto op = builtin<InplaceWithScalarAlpha>("add_", "Scalar");
  return inplace(op, *this, other, Scalar(1));
}

const Tensor& Tensor::operator-=(const Scalar& other) const {
  static const auto op = builtin<InplaceWithScalarAlpha>("sub_", "Scalar");
  return inplace(op, *this, other, Scalar(1));
}

const Tensor& Tensor::operator*=(const Scalar& other) const {
  static const auto op = builtin<InplaceWithScalar>("mul_", "Scalar");
  return inplace(op, *this, other);
}

const Tensor& Tensor::operator/=(const Scalar& other) const {
  static const auto op = builtin<InplaceWithScalar>("div_", "Scalar");
  return inplace(op, *this, other);
}

// --- operators -------------------------------------------------------------------

Tensor operator+(const Tensor& a, const Tensor& b) { return a.add(b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return a.sub(b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return a.mul(b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return a.div(b); }
Tensor operator-(const Tensor& a) { return a.neg(); }

Tensor operator+(const Tensor& a, const Scalar& b) {
  static const auto op = builtin<WithScalarAlpha>("add", "Scalar");
  return op.call(a, b, 1);
}

Tensor operator-(const Tensor& a, const Scalar& b) {
  static const auto op = builtin<WithScalarAlpha>("sub", "Scalar");
  return op.call(a, b, 1);
}

Tensor operator*(const Tensor& a, const Scalar& b) {
  static const auto op = builtin<WithScalar>("mul", "Scalar");
  return op.call(a, b);
}

Tensor operator/(const Tensor& a, const Scalar& b) {
  static const auto op = builtin<WithScalar>("div", "Scalar");
  return op.call(a, b);
}

Tensor operator+(const Scalar& a, const Tensor& b) { return b + a; }
Tensor operator*(const Scalar& a, const Tensor& b) { return b * a; }

Tensor operator-(const Scalar& a, const Tensor& b) {
  static const auto op = builtin<WithScalarAlpha>("rsub", "Scalar");
  return op.call(b, a, 1);
}

// --- factories -------------------------------------------------------------------

Tensor empty(IntArrayRef size, TensorOptions options, std::optional<MemoryFormat> memory_format) {
  static const auto op = builtin<Tensor(IntArrayRef, std::optional<ScalarType>, std::optional<int64_t>,
                                        std::optional<Device>, std::optional<bool>, std::optional<int64_t>)>(
      "empty", "memory_format");
  auto format = memory_format ? std::optional<int64_t>(static_cast<int64_t>(*memory_format)) : std::nullopt;
  return op.call(size, options.dtype_opt(), layoutArg(options), options.device_opt(), std::nullopt, format);
}

Tensor zeros(IntArrayRef size, TensorOptions options) {
  static const auto op = builtin<Factory>("zeros", "");
  return op.call(size, options.dtype_opt(), layoutArg(options), options.device_opt(), std::nullopt);
}

Tensor ones(IntArrayRef size, TensorOptions options) {
  static const auto op = builtin<Factory>("ones", "");
  return op.call(size, options.dtype_opt(), layoutArg(options), options.device_opt(), std::nullopt);
}

Tensor rand(IntArrayRef size, TensorOptions options) {
  static const auto op = builtin<Factory>("rand", "");
  return op.call(size, options.dtype_opt(), layoutArg(options), options.device_opt(), std::nullopt);
}

Tensor full(IntArrayRef size, const Scalar& fill_value, TensorOptions options) {
  static const auto op = builtin<Tensor(IntArrayRef, const Scalar&, std::optional<ScalarType>, std::optional<int64_t>,
                                        std::optional<Device>, std::optional<bool>)>("full", "");
  return op.call(size, fill_value, options.dtype_opt(), layoutArg(options), options.device_opt(), std::nullopt);
}

Tensor empty_like(const Tensor& self, TensorOptions options) { return like("empty_like", self, options); }
Tensor zeros_like(const Tensor& self, TensorOptions options) { return like("zeros_like", self, options); }
Tensor ones_like(const Tensor& self, TensorOptions options) { return like("ones_like", self, options); }

Tensor randperm(int64_t n, TensorOptions options) {
  static const auto op = builtin<Tensor(int64_t, std::optional<ScalarType>, std::optional<int64_t>,
                                        std::optional<Device>, std::optional<bool>)>("randperm", "");
  return op.call(n, options.dtype_opt(), layoutArg(options), options.device_opt(), std::nullopt);
}

Tensor cat(TensorList tensors, int64_t dim) {
  static const auto op = builtin<Tensor(TensorList, int64_t)>("cat", "");
  return op.call(tensors, dim);
}

Tensor arange(const Scalar& end, TensorOptions options) {
  static const auto op = builtin<Tensor(const Scalar&, std::optional<ScalarType>, std::optional<int64_t>,
                                        std::optional<Device>, std::optional<bool>)>("arange", "");
  return op.call(end, options.dtype_opt(), layoutArg(options), options.device_opt(), std::nullopt);
}

} // namespace opdispatch
