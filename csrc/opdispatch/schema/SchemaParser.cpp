// The schema parser: a lexer and a recursive-descent parser for PyTorch's
// schema grammar (torch/csrc/jit/frontend/function_schema_parser.cpp and
// schema_type_parser.cpp), with typed default values and positioned errors.
#include <opdispatch/schema/SchemaParser.h>

#include <opdispatch/schema/SchemaLexer.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <new>
#include <optional>
#include <string_view>
#include <unordered_set>

namespace opdispatch {

namespace {

using detail::firstInvalidUtf8;
using detail::printable;
using detail::SchemaLexer;
using detail::Token;
using detail::TokenKind;

// Note [Schema grammar]
//   declaration := name [ '(' arguments ')' '->' returns ]
//   name        := ident [ '::' ident ] [ '.' ident ]
//   arguments   := [ item { ',' item } ]         item := argument | '*' | '...'
//   argument    := type [ '[' N ']' [alias] ['?'] ] ident [ '=' default ]
//   returns     := '...' | '(' [ ritem { ',' ritem } ] ')' | return
//   ritem       := return | '...'
//   return      := type [ '[' N ']' [alias] ['?'] ] [ ident ]
//   type        := head { '[' ']' [alias] | '?' }
//   head        := 'Tensor' [alias] | basetype [alias] | typevar [alias]
//                | '(' [ type { ',' type } ] ')'            a tuple
//                | ('Future' | 'Await' | 'RRef') '(' type ')'
//                | 'Dict' '(' type ',' type ')' [alias] | 'Union' '(' type { ',' type } ')' [alias]
//   alias       := '(' set [ '!' ] [ '->' set ] ')' | '!'    set := aliasname { '|' aliasname }
// The grammar is PyTorch's (function_schema_parser.cpp, schema_type_parser.cpp):
// `[N]` (a list of fixed size N) can only end a type; `*` may appear
// anywhere, any number of times (the arguments after the first are keyword-
// only); `...` ends the arguments or returns (varargs, varrets); `!` alone is
// a fresh alias set `$<k>`, numbered per schema, written to (`Tensor!` is
// `Tensor($0! -> )`, which is how it prints and what it parses back from:
// `$<digits>` is an alias name only we accept, and `->` may be followed by an
// empty set). Types inside a tuple, dict, union or future read SymInt,
// ScalarType, Layout and MemoryFormat as int, as PyTorch's do. Type variables
// (lower-case names that are no type) only where allowed (parse_schema, not
// definitions), as PyTorch. The checks on top of the grammar are ours:
// default values must fit their type and be representable (see Note
// [Default values]), and the parser's work and memory stay linear in the
// text (see Note [Parser resource bounds]).
// Argument names may repeat, as in PyTorch: a real schema does
// (static_runtime::clamp_nan_to_num has two `posinf`).

// Note [Parser resource bounds]
// Work and memory are linear in the text. Alias sets deduplicate through a
// hash set; a fixed-size list default `int[N] x=v` is kept as (v, N) and
// materialised once, on first use (see Argument); types nest at most
// kMaxTypeDepth deep (the parser recurses on nesting) and with at most
// kMaxTypeNesting `[]`/`?` per level; a union has at most kMaxUnionMembers
// members (its normalisation compares members pairwise).

/// At most this many `[]` and `?` on one type; deeper types only leak
/// interned types (and no real schema nests more than three).
constexpr int kMaxTypeNesting = 8;
/// At most this many levels of types inside tuples, dicts, unions, futures.
constexpr int kMaxTypeDepth = 32;
/// At most this many members written in one Union(...).
constexpr size_t kMaxUnionMembers = 64;
/// Largest N to which a single default value is broadcast (`int[N] x=0`).
constexpr int32_t kMaxBroadcastDefault = 1 << 16;

/// Arguments or returns as the parser reads them: the first kInline on the
/// stack, so that the schema's vector is allocated once, at its final size
/// (it lives as long as the operator).
class ArgumentList {
 public:
  ArgumentList() = default;
  ArgumentList(const ArgumentList&) = delete;
  ArgumentList& operator=(const ArgumentList&) = delete;
  ~ArgumentList() {
    for (size_t i = 0; i < std::min(size_, kInline); ++i) {
      slot(i)->~Argument();
    }
  }

  /// Adds the argument `make()` returns (built in place) and returns it.
  template <class Make>
  const Argument& emplace(Make make) {
    const Argument* a = size_ < kInline ? new (slot(size_)) Argument(make()) : &overflow_.emplace_back(make());
    ++size_;
    return *a;
  }
  size_t size() const { return size_; }
  const Argument& operator[](size_t i) const {
    return i < kInline ? *reinterpret_cast<const Argument*>(inline_ + i * sizeof(Argument)) : overflow_[i - kInline];
  }
  /// The arguments, moved into a vector of their number.
  std::vector<Argument> take() {
    std::vector<Argument> out;
    out.reserve(size_);
    for (size_t i = 0; i < std::min(size_, kInline); ++i) {
      out.push_back(std::move(*slot(i)));
    }
    for (auto& a : overflow_) {
      out.push_back(std::move(a));
    }
    return out;
  }

 private:
  static constexpr size_t kInline = 8;
  Argument* slot(size_t i) { return std::launder(reinterpret_cast<Argument*>(inline_ + i * sizeof(Argument))); }

  alignas(Argument) unsigned char inline_[kInline * sizeof(Argument)];
  size_t size_ = 0;
  std::vector<Argument> overflow_;
};

/// A type as written before an argument's name, with its alias annotation.
struct AnnotatedType {
  TypePtr type;
  std::optional<AliasInfo> alias;
};

class SchemaParser {
 public:
  SchemaParser(std::string_view src, bool allowTypeVars)
      : src_(src),
        lexer_(src),
        cur_(lexer_.next()),
        allowTypeVars_(allowTypeVars) {}

  std::variant<OperatorName, FunctionSchema> parseDeclaration() {
    OperatorName name = parseName();
    if (!cur().is('(')) {
      expectEnd("'(' or end of input");
      return name;
    }
    FunctionSchema schema = parseSignature(std::move(name));
    expectEnd("end of input");
    return schema;
  }

  FunctionSchema parseSchemaOnly() {
    OperatorName name = parseName();
    if (!cur().is('(')) {
      unexpected("'('");
    }
    FunctionSchema schema = parseSignature(std::move(name));
    expectEnd("end of input");
    return schema;
  }

  OperatorName parseNameOnly() {
    OperatorName name = parseName();
    expectEnd("end of input after the operator name");
    return name;
  }

 private:
  // --- tokens (Note [Pull lexer]) -------------------------------------------
  const Token& cur() const { return cur_; }
  const Token& peek() {
    if (!hasPeeked_) {
      peeked_ = lexer_.next();
      hasPeeked_ = true;
    }
    return peeked_;
  }
  /// Consumes the current token (End stays) and returns it.
  Token advance() {
    Token t = cur_;
    if (t.kind != TokenKind::End) {
      prev_ = t;
      cur_ = hasPeeked_ ? peeked_ : lexer_.next();
      hasPeeked_ = false;
    }
    return t;
  }
  bool nextIf(char punct) {
    if (cur().is(punct)) {
      advance();
      return true;
    }
    return false;
  }
  bool nextIf(TokenKind kind) {
    if (cur().kind == kind) {
      advance();
      return true;
    }
    return false;
  }
  Token expect(char punct) {
    if (!cur().is(punct)) {
      unexpected(std::string("'") + punct + "'");
    }
    return advance();
  }
  // `what` is a literal: no string is built unless there is an error.
  Token expectIdent(const char* what) {
    if (cur().kind != TokenKind::Ident) {
      unexpected(what);
    }
    return advance();
  }
  void expectEnd(const char* what) {
    if (cur().kind != TokenKind::End) {
      unexpected(what);
    }
  }

  // --- errors ---------------------------------------------------------------
  static std::string describe(const Token& t) {
    if (t.kind == TokenKind::End) {
      return "end of input";
    }
    std::string text = printable(std::string(t.text));
    if (text.size() > 40) {
      text = text.substr(0, 37) + "...";
    }
    return "'" + text + "'";
  }

  [[noreturn]] void fail(size_t pos, const std::string& reason) const {
    std::string caret(printable(src_.substr(0, pos)).size(), ' ');
    throw SchemaParseError(detail::str(reason, " at position ", pos, ":\n", printable(src_), "\n", caret, "^"));
  }
  [[noreturn]] void fail(const Token& at, const std::string& reason) const { fail(at.pos, reason); }

  /// The current token is not what the grammar allows here.
  [[noreturn]] void unexpected(const std::string& expected) const {
    Token t = cur();
    if (t.kind == TokenKind::Error) {
      fail(t, lexer_.error());
    }
    fail(t, "expected " + expected + " but found " + describe(t));
  }

  // --- names ----------------------------------------------------------------
  OperatorName parseName() {
    std::string name(expectIdent("an operator name").text);
    if (cur().kind == TokenKind::ColonColon) {
      advance();
      name.append("::").append(expectIdent("an operator name after '::'").text);
    }
    std::string_view overload;
    if (nextIf('.')) {
      Token t = expectIdent("an overload name after '.'");
      // PyTorch: `default` names the overload "" in Python, and dunder names
      // are Python attributes.
      if (t.text == "default" || t.text.rfind("__", 0) == 0) {
        fail(t, "'" + std::string(t.text) + "' is not a legal overload name");
      }
      overload = t.text;
    }
    return OperatorName(std::move(name), std::string(overload));
  }

  // --- arguments and returns ------------------------------------------------
  FunctionSchema parseSignature(OperatorName&& name) {
    ArgumentList arguments;
    expect('(');
    bool kwargOnly = false;
    bool seenDefault = false;
    bool isVararg = false;
    if (!cur().is(')')) {
      do {
        if (isVararg) {
          fail(cur(), "'...' must be the last element of the argument list");
        }
        if (nextIf('*')) {
          kwargOnly = true;
          continue;
        }
        if (cur().kind == TokenKind::Ellipsis) {
          // PyTorch: vararg schemas cannot have default values.
          for (size_t k = 0; k < arguments.size(); ++k) {
            const Argument& a = arguments[k];
            if (a.has_default_value()) {
              fail(cur(), "argument '" + a.name() +
                              "' has a default value, which a schema with varargs "
                              "('...') cannot have");
            }
          }
          advance();
          isVararg = true;
          continue;
        }
        Token start = cur();
        const Argument& arg = arguments.emplace([&] { return parseArgument(/*isReturn=*/false, kwargOnly); });
        // PyTorch: FunctionSchema::checkSchema (lists are exempt for BC).
        if (arg.has_default_value()) {
          seenDefault = true;
        } else if (seenDefault && !kwargOnly && !arg.type()->isList()) {
          fail(start, "non-default argument '" + arg.name() + "' follows default argument");
        }
      } while (nextIf(','));
    }
    expect(')');
    if (cur().kind != TokenKind::Arrow) {
      unexpected("'->'");
    }
    advance();
    ArgumentList returns;
    bool isVarret = false;
    if (nextIf(TokenKind::Ellipsis)) {
      isVarret = true;
    } else if (nextIf('(')) {
      if (!cur().is(')')) {
        do {
          if (isVarret) {
            fail(cur(), "'...' must be the last element of the return list");
          }
          if (nextIf(TokenKind::Ellipsis)) {
            isVarret = true;
          } else {
            returns.emplace([&] { return parseArgument(/*isReturn=*/true, false); });
          }
        } while (nextIf(','));
      }
      expect(')');
    } else {
      returns.emplace([&] { return parseArgument(/*isReturn=*/true, false); });
    }
    return FunctionSchema(std::move(name), arguments.take(), returns.take(), isVararg, isVarret);
  }

  /// One argument or return.
  Argument parseArgument(bool isReturn, bool kwargOnly) {
    AnnotatedType t = parseType(0);
    std::optional<int32_t> N;
    if (cur().is('[')) {
      advance();
      N = parseListSize();
      expect(']');
      t.type = Type::listOf(t.type);
      t.alias = wrapInList(std::move(t.alias));
      if (nextIf('?')) {
        t.type = Type::optionalOf(t.type);
      }
    }
    std::string_view nameText;
    if (!isReturn || cur().kind == TokenKind::Ident) {
      nameText = expectIdent("an argument name").text;
    }
    if (!isReturn && nextIf('=')) {
      std::string name(nameText);
      DefaultValue d = parseDefault(t.type, N, name);
      if (d.broadcastTo) {
        return Argument(std::move(name), t.type, N, Argument::BroadcastDefault{std::move(d.value), *d.broadcastTo},
                        kwargOnly, std::move(t.alias));
      }
      return Argument(std::move(name), t.type, N, std::move(d.value), kwargOnly, std::move(t.alias));
    }
    return Argument(std::string(nameText), t.type, N, std::nullopt, kwargOnly && !isReturn, std::move(t.alias));
  }

  int32_t parseListSize() {
    Token t = cur();
    int32_t n = 0;
    const char* last = t.text.data() + t.text.size();
    auto r = std::from_chars(t.text.data(), last, n);
    bool ok = t.kind == TokenKind::Number && r.ec == std::errc() && r.ptr == last;
    if (t.kind == TokenKind::Number && !ok) {
      fail(t, "expected a list size (an integer from 0 to 2147483647) but found " + describe(t));
    }
    if (!ok) {
      unexpected("a list size or ']'");
    }
    advance();
    return n;
  }

  // --- types ----------------------------------------------------------------
  /// A type with its `[]`/`?` suffixes. `depth`: how many types enclose it.
  AnnotatedType parseType(int depth) {
    if (depth >= kMaxTypeDepth) {
      fail(cur(), detail::str("type nested too deeply (more than ", kMaxTypeDepth, " levels)"));
    }
    AnnotatedType t = parseTypeHead(depth);
    int nesting = 0;
    while (true) {
      if (cur().is('[') && peek().is(']')) {
        advance();
        advance();
        t.type = Type::listOf(t.type);
        t.alias = wrapInList(std::move(t.alias));
      } else if (cur().is('?')) {
        Token q = advance();
        t.type = typeOrFail(q, [&] { return Type::optionalOf(t.type); });
      } else {
        return t;
      }
      if (++nesting > kMaxTypeNesting) {
        fail(prev_, detail::str("type nested too deeply (more than ", kMaxTypeNesting, " levels of '[]' and '?')"));
      }
    }
  }

  /// The type a constructor makes, or a parse error at `at` with its reason.
  template <class Make>
  TypePtr typeOrFail(const Token& at, Make make) const {
    try {
      return make();
    } catch (const ValueError& e) {
      fail(at, e.msg());
    }
  }

  /// A type inside a tuple, dict, union or future: read as PyTorch's
  /// parseType reads it (SymInt, ScalarType, Layout, MemoryFormat as int);
  /// its alias annotation is dropped, as PyTorch drops it.
  TypePtr parseContainedType(int depth) { return parseType(depth + 1).type->fakeType(); }

  AnnotatedType parseTypeHead(int depth) {
    Token head = cur();
    if (head.is('(')) {
      advance();
      std::vector<TypePtr> elems;
      if (!cur().is(')')) {
        do {
          elems.push_back(parseContainedType(depth));
        } while (nextIf(','));
      }
      expect(')');
      return {Type::tupleOf(std::move(elems)), std::nullopt};
    }
    if (head.kind != TokenKind::Ident) {
      unexpected("a type");
    }
    advance();
    const std::string_view word = head.text;
    if (word == "Future" || word == "Await" || word == "RRef") {
      expect('(');
      TypePtr elem = parseContainedType(depth);
      expect(')');
      TypePtr t = word == "Future" ? Type::futureOf(elem) : word == "Await" ? Type::awaitOf(elem) : Type::rrefOf(elem);
      return {t, std::nullopt};
    }
    if (word == "Dict") {
      expect('(');
      Token keyAt = cur();
      TypePtr key = parseContainedType(depth);
      expect(',');
      TypePtr value = parseContainedType(depth);
      expect(')');
      return {typeOrFail(keyAt, [&] { return Type::dictOf(key, value); }), parseAliasAnnotation()};
    }
    if (word == "Union") {
      expect('(');
      std::vector<TypePtr> members;
      do {
        if (members.size() == kMaxUnionMembers) {
          fail(cur(), detail::str("a Union has at most ", kMaxUnionMembers, " members"));
        }
        members.push_back(parseContainedType(depth));
      } while (nextIf(','));
      expect(')');
      return {typeOrFail(head, [&] { return Type::unionOf(members); }), parseAliasAnnotation()};
    }
    if (word == "__torch__") {
      // PyTorch: custom classes must be registered (torch::class_); we have none.
      fail(head,
           "custom class types (__torch__.torch.classes.<ns>.<Class>) are not supported: opdispatch "
           "has no registry of C++ classes; pass the object's state as tensors and values instead");
    }
    TypePtr base = Type::fromName(word);
    if (!base) {
      if (allowTypeVars_ && word[0] >= 'a' && word[0] <= 'z') {
        base = Type::var(std::string(word));
      } else {
        failUnknownType(head);
      }
    }
    return {base, parseAliasAnnotation()};
  }

  [[noreturn]] void failUnknownType(const Token& t) const {
    // PyTorch: SchemaTypeParser::parseBaseType, with its hints.
    if (t.text == "double") {
      fail(t, "unknown type 'double'; use 'float' (a C++ double) in a schema");
    }
    if (t.text == "int64_t") {
      fail(t, "unknown type 'int64_t'; use 'int' (a C++ int64_t) or 'SymInt' in a schema");
    }
    fail(t, "unknown type " + describe(t) +
                "; valid types are Tensor, int, SymInt, float, complex, bool, SymBool, str, Scalar, ScalarType, "
                "Device, DeviceIndex, Layout, MemoryFormat, Generator, Storage, Stream, QScheme, Quantizer, "
                "Capsule, NoneType, Any, AnyClassType, AnyEnumType, with '?', '[]' and '[N]', and "
                "(tuples), Dict(K, V), Union(...), Future(T), Await(T), RRef(T)");
  }

  /// The annotation of a list whose elements were annotated `element`
  /// (parsed after its `[]`): PyTorch keeps the element annotation as the
  /// list's contained type and copies is_write when the list has none.
  std::optional<AliasInfo> wrapInList(std::optional<AliasInfo> element) {
    std::optional<AliasInfo> container = parseAliasAnnotation();
    if (element) {
      if (!container) {
        container = AliasInfo();
        container->is_write = element->is_write;
      }
      container->contained_types.push_back(std::move(*element));
    }
    return container;
  }

  std::optional<AliasInfo> parseAliasAnnotation() {
    if (nextIf('!')) {
      // PyTorch: `!` is a fresh set, written to, with an empty after-set.
      AliasInfo info;
      info.before_set.push_back("$" + std::to_string(nextFreshAlias_++));
      info.is_write = true;
      return info;
    }
    if (!nextIf('(')) {
      return std::nullopt;
    }
    AliasInfo info;
    parseAliasSet(info.before_set, /*mayBeEmpty=*/false);
    info.is_write = nextIf('!');
    if (cur().kind == TokenKind::Arrow) {
      advance();
      parseAliasSet(info.after_set, /*mayBeEmpty=*/true);
    } else {
      info.after_set = info.before_set;
    }
    expect(')');
    return info;
  }

  // PyTorch: sets are sets, and a wildcard makes later names irrelevant.
  // The hash set keeps deduplication linear (Note [Parser resource bounds]).
  void parseAliasSet(std::vector<std::string>& set, bool mayBeEmpty) {
    if (mayBeEmpty && cur().is(')')) {
      return;
    }
    std::unordered_set<std::string_view> seen;
    bool wildcard = false;
    do {
      Token t = cur();
      if (!t.is('*') && t.kind != TokenKind::Ident && t.kind != TokenKind::FreshAlias) {
        unexpected("an alias set name or '*'");
      }
      if (wildcard) {
        fail(t, "alias set name " + describe(t) + " after '*': the wildcard already stands for every set");
      }
      advance();
      if (seen.insert(t.text).second) {  // (views of the schema text)
        set.push_back(std::string(t.text));
      }
      wildcard = t.is('*');
    } while (nextIf('|'));
  }

  // --- default values -------------------------------------------------------
  // Note [Default values]
  // As PyTorch parses them (parseDefaultValue): by the argument's type, with
  // SymInt, ScalarType, Layout and MemoryFormat read as int; `int[N] x=1`
  // broadcasts to N copies (kept compact, see Note [Parser resource
  // bounds]); inside `T?` a literal keeps its own kind (so `float? x=1` is
  // the int 1, printed back as `1`), elsewhere an int literal for a float is
  // a double. Unlike PyTorch, a default must be a value the argument can
  // take, one that can be passed to and from Python:
  //  - it must fit the type (PyTorch accepts `int x="a"` and `int x=None`);
  //  - ScalarType, Layout and MemoryFormat numbers must name a member of the
  //    enum (PyTorch accepts `ScalarType dt=99`, which fails at call time);
  //  - strings must be valid UTF-8 (PyTorch accepts `str s="\377"`, which no
  //    Python str can hold: its default_value raises, and it prints back as
  //    garbage);
  //  - complex defaults are rejected (opdispatch has no complex scalars).
  // We also accept list values for optional lists, `str` lists, dtype names
  // for ScalarType (`float32`), `inf`/`nan` and Device strings.

  struct DefaultValue {
    IValue value; ///< the value, or the element of a broadcast list
    std::optional<int32_t> broadcastTo; ///< `int[N] x=v`: v repeated N times
  };

  DefaultValue parseDefault(TypePtr type, std::optional<int32_t> N, const std::string& arg) {
    if (type->isOptional()) {
      if (cur().isWord("None")) {
        advance();
        return {IValue(), std::nullopt};
      }
      TypePtr elem = type->elem();
      return elem->isList() ? parseListDefault(elem, N, arg) : DefaultValue{parseConstant(elem, false, arg), {}};
    }
    return type->isList() ? parseListDefault(type, N, arg) : DefaultValue{parseConstant(type, true, arg), {}};
  }

  enum class ListKind { Int, Float, Bool, Str, Unsupported };

  static bool isIntLike(TypeKind k) {
    return k == TypeKind::Int || k == TypeKind::SymInt || k == TypeKind::ScalarType || k == TypeKind::Layout ||
           k == TypeKind::MemoryFormat;
  }

  static ListKind listKind(TypePtr elem) {
    if (isIntLike(elem->kind())) {
      return ListKind::Int;
    }
    switch (elem->kind()) {
      case TypeKind::Float:
        return ListKind::Float;
      case TypeKind::Bool:
      case TypeKind::SymBool:
        return ListKind::Bool;
      case TypeKind::Str:
        return ListKind::Str;
      default:
        return ListKind::Unsupported;
    }
  }

  DefaultValue parseListDefault(TypePtr listType, std::optional<int32_t> N, const std::string& arg) {
    TypePtr elem = listType->elem();
    ListKind kind = listKind(elem);
    if (kind == ListKind::Unsupported) {
      fail(cur(), "argument '" + arg + "' of type " + listType->toString() +
                      " cannot have a default value other than None; only int, float, bool and "
                      "str lists can");
    }
    if (N && !cur().is('[')) {
      Token at = cur();
      if (at.kind == TokenKind::Ident && !at.isWord("True") && !at.isWord("False")) {
        failDefault(listType, arg); // PyTorch: no keywords (`float`, `strided`) outside brackets
      }
      IValue v = parseConstant(elem, true, arg);
      if (*N > kMaxBroadcastDefault) {
        fail(at, detail::str("cannot broadcast the default value of argument '", arg, "' to ", *N,
                             " elements (at most ", kMaxBroadcastDefault, ")"));
      }
      if (kind == ListKind::Float) {
        v = IValue(v.toDouble());
      }
      return {std::move(v), *N};
    }
    if (!cur().is('[')) {
      failDefault(listType, arg);
    }
    advance();
    std::vector<IValue> elems;
    if (!cur().is(']')) {
      do {
        elems.push_back(parseConstant(elem, true, arg));
      } while (nextIf(','));
    }
    expect(']');
    switch (kind) {
      case ListKind::Int: {
        std::vector<int64_t> v;
        v.reserve(elems.size());
        for (const auto& e : elems) {
          v.push_back(e.toInt());
        }
        return {IValue(std::move(v)), std::nullopt};
      }
      case ListKind::Float: {
        std::vector<double> v;
        v.reserve(elems.size());
        for (const auto& e : elems) {
          v.push_back(e.toDouble());
        }
        return {IValue(std::move(v)), std::nullopt};
      }
      case ListKind::Bool: {
        std::vector<bool> v;
        v.reserve(elems.size());
        for (const auto& e : elems) {
          v.push_back(e.toBool());
        }
        return {IValue(std::move(v)), std::nullopt};
      }
      default:
        return {IValue::genericList(std::move(elems)), std::nullopt};
    }
  }

  [[noreturn]] void failDefault(TypePtr type, const std::string& arg) const {
    if (cur().kind == TokenKind::Error) {
      fail(cur(), lexer_.error());
    }
    fail(cur(), "expected a default value of type " + type->toString() + " for argument '" + arg + "' but found " +
                    describe(cur()));
  }

  /// One value of a non-list, non-optional type. `intToFloat`: an int
  /// literal for a float becomes a double (not inside `float?`).
  IValue parseConstant(TypePtr type, bool intToFloat, const std::string& arg) {
    Token t = cur();
    TypeKind kind = type->kind();
    if (isIntLike(kind) && t.kind == TokenKind::Ident) {
      if (auto v = intKeyword(std::string(t.text), kind)) {
        advance();
        return checkEnum(t, *v, kind, arg);
      }
      failDefault(type, arg);
    }
    switch (kind) {
      case TypeKind::Tensor:
      case TypeKind::Generator:
      case TypeKind::Quantizer:
        // PyTorch: parseTensorDefault accepts None even without '?'.
        if (t.isWord("None")) {
          advance();
          return IValue();
        }
        break;
      case TypeKind::Str:
        if (t.kind == TokenKind::String) {
          std::string value = detail::decodeStringLiteral(t.text);
          size_t bad = firstInvalidUtf8(value);
          if (bad != std::string::npos) {
            fail(t, detail::str("the default value of argument '", arg, "' is not valid UTF-8 (byte ", bad,
                                " of the string): a str default must be text that Python can hold"));
          }
          advance();
          return IValue(std::move(value));
        }
        break;
      case TypeKind::Device:
        if (t.kind == TokenKind::String) {
          try {
            Device d(detail::decodeStringLiteral(t.text));
            advance();
            return IValue(d);
          } catch (const ValueError& e) {
            fail(t, "invalid default value for argument '" + arg + "': " + e.msg());
          }
        }
        break;
      case TypeKind::Bool:
      case TypeKind::SymBool:
      case TypeKind::Scalar:
        if (t.isWord("True") || t.isWord("False")) {
          advance();
          return IValue(t.text == "True");
        }
        if (kind == TypeKind::Scalar) {
          return parseNumber(type, /*intToFloat=*/false, arg);
        }
        break;
      case TypeKind::Float:
      case TypeKind::Complex:
        return parseNumber(type, intToFloat, arg);
      default:
        if (isIntLike(kind)) {
          Token at = cur().is('-') ? peek() : cur();
          IValue v = parseNumber(type, false, arg);
          return checkEnum(at, v.toInt(), kind, arg);
        }
        break;
    }
    failDefault(type, arg);
  }

  /// `v` for an argument of `kind`, checked to name an enum member when
  /// the kind is an enum (Note [Default values]).
  IValue checkEnum(const Token& at, int64_t v, TypeKind kind, const std::string& arg) const {
    // PyTorch: c10::Layout and c10::MemoryFormat, whose numbers schemas use.
    constexpr int64_t kNumLayouts = 8; // Strided .. Jagged
    constexpr int64_t kNumMemoryFormats = 4; // Contiguous, Preserve, ChannelsLast, ChannelsLast3d
    switch (kind) {
      case TypeKind::ScalarType:
        if (!isValidScalarType(v)) {
          std::string valid;
          for (ScalarType s : kAllScalarTypes) {
            valid += detail::str(valid.empty() ? "" : ", ", static_cast<int>(s), " (", toPythonName(s), ")");
          }
          fail(at, detail::str("the default value ", v, " of argument '", arg,
                               "' is not a ScalarType; valid values are ", valid));
        }
        break;
      case TypeKind::Layout:
        if (v < 0 || v >= kNumLayouts) {
          fail(at, detail::str("the default value ", v, " of argument '", arg,
                               "' is not a Layout; valid values "
                               "are 0 (strided) to ",
                               kNumLayouts - 1));
        }
        break;
      case TypeKind::MemoryFormat:
        if (v < 0 || v >= kNumMemoryFormats) {
          fail(at, detail::str("the default value ", v, " of argument '", arg,
                               "' is not a MemoryFormat; valid "
                               "values are 0 (contiguous_format) to ",
                               kNumMemoryFormats - 1));
        }
        break;
      default:
        break;
    }
    return IValue(v);
  }

  /// PyTorch's identifiers for int defaults (parseSingleConstant), and dtype
  /// names for ScalarType.
  static std::optional<int64_t> intKeyword(const std::string& word, TypeKind kind) {
    static const std::pair<const char*, int64_t> kKeywords[] = {
        {"float", static_cast<int64_t>(ScalarType::Float)},
        {"complex", static_cast<int64_t>(ScalarType::ComplexFloat)},
        {"long", static_cast<int64_t>(ScalarType::Long)},
        {"strided", 0}, // Layout::Strided
        {"Mean", 1}, // Reduction::Mean
        {"contiguous_format", 0}, // MemoryFormat::Contiguous
    };
    for (const auto& k : kKeywords) {
      if (word == k.first) {
        return k.second;
      }
    }
    if (kind == TypeKind::ScalarType) {
      try {
        return static_cast<int64_t>(parseScalarType(word));
      } catch (const ValueError&) {
        return std::nullopt;
      }
    }
    return std::nullopt;
  }

  /// An optionally negative number (or inf/nan for float and Scalar) for
  /// `type`: an int unless the type is float (and `intToFloat`) or the
  /// literal has a '.' or an exponent.
  IValue parseNumber(TypePtr type, bool intToFloat, const std::string& arg) {
    bool floating = type->kind() == TypeKind::Float || type->kind() == TypeKind::Scalar;
    bool negative = nextIf('-');
    Token t = cur();
    if (floating && (t.isWord("inf") || t.isWord("nan"))) {
      advance();
      double v = t.text == "inf" ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
      return IValue(negative ? -v : v);
    }
    if (t.kind != TokenKind::Number) {
      failDefault(type, arg);
    }
    if (type->kind() == TypeKind::Complex || t.text.back() == 'j') {
      fail(t, "argument '" + arg +
                  "' cannot have a complex default value: opdispatch has no complex "
                  "scalars; use None (with an optional type) and choose the value in the kernel");
    }
    std::string text = (negative ? "-" : "") + std::string(t.text);
    const char* first = text.data();
    const char* last = text.data() + text.size();
    bool isFloatLiteral = text.find_first_of(".eE") != std::string::npos;
    if (isFloatLiteral || (type->kind() == TypeKind::Float && intToFloat)) {
      if (!floating) {
        failDefault(type, arg);
      }
      double v = 0;
      auto r = std::from_chars(first, last, v);
      if (r.ec != std::errc() || r.ptr != last) {
        fail(t, "float literal " + describe(t) + " is out of range");
      }
      advance();
      return IValue(v);
    }
    int64_t v = 0;
    auto r = std::from_chars(first, last, v);
    if (r.ec != std::errc() || r.ptr != last) {
      fail(t, "integer literal " + describe(t) + " is out of range for a 64-bit int");
    }
    advance();
    return IValue(v);
  }

  std::string_view src_;
  SchemaLexer lexer_;
  Token cur_;
  Token peeked_{}; ///< the token after cur_, once peek() has read it
  bool hasPeeked_ = false;
  Token prev_{}; ///< the last token consumed
  bool allowTypeVars_;
  int nextFreshAlias_ = 0; ///< the k of the next `!` shorthand's set `$k`
};

} // namespace

FunctionSchema parseSchema(std::string_view schema, bool allowTypeVars) {
  return SchemaParser(schema, allowTypeVars).parseSchemaOnly();
}

namespace {
bool isNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool isNameChar(char c) { return isNameStart(c) || (c >= '0' && c <= '9'); }

/// parseName's common case read without tokens: `ident[::ident][.ident]`
/// with nothing around it and a legal overload name (registrations and
/// lookups name operators so). nullopt for anything else, which the parser
/// reads and, if it is wrong, reports.
std::optional<OperatorName> plainName(std::string_view s) {
  size_t i = 0;
  auto ident = [&] {
    if (i == s.size() || !isNameStart(s[i])) {
      return false;
    }
    while (++i < s.size() && isNameChar(s[i])) {
    }
    return true;
  };
  if (!ident()) {
    return std::nullopt;
  }
  if (s.compare(i, 2, "::") == 0) {
    i += 2;
    if (!ident()) {
      return std::nullopt;
    }
  }
  if (i == s.size()) {
    return OperatorName(std::string(s), "");
  }
  const size_t name_end = i;
  if (s[i++] != '.' || !ident() || i != s.size()) {
    return std::nullopt;
  }
  std::string_view overload(s.data() + name_end + 1, i - name_end - 1);
  if (overload == "default" || overload.substr(0, 2) == "__") {  // not legal: the parser says why
    return std::nullopt;
  }
  return OperatorName(std::string(s.substr(0, name_end)), std::string(overload));
}
} // namespace

OperatorName parseName(std::string_view name) {
  if (auto plain = plainName(name)) {
    return std::move(*plain);
  }
  return SchemaParser(name, false).parseNameOnly();
}

std::variant<OperatorName, FunctionSchema> parseSchemaOrName(std::string_view text, bool allowTypeVars) {
  return SchemaParser(text, allowTypeVars).parseDeclaration();
}

} // namespace opdispatch
