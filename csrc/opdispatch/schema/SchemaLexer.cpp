// The schema lexer (see SchemaLexer.h).
#include <opdispatch/schema/SchemaLexer.h>

#include <algorithm>
#include <string_view>

namespace opdispatch::detail {

namespace {
bool isIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isIdentChar(char c) { return isIdentStart(c) || isDigit(c); }
bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

} // namespace

std::string printable(const std::string& text) {
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

/// Splits `src` into tokens, always ending with End. A lexical error becomes
/// an Error token (and ends the list) so that the parser reports whichever
/// error comes first in the text.
class Lexer {
 public:
  explicit Lexer(const std::string& src) : src_(src) {}

  std::vector<Token> tokenize() {
    std::vector<Token> tokens;
    tokens.reserve(src_.size() / 3 + 2); // a schema has about one token per three bytes: no regrowth
    while (true) {
      while (i_ < src_.size() && isSpace(src_[i_])) {
        ++i_;
      }
      if (i_ == src_.size()) {
        tokens.push_back({TokenKind::End, i_, "", ""});
        return tokens;
      }
      tokens.push_back(next());
      if (tokens.back().kind == TokenKind::Error) {
        tokens.push_back({TokenKind::End, src_.size(), "", ""});
        return tokens;
      }
    }
  }

 private:
  char at(size_t k) const { return k < src_.size() ? src_[k] : '\0'; }

  Token make(TokenKind kind, size_t start, std::string value = "") {
    return {kind, start, std::string_view(src_).substr(start, i_ - start), std::move(value)};
  }

  Token error(size_t start, size_t len, std::string reason) {
    return {TokenKind::Error, start, std::string_view(src_).substr(start, len), std::move(reason)};
  }

  Token next() {
    size_t start = i_;
    char c = src_[i_];
    if (isIdentStart(c)) {
      while (i_ < src_.size() && isIdentChar(src_[i_])) {
        ++i_;
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
    if (std::string_view("()[],*?!|=.-").find(c) != std::string_view::npos) {
      ++i_;
      return make(TokenKind::Punct, start);
    }
    return error(start, 1, "unexpected character '" + printable(std::string(1, c)) + "'");
  }

  Token number(size_t start) {
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

  // PyTorch's escapes (parseStringLiteral) plus \r: everything
  // printQuotedString writes. Returns '\0' for none of them.
  static char simpleEscape(char c) {
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

  Token string(size_t start) {
    char quote = src_[i_++];
    std::string value;
    while (true) {
      if (i_ >= src_.size()) {
        return error(start, src_.size() - start, "unterminated string literal");
      }
      char c = src_[i_];
      if (c == quote) {
        ++i_;
        return make(TokenKind::String, start, std::move(value));
      }
      if (c != '\\') {
        value += c;
        ++i_;
        continue;
      }
      if (i_ + 1 >= src_.size()) {
        return error(start, src_.size() - start, "unterminated string literal");
      }
      if (char simple = simpleEscape(src_[i_ + 1])) {
        value += simple;
        i_ += 2;
        continue;
      }
      int code = 0;
      bool octal = true;
      for (size_t k = 1; k <= 3; ++k) {
        char d = at(i_ + k);
        octal = octal && d >= '0' && d <= '7';
        code = code * 8 + (d - '0');
      }
      if (!octal || code > 0xff) {
        size_t len = std::min<size_t>(octal ? 4 : 2, src_.size() - i_);
        return error(i_, len, "invalid escape sequence '" + printable(src_.substr(i_, len)) + "' in a string literal");
      }
      value += static_cast<char>(code);
      i_ += 4;
    }
  }

  const std::string& src_;
  size_t i_ = 0;
};

} // namespace

std::vector<Token> tokenizeSchema(const std::string& src) { return Lexer(src).tokenize(); }

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
