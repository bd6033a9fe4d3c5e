// string_view: the type of a `str` kernel argument that the kernel only reads
// (PyTorch: c10::string_view, which is std::string_view).
#pragma once

#include <string_view>

namespace opdispatch {

using string_view = std::string_view;

} // namespace opdispatch
