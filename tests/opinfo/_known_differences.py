"""The cases where a built-in operator still disagrees with PyTorch 2.13, each
with the kinds of difference (_cases.compare, space-separated, sorted) and
why. tests/test_opinfo.py fails for a listed case that agrees with PyTorch,
or differs in other ways, so this list only ever describes what is true:
fix an operator, then delete its lines. Issue 31 ends with it empty."""
from __future__ import annotations

# PyTorch's _softmax_backward_data / _log_softmax_backward_data return grad_output's dtype (input_dtype matters
# only for a float32 gradient of a float16 input); od casts the result to input_dtype.
_SOFTMAX_BACKWARD_DTYPE = "PyTorch returns grad_output's dtype, od input_dtype"
# PyTorch's outputs follow their inputs' memory layout where its strides are a contract: TensorIterator gives a
# pointwise output the strides of its inputs' dimension order, and *_like, clone and _to_copy keep them
# (memory_format=preserve_format); od's NumPy kernels return C-contiguous outputs.
_LAYOUT = "a column-major input: PyTorch's output is column-major too, od's C-contiguous"

# Kernels of several NumPy steps (convolution, pooling, upsampling, normalisation, softmax, matrix products) round
# float16 after each step; PyTorch's CPU kernels accumulate in float32 and round once (a few last-digit differences).
_FLOAT16_STEPS = "float16: PyTorch accumulates in float32 and rounds once, od's NumPy steps round in between"
# PyTorch 2.13 has no float16 CPU kernel for these (cdist, pdist, avg_pool3d); od computes them.
_NO_HALF_KERNEL = "PyTorch's CPU kernel is not implemented for Half, od computes it"
# PyTorch's _pdist and native_group_norm CPU kernels require contiguous inputs; od accepts any layout.
_REQUIRES_CONTIGUOUS = "PyTorch requires a contiguous input, od accepts any layout"
# PyTorch's layer/group norm backward CPU kernels read mean/rstd and the input as contiguous memory, so a
# non-contiguous or column-major argument gives wrong values (NaN, or another element's) there; od's are right.
_CONTIGUOUS_ONLY = "PyTorch's kernel reads its arguments as contiguous, so its values are wrong here; od's are right"
# PyTorch's _embedding_bag CPU kernel reads offsets[-1] from the data pointer of a non-contiguous offsets tensor (the
# harness's filler value, 99), and raises; od reads the tensor's last element.
_OFFSETS_READ_CONTIGUOUS = "PyTorch reads a non-contiguous offsets' last element from memory past it and raises"
# Note [Gradients not asked for] (python/opdispatch/_builtins/convolution.py): PyTorch returns None for outputs
# output_mask does not ask for; an od Tensor return cannot be None, so od returns an empty tensor.
_UNASKED_GRADIENTS = "output_mask False: PyTorch returns None, od an empty tensor"
# PyTorch's batch norm kernels update running_mean / running_var through their data pointers, leaving the
# version counters alone; od's update them with copy_, which bumps them.
_RUNNING_STATS_VERSION = "PyTorch updates the running stats without bumping their version, od bumps it"
# For a float16 input PyTorch's batch norm returns save_mean / save_invstd in float16; od's are float32.
_BATCH_NORM_HALF_STATS = "float16: PyTorch's saved statistics are float16, od's float32"
# native_dropout with train=False returns its input itself in PyTorch (no copy); od returns a new tensor.
_DROPOUT_ALIAS = "train=False: PyTorch returns the input itself, od a copy"
# PyTorch's resize_ bumps the version only when the sizes change (resize_ to the same sizes returns before any
# change, and no layer above bumps it); od's dispatcher bumps every argument a schema marks written (Tensor(a!)) after every call
# (Note [Post-kernel effects]), so resize_ to the same sizes bumps it too.
_RESIZE_SAME_SIZES_VERSION = "resize_ to the same sizes: PyTorch leaves the version, od's dispatcher bumps it"

#: Case id (_cases.Case.id) -> (kinds of difference, why).
KNOWN_DIFFERENCES: dict[str, tuple[str, str]] = {
    "resize_#2": ("version", _RESIZE_SAME_SIZES_VERSION),
    "resize_#2/float16": ("version", _RESIZE_SAME_SIZES_VERSION),
    "resize_#2/float32": ("version", _RESIZE_SAME_SIZES_VERSION),
    "resize_#2/noncontiguous": ("version", _RESIZE_SAME_SIZES_VERSION),
    "resize_#2/column_major": ("version", _RESIZE_SAME_SIZES_VERSION),
    "index.Tensor#0/column_major": ("strides", _LAYOUT),
    "_softmax_backward_data#0/float16": ("dtype", _SOFTMAX_BACKWARD_DTYPE),
    "_softmax_backward_data#0/float32": ("dtype", _SOFTMAX_BACKWARD_DTYPE),
    "_softmax_backward_data#1/float16": ("dtype", _SOFTMAX_BACKWARD_DTYPE),
    "_softmax_backward_data#1/float32": ("dtype", _SOFTMAX_BACKWARD_DTYPE),
    "_softmax_backward_data#2": ("dtype", _SOFTMAX_BACKWARD_DTYPE),
    "_softmax_backward_data#2/float16": ("dtype", _SOFTMAX_BACKWARD_DTYPE),
    "_softmax_backward_data#2/noncontiguous": ("dtype", _SOFTMAX_BACKWARD_DTYPE),
    "_softmax_backward_data#2/column_major": ("dtype", _SOFTMAX_BACKWARD_DTYPE),
    "_log_softmax_backward_data#0/float16": ("dtype", _SOFTMAX_BACKWARD_DTYPE),
    "_log_softmax_backward_data#0/float32": ("dtype", _SOFTMAX_BACKWARD_DTYPE),
    "_log_softmax_backward_data#1/float16": ("dtype", _SOFTMAX_BACKWARD_DTYPE),
    "_log_softmax_backward_data#1/float32": ("dtype", _SOFTMAX_BACKWARD_DTYPE),
    "_log_softmax_backward_data#2": ("dtype", _SOFTMAX_BACKWARD_DTYPE),
    "_log_softmax_backward_data#2/float16": ("dtype", _SOFTMAX_BACKWARD_DTYPE),
    "_log_softmax_backward_data#2/noncontiguous": ("dtype", _SOFTMAX_BACKWARD_DTYPE),
    "convolution#0/float16": ("values", _FLOAT16_STEPS),
    "convolution#3/float16": ("values", _FLOAT16_STEPS),
    "convolution#4/float16": ("values", _FLOAT16_STEPS),
    "convolution#6/float16": ("values", _FLOAT16_STEPS),
    "convolution_backward#0/float16": ("values", _FLOAT16_STEPS),
    "convolution_backward#4": ("type", _UNASKED_GRADIENTS),
    "convolution_backward#4/float16": ("type", _UNASKED_GRADIENTS),
    "convolution_backward#4/float32": ("type", _UNASKED_GRADIENTS),
    "convolution_backward#4/noncontiguous": ("type", _UNASKED_GRADIENTS),
    "convolution_backward#4/column_major": ("type", _UNASKED_GRADIENTS),
    "conv1d#0/float16": ("values", _FLOAT16_STEPS),
    "conv2d#0/float16": ("values", _FLOAT16_STEPS),
    "conv_transpose1d#0/float16": ("values", _FLOAT16_STEPS),
    "conv_transpose2d.input#0/float16": ("values", _FLOAT16_STEPS),
    "linear#0/float16": ("values", _FLOAT16_STEPS),
    "linear#4/float16": ("values", _FLOAT16_STEPS),
    "addmm#0/float16": ("values", _FLOAT16_STEPS),
    "addmm#2/float16": ("values", _FLOAT16_STEPS),
    "_cdist_forward#0/float16": ("raises", _NO_HALF_KERNEL),
    "_cdist_forward#1/float16": ("raises", _NO_HALF_KERNEL),
    "_cdist_forward#2/float16": ("raises", _NO_HALF_KERNEL),
    "_cdist_forward#3/float16": ("raises", _NO_HALF_KERNEL),
    "_cdist_forward#4/float16": ("raises", _NO_HALF_KERNEL),
    "_cdist_forward#5/float16": ("raises", _NO_HALF_KERNEL),
    "_cdist_forward#8/float16": ("raises", _NO_HALF_KERNEL),
    "_cdist_backward#0/float16": ("raises", _NO_HALF_KERNEL),
    "_cdist_backward#1/float16": ("raises", _NO_HALF_KERNEL),
    "_cdist_backward#2/float16": ("raises", _NO_HALF_KERNEL),
    "_cdist_backward#3/float16": ("raises", _NO_HALF_KERNEL),
    "_pdist_forward#0/float16": ("raises", _NO_HALF_KERNEL),
    "_pdist_forward#0/noncontiguous": ("raises", _REQUIRES_CONTIGUOUS),
    "_pdist_forward#0/column_major": ("raises", _REQUIRES_CONTIGUOUS),
    "_pdist_forward#1/float16": ("raises", _NO_HALF_KERNEL),
    "_pdist_forward#1/noncontiguous": ("raises", _REQUIRES_CONTIGUOUS),
    "_pdist_forward#1/column_major": ("raises", _REQUIRES_CONTIGUOUS),
    "_pdist_forward#2/float16": ("raises", _NO_HALF_KERNEL),
    "_pdist_forward#2/noncontiguous": ("raises", _REQUIRES_CONTIGUOUS),
    "_pdist_forward#2/column_major": ("raises", _REQUIRES_CONTIGUOUS),
    "_pdist_forward#3/float16": ("raises", _NO_HALF_KERNEL),
    "_pdist_forward#3/noncontiguous": ("raises", _REQUIRES_CONTIGUOUS),
    "_pdist_forward#3/column_major": ("raises", _REQUIRES_CONTIGUOUS),
    "_pdist_forward#4/noncontiguous": ("raises", _REQUIRES_CONTIGUOUS),
    "_pdist_backward#0/float16": ("raises", _NO_HALF_KERNEL),
    "_pdist_backward#0/noncontiguous": ("raises", _REQUIRES_CONTIGUOUS),
    "_pdist_backward#0/column_major": ("raises", _REQUIRES_CONTIGUOUS),
    "_pdist_backward#1/float16": ("raises", _NO_HALF_KERNEL),
    "_pdist_backward#1/noncontiguous": ("raises", _REQUIRES_CONTIGUOUS),
    "_pdist_backward#1/column_major": ("raises", _REQUIRES_CONTIGUOUS),
    "cdist#0/float16": ("raises", _NO_HALF_KERNEL),
    "cdist#1/float16": ("raises", _NO_HALF_KERNEL),
    "pdist#0/float16": ("raises", _NO_HALF_KERNEL),
    "pdist#1/float16": ("raises", _NO_HALF_KERNEL),
    "native_dropout#3": ("aliasing", _DROPOUT_ALIAS),
    "native_dropout#3/float16": ("aliasing", _DROPOUT_ALIAS),
    "native_dropout#3/float32": ("aliasing", _DROPOUT_ALIAS),
    "grid_sampler_2d#0/float16": ("values", _FLOAT16_STEPS),
    "grid_sampler_2d#1/float16": ("values", _FLOAT16_STEPS),
    "grid_sampler_2d#3/float16": ("values", _FLOAT16_STEPS),
    "grid_sampler#0/float16": ("values", _FLOAT16_STEPS),
    "_native_batch_norm_legit#0": ("version", _RUNNING_STATS_VERSION),
    "_native_batch_norm_legit#0/float16": ("dtype values version", _RUNNING_STATS_VERSION),
    "_native_batch_norm_legit#0/float32": ("version", _RUNNING_STATS_VERSION),
    "_native_batch_norm_legit#0/noncontiguous": ("version", _RUNNING_STATS_VERSION),
    "_native_batch_norm_legit#0/column_major": ("version", _RUNNING_STATS_VERSION),
    "_native_batch_norm_legit#1": ("version", _RUNNING_STATS_VERSION),
    "_native_batch_norm_legit#1/float16": ("dtype version", _RUNNING_STATS_VERSION),
    "_native_batch_norm_legit#1/float32": ("version", _RUNNING_STATS_VERSION),
    "_native_batch_norm_legit#1/noncontiguous": ("version", _RUNNING_STATS_VERSION),
    "_native_batch_norm_legit#1/column_major": ("version", _RUNNING_STATS_VERSION),
    "_native_batch_norm_legit#2": ("version", _RUNNING_STATS_VERSION),
    "_native_batch_norm_legit#2/float16": ("dtype version", _RUNNING_STATS_VERSION),
    "_native_batch_norm_legit#2/float32": ("version", _RUNNING_STATS_VERSION),
    "_native_batch_norm_legit#2/noncontiguous": ("version", _RUNNING_STATS_VERSION),
    "_native_batch_norm_legit#2/column_major": ("version", _RUNNING_STATS_VERSION),
    "_native_batch_norm_legit#3": ("version", _RUNNING_STATS_VERSION),
    "_native_batch_norm_legit#3/float16": ("dtype values version", _RUNNING_STATS_VERSION),
    "_native_batch_norm_legit#3/float64": ("version", _RUNNING_STATS_VERSION),
    "_native_batch_norm_legit#3/noncontiguous": ("version", _RUNNING_STATS_VERSION),
    "_native_batch_norm_legit#3/column_major": ("version", _RUNNING_STATS_VERSION),
    "_native_batch_norm_legit.no_stats#0/float16": ("dtype values", _BATCH_NORM_HALF_STATS),
    "_native_batch_norm_legit.no_stats#1/float16": ("dtype", _BATCH_NORM_HALF_STATS),
    "_native_batch_norm_legit_no_training#0/float16": ("dtype values", _BATCH_NORM_HALF_STATS),
    "_native_batch_norm_legit_no_training#1/float16": ("dtype", _BATCH_NORM_HALF_STATS),
    "batch_norm#0": ("version", _RUNNING_STATS_VERSION),
    "batch_norm#0/float16": ("values version", _RUNNING_STATS_VERSION),
    "batch_norm#0/float32": ("version", _RUNNING_STATS_VERSION),
    "batch_norm#0/noncontiguous": ("version", _RUNNING_STATS_VERSION),
    "batch_norm#0/column_major": ("version", _RUNNING_STATS_VERSION),
    "native_layer_norm_backward#0/float16": ("values", _FLOAT16_STEPS),
    "native_layer_norm_backward#0/noncontiguous": ("values", _CONTIGUOUS_ONLY),
    "native_layer_norm_backward#0/column_major": ("values", _CONTIGUOUS_ONLY),
    "native_layer_norm_backward#1": ("type", _UNASKED_GRADIENTS),
    "native_layer_norm_backward#1/float16": ("type", _UNASKED_GRADIENTS),
    "native_layer_norm_backward#1/float32": ("type", _UNASKED_GRADIENTS),
    "native_layer_norm_backward#1/noncontiguous": ("type values", _CONTIGUOUS_ONLY),
    "native_layer_norm_backward#1/column_major": ("type", _CONTIGUOUS_ONLY),
    "native_group_norm#0/noncontiguous": ("raises", _REQUIRES_CONTIGUOUS),
    "native_group_norm#0/column_major": ("raises", _REQUIRES_CONTIGUOUS),
    "native_group_norm#1/noncontiguous": ("raises", _REQUIRES_CONTIGUOUS),
    "native_group_norm#1/column_major": ("raises", _REQUIRES_CONTIGUOUS),
    "native_group_norm_backward#0/noncontiguous": ("values", _CONTIGUOUS_ONLY),
    "native_group_norm_backward#0/column_major": ("values", _CONTIGUOUS_ONLY),
    "native_group_norm_backward#1": ("type", _UNASKED_GRADIENTS),
    "native_group_norm_backward#1/float16": ("type", _UNASKED_GRADIENTS),
    "native_group_norm_backward#1/float32": ("type", _UNASKED_GRADIENTS),
    "native_group_norm_backward#1/noncontiguous": ("type values", _CONTIGUOUS_ONLY),
    "native_group_norm_backward#1/column_major": ("type values", _CONTIGUOUS_ONLY),
    "avg_pool2d#1/float16": ("values", _FLOAT16_STEPS),
    "avg_pool2d#2/float16": ("values", _FLOAT16_STEPS),
    "avg_pool2d#5/float16": ("values", _FLOAT16_STEPS),
    "avg_pool3d#0/float16": ("raises", _NO_HALF_KERNEL),
    "avg_pool3d#1/float16": ("raises", _NO_HALF_KERNEL),
    "avg_pool2d_backward#1/float16": ("values", _FLOAT16_STEPS),
    "avg_pool2d_backward#2/float16": ("values", _FLOAT16_STEPS),
    "avg_pool3d_backward#0/float16": ("raises", _NO_HALF_KERNEL),
    "_adaptive_avg_pool2d#0/float16": ("values", _FLOAT16_STEPS),
    "_adaptive_avg_pool3d#0/float16": ("values", _FLOAT16_STEPS),
    "_adaptive_avg_pool3d#1/float16": ("values", _FLOAT16_STEPS),
    "_adaptive_avg_pool2d_backward#1/float16": ("values", _FLOAT16_STEPS),
    "_adaptive_avg_pool3d_backward#0/float16": ("values", _FLOAT16_STEPS),
    "adaptive_avg_pool2d#0/float16": ("values", _FLOAT16_STEPS),
    "adaptive_avg_pool3d#0/float16": ("values", _FLOAT16_STEPS),
    "_softmax#1/float16": ("values", _FLOAT16_STEPS),
    "cross_entropy_loss#5/float16": ("values", _FLOAT16_STEPS),
    "upsample_bilinear2d#0/float16": ("values", _FLOAT16_STEPS),
    "upsample_bilinear2d#3/float16": ("values", _FLOAT16_STEPS),
    "upsample_bilinear2d#5/float16": ("values", _FLOAT16_STEPS),
    "upsample_nearest2d_backward#0/float16": ("values", _FLOAT16_STEPS),
    "upsample_nearest2d_backward#2/float16": ("values", _FLOAT16_STEPS),
    "upsample_bilinear2d_backward#0/float16": ("values", _FLOAT16_STEPS),
    "upsample_bilinear2d_backward#1/float16": ("values", _FLOAT16_STEPS),
    "upsample_bilinear2d.vec#0/float16": ("values", _FLOAT16_STEPS),
    "upsample_bilinear2d.vec#1/float16": ("values", _FLOAT16_STEPS),
    "_embedding_bag#0/noncontiguous": ("raises", _OFFSETS_READ_CONTIGUOUS),
    "_embedding_bag#1/noncontiguous": ("raises", _OFFSETS_READ_CONTIGUOUS),
    "_embedding_bag#2/noncontiguous": ("raises", _OFFSETS_READ_CONTIGUOUS),
    "_embedding_bag#3/noncontiguous": ("raises", _OFFSETS_READ_CONTIGUOUS),
    "_embedding_bag#4/noncontiguous": ("raises", _OFFSETS_READ_CONTIGUOUS),
    "_embedding_bag#5/noncontiguous": ("raises", _OFFSETS_READ_CONTIGUOUS),
    "_embedding_bag#6/noncontiguous": ("raises", _OFFSETS_READ_CONTIGUOUS),
    "_embedding_bag#7/noncontiguous": ("raises", _OFFSETS_READ_CONTIGUOUS),
    "_embedding_bag#8/noncontiguous": ("raises", _OFFSETS_READ_CONTIGUOUS),
    "_embedding_bag#9/noncontiguous": ("raises", _OFFSETS_READ_CONTIGUOUS),
    "_embedding_bag_backward#0/noncontiguous": ("raises", _REQUIRES_CONTIGUOUS),
    "_embedding_bag_backward#1/noncontiguous": ("raises", _REQUIRES_CONTIGUOUS),
    "_embedding_bag_backward#2/noncontiguous": ("raises", _REQUIRES_CONTIGUOUS),
    "_embedding_bag_per_sample_weights_backward#0/noncontiguous": ("raises", _REQUIRES_CONTIGUOUS),
    "_embedding_bag_per_sample_weights_backward#1/noncontiguous": ("raises", _REQUIRES_CONTIGUOUS),
}
