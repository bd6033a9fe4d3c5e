// topk's selection as PyTorch's CPU kernel makes it: the same standard
// algorithms with the same comparison, so equal values come out in the same
// order (Note [topk's order among equal values]).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <opdispatch/core/Exception.h>

#include "TopK.h"

namespace py = pybind11;

namespace opdispatch::python {

namespace {

// Note [topk's order among equal values]
// PyTorch's CPU topk (topk_impl_loop, aten/src/ATen/native/TopKImpl.h) pairs
// each value with its index and selects with std::partial_sort when
// k * 64 <= n, else with std::nth_element followed (when sorted) by std::sort
// of the first k - 1; NaN counts as the largest value. None of them is
// stable, so which of several equal values are chosen, and in which order,
// is whatever those algorithms do: NumPy's sorts cannot reproduce it, so
// this runs the same algorithms (libstdc++'s, as PyTorch's Linux build) on
// the same pairs. The values are compared as float64 (PyTorch: float, or
// double for float32 and float64 — conversions that keep every comparison)
// or int64.

template <typename T>
bool isNan(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::isnan(v);
  } else {
    return false;
  }
}

template <typename T, typename Compare>
void selectRow(std::vector<std::pair<T, int64_t>>& queue, int64_t k, bool sorted, Compare compare) {
  auto n = static_cast<int64_t>(queue.size());
  if (k * 64 <= n) {
    std::partial_sort(queue.begin(), queue.begin() + k, queue.end(), compare);
    return;
  }
  std::nth_element(queue.begin(), queue.begin() + (k - 1), queue.end(), compare);
  if (sorted) {
    std::sort(queue.begin(), queue.begin() + (k - 1), compare);
  }
}

template <typename T>
py::array_t<int64_t> topkIndices(const py::array_t<T, py::array::c_style>& values, int64_t k, bool largest,
                                 bool sorted) {
  OPDISPATCH_CHECK_VALUE(values.ndim() == 2, "_topk_indices: values must be 2-D (rows, n), not ", values.ndim(), "-D");
  const int64_t rows = values.shape(0);
  const int64_t n = values.shape(1);
  OPDISPATCH_CHECK_VALUE(k >= 0 && k <= n, "_topk_indices: k must be in [0, ", n, "], got ", k);
  py::array_t<int64_t> out(std::vector<py::ssize_t>{rows, k});
  if (k == 0 || rows == 0) {
    return out;
  }
  auto in = values.template unchecked<2>();
  auto indices = out.template mutable_unchecked<2>();
  using Elem = std::pair<T, int64_t>;
  std::vector<Elem> queue(static_cast<size_t>(n));
  auto larger = [](const Elem& x, const Elem& y) { return (isNan(x.first) && !isNan(y.first)) || x.first > y.first; };
  auto smaller = [](const Elem& x, const Elem& y) { return (!isNan(x.first) && isNan(y.first)) || x.first < y.first; };
  py::gil_scoped_release release;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < n; ++j) {
      queue[static_cast<size_t>(j)] = Elem(in(r, j), j);
    }
    if (largest) {
      selectRow(queue, k, sorted, larger);
    } else {
      selectRow(queue, k, sorted, smaller);
    }
    for (int64_t j = 0; j < k; ++j) {
      indices(r, j) = queue[static_cast<size_t>(j)].second;
    }
  }
  return out;
}

} // namespace

void initTopKBindings(py::module_& m) {
  m.def("_topk_indices", &topkIndices<double>, py::arg("values"), py::arg("k"), py::arg("largest"), py::arg("sorted"));
  m.def("_topk_indices", &topkIndices<int64_t>, py::arg("values"), py::arg("k"), py::arg("largest"), py::arg("sorted"),
        "_topk_indices(values, k, largest, sorted): for each row of the C-contiguous 2-D float64 or int64 array "
        "values, the int64 indices of its k largest (or smallest) values as PyTorch's CPU topk selects and orders "
        "them, equal values included (Note [topk's order among equal values]); NaN is the largest value. "
        "ValueError unless values is 2-D and 0 <= k <= its row length. PyTorch: topk_impl_loop.");
}

} // namespace opdispatch::python
