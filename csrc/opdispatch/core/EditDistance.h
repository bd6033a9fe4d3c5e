// Edit distance between names, for "did you mean" hints in error messages
// (a misspelled dispatch key, a kernel registered for a misspelled operator).
#pragma once

#include <cstddef>
#include <string_view>

namespace opdispatch {

/// The Levenshtein distance between `a` and `b`, ignoring ASCII case ("Cpu"
/// is 0 from "CPU"): the fewest insertions, deletions and substitutions.
size_t editDistance(std::string_view a, std::string_view b);

/// Whether `candidate` is a likely misspelling of `name` or the reverse: at
/// most a third of `name`'s letters (and at least one) differ, case aside.
bool isNearMiss(std::string_view name, std::string_view candidate);

} // namespace opdispatch
