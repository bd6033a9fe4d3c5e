// Tests of FunctionSchema printing and the schema parser: PyTorch's printed
// schemas round-trip exactly, each grammar and default-value rule, errors
// with positions, and a deterministic fuzz corpus derived from real schemas.
#include <opdispatch/schema/SchemaParser.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <typeinfo>
#include <vector>

namespace opdispatch {
namespace {

std::vector<std::string> readSchemas() {
  std::ifstream in(OPDISPATCH_SCHEMAS_TXT);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
  }
  return lines;
}

const std::vector<std::string>& schemas() {
  static const std::vector<std::string> lines = readSchemas();
  return lines;
}

const Argument& arg(const FunctionSchema& s, const std::string& name) {
  auto i = s.argumentIndexWithName(name);
  if (!i) {
    throw std::out_of_range("no argument " + name + " in " + s.toString());
  }
  return s.arguments()[*i];
}

/// The default of the one argument of `ns::f(<argument>) -> ()`.
IValue defaultOf(const std::string& argument) {
  FunctionSchema s = parseSchema("ns::f(" + argument + ") -> ()");
  return *s.arguments().at(0).default_value();
}

/// Parses and prints `ns::f(<argument>) -> ()`, giving the argument's text.
std::string reprint(const std::string& argument) {
  std::string printed = parseSchema("ns::f(" + argument + ") -> ()").toString();
  return printed.substr(6, printed.size() - 6 - 7);
}

// --- the real schemas --------------------------------------------------------

TEST(FunctionSchemaData, EveryPyTorchSchemaParsesAndPrintsBackExactly) {
  ASSERT_EQ(schemas().size(), 3765u);
  for (const auto& line : schemas()) {
    FunctionSchema parsed = parseSchema(line);
    ASSERT_EQ(parsed.toString(), line);
    FunctionSchema reparsed = parseSchema(parsed.toString());
    ASSERT_EQ(reparsed, parsed) << line;
    std::ostringstream streamed;
    streamed << parsed;
    ASSERT_EQ(streamed.str(), line);
  }
}

TEST(FunctionSchemaData, ParseSchemaOrNameGivesTheSchemaForEveryLine) {
  for (const auto& line : schemas()) {
    auto parsed = parseSchemaOrName(line);
    ASSERT_TRUE(std::holds_alternative<FunctionSchema>(parsed)) << line;
    ASSERT_EQ(std::get<FunctionSchema>(parsed), parseSchema(line));
  }
}

// --- names -------------------------------------------------------------------

TEST(SchemaParser, OperatorNames) {
  EXPECT_EQ(parseName("aten::add"), OperatorName("aten::add", ""));
  EXPECT_EQ(parseName("aten::add.Tensor"), OperatorName("aten::add", "Tensor"));
  EXPECT_EQ(parseName("  aten::add.out \n"), OperatorName("aten::add", "out"));
  EXPECT_EQ(parseName("aten::eq.int"), OperatorName("aten::eq", "int"));
  EXPECT_EQ(parseName("aten::add.Tensor_out"), OperatorName("aten::add", "Tensor_out"));
  EXPECT_EQ(parseName("foo"), OperatorName("foo", ""));
  EXPECT_EQ(parseName("aten::__and__.bool").name, "aten::__and__");

  OperatorName n = parseName("mylib::foo.bar");
  EXPECT_EQ(n.getNamespace(), "mylib");
  EXPECT_EQ(n.toString(), "mylib::foo.bar");
  EXPECT_EQ(OperatorName("foo", "").getNamespace(), "");
  EXPECT_EQ(OperatorName("ns::foo", "").toString(), "ns::foo");
  std::ostringstream os;
  os << n;
  EXPECT_EQ(os.str(), "mylib::foo.bar");
}

TEST(SchemaParser, ParseSchemaOrNameDistinguishesNamesFromSchemas) {
  auto name = parseSchemaOrName("mylib::foo.bar");
  ASSERT_TRUE(std::holds_alternative<OperatorName>(name));
  EXPECT_EQ(std::get<OperatorName>(name), OperatorName("mylib::foo", "bar"));

  auto schema = parseSchemaOrName("mylib::foo.bar(Tensor x) -> Tensor");
  ASSERT_TRUE(std::holds_alternative<FunctionSchema>(schema));
  EXPECT_EQ(std::get<FunctionSchema>(schema).overload_name(), "bar");

  EXPECT_THROW(parseSchema("mylib::foo"), ValueError);
  EXPECT_THROW(parseName("mylib::foo(Tensor x) -> Tensor"), ValueError);
}

// --- types -------------------------------------------------------------------

TEST(SchemaParser, BaseTypes) {
  const std::pair<const char*, TypeKind> kinds[] = {
      {"Tensor", TypeKind::Tensor},
      {"int", TypeKind::Int},
      {"SymInt", TypeKind::SymInt},
      {"float", TypeKind::Float},
      {"bool", TypeKind::Bool},
      {"SymBool", TypeKind::SymBool},
      {"str", TypeKind::Str},
      {"Scalar", TypeKind::Scalar},
      {"ScalarType", TypeKind::ScalarType},
      {"Device", TypeKind::Device},
      {"Layout", TypeKind::Layout},
      {"MemoryFormat", TypeKind::MemoryFormat},
      {"QScheme", TypeKind::QScheme},
      {"Generator", TypeKind::Generator},
      {"Any", TypeKind::Any},
  };
  for (const auto& [name, kind] : kinds) {
    FunctionSchema s = parseSchema(std::string("ns::f(") + name + " x) -> " + name);
    EXPECT_EQ(s.arguments()[0].type(), Type::get(kind)) << name;
    EXPECT_EQ(s.returns()[0].type(), Type::get(kind)) << name;
    EXPECT_EQ(s.arguments()[0].type()->toString(), name);
  }
}

TEST(SchemaParser, OptionalAndListTypes) {
  FunctionSchema s = parseSchema(
      "ns::f(Tensor? a, Tensor[] b, Tensor?[] c, int[]? d, str[][] e, Tensor[]? f, Scalar?[] g) -> ()");
  TypePtr tensor = Type::tensor();
  EXPECT_EQ(arg(s, "a").type(), Type::optionalOf(tensor));
  EXPECT_EQ(arg(s, "b").type(), Type::listOf(tensor));
  EXPECT_EQ(arg(s, "c").type(), Type::listOf(Type::optionalOf(tensor)));
  EXPECT_EQ(arg(s, "d").type(), Type::optionalOf(Type::listOf(Type::int_())));
  EXPECT_EQ(arg(s, "e").type(), Type::listOf(Type::listOf(Type::string())));
  EXPECT_EQ(arg(s, "f").type(), Type::optionalOf(Type::listOf(tensor)));
  EXPECT_EQ(arg(s, "g").type()->toString(), "Scalar?[]");
  for (const auto& a : s.arguments()) {
    EXPECT_FALSE(a.N().has_value());
    EXPECT_EQ(a.alias_info(), nullptr);
    EXPECT_FALSE(a.kwarg_only());
  }
}

TEST(SchemaParser, FixedSizeListsStoreN) {
  FunctionSchema s = parseSchema(
      "ns::f(int[2] a, SymInt[3] b, int[1]? c, bool[3] d, int?[2] e, int[][4] f) -> int[2] r");
  EXPECT_EQ(arg(s, "a").type(), Type::listOf(Type::int_()));
  EXPECT_EQ(arg(s, "a").N(), 2);
  EXPECT_EQ(arg(s, "b").type(), Type::listOf(Type::get(TypeKind::SymInt)));
  EXPECT_EQ(arg(s, "b").N(), 3);
  EXPECT_EQ(arg(s, "c").type(), Type::optionalOf(Type::listOf(Type::int_())));
  EXPECT_EQ(arg(s, "c").N(), 1);
  EXPECT_EQ(arg(s, "d").N(), 3);
  EXPECT_EQ(arg(s, "e").type(), Type::listOf(Type::optionalOf(Type::int_())));
  EXPECT_EQ(arg(s, "f").type(), Type::listOf(Type::listOf(Type::int_())));
  EXPECT_EQ(arg(s, "f").N(), 4);
  EXPECT_EQ(s.returns()[0].N(), 2);
  EXPECT_EQ(s.returns()[0].name(), "r");
  EXPECT_EQ(s.toString(), "ns::f(int[2] a, SymInt[3] b, int[1]? c, bool[3] d, int?[2] e, int[][4] f) -> int[2] r");
  EXPECT_EQ(parseSchema("ns::f(int[0] a) -> ()").arguments()[0].N(), 0);
}

// --- alias annotations -------------------------------------------------------

TEST(SchemaParser, AliasAnnotations) {
  FunctionSchema s = parseSchema(
      "ns::f(Tensor(a) a, Tensor(b!) b, Tensor(c -> *) c, Tensor(b|a) d, Tensor(*) e, "
      "Tensor(a! -> a|b) f, Generator(g!)? g, Tensor(h)? h) -> Tensor(a)");
  const AliasInfo& a = *arg(s, "a").alias_info();
  EXPECT_EQ(a.before_set, std::vector<std::string>{"a"});
  EXPECT_EQ(a.after_set, std::vector<std::string>{"a"});
  EXPECT_FALSE(a.is_write);
  EXPECT_FALSE(arg(s, "a").is_write());

  const AliasInfo& b = *arg(s, "b").alias_info();
  EXPECT_EQ(b.before_set, std::vector<std::string>{"b"});
  EXPECT_TRUE(b.is_write);
  EXPECT_TRUE(arg(s, "b").is_write());

  const AliasInfo& c = *arg(s, "c").alias_info();
  EXPECT_EQ(c.before_set, std::vector<std::string>{"c"});
  EXPECT_EQ(c.after_set, std::vector<std::string>{"*"});

  const AliasInfo& d = *arg(s, "d").alias_info();
  EXPECT_EQ(d.before_set, (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(d.after_set, (std::vector<std::string>{"b", "a"}));

  EXPECT_EQ(arg(s, "e").alias_info()->before_set, std::vector<std::string>{"*"});

  const AliasInfo& f = *arg(s, "f").alias_info();
  EXPECT_TRUE(f.is_write);
  EXPECT_EQ(f.before_set, std::vector<std::string>{"a"});
  EXPECT_EQ(f.after_set, (std::vector<std::string>{"a", "b"}));

  EXPECT_EQ(arg(s, "g").type(), Type::optionalOf(Type::get(TypeKind::Generator)));
  EXPECT_TRUE(arg(s, "g").is_write());
  EXPECT_EQ(arg(s, "h").alias_info()->before_set, std::vector<std::string>{"h"});
  EXPECT_EQ(s.returns()[0].alias_info()->before_set, std::vector<std::string>{"a"});
  EXPECT_TRUE(s.isMutable());
  EXPECT_EQ(s.toString(),
            "ns::f(Tensor(a) a, Tensor(b!) b, Tensor(c -> *) c, Tensor(b|a) d, Tensor(*) e, "
            "Tensor(a! -> a|b) f, Generator(g!)? g, Tensor(h)? h) -> Tensor(a)");
}

TEST(SchemaParser, AliasSetsAreSetsAndWildcardsAbsorbLaterNames) {
  FunctionSchema s = parseSchema("ns::f(Tensor(a|a) x, Tensor(*) y, Tensor(a|*) z, Tensor(a -> a) w) -> ()");
  EXPECT_EQ(arg(s, "x").alias_info()->before_set, std::vector<std::string>{"a"});
  EXPECT_EQ(arg(s, "y").alias_info()->before_set, std::vector<std::string>{"*"});
  EXPECT_EQ(arg(s, "z").alias_info()->before_set, (std::vector<std::string>{"a", "*"}));
  EXPECT_EQ(s.toString(), "ns::f(Tensor(a) x, Tensor(*) y, Tensor(a|*) z, Tensor(a) w) -> ()");
  // PyTorch rejects names after a wildcard (its parser leaves them unread).
  EXPECT_THROW(parseSchema("ns::f(Tensor(*|a) y) -> ()"), ValueError);
}

TEST(SchemaParser, AliasOnListElementsBecomesContainedType) {
  FunctionSchema s = parseSchema(
      "ns::f(Tensor(a!)[] out, Tensor[](b!) inputs, Tensor(c)[](d) both, Tensor(e)[]? opt) -> Tensor(a)[]");
  const Argument& out = arg(s, "out");
  ASSERT_TRUE(out.alias_info());
  EXPECT_TRUE(out.alias_info()->is_write);
  EXPECT_TRUE(out.is_write());
  EXPECT_TRUE(out.alias_info()->before_set.empty());
  ASSERT_EQ(out.alias_info()->contained_types.size(), 1u);
  const AliasInfo& elem = out.alias_info()->contained_types[0];
  EXPECT_EQ(elem.before_set, std::vector<std::string>{"a"});
  EXPECT_TRUE(elem.is_write);

  const AliasInfo& inputs = *arg(s, "inputs").alias_info();
  EXPECT_EQ(inputs.before_set, std::vector<std::string>{"b"});
  EXPECT_TRUE(inputs.is_write);
  EXPECT_TRUE(inputs.contained_types.empty());

  const AliasInfo& both = *arg(s, "both").alias_info();
  EXPECT_EQ(both.before_set, std::vector<std::string>{"d"});
  EXPECT_FALSE(both.is_write);
  ASSERT_EQ(both.contained_types.size(), 1u);
  EXPECT_EQ(both.contained_types[0].before_set, std::vector<std::string>{"c"});

  EXPECT_EQ(arg(s, "opt").type(), Type::optionalOf(Type::listOf(Type::tensor())));
  EXPECT_EQ(arg(s, "opt").alias_info()->contained_types.at(0).before_set, std::vector<std::string>{"e"});
  EXPECT_EQ(s.returns()[0].alias_info()->contained_types.at(0).before_set, std::vector<std::string>{"a"});
  EXPECT_EQ(s.toString(),
            "ns::f(Tensor(a!)[] out, Tensor[](b!) inputs, Tensor(c)[](d) both, Tensor(e)[]? opt) -> Tensor(a)[]");
}

TEST(SchemaParser, AliasOnNestedAndOptionalElementsPrintsWhereItWasWritten) {
  // See Note [Printing alias annotations of lists].
  for (const char* text :
       {"ns::f(Tensor(a)?[] x) -> ()", "ns::f(Tensor(a)[][] x) -> ()", "ns::f(Tensor(a)[](b)[] x) -> ()",
        "ns::f(Tensor(a!)[2] x) -> ()", "ns::f(Tensor(a)[2](b)? x) -> ()"}) {
    FunctionSchema s = parseSchema(text);
    EXPECT_EQ(s.toString(), text);
    EXPECT_EQ(parseSchema(s.toString()), s);
  }
}

// --- arguments and returns ---------------------------------------------------

TEST(SchemaParser, KwargOnlyArgumentsFollowTheStar) {
  FunctionSchema s = parseSchema("ns::f(Tensor self, int dim, *, bool keepdim=False, Tensor(a!) out) -> Tensor(a!)");
  EXPECT_FALSE(arg(s, "self").kwarg_only());
  EXPECT_FALSE(arg(s, "dim").kwarg_only());
  EXPECT_TRUE(arg(s, "keepdim").kwarg_only());
  EXPECT_TRUE(arg(s, "out").kwarg_only());
  EXPECT_FALSE(s.returns()[0].kwarg_only());
  EXPECT_EQ(s.toString(), "ns::f(Tensor self, int dim, *, bool keepdim=False, Tensor(a!) out) -> Tensor(a!)");

  FunctionSchema allKw = parseSchema("ns::f(*, Tensor x) -> ()");
  EXPECT_TRUE(allKw.arguments()[0].kwarg_only());
  EXPECT_EQ(allKw.toString(), "ns::f(*, Tensor x) -> ()");
}

TEST(SchemaParser, NonDefaultAfterDefaultIsAllowedForListsAndKwargs) {
  // PyTorch: FunctionSchema::checkSchema.
  EXPECT_NO_THROW(parseSchema("ns::f(int x=1, int[] y) -> ()"));
  EXPECT_NO_THROW(parseSchema("ns::f(int x=1, *, Tensor y) -> ()"));
  EXPECT_THROW(parseSchema("ns::f(int x=1, Tensor y) -> ()"), ValueError);
}

TEST(SchemaParser, ArgumentNamesMayRepeatAsInPyTorch) {
  FunctionSchema s = parseSchema("ns::f(float? a, float? a) -> Tensor");
  EXPECT_EQ(s.arguments().size(), 2u);
  EXPECT_EQ(s.argumentIndexWithName("a"), 0u);
}

TEST(SchemaParser, Returns) {
  FunctionSchema none = parseSchema("ns::f(Tensor x) -> ()");
  EXPECT_TRUE(none.returns().empty());
  EXPECT_EQ(none.toString(), "ns::f(Tensor x) -> ()");

  FunctionSchema one = parseSchema("ns::f(Tensor x) -> Tensor");
  ASSERT_EQ(one.returns().size(), 1u);
  EXPECT_EQ(one.returns()[0].name(), "");
  EXPECT_EQ(one.toString(), "ns::f(Tensor x) -> Tensor");

  FunctionSchema parenthesised = parseSchema("ns::f(Tensor x) -> (Tensor)");
  EXPECT_EQ(parenthesised, one);
  EXPECT_EQ(parenthesised.toString(), "ns::f(Tensor x) -> Tensor");

  FunctionSchema named = parseSchema("ns::f(Tensor x) -> (Tensor values, Tensor indices)");
  ASSERT_EQ(named.returns().size(), 2u);
  EXPECT_EQ(named.returns()[0].name(), "values");
  EXPECT_EQ(named.returns()[1].name(), "indices");
  EXPECT_EQ(named.toString(), "ns::f(Tensor x) -> (Tensor values, Tensor indices)");

  FunctionSchema namedSingle = parseSchema("ns::f(Tensor qa) -> Tensor qc");
  EXPECT_EQ(namedSingle.returns()[0].name(), "qc");
  EXPECT_EQ(namedSingle.toString(), "ns::f(Tensor qa) -> Tensor qc");
  EXPECT_EQ(parseSchema("ns::f(bool a) -> bool _0").returns()[0].name(), "_0");

  FunctionSchema mixed = parseSchema("ns::f(Tensor x) -> (Tensor, Tensor(a) b, int[])");
  EXPECT_EQ(mixed.toString(), "ns::f(Tensor x) -> (Tensor, Tensor(a) b, int[])");
}

TEST(SchemaParser, WhitespaceIsInsignificant) {
  FunctionSchema s = parseSchema(" ns :: f . o ( Tensor ( a ! ) [ ] x , * , int [ 2 ] y = 1 )\n->\t( Tensor ) ");
  EXPECT_EQ(s.toString(), "ns::f.o(Tensor(a!)[] x, *, int[2] y=1) -> Tensor");
}

// --- default values ----------------------------------------------------------

TEST(SchemaParserDefaults, None) {
  EXPECT_TRUE(defaultOf("Tensor? x=None").isNone());
  EXPECT_TRUE(defaultOf("int? x=None").isNone());
  EXPECT_TRUE(defaultOf("int[1]? x=None").isNone());
  EXPECT_TRUE(defaultOf("ScalarType? x=None").isNone());
  EXPECT_TRUE(defaultOf("Generator? x=None").isNone());
  EXPECT_TRUE(defaultOf("Any? x=None").isNone());
  // PyTorch: parseTensorDefault accepts None for Tensor and Generator.
  EXPECT_TRUE(defaultOf("Tensor x=None").isNone());
  EXPECT_TRUE(defaultOf("Generator x=None").isNone());
  EXPECT_THROW(defaultOf("int x=None"), ValueError);
  EXPECT_THROW(defaultOf("str x=None"), ValueError);
}

TEST(SchemaParserDefaults, Ints) {
  EXPECT_EQ(defaultOf("int x=0").toInt(), 0);
  EXPECT_EQ(defaultOf("int x=-1").toInt(), -1);
  EXPECT_EQ(defaultOf("int x=- 100").toInt(), -100);
  EXPECT_EQ(defaultOf("SymInt x=9223372036854775807").toInt(), INT64_MAX);
  EXPECT_EQ(defaultOf("int x=-9223372036854775808").toInt(), INT64_MIN);
  EXPECT_EQ(defaultOf("int? x=0").toInt(), 0);
  EXPECT_THROW(defaultOf("int x=9223372036854775808"), ValueError);
  EXPECT_THROW(defaultOf("int x=1.0"), ValueError);
  EXPECT_THROW(defaultOf("int x=1e3"), ValueError);
  EXPECT_THROW(defaultOf("int x=True"), ValueError);
  EXPECT_THROW(defaultOf("int x=\"1\""), ValueError);
}

TEST(SchemaParserDefaults, Floats) {
  EXPECT_TRUE(defaultOf("float x=1.").isDouble());
  EXPECT_EQ(defaultOf("float x=1.").toDouble(), 1.0);
  EXPECT_EQ(defaultOf("float x=1e-08").toDouble(), 1e-08);
  EXPECT_EQ(defaultOf("float x=1E+3").toDouble(), 1000.0);
  EXPECT_EQ(defaultOf("float x=-0.5").toDouble(), -0.5);
  EXPECT_EQ(defaultOf("float x=inf").toDouble(), INFINITY);
  EXPECT_EQ(defaultOf("float x=-inf").toDouble(), -INFINITY);
  EXPECT_TRUE(std::isnan(defaultOf("float x=nan").toDouble()));
  IValue fromInt = defaultOf("float x=2");
  EXPECT_TRUE(fromInt.isDouble());
  EXPECT_EQ(fromInt.toDouble(), 2.0);
  EXPECT_THROW(defaultOf("float x=True"), ValueError);
  EXPECT_THROW(defaultOf("float x=infinity"), ValueError);

  EXPECT_EQ(reprint("float x=1"), "float x=1.");
  EXPECT_EQ(reprint("float x=0.1"), "float x=0.10000000000000001");
  EXPECT_EQ(reprint("float x=1e-05"), "float x=1.0000000000000001e-05");
  EXPECT_EQ(reprint("float x=-0."), "float x=0.");  // as PyTorch 2.13
  EXPECT_EQ(reprint("float x=1e16"), "float x=10000000000000000.");
  EXPECT_EQ(reprint("float x=1e22"), "float x=1e+22");
  EXPECT_EQ(reprint("float x=.5"), "float x=0.5");
  EXPECT_EQ(reprint("float x=-inf"), "float x=-inf");
}

TEST(SchemaParserDefaults, IntLiteralInsideOptionalFloatStaysInt) {
  // PyTorch parses `T?` defaults without the element's conversions:
  // prims::var(..., float? correction=1, ...) prints back as `1`.
  IValue v = defaultOf("float? correction=1");
  EXPECT_TRUE(v.isInt());
  EXPECT_EQ(reprint("float? correction=1"), "float? correction=1");
  EXPECT_TRUE(defaultOf("float? x=1.5").isDouble());
  EXPECT_THROW(defaultOf("float? x=\"a\""), ValueError);
}

TEST(SchemaParserDefaults, Bools) {
  EXPECT_EQ(defaultOf("bool x=True").toBool(), true);
  EXPECT_EQ(defaultOf("bool x=False").toBool(), false);
  EXPECT_EQ(defaultOf("bool? x=False").toBool(), false);
  EXPECT_EQ(defaultOf("SymBool x=True").toBool(), true);
  EXPECT_THROW(defaultOf("bool x=1"), ValueError);
  EXPECT_THROW(defaultOf("bool x=true"), ValueError);
}

TEST(SchemaParserDefaults, Strings) {
  EXPECT_EQ(defaultOf(R"(str x="linear")").toStringRef(), "linear");
  EXPECT_EQ(defaultOf(R"(str x='single')").toStringRef(), "single");
  EXPECT_EQ(defaultOf(R"(str x="")").toStringRef(), "");
  EXPECT_EQ(defaultOf(R"(str? x="none")").toStringRef(), "none");
  EXPECT_EQ(defaultOf(R"S(str x="\"\'\\")S").toStringRef(), "\"'\\");
  EXPECT_EQ(defaultOf(R"S(str x='it\'s "q"')S").toStringRef(), "it's \"q\"");
  EXPECT_EQ(defaultOf(R"S(str x="\a\b\f\n\r\t\v")S").toStringRef(), "\a\b\f\n\r\t\v");
  EXPECT_EQ(defaultOf(R"S(str x="\101\000\303\251")S").toStringRef(), std::string("A\0\xc3\xa9", 4));
  // See Note [Default values]: a str default must be UTF-8 that Python can hold.
  EXPECT_THROW(defaultOf(R"S(str x="\377")S"), ValueError);
  EXPECT_THROW(defaultOf("str x=\"\xc3\""), ValueError);          // truncated sequence
  EXPECT_THROW(defaultOf("str x=\"\xc0\xaf\""), ValueError);      // overlong '/'
  EXPECT_THROW(defaultOf("str x=\"\xed\xa0\x80\""), ValueError);  // a surrogate
  EXPECT_THROW(defaultOf("str x=\"\xf4\x90\x80\x80\""), ValueError);  // past U+10FFFF
  EXPECT_EQ(defaultOf("str x=\"\xf0\x9f\x98\x80\"").toStringRef(), "\xf0\x9f\x98\x80");
  EXPECT_THROW(defaultOf(R"S(str x="\x41")S"), ValueError);
  EXPECT_THROW(defaultOf(R"S(str x="\8")S"), ValueError);
  EXPECT_THROW(defaultOf(R"S(str x="\12")S"), ValueError);

  EXPECT_EQ(reprint(R"S(str a="\"\'\\")S"), R"S(str a="\"\'\\")S");
  EXPECT_EQ(reprint(R"S(str a='x')S"), R"S(str a="x")S");
  EXPECT_EQ(reprint(R"S(str? a="\001\n")S"), R"S(str? a="\001\n")S");
}

TEST(SchemaParserDefaults, ScalarKeepsIntDoubleAndBool) {
  EXPECT_TRUE(defaultOf("Scalar x=1").isInt());
  EXPECT_TRUE(defaultOf("Scalar x=-2").isInt());
  EXPECT_TRUE(defaultOf("Scalar x=1.").isDouble());
  EXPECT_TRUE(defaultOf("Scalar x=1e3").isDouble());
  EXPECT_TRUE(defaultOf("Scalar x=nan").isDouble());
  EXPECT_TRUE(defaultOf("Scalar x=True").isBool());
  EXPECT_TRUE(defaultOf("Scalar? x=1").isInt());
  EXPECT_EQ(reprint("Scalar alpha=1"), "Scalar alpha=1");
  EXPECT_EQ(reprint("Scalar alpha=1."), "Scalar alpha=1.");
  EXPECT_EQ(reprint("Scalar x=0.33333333333333331"), "Scalar x=0.33333333333333331");
  // See Note [Printing default values]: a large integral double keeps a '.'.
  EXPECT_EQ(reprint("Scalar x=1e10"), "Scalar x=10000000000.");
  EXPECT_EQ(reprint("float? x=1e10"), "float? x=10000000000.");
  EXPECT_EQ(reprint("float x=1e10"), "float x=10000000000.");
  EXPECT_THROW(defaultOf("Scalar x=\"1\""), ValueError);
}

TEST(SchemaParserDefaults, EnumIdentifiersAreInts) {
  EXPECT_EQ(defaultOf("ScalarType x=float").toInt(), 6);
  EXPECT_EQ(defaultOf("ScalarType x=complex").toInt(), 9);
  EXPECT_EQ(defaultOf("ScalarType x=long").toInt(), 4);
  EXPECT_EQ(defaultOf("Layout x=strided").toInt(), 0);
  EXPECT_EQ(defaultOf("int reduction=Mean").toInt(), 1);
  EXPECT_EQ(defaultOf("MemoryFormat x=contiguous_format").toInt(), 0);
  EXPECT_EQ(defaultOf("ScalarType? x=float32").toInt(), 6);
  EXPECT_EQ(defaultOf("ScalarType x=int64").toInt(), 4);
  EXPECT_EQ(defaultOf("ScalarType x=Double").toInt(), 7);
  EXPECT_EQ(defaultOf("ScalarType x=bool").toInt(), 11);
  EXPECT_EQ(defaultOf("ScalarType? x=4").toInt(), 4);
  EXPECT_EQ(defaultOf("MemoryFormat? x=0").toInt(), 0);
  EXPECT_EQ(reprint("ScalarType dtype=float32"), "ScalarType dtype=6");
  EXPECT_THROW(defaultOf("int x=float32"), ValueError);
  EXPECT_THROW(defaultOf("float x=Mean"), ValueError);
  EXPECT_THROW(defaultOf("ScalarType x=float128"), ValueError);
}

TEST(SchemaParserDefaults, Lists) {
  IValue ints = defaultOf("int[] x=[1, 2]");
  ASSERT_TRUE(ints.isIntList());
  EXPECT_EQ(ints.toIntList(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(defaultOf("int[] x=[]").toIntList(), std::vector<int64_t>{});
  EXPECT_EQ(defaultOf("int[1] x=[0]").toIntList(), std::vector<int64_t>{0});
  EXPECT_EQ(defaultOf("int[2] stride=1").toIntList(), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(defaultOf("int[3] x=-1").toIntList(), (std::vector<int64_t>{-1, -1, -1}));
  EXPECT_EQ(defaultOf("int[0] x=7").toIntList(), std::vector<int64_t>{});
  EXPECT_EQ(defaultOf("SymInt[2] x=[1, 1]").toIntList(), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(defaultOf("SymInt[2] x=0").toIntList(), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(defaultOf("ScalarType[] x=[float, 7]").toIntList(), (std::vector<int64_t>{6, 7}));

  IValue doubles = defaultOf("float[] x=[1, 2.5]");
  ASSERT_TRUE(doubles.isDoubleList());
  EXPECT_EQ(doubles.toDoubleList(), (std::vector<double>{1.0, 2.5}));
  EXPECT_EQ(defaultOf("float[2] x=0.5").toDoubleList(), (std::vector<double>{0.5, 0.5}));

  IValue bools = defaultOf("bool[3] mask=[True, False, True]");
  ASSERT_TRUE(bools.isBoolList());
  EXPECT_EQ(bools.toBoolList(), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(defaultOf("bool[2] mask=True").toBoolList(), (std::vector<bool>{true, true}));

  IValue strs = defaultOf(R"(str[] x=["a", 'b'])");
  ASSERT_TRUE(strs.isGenericList());
  ASSERT_EQ(strs.toGenericList().size(), 2u);
  EXPECT_EQ(strs.toGenericList()[1].toStringRef(), "b");
  EXPECT_EQ(defaultOf(R"(str[2] x="z")").listSize(), 2u);

  IValue optional = defaultOf("int[2]? x=[3, 4]");
  EXPECT_EQ(optional.toIntList(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(defaultOf("int[2]? x=5").toIntList(), (std::vector<int64_t>{5, 5}));

  EXPECT_THROW(defaultOf("int[] x=[1.5]"), ValueError);
  EXPECT_THROW(defaultOf("int[] x=[True]"), ValueError);
  EXPECT_THROW(defaultOf("int[] x=1"), ValueError);
  EXPECT_THROW(defaultOf("float[] x=[\"a\"]"), ValueError);
  EXPECT_THROW(defaultOf("Tensor[] x=[]"), ValueError);
  EXPECT_THROW(defaultOf("Scalar[] x=[1]"), ValueError);
  EXPECT_THROW(defaultOf("int[][] x=[]"), ValueError);
  EXPECT_THROW(defaultOf("int[] x=[1, 2,]"), ValueError);
}

TEST(SchemaParserDefaults, Device) {
  EXPECT_EQ(defaultOf(R"(Device d="cpu")").toDevice(), Device(DeviceType::CPU));
  EXPECT_EQ(defaultOf(R"(Device? d="cuda:1")").toDevice(), Device(DeviceType::CUDA, 1));
  EXPECT_EQ(reprint(R"(Device d='meta')"), R"(Device d="meta")");
  EXPECT_THROW(defaultOf(R"(Device d="tpu")"), ValueError);
  EXPECT_THROW(defaultOf("Device d=cpu"), ValueError);
}

TEST(SchemaParserDefaults, NoDefaultsForAnyQSchemeOrReturns) {
  EXPECT_THROW(defaultOf("Any x=1"), ValueError);
  EXPECT_THROW(defaultOf("QScheme x=0"), ValueError);
  EXPECT_THROW(parseSchema("ns::f() -> int x=1"), ValueError);
}

// --- printing ----------------------------------------------------------------

TEST(FunctionSchemaPrinting, IntListDefaultsLikePyTorch) {
  EXPECT_EQ(reprint("int[2] padding=0"), "int[2] padding=0");
  EXPECT_EQ(reprint("int[2] padding=[0, 0]"), "int[2] padding=0");
  EXPECT_EQ(reprint("int[3] x=[1, 2, 3]"), "int[3] x=[1, 2, 3]");
  EXPECT_EQ(reprint("int[1] dim=[0]"), "int[1] dim=[0]");
  EXPECT_EQ(reprint("int[1] dim=[-2, -1]"), "int[1] dim=[-2, -1]");
  EXPECT_EQ(reprint("int[2] x=[]"), "int[2] x=[]");
  EXPECT_EQ(reprint("int[] x=[]"), "int[] x=[]");
  // Not shortened: SymInt lists, optional lists, lists whose length is not N.
  EXPECT_EQ(reprint("SymInt[2] stride=[1, 1]"), "SymInt[2] stride=[1, 1]");
  EXPECT_EQ(reprint("SymInt[2] stride=1"), "SymInt[2] stride=[1, 1]");
  EXPECT_EQ(reprint("int[2]? x=[1, 1]"), "int[2]? x=1");  // PyTorch prints `int[2]? x=1` so
  EXPECT_EQ(reprint("int[] x=[1, 1]"), "int[] x=[1, 1]");
  EXPECT_EQ(reprint("int[3] x=[1, 1]"), "int[3] x=[1, 1]");
  EXPECT_EQ(reprint("float[2] x=[1, 1]"), "float[2] x=[1., 1.]");
  EXPECT_EQ(reprint("bool[2] x=True"), "bool[2] x=[True, True]");
  EXPECT_EQ(reprint(R"(str[] x=["a"])"), R"(str[] x=["a"])");
}

TEST(FunctionSchemaPrinting, ArgumentsBuiltInCode) {
  Argument plain("self", Type::tensor());
  std::ostringstream os;
  os << plain;
  EXPECT_EQ(os.str(), "Tensor self");

  AliasInfo elem;
  elem.before_set = {"a"};
  elem.after_set = {"a"};
  elem.is_write = true;
  AliasInfo list;
  list.is_write = true;
  list.contained_types = {elem};
  Argument out("out", Type::listOf(Type::tensor()), std::nullopt, std::nullopt, true, list);
  Argument unnamed("", Type::optionalOf(Type::string()), std::nullopt, std::nullopt);
  Argument withDefault("s", Type::string(), std::nullopt, IValue("a\"b"));
  FunctionSchema s(OperatorName("ns::f", "out"), {plain, withDefault, out}, {unnamed});
  EXPECT_EQ(s.toString(), R"(ns::f.out(Tensor self, str s="a\"b", *, Tensor(a!)[] out) -> str?)");
  EXPECT_EQ(s.signatureString(), R"((Tensor self, str s="a\"b", *, Tensor(a!)[] out) -> str?)");
  EXPECT_EQ(parseSchema(s.toString()), s);
  EXPECT_TRUE(s.isMutable());
}

TEST(FunctionSchemaPrinting, AliasInfo) {
  auto print = [](const AliasInfo& a) {
    std::ostringstream os;
    os << a;
    return os.str();
  };
  AliasInfo a;
  a.before_set = {"a"};
  a.after_set = {"a"};
  EXPECT_EQ(print(a), "(a)");
  a.is_write = true;
  EXPECT_EQ(print(a), "(a!)");
  a.after_set = {"*"};
  EXPECT_EQ(print(a), "(a! -> *)");
  AliasInfo b;
  b.before_set = {"b", "a"};
  b.after_set = {"a", "b"};
  EXPECT_EQ(print(b), "(b|a)");
  b.after_set = {"a", "b", "c"};
  EXPECT_EQ(print(b), "(b|a -> a|b|c)");
}

// --- equality and helpers ----------------------------------------------------

TEST(FunctionSchemaEquality, AliasInfoComparesSetsAsSets) {
  AliasInfo x;
  x.before_set = {"a", "b"};
  x.after_set = {"a", "b"};
  AliasInfo y = x;
  y.before_set = {"b", "a"};
  EXPECT_EQ(x, y);
  y.is_write = true;
  EXPECT_NE(x, y);
  y = x;
  y.after_set = {"a"};
  EXPECT_NE(x, y);
  y = x;
  y.contained_types.push_back(x);
  EXPECT_NE(x, y);
  x.contained_types.push_back(x);
  EXPECT_EQ(x, y);
}

TEST(FunctionSchemaEquality, ArgumentComparesEveryField) {
  AliasInfo alias;
  alias.before_set = alias.after_set = {"a"};
  Argument base("x", Type::listOf(Type::int_()), 2, IValue(std::vector<int64_t>{1, 1}), false, alias);
  EXPECT_EQ(base, base);
  EXPECT_EQ(base, Argument("x", Type::listOf(Type::int_()), 2, IValue(std::vector<int64_t>{1, 1}), false, alias));
  EXPECT_NE(base, Argument("y", Type::listOf(Type::int_()), 2, IValue(std::vector<int64_t>{1, 1}), false, alias));
  EXPECT_NE(base, Argument("x", Type::listOf(Type::get(TypeKind::SymInt)), 2, IValue(std::vector<int64_t>{1, 1}), false,
                           alias));
  EXPECT_NE(base, Argument("x", Type::listOf(Type::int_()), 3, IValue(std::vector<int64_t>{1, 1}), false, alias));
  EXPECT_NE(base, Argument("x", Type::listOf(Type::int_()), 2, IValue(std::vector<int64_t>{1, 2}), false, alias));
  EXPECT_NE(base, Argument("x", Type::listOf(Type::int_()), 2, std::nullopt, false, alias));
  EXPECT_NE(base, Argument("x", Type::listOf(Type::int_()), 2, IValue(std::vector<int64_t>{1, 1}), true, alias));
  EXPECT_NE(base, Argument("x", Type::listOf(Type::int_()), 2, IValue(std::vector<int64_t>{1, 1}), false));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(Argument("f", Type::float_(), std::nullopt, IValue(nan)),
            Argument("f", Type::float_(), std::nullopt, IValue(nan)));
}

TEST(FunctionSchemaEquality, SchemaComparesNameArgumentsAndReturns) {
  FunctionSchema s = parseSchema("ns::f.o(Tensor x, int y=1) -> Tensor");
  EXPECT_EQ(s, parseSchema("ns::f.o(Tensor x, int y=1) -> Tensor"));
  EXPECT_NE(s, parseSchema("ns::g.o(Tensor x, int y=1) -> Tensor"));
  EXPECT_NE(s, parseSchema("ns::f.p(Tensor x, int y=1) -> Tensor"));
  EXPECT_NE(s, parseSchema("ns::f.o(Tensor x, int y=2) -> Tensor"));
  EXPECT_NE(s, parseSchema("ns::f.o(Tensor x, *, int y=1) -> Tensor"));
  EXPECT_NE(s, parseSchema("ns::f.o(Tensor x, int y=1) -> Tensor r"));
  EXPECT_NE(s, parseSchema("ns::f.o(Tensor x, int y=1) -> (Tensor, Tensor)"));
  EXPECT_NE(s, parseSchema("ns::f.o(Tensor(a) x, int y=1) -> Tensor"));
  EXPECT_EQ(parseSchema("ns::f(Tensor(a|b) x) -> ()"), parseSchema("ns::f(Tensor(b|a) x) -> ()"));
}

TEST(FunctionSchemaHelpers, NamesIndicesMutabilityAndClones) {
  FunctionSchema s = parseSchema("ns::f.o(Tensor(a!) self, int dim) -> Tensor(a!)");
  EXPECT_EQ(s.argumentIndexWithName("dim"), 1u);
  EXPECT_FALSE(s.argumentIndexWithName("nope").has_value());
  EXPECT_TRUE(s.isMutable());
  EXPECT_FALSE(parseSchema("ns::f(Tensor(a) x) -> Tensor(a)").isMutable());
  EXPECT_EQ(s.getNamespace(), "ns");
  EXPECT_EQ(s.operator_name(), OperatorName("ns::f", "o"));
  FunctionSchema renamed = s.cloneWithName(OperatorName("other::g", ""));
  EXPECT_EQ(renamed.toString(), "other::g(Tensor(a!) self, int dim) -> Tensor(a!)");
  EXPECT_EQ(renamed.arguments(), s.arguments());
  EXPECT_EQ(s.signatureString(), "(Tensor(a!) self, int dim) -> Tensor(a!)");
}

// --- errors ------------------------------------------------------------------

struct BadSchema {
  const char* schema;
  size_t position;
  const char* reason;
};

TEST(SchemaParserErrors, MessageFormat) {
  const std::string schema = "aten::foo(Tensor a, int bb x) -> ()";
  try {
    parseSchema(schema);
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_EQ(std::string(e.what()),
              "expected ')' but found 'x' at position 27:\n" + schema + "\n" + std::string(27, ' ') + "^");
  }
}

TEST(SchemaParserErrors, NonPrintableBytesAreEscapedAndTheCaretStillPoints) {
  const std::string schema = "ns::f(str s=\"\t\xc3\xa9\", int\n\x01 y) -> ()";
  try {
    parseSchema(schema);
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_EQ(std::string(e.what()),
              "unexpected character '\\x01' at position 23:\n"
              "ns::f(str s=\"\\t\\xc3\\xa9\", int\\n\\x01 y) -> ()\n" +
                  std::string(31, ' ') + "^");
  }
}

TEST(SchemaParserErrors, MalformedSchemasNameThePositionAndToken) {
  const BadSchema cases[] = {
      {"aten::foo(Tensor self, Tensor x y) -> Tensor", 32, "expected ')' but found 'y'"},
      {"aten::foo(Tensr self) -> Tensor", 10, "unknown type 'Tensr'"},
      {"aten::foo(double x) -> Tensor", 10, "use 'float'"},
      {"aten::foo(int64_t x) -> Tensor", 10, "use 'int'"},
      {"aten::foo(Tensor) -> Tensor", 16, "expected an argument name but found ')'"},
      {"aten::foo(Tensor self -> Tensor", 22, "expected ')' but found '->'"},
      {"aten::foo(Tensor self) Tensor", 23, "expected '->' but found 'Tensor'"},
      {"aten::foo(Tensor self) ->", 25, "expected a type but found end of input"},
      {"aten::foo(Tensor self) -> Tensor out trailing", 37, "expected end of input but found 'trailing'"},
      {"aten::foo(Tensor self) -> (Tensor, Tensor", 41, "expected ')' but found end of input"},
      {"aten::foo(Tensor self)) -> Tensor", 22, "expected '->' but found ')'"},
      {"aten::foo(Tensor[ self) -> Tensor", 18, "expected a list size or ']' but found 'self'"},
      {"aten::foo(int[2 x) -> Tensor", 16, "expected ']' but found 'x'"},
      {"aten::foo(int[-1] x) -> Tensor", 14, "expected a list size or ']' but found '-'"},
      {"aten::foo(Tensor(a self) -> Tensor", 19, "expected ')' but found 'self'"},
      {"aten::foo(Tensor() self) -> Tensor", 17, "expected an alias set name or '*' but found ')'"},
      {"aten::foo(Tensor(a!!) self) -> Tensor", 19, "expected ')' but found '!'"},
      {"aten::foo(Tensor(a -> |) self) -> Tensor", 22, "expected an alias set name or '*' but found '|'"},
      {"aten::foo(Tensor(*|a) self) -> Tensor", 19, "alias set name 'a' after '*'"},
      {"aten::foo(Tensor!! self) -> Tensor", 17, "expected an argument name but found '!'"},
      {"aten::foo(Tensor!(a) self) -> Tensor", 17, "expected an argument name but found '('"},
      {"aten::foo(Tensor($) self) -> Tensor", 17, "unexpected character '$'"},
      {"aten::foo(t self) -> Tensor", 10, "unknown type 't'"},
      {"aten::foo(__torch__.torch.classes.a.B self) -> Tensor", 10, "custom class types"},
      {"aten::foo(Future self) -> Tensor", 17, "expected '(' but found 'self'"},
      {"aten::foo(Dict(str) self) -> Tensor", 18, "expected ',' but found ')'"},
      {"aten::foo(Dict(Tensor[], int) self) -> Tensor", 15, "cannot create a dict with key type 'Tensor[]'"},
      {"aten::foo(Union() self) -> Tensor", 16, "expected a type but found ')'"},
      {"aten::foo(Union(int, int) self) -> Tensor", 10, "Union(int, int) is a single type 'int'"},
      {"aten::foo(Union(Any, int) self) -> Tensor", 10, "Union(Any, int) is a single type 'Any'"},
      {"aten::foo(NoneType? self) -> Tensor", 18, "NoneType? is not a type"},
      {"aten::foo(((((((((((((((((((((((((((((((((int))))))))))))))))))))))))))))))))) self) -> Tensor", 42,
       "type nested too deeply (more than 32 levels)"},
      {"aten::foo(ScalarType t=12) -> Tensor", 23, "the default value 12 of argument 't' is not a ScalarType"},
      {"aten::foo(ScalarType? t=-3) -> Tensor", 25, "the default value -3 of argument 't' is not a ScalarType"},
      {"aten::foo(ScalarType[2] t=99) -> Tensor", 26, "the default value 99 of argument 't' is not a ScalarType"},
      {"aten::foo(Layout l=8) -> Tensor", 19, "the default value 8 of argument 'l' is not a Layout"},
      {"aten::foo(Layout[] l=[0, -1]) -> Tensor", 26, "the default value -1 of argument 'l' is not a Layout"},
      {"aten::foo(MemoryFormat m=4) -> Tensor", 25, "the default value 4 of argument 'm' is not a MemoryFormat"},
      {"aten::foo(str s=\"\\377\") -> Tensor", 16, "the default value of argument 's' is not valid UTF-8"},
      {"aten::foo(complex c=1j) -> Tensor", 20, "argument 'c' cannot have a complex default value"},
      {"aten::foo(Scalar c=2.5j) -> Tensor", 19, "argument 'c' cannot have a complex default value"},
      {"aten::foo(..., Tensor x) -> Tensor", 15, "'...' must be the last element of the argument list"},
      {"aten::foo(Tensor x=None, ...) -> Tensor", 25, "argument 'x' has a default value"},
      {"aten::foo(Tensor x) -> (..., Tensor)", 29, "'...' must be the last element of the return list"},
      {"aten::foo(Tensor x) -> ... y", 27, "expected end of input but found 'y'"},
      {"aten::foo(Tensor?(a) self) -> Tensor", 17, "expected an argument name but found '('"},
      {"aten::foo(Tensor(a)(b) self) -> Tensor", 19, "expected an argument name but found '('"},
      {"aten::foo(int x=1.5) -> Tensor", 16, "expected a default value of type int for argument 'x' but found '1.5'"},
      {"aten::foo(bool x=1) -> Tensor", 17, "expected a default value of type bool for argument 'x' but found '1'"},
      {"aten::foo(str x=abc) -> Tensor", 16, "expected a default value of type str for argument 'x' but found 'abc'"},
      {"aten::foo(int[] x=None) -> Tensor", 18,
       "expected a default value of type int[] for argument 'x' but found 'None'"},
      {"aten::foo(int[] x=3) -> Tensor", 18, "expected a default value of type int[] for argument 'x' but found '3'"},
      {"aten::foo(float x=[1.]) -> Tensor", 18,
       "expected a default value of type float for argument 'x' but found '['"},
      {"aten::foo(Tensor[] x=[]) -> Tensor", 21,
       "argument 'x' of type Tensor[] cannot have a default value other than None"},
      {"aten::foo(Any x=None) -> Tensor", 16, "expected a default value of type Any for argument 'x' but found 'None'"},
      {"aten::foo(int[] x=[1, 2) -> Tensor", 23, "expected ']' but found ')'"},
      {"aten::foo(int[] x=[1,, 2]) -> Tensor", 21,
       "expected a default value of type int for argument 'x' but found ','"},
      {"aten::foo(int[2] x=[1, 2]]) -> Tensor", 25, "expected ')' but found ']'"},
      {"aten::foo(int x=- 1.5) -> Tensor", 18, "expected a default value of type int for argument 'x' but found '1.5'"},
      {"aten::foo(int x=-Mean) -> Tensor", 17,
       "expected a default value of type int for argument 'x' but found 'Mean'"},
      {"aten::foo(ScalarType t=float128) -> Tensor", 23,
       "expected a default value of type ScalarType for argument 't' but found 'float128'"},
      {"aten::foo(str x=\"abc) -> Tensor", 16, "unterminated string literal"},
      {"aten::foo(str x=\"abc\\", 16, "unterminated string literal"},
      {"aten::foo(str x=\"a\\qb\") -> Tensor", 18, "invalid escape sequence '\\q' in a string literal"},
      {"aten::foo(str x=\"\\400\") -> Tensor", 17, "invalid escape sequence '\\400' in a string literal"},
      {"aten::foo(Device d=\"gpu\") -> Tensor", 19, "invalid default value for argument 'd': unknown device 'gpu'"},
      {"aten::foo(int x=99999999999999999999) -> Tensor", 16,
       "integer literal '99999999999999999999' is out of range for a 64-bit int"},
      {"aten::foo(float x=1e999) -> Tensor", 18, "float literal '1e999' is out of range"},
      {"aten::foo(int[3000000000] x) -> Tensor", 14,
       "expected a list size (an integer from 0 to 2147483647) but found '3000000000'"},
      {"aten::foo(int[100000] x=0) -> Tensor", 24,
       "cannot broadcast the default value of argument 'x' to 100000 elements"},
      {"aten::foo(int x=1, int y) -> Tensor", 19, "non-default argument 'y' follows default argument"},
      {"aten::foo.default(Tensor self) -> Tensor", 10, "'default' is not a legal overload name"},
      {"aten::foo.__call__(Tensor self) -> Tensor", 10, "'__call__' is not a legal overload name"},
      {"aten::(Tensor self) -> Tensor", 6, "expected an operator name after '::' but found '('"},
      {"aten::foo.(Tensor self) -> Tensor", 10, "expected an overload name after '.' but found '('"},
      {"aten::foo::bar(Tensor self) -> Tensor", 9, "expected '(' but found '::'"},
      {"aten::foo", 9, "expected '(' but found end of input"},
      {"", 0, "expected an operator name but found end of input"},
      {"aten::foo(Tensor self) -> Tensor @", 33, "unexpected character '@'"},
      {"aten::foo(Tensor self, ..) -> Tensor", 23, "expected a type but found '.'"},
      {"aten::foo(Tensor self) -> Tensor(a!", 35, "expected ')' but found end of input"},
      {"aten::foo(Tensor self) -> Tensor[][][][][][][][][]", 49, "type nested too deeply"},
      {"aten::foo(Tensor self) -> (Tensor a, *)", 37, "expected a type but found '*'"},
      {"aten::foo(Tensor self) -> Tensor x=1", 34, "expected end of input but found '='"},
  };
  for (const auto& c : cases) {
    try {
      parseSchema(c.schema);
      ADD_FAILURE() << "no error for: " << c.schema;
    } catch (const ValueError& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find(c.reason), std::string::npos) << msg;
      EXPECT_NE(msg.find(detail::str(" at position ", c.position, ":\n", c.schema, "\n")), std::string::npos) << msg;
      EXPECT_EQ(msg.substr(msg.rfind('\n') + 1), std::string(c.position, ' ') + "^") << msg;
    }
  }
}

TEST(SchemaParserErrors, ParseNameRejectsAnArgumentList) {
  try {
    parseName("aten::foo(Tensor x) -> Tensor");
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("expected end of input after the operator name but found '(' at position 9"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(parseName("aten::foo.bar.baz"), ValueError);
  EXPECT_THROW(parseName("aten::"), ValueError);
  EXPECT_THROW(parseSchemaOrName("aten::foo bar"), ValueError);
}

// --- fuzzing -----------------------------------------------------------------
// Every input must either parse, and then print to text that parses to an
// equal schema and prints the same again, or throw a ValueError that names a
// position. Any other exception, a crash or a hang is a bug. The corpus is
// derived from the real schemas with a fixed-seed generator, so every run
// checks the same inputs.

class Fuzz {
 public:
  /// Checks one input; returns whether it parsed.
  bool check(const std::string& input) {
    ++cases_;
    try {
      FunctionSchema s = parseSchema(input);
      std::string printed = s.toString();
      FunctionSchema again = parseSchema(printed);
      EXPECT_EQ(again, s) << "input:   " << input << "\nprinted: " << printed;
      EXPECT_EQ(again.toString(), printed) << "input: " << input;
      ++parsed_;
      return true;
    } catch (const ValueError& e) {
      EXPECT_NE(std::string(e.what()).find("at position "), std::string::npos) << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "unexpected " << typeid(e).name() << ": " << e.what() << "\ninput: " << input;
    }
    return false;
  }

  /// A number in [0, n), from a generator whose sequence is fixed by the
  /// standard (unlike std::uniform_int_distribution's).
  size_t below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(rng_() % n); }
  const std::string& anyLine() { return schemas()[below(schemas().size())]; }

  size_t cases() const { return cases_; }
  size_t parsed() const { return parsed_; }

  /// Records the counts in the test's XML output (--gtest_output=xml).
  void record() const {
    ::testing::Test::RecordProperty("cases", static_cast<int>(cases_));
    ::testing::Test::RecordProperty("parsed", static_cast<int>(parsed_));
  }

 private:
  std::mt19937_64 rng_{20240607};
  size_t cases_ = 0;
  size_t parsed_ = 0;
};

/// Splits a schema into rough tokens (words, quoted strings, `->`, `::`,
/// single characters), as [begin, end) offsets.
std::vector<std::pair<size_t, size_t>> roughTokens(const std::string& s) {
  std::vector<std::pair<size_t, size_t>> tokens;
  size_t i = 0;
  auto isWord = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; };
  while (i < s.size()) {
    size_t start = i;
    if (s[i] == ' ') {
      ++i;
      continue;
    }
    if (isWord(s[i])) {
      while (i < s.size() && isWord(s[i])) {
        ++i;
      }
    } else if (s[i] == '"') {
      i = std::min(s.find('"', i + 1), s.size() - 1) + 1;
    } else if (s.compare(i, 2, "->") == 0 || s.compare(i, 2, "::") == 0) {
      i += 2;
    } else {
      ++i;
    }
    tokens.emplace_back(start, i);
  }
  return tokens;
}

TEST(SchemaParserFuzz, Truncations) {
  Fuzz fuzz;
  constexpr size_t kStep = 17;
  for (size_t n = 0; n < schemas().size(); ++n) {
    const std::string& line = schemas()[n];
    for (size_t k = n % kStep; k < line.size(); k += kStep) {
      fuzz.check(line.substr(0, k));
    }
  }
  fuzz.record();
  EXPECT_GT(fuzz.cases(), 15000u);
}

TEST(SchemaParserFuzz, SwappedAdjacentTokens) {
  Fuzz fuzz;
  for (int i = 0; i < 6000; ++i) {
    const std::string& line = fuzz.anyLine();
    auto tokens = roughTokens(line);
    size_t t = fuzz.below(tokens.size() - 1);
    auto [b1, e1] = tokens[t];
    auto [b2, e2] = tokens[t + 1];
    std::string swapped = line.substr(0, b1) + line.substr(b2, e2 - b2) + line.substr(e1, b2 - e1) +
                          line.substr(b1, e1 - b1) + line.substr(e2);
    fuzz.check(swapped);
  }
  fuzz.record();
  EXPECT_EQ(fuzz.cases(), 6000u);
  EXPECT_GT(fuzz.parsed(), 0u);
}

TEST(SchemaParserFuzz, DeletedAndDuplicatedCharacters) {
  Fuzz fuzz;
  for (int i = 0; i < 8000; ++i) {
    std::string line = fuzz.anyLine();
    size_t edits = 1 + fuzz.below(3);
    for (size_t e = 0; e < edits && !line.empty(); ++e) {
      size_t pos = fuzz.below(line.size());
      if (fuzz.below(2) == 0) {
        line.erase(pos, 1);
      } else {
        line.insert(pos, 1, line[pos]);
      }
    }
    fuzz.check(line);
  }
  fuzz.record();
  EXPECT_EQ(fuzz.cases(), 8000u);
  EXPECT_GT(fuzz.parsed(), 500u);
}

TEST(SchemaParserFuzz, BadAliasAnnotations) {
  const std::vector<std::string> annotations = {
      "(",        "()",   "(!)",         "(a",       "(a!!)",     "(a->)",         "(a -> )", "(|a)",
      "(a|)",     "(1)",  "(a b)",       "(a!) (b)", "(* -> *!)", "(a -> b -> c)", "[a]",     "(a)(b)",
      "(a!)?",    "?(a)", "(a)[]",       "[](a)",    "(a!)[2]",   "(-> a)",        "(a|b!)",  "(b|a)",
      "(a -> *)", "(*)",  "(a! -> a|b)", "(*|a)",    "(\"a\")",   "(a!)[](b)",     "(a,b)",
  };
  Fuzz fuzz;
  std::vector<const std::string*> annotated;
  for (const auto& line : schemas()) {
    if (line.find("Tensor(") != std::string::npos) {
      annotated.push_back(&line);
    }
  }
  for (int i = 0; i < 5000; ++i) {
    std::string line = *annotated[fuzz.below(annotated.size())];
    // Replace the annotation after one `Tensor` (or insert one if it has none).
    std::vector<size_t> tensors;
    for (size_t p = line.find("Tensor"); p != std::string::npos; p = line.find("Tensor", p + 1)) {
      tensors.push_back(p + 6);
    }
    size_t at = tensors[fuzz.below(tensors.size())];
    size_t end = at;
    if (line[at] == '(') {
      end = line.find(')', at) + 1;
    }
    line.replace(at, end - at, annotations[fuzz.below(annotations.size())]);
    fuzz.check(line);
  }
  fuzz.record();
  EXPECT_EQ(fuzz.cases(), 5000u);
  EXPECT_GT(fuzz.parsed(), 500u);
}

TEST(SchemaParserFuzz, BadDefaults) {
  const std::vector<std::string> values = {
      "",
      "=",
      "[",
      "[1,",
      "[1 2]",
      "1.5.5",
      "--1",
      "- 1",
      "'open",
      "\"\\q\"",
      "\"\\400\"",
      "None None",
      "True1",
      "0x10",
      "1e",
      "1e+",
      "inf",
      "-nan",
      "[None]",
      "[[1]]",
      "99999999999999999999",
      "1e400",
      "\"cpu\"",
      "float32",
      "Mean",
      "(",
      ")",
      "-",
      "[True, 1]",
      "'a'",
      "[\"a\", 'b']",
      "[1.5]",
      "[-1, -2]",
      "None",
      "True",
      "False",
      "0",
      "-1",
      "1.",
      "[]",
      "[0]",
      "[1, 1]",
      "2",
      "\"\"",
      "\"\\'\"",
      "1e-08",
      "-0.5",
      "[2, 2, 2]",
      "contiguous_format",
      "\"\\001\"",
      "[True]",
      "1 2",
      "1,",
      "[1,]",
      "nan",
  };
  Fuzz fuzz;
  std::vector<const std::string*> withDefaults;
  for (const auto& line : schemas()) {
    if (line.find('=') != std::string::npos) {
      withDefaults.push_back(&line);
    }
  }
  for (int i = 0; i < 6000; ++i) {
    std::string line = *withDefaults[fuzz.below(withDefaults.size())];
    std::vector<size_t> equals;
    for (size_t p = line.find('='); p != std::string::npos; p = line.find('=', p + 1)) {
      equals.push_back(p + 1);
    }
    size_t at = equals[fuzz.below(equals.size())];
    // The default's text ends at the next ',' or ')' outside brackets and quotes.
    size_t end = at;
    int depth = 0;
    bool quoted = false;
    while (end < line.size() && (quoted || depth > 0 || (line[end] != ',' && line[end] != ')'))) {
      char c = line[end];
      if (c == '"' && (end == at || line[end - 1] != '\\')) {
        quoted = !quoted;
      } else if (!quoted && c == '[') {
        ++depth;
      } else if (!quoted && c == ']') {
        --depth;
      }
      ++end;
    }
    line.replace(at, end - at, values[fuzz.below(values.size())]);
    fuzz.check(line);
  }
  fuzz.record();
  EXPECT_EQ(fuzz.cases(), 6000u);
  EXPECT_GT(fuzz.parsed(), 500u);
}

TEST(SchemaParserFuzz, RandomByteFlips) {
  Fuzz fuzz;
  for (int i = 0; i < 8000; ++i) {
    std::string line = fuzz.anyLine();
    size_t flips = 1 + fuzz.below(3);
    for (size_t f = 0; f < flips; ++f) {
      line[fuzz.below(line.size())] = static_cast<char>(fuzz.below(256));
    }
    fuzz.check(line);
  }
  fuzz.record();
  EXPECT_EQ(fuzz.cases(), 8000u);
}

TEST(SchemaParserFuzz, RandomTokenSoup) {
  // Short sequences of schema tokens, mostly nonsense: exercises every
  // parser state, including those real schemas never reach.
  const std::vector<std::string> pieces = {
      "ns::f",  "(",      ")",  "[",   "]",    "[]",         "[2]",    ",",       "*",     "?",     "!",
      "|",      "=",      "->", "::",  ".",    "-",          "Tensor", "int",     "float", "str",   "bool",
      "Scalar", "SymInt", "x",  "y",   "None", "True",       "1",      "1.",      "1e5",   "\"s\"", "'t'",
      "(a)",    "(a!)",   " ",  "inf", "Mean", "ScalarType", "Device", "\"cpu\"",
  };
  Fuzz fuzz;
  for (int i = 0; i < 6000; ++i) {
    std::string input = "ns::f(";
    size_t n = fuzz.below(12);
    for (size_t k = 0; k < n; ++k) {
      input += pieces[fuzz.below(pieces.size())];
      input += fuzz.below(3) == 0 ? " " : "";
    }
    fuzz.check(input + (fuzz.below(2) ? ") -> ()" : ""));
  }
  fuzz.record();
  EXPECT_EQ(fuzz.cases(), 6000u);
}

// --- PyTorch's other forms (issue 13) ----------------------------------------

TEST(SchemaParserForms, MutableShorthandIsAFreshWrittenSet) {
  FunctionSchema s = parseSchema("ns::f(Tensor! a, Tensor![] b, Tensor[]!? c) -> (Tensor!, Tensor)");
  const AliasInfo& a = *arg(s, "a").alias_info();
  EXPECT_EQ(a.before_set, std::vector<std::string>{"$0"});
  EXPECT_TRUE(a.after_set.empty());
  EXPECT_TRUE(a.is_write);
  EXPECT_EQ(arg(s, "b").alias_info()->contained_types.at(0).before_set, std::vector<std::string>{"$1"});
  EXPECT_TRUE(arg(s, "b").is_write());
  EXPECT_EQ(s.returns()[0].alias_info()->before_set, std::vector<std::string>{"$3"});
  // As PyTorch 2.13 prints it; the printed text parses back to the same schema.
  EXPECT_EQ(s.toString(),
            "ns::f(Tensor($0! -> ) a, Tensor($1! -> )[] b, Tensor[]($2! -> )? c) -> (Tensor($3! -> ), Tensor)");
  EXPECT_EQ(parseSchema(s.toString()), s);
  EXPECT_EQ(parseSchema(s.toString()).toString(), s.toString());
}

TEST(SchemaParserForms, StarsAndVarargs) {
  EXPECT_EQ(parseSchema("ns::f(*) -> ()").toString(), "ns::f() -> ()");
  EXPECT_EQ(parseSchema("ns::f(Tensor a, *) -> ()").toString(), "ns::f(Tensor a) -> ()");
  FunctionSchema kw = parseSchema("ns::f(*, Tensor a, *, int b) -> ()");
  EXPECT_TRUE(kw.arguments()[0].kwarg_only() && kw.arguments()[1].kwarg_only());
  FunctionSchema v = parseSchema("ns::f(Tensor a, ...) -> (Tensor, ...)");
  EXPECT_TRUE(v.is_vararg());
  EXPECT_TRUE(v.is_varret());
  EXPECT_EQ(v.toString(), "ns::f(Tensor a, ...) -> (Tensor, ...)");
  EXPECT_EQ(parseSchema("ns::f(...) -> (...)").toString(), "ns::f(...) -> ...");
  EXPECT_NE(parseSchema("ns::f(Tensor a) -> Tensor"), parseSchema("ns::f(Tensor a, ...) -> Tensor"));
  EXPECT_TRUE(v.cloneWithName(OperatorName("ns::g", "")).is_vararg());
}

TEST(SchemaParserForms, BaseAndCompoundTypes) {
  FunctionSchema s = parseSchema(
      "ns::f(complex a, Storage b, Stream c, DeviceIndex d, None e, (SymInt, Tensor) g, Dict(str, Tensor) h, "
      "Future(ScalarType) i, Union(str, int, float) j, Union(int, NoneType) k, Union(int?, str) l, Await(Tensor) m, "
      "RRef(int) n) -> ()");
  EXPECT_EQ(s.toString(),
            "ns::f(complex a, Storage b, Stream c, int d, NoneType e, (int, Tensor) g, Dict(str, Tensor) h, "
            "Future(int) i, Union(float, int, str) j, int? k, Union(int, NoneType, str) l, Await(Tensor) m, "
            "RRef(int) n) -> ()");
  EXPECT_EQ(arg(s, "g").type()->annotationStr(), "Tuple[int, Tensor]");
  EXPECT_EQ(arg(s, "h").type()->containedTypes().size(), 2u);
  EXPECT_EQ(arg(s, "i").type()->elem(), Type::int_());
  EXPECT_EQ(arg(s, "k").type(), Type::optionalOf(Type::int_()));
  EXPECT_EQ(parseSchema(s.toString()), s);
  // Type variables only where asked for (parse_schema), not in definitions.
  EXPECT_THROW(parseSchema("ns::f(t a) -> t"), ValueError);
  FunctionSchema tv = parseSchema("ns::f(t[](a!) self, t(c -> *) el) -> t[](a!)", /*allowTypeVars=*/true);
  EXPECT_EQ(arg(tv, "el").type(), Type::var("t"));
  EXPECT_EQ(tv.toString(), "ns::f(t[](a!) self, t(c -> *) el) -> t[](a!)");
}

TEST(TypeTest, InterningNormalisationAndSubtyping) {
  TypePtr i = Type::int_();
  TypePtr t = Type::tensor();
  EXPECT_EQ(Type::optionalOf(Type::optionalOf(t)), Type::optionalOf(t));
  EXPECT_EQ(Type::tupleOf({i, t}), Type::tupleOf({i, t}));
  EXPECT_NE(Type::tupleOf({i, t}), Type::tupleOf({t, i}));
  EXPECT_EQ(Type::unionOf({Type::string(), i, Type::float_()}),
            Type::unionOf({i, Type::unionOf({Type::float_(), Type::string()})}));
  EXPECT_EQ(Type::unionOf({i, Type::get(TypeKind::NoneType)}), Type::optionalOf(i));
  EXPECT_THROW(Type::unionOf({i, Type::get(TypeKind::Scalar)}), ValueError);  // int <: Scalar: one type
  EXPECT_THROW(Type::dictOf(Type::listOf(i), i), ValueError);
  EXPECT_TRUE(i->isSubtypeOf(Type::get(TypeKind::Scalar)));
  EXPECT_TRUE(t->isSubtypeOf(Type::optionalOf(t)));
  EXPECT_FALSE(Type::optionalOf(t)->isSubtypeOf(t));
  EXPECT_TRUE(Type::listOf(t)->isSubtypeOf(Type::get(TypeKind::Any)));
  EXPECT_TRUE(Type::tupleOf({i})->isSubtypeOf(Type::tupleOf({Type::get(TypeKind::Scalar)})));
  EXPECT_FALSE(Type::listOf(i)->isSubtypeOf(Type::listOf(Type::get(TypeKind::Scalar))));
  EXPECT_EQ(Type::listOf(Type::get(TypeKind::SymInt))->fakeType(), Type::listOf(i));
  EXPECT_EQ(std::string(Type::optionalOf(t)->kindName()), "OptionalType");
  EXPECT_EQ(Type::fromName("DeviceIndex"), i);
  EXPECT_EQ(Type::fromName("Dimname"), nullptr);  // PyTorch 2.13 rejects it too
}

// --- resource bounds (issue 9) -----------------------------------------------

TEST(SchemaParserResources, BroadcastDefaultsStayCompactUntilUsed) {
  FunctionSchema s = parseSchema("ns::f(int[65536] x=7, float[4] y=0.5, str[2] z=\"a\", bool[3] w=True) -> ()");
  const Argument& x = arg(s, "x");
  ASSERT_NE(x.broadcastDefault(), nullptr);
  EXPECT_EQ(x.broadcastDefault()->n, 65536);
  EXPECT_EQ(x.broadcastDefault()->element.toInt(), 7);
  // Printing and comparing use (v, N) ...
  EXPECT_EQ(s.toString(),
            "ns::f(int[65536] x=7, float[4] y=[0.5, 0.5, 0.5, 0.5], str[2] z=[\"a\", \"a\"], "
            "bool[3] w=[True, True, True]) -> ()");
  EXPECT_EQ(parseSchema(s.toString()), s);
  EXPECT_EQ(parseSchema("ns::f(int[3] x=[7, 7, 7]) -> ()"), parseSchema("ns::f(int[3] x=7) -> ()"));
  EXPECT_NE(parseSchema("ns::f(int[3] x=[7, 7]) -> ()"), parseSchema("ns::f(int[3] x=7) -> ()"));
  // ... and default_value() builds the list once, shared by copies.
  FunctionSchema copy = s;
  const IValue& built = *x.default_value();
  EXPECT_EQ(built.toIntList().size(), 65536u);
  EXPECT_EQ(built.toIntList()[65535], 7);
  EXPECT_EQ(&*copy.arguments()[0].default_value(), &built);
  EXPECT_EQ(arg(s, "y").default_value()->toDoubleList(), std::vector<double>(4, 0.5));
  EXPECT_EQ(arg(s, "z").default_value()->toGenericList().at(1).toStringRef(), "a");
  EXPECT_EQ(arg(s, "w").default_value()->toBoolList(), std::vector<bool>(3, true));
}

TEST(SchemaParserResources, LongAliasSetsAndUnions) {
  std::string names;
  for (int i = 0; i < 40000; ++i) {
    names += (i ? "|n" : "n") + std::to_string(i % 20000);  // every name twice
  }
  FunctionSchema s = parseSchema("ns::f(Tensor(" + names + " -> " + names + ") x) -> ()");
  EXPECT_EQ(arg(s, "x").alias_info()->before_set.size(), 20000u);
  EXPECT_EQ(parseSchema(s.toString()), s);
  std::string members;
  for (int i = 0; i < 65; ++i) {
    members += (i ? ", t" : "t") + std::to_string(i);
  }
  EXPECT_THROW(parseSchema("ns::f(Union(" + members + ") x) -> ()", true), ValueError);
}

} // namespace
} // namespace opdispatch
