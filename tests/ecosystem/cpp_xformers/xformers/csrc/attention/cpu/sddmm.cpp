// Port of facebookresearch/xformers, xformers/csrc/attention/cpu/sddmm.cpp:
// the argument checks and the CPU registration as upstream with the name map;
// the sampled dense-dense product written as a loop over the opdispatch
// tensor API: for each stored entry j of the CSR pattern (row i, column
// column_indices[j]), output[b, j] = dot(a[b, i, :], b[b, column_indices[j], :]).
#include <opdispatch/library.h>

namespace {

opdispatch::Tensor sddmm_sputnik(
    const opdispatch::Tensor& a,
    const opdispatch::Tensor& b,
    const opdispatch::Tensor& row_indices,
    const opdispatch::Tensor& row_offsets,
    const opdispatch::Tensor& column_indices) {
  OPDISPATCH_CHECK(a.dim() == b.dim());
  OPDISPATCH_CHECK(a.dim() == 3);
  OPDISPATCH_CHECK(a.size(0) == b.size(0));
  OPDISPATCH_CHECK(a.size(2) == b.size(2));
  OPDISPATCH_CHECK(row_indices.dim() == 1);
  OPDISPATCH_CHECK(row_offsets.dim() == 1);
  OPDISPATCH_CHECK(column_indices.dim() == 1);

  OPDISPATCH_CHECK(!a.device().is_cuda(), "a must be a CPU tensor");
  OPDISPATCH_CHECK(!b.device().is_cuda(), "b must be a CPU tensor");
  OPDISPATCH_CHECK(!row_indices.device().is_cuda(), "row_indices must be a CPU tensor");
  OPDISPATCH_CHECK(!row_offsets.device().is_cuda(), "row_offsets must be a CPU tensor");
  OPDISPATCH_CHECK(!column_indices.device().is_cuda(), "column_offsets must be a CPU tensor");

  OPDISPATCH_CHECK(a.is_contiguous(), "a must be a contiguous tensor");
  OPDISPATCH_CHECK(b.is_contiguous(), "b must be a contiguous tensor");
  OPDISPATCH_CHECK(
      row_indices.is_contiguous(), "row_indices must be a contiguous tensor");
  OPDISPATCH_CHECK(
      row_offsets.is_contiguous(), "row_offsets must be a contiguous tensor");
  OPDISPATCH_CHECK(
      column_indices.is_contiguous(),
      "column_offsets must be a contiguous tensor");

  int64_t batch = a.size(0);
  int64_t m = a.size(1);
  int64_t k = a.size(2);
  int64_t n = b.size(1);
  int64_t nonzeros = column_indices.size(0);
  OPDISPATCH_CHECK(row_offsets.size(0) == m + 1, "row_offsets must have m + 1 entries");

  opdispatch::Tensor output = opdispatch::empty({batch, nonzeros}, a.dtype());
  const int* offsets = row_offsets.data_ptr<int>();
  const int* columns = column_indices.data_ptr<int>();
  const float* lhs = a.data_ptr<float>();
  const float* rhs = b.data_ptr<float>();
  float* out = output.data_ptr<float>();
  for (int64_t bi = 0; bi < batch; ++bi) {
    for (int64_t i = 0; i < m; ++i) {
      for (int j = offsets[i]; j < offsets[i + 1]; ++j) {
        OPDISPATCH_CHECK(columns[j] >= 0 && columns[j] < n, "column index out of range at ", j);
        float acc = 0.0f;
        for (int64_t l = 0; l < k; ++l) {
          acc += lhs[(bi * m + i) * k + l] * rhs[(bi * n + columns[j]) * k + l];
        }
        out[bi * nonzeros + j] = acc;
      }
    }
  }
  return output;
}
} // namespace

OPDISPATCH_LIBRARY_IMPL(xformers, CPU, m) {
  m.impl(
      OPDISPATCH_SELECTIVE_NAME("xformers::sddmm_sputnik"), OPDISPATCH_FN(sddmm_sputnik));
}
