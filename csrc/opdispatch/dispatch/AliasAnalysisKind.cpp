// AliasAnalysisKind names.
#include <opdispatch/dispatch/AliasAnalysisKind.h>

#include <opdispatch/core/Exception.h>

namespace opdispatch {

const char* toString(AliasAnalysisKind k) {
  switch (k) {
    case AliasAnalysisKind::FROM_SCHEMA:
      return "FROM_SCHEMA";
    case AliasAnalysisKind::CONSERVATIVE:
      return "CONSERVATIVE";
    case AliasAnalysisKind::PURE_FUNCTION:
      return "PURE_FUNCTION";
  }
  return "?";
}

AliasAnalysisKind parseAliasAnalysisKind(std::string_view text) {
  if (text.empty() || text == "FROM_SCHEMA") {
    return AliasAnalysisKind::FROM_SCHEMA;
  }
  if (text == "CONSERVATIVE") {
    return AliasAnalysisKind::CONSERVATIVE;
  }
  OPDISPATCH_CHECK_VALUE(text == "PURE_FUNCTION", "could not parse alias analysis kind '", text,
                         "'; expected '', FROM_SCHEMA, CONSERVATIVE or PURE_FUNCTION");
  return AliasAnalysisKind::PURE_FUNCTION;
}

} // namespace opdispatch
