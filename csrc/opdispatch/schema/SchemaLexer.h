// The schema lexer: splits schema text into tokens (identifiers, numbers,
// string literals with their escapes decoded, punctuation), for SchemaParser.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace opdispatch::detail {

enum class TokenKind : uint8_t {
  Ident,
  Number, ///< digits [ '.' digits ] [ exponent ]
  String, ///< a quoted literal; `value` holds the decoded text
  Arrow, ///< ->
  ColonColon, ///< ::
  Ellipsis, ///< ...
  FreshAlias, ///< $<digits>: an alias set named by the `!` shorthand
  Punct, ///< one of ( ) [ ] , * ? ! | = . -
  Error, ///< a lexical error; `value` holds the reason
  End,
};

struct Token {
  TokenKind kind;
  size_t pos; ///< offset of the first byte in the schema
  std::string_view text; ///< the source text (a view of the schema, which outlives its tokens)
  std::string value;

  bool is(char punct) const { return kind == TokenKind::Punct && text[0] == punct; }
  bool isWord(const char* word) const { return kind == TokenKind::Ident && text == word; }
};

/// The tokens of `src` (viewing it), always ending with End. A lexical error becomes an
/// Error token (and ends the list) so that the parser reports whichever
/// error comes first in the text.
std::vector<Token> tokenizeSchema(const std::string& src);

/// `text` with every byte outside printable ASCII escaped, so that error
/// messages are ASCII and the caret lines up with the schema line.
std::string printable(const std::string& text);

/// Whether `s` is well-formed UTF-8 (no overlong forms, surrogates or code
/// points past U+10FFFF: what Python's decoder accepts). Returns the offset
/// of the first bad byte, or npos.
size_t firstInvalidUtf8(const std::string& s);

} // namespace opdispatch::detail
