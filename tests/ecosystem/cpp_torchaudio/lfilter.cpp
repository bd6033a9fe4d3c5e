// Port of pytorch/audio, src/libtorchaudio/lfilter.cpp: the registration code
// (a FRAGMENT defining an operator from a C++ function whose schema is
// inferred, the DEF library, CompositeImplicitAutograd kernels by name) and
// the core loop's checks as upstream with the name map. The IIR/FIR filters
// are written against the opdispatch tensor API in place of ATen and
// torch::autograd::Function (forward only: opdispatch has no C++ autograd).
#include <opdispatch/library.h>

#include <algorithm>
#include <vector>

namespace {

using opdispatch::Tensor;

template <typename scalar_t>
void host_lfilter_core_loop(
    const Tensor& input_signal_windows,
    const Tensor& a_coeff_flipped,
    Tensor& padded_output_waveform) {
  int64_t n_batch = input_signal_windows.size(0);
  int64_t n_channel = input_signal_windows.size(1);
  int64_t n_samples_input = input_signal_windows.size(2);
  int64_t n_samples_output = padded_output_waveform.size(2);
  int64_t n_order = a_coeff_flipped.size(1);
  scalar_t* output_data = padded_output_waveform.data_ptr<scalar_t>();
  const scalar_t* input_data = input_signal_windows.data_ptr<scalar_t>();
  const scalar_t* a_coeff_flipped_data = a_coeff_flipped.data_ptr<scalar_t>();

  for (int64_t i = 0; i < n_channel * n_batch; i++) {
    int64_t offset_input = i * n_samples_input;
    int64_t offset_output = i * n_samples_output;
    int64_t i_channel = i % n_channel;
    for (int64_t i_sample = 0; i_sample < n_samples_input; i_sample++) {
      scalar_t a0 = input_data[offset_input + i_sample];
      for (int64_t i_coeff = 0; i_coeff < n_order; i_coeff++) {
        a0 -= output_data[offset_output + i_sample + i_coeff] *
            a_coeff_flipped_data[i_coeff + i_channel * n_order];
      }
      output_data[offset_output + i_sample + n_order - 1] = a0;
    }
  }
}

void cpu_lfilter_core_loop(
    const Tensor& input_signal_windows,
    const Tensor& a_coeff_flipped,
    Tensor& padded_output_waveform) {
  OPDISPATCH_CHECK(
      input_signal_windows.device().is_cpu() &&
      a_coeff_flipped.device().is_cpu() &&
      padded_output_waveform.device().is_cpu());

  OPDISPATCH_CHECK(
      input_signal_windows.is_contiguous() && a_coeff_flipped.is_contiguous() &&
      padded_output_waveform.is_contiguous());

  OPDISPATCH_CHECK(
      (input_signal_windows.dtype() == opdispatch::ScalarType::Float ||
       input_signal_windows.dtype() == opdispatch::ScalarType::Double) &&
      (a_coeff_flipped.dtype() == input_signal_windows.dtype()) &&
      (padded_output_waveform.dtype() == input_signal_windows.dtype()));

  OPDISPATCH_CHECK(input_signal_windows.size(0) == padded_output_waveform.size(0));
  OPDISPATCH_CHECK(input_signal_windows.size(1) == padded_output_waveform.size(1));

  OPDISPATCH_CHECK(
      input_signal_windows.size(2) + a_coeff_flipped.size(1) - 1 ==
      padded_output_waveform.size(2));

  if (input_signal_windows.scalar_type() == opdispatch::ScalarType::Double) {
    host_lfilter_core_loop<double>(input_signal_windows, a_coeff_flipped, padded_output_waveform);
  } else {
    host_lfilter_core_loop<float>(input_signal_windows, a_coeff_flipped, padded_output_waveform);
  }
}

/// A zero-filled contiguous tensor.
Tensor zeros(opdispatch::IntArrayRef sizes, opdispatch::ScalarType dtype) {
  Tensor t = opdispatch::empty(sizes, dtype);
  std::fill_n(static_cast<char*>(t.data_ptr()), t.numel() * (dtype == opdispatch::ScalarType::Double ? 8 : 4), 0);
  return t;
}

/// coeffs (n_channel, n_order) with the last dimension reversed, contiguous.
template <typename scalar_t>
Tensor flip_last(const Tensor& coeffs) {
  Tensor out = opdispatch::empty(coeffs.sizes(), coeffs.dtype());
  const int64_t rows = coeffs.size(0), n = coeffs.size(1);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t k = 0; k < n; ++k) {
      out.data_ptr<scalar_t>()[r * n + k] = coeffs.data_ptr<scalar_t>()[r * coeffs.stride(0) + (n - 1 - k) * coeffs.stride(1)];
    }
  }
  return out;
}

Tensor flip_coefficients(const Tensor& coeffs) {
  return coeffs.scalar_type() == opdispatch::ScalarType::Double ? flip_last<double>(coeffs) : flip_last<float>(coeffs);
}

// The forward of upstream's DifferentiableIIR: the core loop on a zero-padded
// output, whose last n_sample samples (a view) are the result.
Tensor differentiable_iir_apply(
    const Tensor& waveform,
    const Tensor& a_coeffs_normalized) {
  int64_t n_batch = waveform.size(0);
  int64_t n_channel = waveform.size(1);
  int64_t n_sample = waveform.size(2);
  int64_t n_order = a_coeffs_normalized.size(1);
  int64_t n_sample_padded = n_sample + n_order - 1;

  auto a_coeff_flipped = flip_coefficients(a_coeffs_normalized);
  auto padded_output_waveform = zeros({n_batch, n_channel, n_sample_padded}, waveform.dtype());
  cpu_lfilter_core_loop(waveform, a_coeff_flipped, padded_output_waveform);
  return padded_output_waveform.as_strided(
      {n_batch, n_channel, n_sample}, {n_channel * n_sample_padded, n_sample_padded, 1}, n_order - 1);
}

// The forward of upstream's DifferentiableFIR: y[n] = sum_k b[k] x[n - k] per channel.
template <typename scalar_t>
Tensor fir(const Tensor& waveform, const Tensor& b_coeffs) {
  int64_t n_batch = waveform.size(0), n_channel = waveform.size(1), n_sample = waveform.size(2);
  int64_t n_order = b_coeffs.size(1);
  Tensor output = opdispatch::empty(waveform.sizes(), waveform.dtype());
  const scalar_t* x = waveform.data_ptr<scalar_t>();
  const scalar_t* b = b_coeffs.data_ptr<scalar_t>();
  scalar_t* y = output.data_ptr<scalar_t>();
  for (int64_t bc = 0; bc < n_batch * n_channel; ++bc) {
    const int64_t c = bc % n_channel;
    for (int64_t n = 0; n < n_sample; ++n) {
      scalar_t acc = 0;
      for (int64_t k = 0; k < n_order && k <= n; ++k) {
        acc += b[c * n_order + k] * x[bc * n_sample + n - k];
      }
      y[bc * n_sample + n] = acc;
    }
  }
  return output;
}

Tensor differentiable_fir_apply(
    const Tensor& waveform,
    const Tensor& b_coeffs) {
  OPDISPATCH_CHECK(waveform.is_contiguous() && b_coeffs.is_contiguous() && waveform.dtype() == b_coeffs.dtype());
  return waveform.scalar_type() == opdispatch::ScalarType::Double ? fir<double>(waveform, b_coeffs)
                                                                  : fir<float>(waveform, b_coeffs);
}

} // namespace

// Note: We want to avoid using "catch-all" kernel.
// The following registration should be replaced with CPU specific registration.
OPDISPATCH_LIBRARY_FRAGMENT(torchaudio, m) {
  m.def("torchaudio::_lfilter_core_loop", &cpu_lfilter_core_loop);
}

OPDISPATCH_LIBRARY(torchaudio, m) {
  m.def(
      "torchaudio::_lfilter(Tensor waveform, Tensor a_coeffs, Tensor b_coeffs) -> Tensor");
  m.def(
      "torchaudio::_differentiable_fir_apply(Tensor waveform, Tensor b_coeffs) -> Tensor");
  m.def(
      "torchaudio::_differentiable_iir_apply(Tensor waveform, Tensor a_coeffs_normalized) -> Tensor");
}

OPDISPATCH_LIBRARY_IMPL(torchaudio, CompositeImplicitAutograd, m) {
  m.impl("torchaudio::_differentiable_fir_apply", differentiable_fir_apply);
  m.impl("torchaudio::_differentiable_iir_apply", differentiable_iir_apply);
}
