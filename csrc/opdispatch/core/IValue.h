// IValue: the boxed value of one argument or result — a tagged union of
// None, Tensor, int, float, bool, str, ScalarType, Device, lists, tuples and
// opaque Python objects. Boxed kernels read and write IValues on a Stack.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <opdispatch/core/ArrayRef.h>
#include <opdispatch/core/Device.h>
#include <opdispatch/core/Exception.h>
#include <opdispatch/core/PyInterpreter.h>
#include <opdispatch/core/Scalar.h>
#include <opdispatch/core/ScalarType.h>
#include <opdispatch/core/Tensor.h>
#include <opdispatch/core/intrusive_ptr.h>

namespace opdispatch {

class IValue;

/// Heap payload of an IValue list, tuple or string.
template <class T>
struct ListImpl final : intrusive_ptr_target {
  explicit ListImpl(std::vector<T> e) : elems(std::move(e)) {}
  std::vector<T> elems;
};
struct StringImpl final : intrusive_ptr_target {
  explicit StringImpl(std::string s) : str(std::move(s)) {}
  std::string str;
};
struct PyObjectHolder final : intrusive_ptr_target {
  explicit PyObjectHolder(OwnedPyObject o) : obj(std::move(o)) {}
  OwnedPyObject obj;
};

class IValue final {
 public:
  // Tags from Tensor on hold a reference to an intrusive_ptr_target (a
  // TensorImpl or a heap payload) in the payload word; tags before it are
  // plain values. See Note [IValue payload].
  enum class Tag : uint8_t {
    None,
    Int,
    Double,
    Bool,
    ScalarType,
    Device,
    Tensor,
    String,
    IntList,
    DoubleList,
    BoolList,
    TensorList,
    OptionalTensorList,
    GenericList,
    Tuple,
    PyObject,
  };

  IValue() : tag_(Tag::None) {}
  IValue(std::nullopt_t) : IValue() {}
  IValue(const IValue& o) : tag_(o.tag_) { copyPayload(o); }
  IValue(IValue&& o) noexcept : tag_(o.tag_) { movePayload(std::move(o)); }
  IValue& operator=(const IValue& o) {
    IValue copy(o);
    return *this = std::move(copy);
  }
  IValue& operator=(IValue&& o) noexcept {
    if (this != &o) {
      destroy();
      tag_ = o.tag_;
      movePayload(std::move(o));
    }
    return *this;
  }
  ~IValue() { destroy(); }

  // --- construction ---------------------------------------------------------
  IValue(const Tensor& t) : tag_(Tag::Tensor) { new (&p_.as_tensor) Tensor(t); }
  IValue(Tensor&& t) : tag_(Tag::Tensor) { new (&p_.as_tensor) Tensor(std::move(t)); }
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  IValue(T v) : tag_(Tag::Int) {
    p_.as_int = static_cast<int64_t>(v);
  }
  IValue(double v) : tag_(Tag::Double) { p_.as_double = v; }
  IValue(bool v) : tag_(Tag::Bool) { p_.as_bool = v; }
  IValue(std::string s) : IValue(Tag::String, new StringImpl(std::move(s))) {}
  IValue(const char* s) : IValue(std::string(s)) {}
  IValue(std::string_view s) : IValue(std::string(s)) {}
  IValue(ScalarType t) : tag_(Tag::ScalarType) { p_.as_scalar_type = t; }
  IValue(Device d) : tag_(Tag::Device) { p_.as_device = d; }
  IValue(const Scalar& s);
  IValue(std::vector<int64_t> v) : IValue(Tag::IntList, new ListImpl<int64_t>(std::move(v))) {}
  IValue(IntArrayRef v) : IValue(v.vec()) {}
  IValue(std::vector<double> v) : IValue(Tag::DoubleList, new ListImpl<double>(std::move(v))) {}
  IValue(ArrayRef<double> v) : IValue(v.vec()) {}
  IValue(std::vector<bool> v) : IValue(Tag::BoolList, new ListImpl<bool>(std::move(v))) {}
  IValue(std::vector<Tensor> v) : IValue(Tag::TensorList, new ListImpl<Tensor>(std::move(v))) {}
  IValue(ArrayRef<Tensor> v) : IValue(v.vec()) {}
  IValue(std::vector<std::optional<Tensor>> v)
      : IValue(Tag::OptionalTensorList, new ListImpl<std::optional<Tensor>>(std::move(v))) {}
  IValue(const std::vector<std::string>& v);
  template <class T>
  IValue(std::optional<T> v) : IValue() {
    if (v.has_value()) {
      *this = IValue(std::move(*v));
    }
  }
  /// Holds a strong reference to a Python object.
  explicit IValue(OwnedPyObject o) : IValue(Tag::PyObject, new PyObjectHolder(std::move(o))) {}
  /// A list of arbitrary values (schema types like `str[]`, `Scalar[]`, `int[][]`).
  static IValue genericList(std::vector<IValue> v) {
    return IValue(Tag::GenericList, new ListImpl<IValue>(std::move(v)));
  }
  /// A tuple (multiple returns packed as one value).
  static IValue tuple(std::vector<IValue> v) { return IValue(Tag::Tuple, new ListImpl<IValue>(std::move(v))); }

  // --- inspection -----------------------------------------------------------
  Tag tag() const { return tag_; }
  /// The tag's name for error messages: "Tensor", "int", "float", ...
  const char* tagKind() const;
  bool isNone() const { return tag_ == Tag::None; }
  bool isTensor() const { return tag_ == Tag::Tensor; }
  bool isInt() const { return tag_ == Tag::Int; }
  bool isDouble() const { return tag_ == Tag::Double; }
  bool isBool() const { return tag_ == Tag::Bool; }
  bool isString() const { return tag_ == Tag::String; }
  bool isScalarType() const { return tag_ == Tag::ScalarType; }
  bool isDevice() const { return tag_ == Tag::Device; }
  bool isScalar() const { return isInt() || isDouble() || isBool(); }
  bool isIntList() const { return tag_ == Tag::IntList; }
  bool isDoubleList() const { return tag_ == Tag::DoubleList; }
  bool isBoolList() const { return tag_ == Tag::BoolList; }
  bool isTensorList() const { return tag_ == Tag::TensorList; }
  bool isOptionalTensorList() const { return tag_ == Tag::OptionalTensorList; }
  bool isGenericList() const { return tag_ == Tag::GenericList; }
  bool isList() const { return tag_ >= Tag::IntList && tag_ <= Tag::GenericList; }
  bool isTuple() const { return tag_ == Tag::Tuple; }
  bool isPyObject() const { return tag_ == Tag::PyObject; }

  // --- access (each throws TypeError naming both kinds on a tag mismatch) ---
  const Tensor& toTensor() const& {
    expect(Tag::Tensor);
    return p_.as_tensor;
  }
  Tensor toTensor() && {
    expect(Tag::Tensor);
    return std::move(p_.as_tensor);
  }
  /// The TensorImpl of a Tensor IValue, no checks, no refcount change.
  TensorImpl* unsafeToTensorImpl() const { return p_.as_tensor.unsafeGetTensorImpl(); }
  // Unchecked reads, for a caller that checked the tag (a boxed kernel
  // checks each argument's tag once and names the argument on a mismatch).
  const Tensor& unsafeToTensorRef() const { return p_.as_tensor; }
  Tensor& unsafeToTensorRef() { return p_.as_tensor; }
  int64_t unsafeToInt() const { return p_.as_int; }
  /// For a Double or an Int (converted).
  double unsafeToDouble() const { return tag_ == Tag::Int ? static_cast<double>(p_.as_int) : p_.as_double; }
  bool unsafeToBool() const { return p_.as_bool; }
  int64_t toInt() const {
    expect(Tag::Int);
    return p_.as_int;
  }
  /// A float; an int converts.
  double toDouble() const {
    if (tag_ == Tag::Int) {
      return static_cast<double>(p_.as_int);
    }
    expect(Tag::Double);
    return p_.as_double;
  }
  bool toBool() const {
    expect(Tag::Bool);
    return p_.as_bool;
  }
  const std::string& toStringRef() const {
    expect(Tag::String);
    return static_cast<StringImpl*>(p_.as_ptr)->str;
  }
  /// A ScalarType; an int holding a valid ScalarType number converts
  /// (schemas write dtype defaults as ints).
  ScalarType toScalarType() const;
  Device toDevice() const {
    expect(Tag::Device);
    return p_.as_device;
  }
  Scalar toScalar() const;
  const std::vector<int64_t>& toIntList() const { return list<int64_t>(Tag::IntList); }
  const std::vector<double>& toDoubleList() const { return list<double>(Tag::DoubleList); }
  const std::vector<bool>& toBoolList() const { return list<bool>(Tag::BoolList); }
  const std::vector<Tensor>& toTensorList() const { return list<Tensor>(Tag::TensorList); }
  const std::vector<std::optional<Tensor>>& toOptionalTensorList() const {
    return list<std::optional<Tensor>>(Tag::OptionalTensorList);
  }
  const std::vector<IValue>& toGenericList() const;
  const std::vector<IValue>& toTuple() const;
  /// The borrowed `PyObject*` of a PyObject IValue.
  void* toPyObject() const {
    expect(Tag::PyObject);
    return static_cast<PyObjectHolder*>(p_.as_ptr)->obj.get();
  }
  /// The elements of any list as IValues (copies for typed lists).
  std::vector<IValue> toListOfIValues() const;
  /// Number of elements of any list or tuple.
  size_t listSize() const;

  /// Structural equality: tensors by identity, numbers by value, lists elementwise.
  bool equals(const IValue& o) const;

 private:
  IValue(Tag t, intrusive_ptr_target* owned) : tag_(t) {
    p_.as_ptr = intrusive_ptr<intrusive_ptr_target>(owned).release();
  }
  bool holdsReference() const { return tag_ >= Tag::Tensor; }
  void expect(Tag t) const {
    if (OPDISPATCH_UNLIKELY(tag_ != t)) {
      reportTagMismatch(t);
    }
  }
  [[noreturn]] void reportTagMismatch(Tag expected) const;
  template <class T>
  const std::vector<T>& list(Tag t) const {
    expect(t);
    return static_cast<ListImpl<T>*>(p_.as_ptr)->elems;
  }
  // Note [IValue payload]
  // Every reference-holding tag keeps an intrusive_ptr_target* in the payload
  // word (for Tensor, the Tensor's TensorImpl*, which is the same address:
  // TensorImpl's only base is intrusive_ptr_target). So copying, moving and
  // destroying treat them alike, inline: a word copy plus one count update.
  void copyPayload(const IValue& o) {
    p_.as_ptr = o.p_.as_ptr;
    if (o.holdsReference() && p_.as_ptr != nullptr) {
      intrusive_ptr<intrusive_ptr_target>(p_.as_ptr).release();
    }
  }
  void movePayload(IValue&& o) noexcept {
    p_.as_ptr = o.p_.as_ptr;
    o.tag_ = Tag::None;
  }
  void destroy() noexcept {
    if (holdsReference()) {
      intrusive_ptr<intrusive_ptr_target>::reclaim(p_.as_ptr);
    }
    tag_ = Tag::None;
  }

  union Payload {
    Payload() : as_int(0) {}
    ~Payload() {}
    int64_t as_int;
    double as_double;
    bool as_bool;
    ScalarType as_scalar_type;
    Device as_device;
    intrusive_ptr_target* as_ptr;
    Tensor as_tensor;
  } p_;
  Tag tag_;
};
static_assert(sizeof(IValue) == 16, "an IValue is one payload word and a tag");

const char* toString(IValue::Tag tag);
/// Prints as PyTorch prints defaults in schemas: None, True, 1, 1., 0.10000000000000001, "str", [1, 2].
std::ostream& operator<<(std::ostream& os, const IValue& v);
/// Prints `s` double-quoted with C escapes, as PyTorch's printQuotedString.
void printQuotedString(std::ostream& os, const std::string& s);

} // namespace opdispatch
