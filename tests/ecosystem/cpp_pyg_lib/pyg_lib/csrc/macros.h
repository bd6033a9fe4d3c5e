// After pyg-team/pyg-lib, pyg_lib/csrc/macros.h: the export attribute of the
// library's C++ entry points.
#pragma once

#define PYG_API __attribute__((visibility("default")))
