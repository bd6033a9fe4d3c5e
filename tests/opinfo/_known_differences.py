"""The cases where a built-in operator still disagrees with PyTorch 2.13, each
with the kinds of difference (_cases.compare, space-separated, sorted) and
why. tests/test_opinfo.py fails for a listed case that agrees with PyTorch,
or differs in other ways, so this list only ever describes what is true:
fix an operator, then delete its lines. Issue 31 ends with it listing only
the cases after "od is right" below, where PyTorch 2.13 has no kernel or
gives a wrong result and od is right."""
from __future__ import annotations

# PyTorch's aten::index runs TensorIterator over self restrided to the indexed shape and the reshaped index
# tensors, so a column-major self gives a column-major result; od's index follows Note [Output strides]
# (python/opdispatch/_builtins/_output_strides.py) only for elementwise operators and copies, and gives index a
# C-contiguous result.
_LAYOUT = "a column-major input: PyTorch's index result is column-major too, od's C-contiguous"

# od computes float16 in float32 and rounds once (Note [float16 computes in float32] in
# python/opdispatch/_builtins/_numpy.py), as most of PyTorch's CPU kernels do. These PyTorch float16 kernels do
# not: grid_sampler computes its source coordinates in float16, 3-D adaptive average pooling and the adaptive
# pooling gradients sum and divide in float16, and log_softmax (under cross_entropy) and layer norm's bias gradient
# round somewhere inside their vectorised loops (neither NumPy's float16 steps nor float32-then-round reproduce
# them). od does not copy those roundings step by step: a few last-digit differences.
_FLOAT16_STEPS = "float16: PyTorch's kernel rounds to float16 between its steps, od computes in float32 and rounds once"

# Note [Gradients not asked for] (python/opdispatch/_builtins/convolution.py): PyTorch returns None for outputs
# output_mask does not ask for (an undefined Tensor); an od Tensor return cannot be None (a Python kernel returning
# None for a Tensor return is refused in csrc/python/IValueConversion.cpp), so od returns an empty tensor. Closing
# this needs undefined tensors through the whole call path: None accepted and passed back for a Tensor return, and
# every consumer of results (autograd's output wrapping, version and alias checks, make_fx, FakeTensorMode, the
# C++ typed calls) made to handle an undefined Tensor, as PyTorch's do.
_UNASKED_GRADIENTS = "output_mask False: PyTorch returns None, od an empty tensor"
# PyTorch's resize_ bumps the version only when the sizes change (resize_ to the same sizes returns before any
# change, and no layer above bumps it); od's dispatcher bumps every argument a schema marks written (Tensor(a!)) after every call
# (Note [Post-kernel effects]), so resize_ to the same sizes bumps it too.
_RESIZE_SAME_SIZES_VERSION = "resize_ to the same sizes: PyTorch leaves the version, od's dispatcher bumps it"

# --- od is right: PyTorch 2.13 has no kernel for the case or gives a wrong result. These entries stay. ---
# PyTorch 2.13 has no float16 CPU kernel for these (cdist, pdist, avg_pool3d; NotImplementedError "... not
# implemented for 'Half'"): a missing kernel in PyTorch, not an od error; od computes them (in float32, rounding once).
_NO_HALF_KERNEL = "PyTorch has no float16 CPU kernel here (it raises); od computes the result"
# PyTorch's _pdist, native_group_norm and embedding_bag backward CPU kernels refuse non-contiguous inputs (a limit of
# those kernels: the schema and the documentation accept any strided tensor); od computes them for any layout.
_REQUIRES_CONTIGUOUS = "PyTorch's kernel refuses a non-contiguous input (a kernel limit); od computes the result"
# PyTorch's layer/group norm backward CPU kernels read mean/rstd and the input as contiguous memory, so a
# non-contiguous or column-major argument gives wrong values (NaN, or another element's) there: a PyTorch bug;
# od's values are the right ones.
_CONTIGUOUS_ONLY = "PyTorch's kernel reads its arguments as contiguous, so its values are wrong here; od's are right"
# PyTorch's _embedding_bag CPU kernel reads offsets[-1] from the data pointer of a non-contiguous offsets tensor (the
# harness's filler value, 99), and raises: a PyTorch bug; od reads the tensor's last element and computes the bags.
_OFFSETS_READ_CONTIGUOUS = "PyTorch reads a non-contiguous offsets' last element from memory past it and raises"
# PyTorch's native_dropout CPU kernel returns an empty input itself (native_dropout_cpu's early return), although
# the schema, (Tensor, Tensor) without alias annotations, promises new tensors: its own FakeTensorMode returns a new
# one, and for an input that requires grad the call gives the input itself a grad_fn. od keeps the schema's promise
# and returns a new empty tensor; PyTorch is wrong here, od right. (train=False copies in both.)
_DROPOUT_ALIAS = "an empty input: PyTorch returns the input itself against its schema, od a new tensor"

#: Case id (_cases.Case.id) -> (kinds of difference, why).
KNOWN_DIFFERENCES: dict[str, tuple[str, str]] = {
    "resize_#2": ("version", _RESIZE_SAME_SIZES_VERSION),
    "resize_#2/float16": ("version", _RESIZE_SAME_SIZES_VERSION),
    "resize_#2/float32": ("version", _RESIZE_SAME_SIZES_VERSION),
    "resize_#2/noncontiguous": ("version", _RESIZE_SAME_SIZES_VERSION),
    "resize_#2/column_major": ("version", _RESIZE_SAME_SIZES_VERSION),
    "index.Tensor#0/column_major": ("strides", _LAYOUT),
    "convolution_backward#4": ("type", _UNASKED_GRADIENTS),
    "convolution_backward#4/float16": ("type", _UNASKED_GRADIENTS),
    "convolution_backward#4/float32": ("type", _UNASKED_GRADIENTS),
    "convolution_backward#4/noncontiguous": ("type", _UNASKED_GRADIENTS),
    "convolution_backward#4/column_major": ("type", _UNASKED_GRADIENTS),
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
    "avg_pool3d#0/float16": ("raises", _NO_HALF_KERNEL),
    "avg_pool3d#1/float16": ("raises", _NO_HALF_KERNEL),
    "avg_pool3d_backward#0/float16": ("raises", _NO_HALF_KERNEL),
    "_adaptive_avg_pool3d#0/float16": ("values", _FLOAT16_STEPS),
    "_adaptive_avg_pool3d#1/float16": ("values", _FLOAT16_STEPS),
    "_adaptive_avg_pool2d_backward#1/float16": ("values", _FLOAT16_STEPS),
    "_adaptive_avg_pool3d_backward#0/float16": ("values", _FLOAT16_STEPS),
    "adaptive_avg_pool3d#0/float16": ("values", _FLOAT16_STEPS),
    "cross_entropy_loss#5/float16": ("values", _FLOAT16_STEPS),
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
