// IValue copying, conversion and printing.
#include <opdispatch/core/IValue.h>

#include <cmath>
#include <cstring>
#include <iomanip>
#include <limits>

namespace opdispatch {

IValue::IValue(const Scalar& s) : IValue() {
  switch (s.tag()) {
    case Scalar::Tag::Int:
      *this = IValue(s.toLong());
      break;
    case Scalar::Tag::Double:
      *this = IValue(s.toDouble());
      break;
    case Scalar::Tag::Bool:
      *this = IValue(s.toBool());
      break;
  }
}

IValue::IValue(const std::vector<std::string>& v) : IValue() {
  std::vector<IValue> elems(v.begin(), v.end());
  *this = genericList(std::move(elems));
}

const char* toString(IValue::Tag tag) {
  switch (tag) {
    case IValue::Tag::None:
      return "None";
    case IValue::Tag::Tensor:
      return "Tensor";
    case IValue::Tag::Int:
      return "int";
    case IValue::Tag::Double:
      return "float";
    case IValue::Tag::Bool:
      return "bool";
    case IValue::Tag::String:
      return "str";
    case IValue::Tag::ScalarType:
      return "ScalarType";
    case IValue::Tag::Device:
      return "Device";
    case IValue::Tag::IntList:
      return "int[]";
    case IValue::Tag::DoubleList:
      return "float[]";
    case IValue::Tag::BoolList:
      return "bool[]";
    case IValue::Tag::TensorList:
      return "Tensor[]";
    case IValue::Tag::OptionalTensorList:
      return "Tensor?[]";
    case IValue::Tag::GenericList:
      return "list";
    case IValue::Tag::Tuple:
      return "tuple";
    case IValue::Tag::PyObject:
      return "object";
  }
  return "unknown";
}

const char* IValue::tagKind() const { return toString(tag_); }

void IValue::reportTagMismatch(Tag expected) const {
  throw TypeError(detail::str("expected a value of type ", toString(expected), " but got ", tagKind()));
}

ScalarType IValue::toScalarType() const {
  if (tag_ == Tag::Int) {
    OPDISPATCH_CHECK_VALUE(isValidScalarType(p_.as_int), "the integer ", p_.as_int,
                           " is not the number of a ScalarType");
    return static_cast<ScalarType>(p_.as_int);
  }
  expect(Tag::ScalarType);
  return p_.as_scalar_type;
}

Scalar IValue::toScalar() const {
  switch (tag_) {
    case Tag::Int:
      return Scalar(p_.as_int);
    case Tag::Double:
      return Scalar(p_.as_double);
    case Tag::Bool:
      return Scalar(p_.as_bool);
    default:
      throw TypeError(detail::str("expected a Scalar (int, float or bool) but got ", tagKind()));
  }
}

const std::vector<IValue>& IValue::toGenericList() const { return list<IValue>(Tag::GenericList); }
const std::vector<IValue>& IValue::toTuple() const { return list<IValue>(Tag::Tuple); }

std::vector<IValue> IValue::toListOfIValues() const {
  switch (tag_) {
    case Tag::IntList:
      return std::vector<IValue>(toIntList().begin(), toIntList().end());
    case Tag::DoubleList:
      return std::vector<IValue>(toDoubleList().begin(), toDoubleList().end());
    case Tag::BoolList: {
      std::vector<IValue> out;
      for (bool b : toBoolList()) {
        out.emplace_back(b);
      }
      return out;
    }
    case Tag::TensorList:
      return std::vector<IValue>(toTensorList().begin(), toTensorList().end());
    case Tag::OptionalTensorList:
      return std::vector<IValue>(toOptionalTensorList().begin(), toOptionalTensorList().end());
    case Tag::GenericList:
    case Tag::Tuple:
      return static_cast<ListImpl<IValue>*>(p_.as_ptr)->elems;
    default:
      throw TypeError(detail::str("expected a list but got ", tagKind()));
  }
}

size_t IValue::listSize() const {
  switch (tag_) {
    case Tag::IntList:
      return toIntList().size();
    case Tag::DoubleList:
      return toDoubleList().size();
    case Tag::BoolList:
      return toBoolList().size();
    case Tag::TensorList:
      return toTensorList().size();
    case Tag::OptionalTensorList:
      return toOptionalTensorList().size();
    case Tag::GenericList:
    case Tag::Tuple:
      return static_cast<ListImpl<IValue>*>(p_.as_ptr)->elems.size();
    default:
      throw TypeError(detail::str("expected a list but got ", tagKind()));
  }
}

bool IValue::equals(const IValue& o) const {
  if (isList() && o.isList()) {
    if (listSize() != o.listSize()) {
      return false;
    }
    auto a = toListOfIValues();
    auto b = o.toListOfIValues();
    for (size_t i = 0; i < a.size(); ++i) {
      if (!a[i].equals(b[i])) {
        return false;
      }
    }
    return true;
  }
  if (tag_ != o.tag_) {
    return false;
  }
  switch (tag_) {
    case Tag::None:
      return true;
    case Tag::Tensor:
      return p_.as_tensor.is_same(o.p_.as_tensor);
    case Tag::Int:
      return p_.as_int == o.p_.as_int;
    case Tag::Double:
      return p_.as_double == o.p_.as_double || (std::isnan(p_.as_double) && std::isnan(o.p_.as_double));
    case Tag::Bool:
      return p_.as_bool == o.p_.as_bool;
    case Tag::String:
      return toStringRef() == o.toStringRef();
    case Tag::ScalarType:
      return p_.as_scalar_type == o.p_.as_scalar_type;
    case Tag::Device:
      return p_.as_device == o.p_.as_device;
    case Tag::Tuple: {
      const auto& a = toTuple();
      const auto& b = o.toTuple();
      if (a.size() != b.size()) {
        return false;
      }
      for (size_t i = 0; i < a.size(); ++i) {
        if (!a[i].equals(b[i])) {
          return false;
        }
      }
      return true;
    }
    case Tag::PyObject:
      return toPyObject() == o.toPyObject();
    default:
      return false;
  }
}

void printQuotedString(std::ostream& os, const std::string& s) {
  os << '"';
  for (unsigned char c : s) {
    switch (c) {
      case '\\':
        os << "\\\\";
        break;
      case '\'':
        os << "\\'";
        break;
      case '"':
        os << "\\\"";
        break;
      case '\a':
        os << "\\a";
        break;
      case '\b':
        os << "\\b";
        break;
      case '\f':
        os << "\\f";
        break;
      case '\n':
        os << "\\n";
        break;
      case '\r':
        os << "\\r";
        break;
      case '\t':
        os << "\\t";
        break;
      case '\v':
        os << "\\v";
        break;
      default:
        if (c >= 0x20 && c < 0x7f) {
          os << c;
        } else {
          char buf[5];
          std::snprintf(buf, sizeof(buf), "\\%03o", static_cast<unsigned>(c));
          os << buf;
        }
    }
  }
  os << '"';
}

// PyTorch's IValue printing of doubles: integral values with a trailing dot
// ("1.", "-0."), others with max_digits10 significant digits.
static void printDouble(std::ostream& os, double d) {
  int c = std::fpclassify(d);
  if ((c == FP_NORMAL || c == FP_ZERO) && std::abs(d) < 1e10) {
    auto i = static_cast<int64_t>(d);
    if (static_cast<double>(i) == d) {
      if (i == 0 && std::signbit(d)) {
        os << "-";
      }
      os << i << ".";
      return;
    }
  }
  auto old = os.precision();
  os << std::setprecision(std::numeric_limits<double>::max_digits10) << d << std::setprecision(old);
}

std::ostream& operator<<(std::ostream& os, const IValue& v) {
  auto printList = [&](const std::vector<IValue>& elems, const char* open, const char* close) {
    os << open;
    for (size_t i = 0; i < elems.size(); ++i) {
      os << (i ? ", " : "") << elems[i];
    }
    if (elems.size() == 1 && std::string(open) == "(") {
      os << ",";
    }
    os << close;
  };
  switch (v.tag()) {
    case IValue::Tag::None:
      return os << "None";
    case IValue::Tag::Tensor:
      return os << v.toTensor();
    case IValue::Tag::Int:
      return os << v.toInt();
    case IValue::Tag::Double:
      printDouble(os, v.toDouble());
      return os;
    case IValue::Tag::Bool:
      return os << (v.toBool() ? "True" : "False");
    case IValue::Tag::String:
      printQuotedString(os, v.toStringRef());
      return os;
    case IValue::Tag::ScalarType:
      return os << v.toScalarType();
    case IValue::Tag::Device:
      return os << v.toDevice();
    case IValue::Tag::Tuple:
      printList(v.toTuple(), "(", ")");
      return os;
    case IValue::Tag::PyObject:
      return os << "<Python object>";
    default:
      printList(v.toListOfIValues(), "[", "]");
      return os;
  }
}

} // namespace opdispatch
