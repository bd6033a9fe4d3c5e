// Tag names.
#include <opdispatch/core/Tag.h>

#include <iterator>

#include <opdispatch/core/Exception.h>

namespace opdispatch {

namespace {
constexpr const char* kTagNames[] = {
#define OPDISPATCH_TAG_NAME(t) #t,
    OPDISPATCH_FORALL_TAGS(OPDISPATCH_TAG_NAME)
#undef OPDISPATCH_TAG_NAME
};
} // namespace

const char* toString(Tag t) {
  auto i = static_cast<size_t>(t);
  return i < std::size(kTagNames) ? kTagNames[i] : "UNKNOWN_TAG";
}

std::ostream& operator<<(std::ostream& os, Tag t) { return os << toString(t); }

Tag parseTag(const std::string& name) {
  for (size_t i = 0; i < std::size(kTagNames); ++i) {
    if (name == kTagNames[i]) {
      return static_cast<Tag>(i);
    }
  }
  std::string valid;
  for (const char* n : kTagNames) {
    valid += valid.empty() ? "" : ", ";
    valid += n;
  }
  throw ValueError(detail::str("unknown operator tag '", name, "'; valid tags are: ", valid));
}

} // namespace opdispatch
