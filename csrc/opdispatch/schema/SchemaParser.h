// Parsing of schema strings and operator names, with errors that give the
// position and the offending token.
#pragma once

#include <string>
#include <variant>

#include <opdispatch/schema/FunctionSchema.h>

namespace opdispatch {

/// Parses a full schema, e.g. "aten::add.Tensor(Tensor self, Tensor other,
/// *, Scalar alpha=1) -> Tensor". Grammar and default-value rules are
/// PyTorch's (torch/csrc/jit/frontend/function_schema_parser.cpp).
/// Throws ValueError: "<reason> at position <col>:\n<schema>\n<caret line>",
/// where the reason names the offending token ("expected ')' but found 'x'")
/// and <col> is its 0-based offset.
FunctionSchema parseSchema(const std::string& schema);

/// Parses "ns::name" or "ns::name.overload" (no argument list).
/// Throws ValueError like parseSchema.
OperatorName parseName(const std::string& name);

/// Parses either a full schema or just a name (what Library::def accepts).
std::variant<OperatorName, FunctionSchema> parseSchemaOrName(const std::string& text);

} // namespace opdispatch
