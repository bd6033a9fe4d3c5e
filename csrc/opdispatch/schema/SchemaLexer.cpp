// The schema lexer (see SchemaLexer.h).
#include <opdispatch/schema/SchemaLexer.h>

#include <algorithm>
#include <array>
#include <string_view>

namespace opdispatch::detail {

namespace {
/// Character classes, one bit each, looked up by byte (the lexer's inner loops).
enum CharClass : uint8_t { kIdentStart = 1, kDigit = 2, kSpace = 4, kPunct = 8 };
constexpr auto kCharClasses = [] {
  std::array<uint8_t, 256> classes{};
  for (int c = 0; c < 256; ++c) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') {
      classes[c] = kIdentStart;
    } else if (c >= '0' && c <= '9') {
      classes[c] = kDigit;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      classes[c] = kSpace;
    } else if (std::string_view("()[],*?!|=.-").find(static_cast<char>(c)) != std::string_view::npos) {
      classes[c] = kPunct;
    }
  }
  return classes;
}();
bool is(char c, uint8_t classes) { return (kCharClasses[static_cast<unsigned char>(c)] & classes) != 0; }
bool isIdentStart(char c) { return is(c, kIdentStart); }
bool isDigit(char c) { return is(c, kDigit); }
bool isIdentChar(char c) { return is(c, kIdentStart | kDigit); }
bool isSpace(char c) { return is(c, kSpace); }

} // namespace

std::string printable(std::string_view text) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (char ch : text) {
    auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f) {
      out += ch;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  return out;
}

namespace {

// PyTorch's escapes (parseStringLiteral) plus \r: everything
// printQuotedString writes. Returns '\0' for none of them.
char simpleEscape(char c) {
  switch (c) {
    case '\\':
    case '\'':
    case '"':
      return c;
    case 'a':
      return '\a';
    case 'b':
      return '\b';
    case 'f':
      return '\f';
    case 'n':
      return '\n';
    case 'r':
      return '\r';
    case 't':
      return '\t';
    case 'v':
      return '\v';
    default:
      return '\0';
  }
}

/// Why a string literal is malformed, and the bytes to blame.
struct LiteralError {
  size_t pos = 0;
  size_t len = 0;
  std::string reason;
};

/// Reads the string literal that starts (with its quote) at `src[start]`,
/// appending its value to `*value` if given. Returns the offset after the
/// closing quote, or npos for a malformed literal, described in `*err`.
size_t scanStringLiteral(std::string_view src, size_t start, std::string* value, LiteralError* err) {
  auto at = [&](size_t k) { return k < src.size() ? src[k] : '\0'; };
  const char quote = src[start];
  size_t i = start + 1;
  while (true) {
    if (i >= src.size() || (src[i] == '\\' && i + 1 >= src.size())) {
      *err = {start, src.size() - start, "unterminated string literal"};
      return std::string_view::npos;
    }
    char c = src[i];
    if (c == quote) {
      return i + 1;
    }
    if (c != '\\') {
      if (value) {
        *value += c;
      }
      ++i;
      continue;
    }
    if (char simple = simpleEscape(src[i + 1])) {
      if (value) {
        *value += simple;
      }
      i += 2;
      continue;
    }
    int code = 0;
    bool octal = true;
    for (size_t k = 1; k <= 3; ++k) {
      char d = at(i + k);
      octal = octal && d >= '0' && d <= '7';
      code = code * 8 + (d - '0');
    }
    if (!octal || code > 0xff) {
      size_t len = std::min<size_t>(octal ? 4 : 2, src.size() - i);
      *err = {i, len, "invalid escape sequence '" + printable(src.substr(i, len)) + "' in a string literal"};
      return std::string_view::npos;
    }
    if (value) {
      *value += static_cast<char>(code);
    }
    i += 4;
  }
}

} // namespace

Token SchemaLexer::fail(size_t start, size_t len, std::string reason) {
  error_ = std::move(reason);
  i_ = src_.size(); // every later token is End
  return {TokenKind::Error, start, src_.substr(start, len)};
}

Token SchemaLexer::next() {
  while (i_ < src_.size() && isSpace(src_[i_])) {
    ++i_;
  }
  const size_t start = i_;
  if (i_ == src_.size()) {
    return {TokenKind::End, start, {}};
  }
  char c = src_[i_];
  if (isIdentStart(c)) {
    while (++i_ < src_.size() && isIdentChar(src_[i_])) {
    }
    return make(TokenKind::Ident, start);
  }
  if (isDigit(c) || (c == '.' && isDigit(at(i_ + 1)))) {
    return number(start); // PyTorch reads `.5` as a number too
  }
  if (c == '"' || c == '\'') {
    return string(start);
  }
  if (c == '.' && at(i_ + 1) == '.' && at(i_ + 2) == '.') {
    i_ += 3;
    return make(TokenKind::Ellipsis, start);
  }
  if (c == '$' && isDigit(at(i_ + 1))) {
    ++i_;
    while (isDigit(at(i_))) {
      ++i_;
    }
    return make(TokenKind::FreshAlias, start);
  }
  if (c == '-' && at(i_ + 1) == '>') {
    i_ += 2;
    return make(TokenKind::Arrow, start);
  }
  if (c == ':' && at(i_ + 1) == ':') {
    i_ += 2;
    return make(TokenKind::ColonColon, start);
  }
  if (is(c, kPunct)) {
    ++i_;
    return make(TokenKind::Punct, start);
  }
  return fail(start, 1, "unexpected character '" + printable(std::string_view(&c, 1)) + "'");
}

Token SchemaLexer::number(size_t start) {
  auto digits = [&] {
    while (isDigit(at(i_))) {
      ++i_;
    }
  };
  digits();
  if (at(i_) == '.') {
    ++i_;
    digits();
  }
  char e = at(i_);
  char sign = at(i_ + 1);
  if ((e == 'e' || e == 'E') && (isDigit(sign) || ((sign == '+' || sign == '-') && isDigit(at(i_ + 2))))) {
    i_ += isDigit(sign) ? 1 : 2;
    digits();
  }
  if (at(i_) == 'j') {
    ++i_; // an imaginary literal; see parseNumber
  }
  return make(TokenKind::Number, start);
}

Token SchemaLexer::string(size_t start) {
  LiteralError err;
  size_t end = scanStringLiteral(src_, start, nullptr, &err);
  if (end == std::string_view::npos) {
    return fail(err.pos, err.len, std::move(err.reason));
  }
  i_ = end;
  return make(TokenKind::String, start);
}

std::string decodeStringLiteral(std::string_view literal) {
  std::string value;
  LiteralError err;
  scanStringLiteral(literal, 0, &value, &err); // (lexed: well-formed)
  return value;
}

size_t firstInvalidUtf8(const std::string& s) {
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    if (len == 0 || i + len > s.size()) {
      return i;
    }
    uint32_t cp = len == 1 ? c : c & (0x7f >> len);
    for (size_t k = 1; k < len; ++k) {
      auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xc0) != 0x80) {
        return i;
      }
      cp = (cp << 6) | (cc & 0x3f);
    }
    static constexpr uint32_t kMinForLength[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMinForLength[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
      return i;
    }
    i += len;
  }
  return std::string::npos;
}

} // namespace opdispatch::detail
