// Port of facebookresearch/xformers, xformers/csrc/attention/sddmm.cpp: the
// fragment defining sddmm_sputnik, as upstream with the name map.
#include <opdispatch/library.h>

OPDISPATCH_LIBRARY_FRAGMENT(xformers, m) {
  m.def(OPDISPATCH_SELECTIVE_SCHEMA(
      "xformers::sddmm_sputnik(Tensor a, Tensor b, Tensor row_indices, Tensor row_offsets, Tensor column_indices) -> Tensor"));
}
