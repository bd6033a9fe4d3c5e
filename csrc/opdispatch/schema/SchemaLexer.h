// The schema lexer: reads schema text one token at a time (identifiers,
// numbers, string literals, punctuation), for SchemaParser.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace opdispatch::detail {

enum class TokenKind : uint8_t {
  Ident,
  Number, ///< digits [ '.' digits ] [ exponent ]
  String, ///< a quoted literal; decodeStringLiteral gives its value
  Arrow, ///< ->
  ColonColon, ///< ::
  Ellipsis, ///< ...
  FreshAlias, ///< $<digits>: an alias set named by the `!` shorthand
  Punct, ///< one of ( ) [ ] , * ? ! | = . -
  Error, ///< a lexical error; SchemaLexer::error() holds the reason
  End,
};

/// A token: a view of the schema text, which outlives it.
struct Token {
  TokenKind kind;
  size_t pos; ///< offset of the first byte in the schema
  std::string_view text;

  bool is(char punct) const { return kind == TokenKind::Punct && text[0] == punct; }
  bool isWord(std::string_view word) const { return kind == TokenKind::Ident && text == word; }
};

// Note [Pull lexer]
// Registering an operator parses its schema once, so the parse is on the
// registration path: the parser asks for one token at a time (and looks one
// ahead at most), and tokens are views of the text, so lexing allocates
// nothing. A string literal's value is decoded only when the parser takes
// it as a default value. A lexical error is an Error token, after which
// every token is End: the parser reports whichever error comes first in
// the text, as it reaches it.

/// Reads the tokens of `src` (a view: `src` outlives the lexer and its tokens).
class SchemaLexer {
 public:
  explicit SchemaLexer(std::string_view src) : src_(src) {}

  /// The next token; End (at the end of the text) once the text or a
  /// lexical error has been reached.
  Token next();
  /// Why the last Error token is one ("unterminated string literal").
  const std::string& error() const { return error_; }

 private:
  char at(size_t k) const { return k < src_.size() ? src_[k] : '\0'; }
  Token make(TokenKind kind, size_t start) const { return {kind, start, src_.substr(start, i_ - start)}; }
  Token fail(size_t start, size_t len, std::string reason);
  Token number(size_t start);
  Token string(size_t start);

  std::string_view src_;
  size_t i_ = 0;
  std::string error_;
};

/// The value of a string literal token's text (quotes removed, escapes
/// decoded). `literal` is the text of a String token.
std::string decodeStringLiteral(std::string_view literal);

/// `text` with every byte outside printable ASCII escaped, so that error
/// messages are ASCII and the caret lines up with the schema line.
std::string printable(std::string_view text);

/// Whether `s` is well-formed UTF-8 (no overlong forms, surrogates or code
/// points past U+10FFFF: what Python's decoder accepts). Returns the offset
/// of the first bad byte, or npos.
size_t firstInvalidUtf8(const std::string& s);

} // namespace opdispatch::detail
