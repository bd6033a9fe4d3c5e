// AliasAnalysisKind: how a definition says its schema's alias annotations are
// to be read (stored with the operator and shown by dumpState). PyTorch:
// c10::AliasAnalysisKind.
#pragma once

#include <cstdint>
#include <string_view>

namespace opdispatch {

/// PyTorch's kinds. opdispatch itself reads only the schema's annotations;
/// the kind is kept for the layers above and for dumps.
enum class AliasAnalysisKind : uint8_t {
  /// The schema's annotations are the truth (Library::def of a schema string).
  FROM_SCHEMA,
  /// Assume any argument may alias and be written.
  CONSERVATIVE,
  /// No aliasing and no side effects.
  PURE_FUNCTION,
};

const char* toString(AliasAnalysisKind k);

/// "" (FROM_SCHEMA, PyTorch's default for Python definitions), "FROM_SCHEMA",
/// "CONSERVATIVE" or "PURE_FUNCTION". Throws ValueError naming the text otherwise.
/// PyTorch: parseAliasAnalysisKind (torch/csrc/utils/python_dispatch.cpp).
AliasAnalysisKind parseAliasAnalysisKind(std::string_view text);

} // namespace opdispatch
