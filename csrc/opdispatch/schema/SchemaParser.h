// Parsing of schema strings and operator names, with errors that give the
// position and the offending token.
#pragma once

#include <string>
#include <string_view>
#include <variant>

#include <opdispatch/schema/FunctionSchema.h>

namespace opdispatch {

/// Parses a full schema, e.g. "aten::add.Tensor(Tensor self, Tensor other,
/// *, Scalar alpha=1) -> Tensor". Grammar and default-value rules are
/// PyTorch's (torch/csrc/jit/frontend/function_schema_parser.cpp).
/// Throws ValueError: "<reason> at position <col>:\n<schema>\n<caret line>",
/// where the reason names the offending token ("expected ')' but found 'x'")
/// and <col> is its 0-based offset. `allowTypeVars`: accept type variables
/// (lower-case names that are no type, as `t` in `aten::append.t(t[](a!)
/// self, t(c -> *) el) -> t[](a!)`); PyTorch accepts them in
/// torch._C.parse_schema but not in operator definitions, so the default is
/// the definitions' rule.
FunctionSchema parseSchema(std::string_view schema, bool allowTypeVars = false);

/// Parses "ns::name" or "ns::name.overload" (no argument list).
/// Throws ValueError like parseSchema.
OperatorName parseName(std::string_view name);

/// Parses either a full schema or just a name (what Library::def accepts).
std::variant<OperatorName, FunctionSchema> parseSchemaOrName(std::string_view text, bool allowTypeVars = false);

} // namespace opdispatch
