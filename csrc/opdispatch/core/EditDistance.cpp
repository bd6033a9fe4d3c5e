// Edit distance between names, for "did you mean" hints.
#include <opdispatch/core/EditDistance.h>

#include <algorithm>
#include <cctype>
#include <vector>

namespace opdispatch {

size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) {
    row[j] = j;
  }
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                  std::tolower(static_cast<unsigned char>(b[j - 1]));
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

bool isNearMiss(std::string_view name, std::string_view candidate) {
  return editDistance(name, candidate) <= std::max<size_t>(1, name.size() / 3);
}

} // namespace opdispatch
