// Port of the tag macro at the end of pytorch/FBGEMM,
// fbgemm_gpu/include/fbgemm_gpu/utils/dispatch_macros.h, with the name map
// (the FBGEMM_DISPATCH_* type-dispatch macros are ATen-specific and left out).
#pragma once

#include <opdispatch/library.h>

// We can cleanup the following once fbgemm uses PyTorch 2.2 in January 2024.
#ifndef PT2_COMPLIANT_TAG
#ifdef HAS_PT2_COMPLIANT_TAG
#define PT2_COMPLIANT_TAG opdispatch::Tag::pt2_compliant_tag
#else
#define PT2_COMPLIANT_TAG
#endif
#endif
