"""The built-in operators (od::*) against NumPy: values, dtypes (NumPy 2
promotion, Python scalars weak), broadcasting, views, in-place rules, and
errors that name the operator and the shapes."""
from __future__ import annotations

import numpy as np
import pytest

import opdispatch
from opdispatch import _C
from opdispatch._builtins import copy as od_copy
from opdispatch._builtins import elementwise, factories, reduction, views
from op_db import OPS, instantiate

VALUE_CASES = [pytest.param(info, sample, id=f"{info.name}-{i}")
               for info in OPS if info.ref is not None for i, sample in enumerate(info.samples)]


def _plain(x: object) -> object:
    """The NumPy form of a sample argument (what the reference receives)."""
    if isinstance(x, list):
        return [_plain(v) for v in x]
    return getattr(x, "array", x)


@pytest.mark.parametrize("info,sample", VALUE_CASES)
def test_values_and_dtypes_match_numpy(info, sample):
    args, kwargs = instantiate(sample, "cpu")
    out = info.op(*args, **kwargs)
    ref_args = [_plain(a) for a in sample.args]
    ref_kwargs = {k: v for k, v in sample.kwargs.items() if k != "device"}
    expected = info.ref(*ref_args, **ref_kwargs)
    outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)  # list: a Tensor[] return
    refs = expected if isinstance(expected, tuple) else (expected,)
    for o, e in zip(outs, refs):
        if not isinstance(o, opdispatch.Tensor):  # a Python scalar (-> Scalar, SymInt, SymBool)
            assert type(o) is type(e) and o == e
            continue
        e = np.asarray(e)
        want = sample.torch_dtype or e.dtype
        assert o.dtype.to_numpy() == want, f"dtype {o.dtype} but {want} expected"
        assert o.shape == e.shape
        # A float16 reference computes in float16 step by step; od (as PyTorch) in float32, rounding once.
        tolerance = 1e-3 if o.dtype == opdispatch.float16 else 1e-6
        np.testing.assert_allclose(o.numpy(force=True), e, rtol=tolerance, atol=tolerance)
    if info.inplace:
        assert out is args[0]
        assert out._version == 1


def test_every_operator_has_cpu_meta_and_autograd_kernels():
    for name in (n for n in _C._dispatch_get_all_op_names() if n.startswith("od::")):
        for key in ("CPU", "Meta", "AutogradCPU"):
            assert _C._dispatch_has_computed_kernel_for_dispatch_key(name, key), f"{name} has no {key} kernel"


# The tags PyTorch 2.13 gives each operator's namesake (torch.ops.aten.<op>.<overload>.tags), by tag set.
PYTORCH_TAGS = {
    ("pt2_compliant_tag",):
        "_log_softmax_backward_data _softmax_backward_data arange arange.start contiguous detach empty_like "
        "flatten.using_ints log_softmax.int matmul nll_loss nll_loss_backward nll_loss_forward ones ones_like reshape "
        "select_backward slice_backward softmax.int squeeze stack to.device to.dtype to.dtype_layout transpose.int t "
        "zeros zeros_like masked_scatter_backward cumprod split.Tensor chunk narrow "
        "elu_backward hardtanh_backward leaky_relu_backward "
        "floor_divide floor_divide.Scalar hardswish hardsigmoid_backward hardswish_backward softplus_backward "
        "true_divide.Scalar divide.Tensor divide.Scalar divide.Tensor_mode multiply.Tensor subtract.Tensor "
        "negative absolute fix arccos arcsin arctan arctan2 "
        "conv1d conv2d conv3d conv_transpose1d conv_transpose2d.input conv_transpose3d.input cross_entropy_loss "
        "group_norm layer_norm linear max_pool1d max_pool2d max_pool3d max_pool3d_with_indices_backward "
        "native_batch_norm_backward pad reflection_pad1d_backward reflection_pad2d_backward "
        "reflection_pad3d_backward replication_pad2d_backward replication_pad3d_backward "
        "_adaptive_avg_pool3d_backward _cdist_backward _pdist_backward adaptive_avg_pool2d adaptive_avg_pool3d "
        "avg_pool3d_backward cdist grid_sampler grid_sampler_2d_backward im2col pdist upsample_bilinear2d "
        "upsample_bilinear2d_backward upsample_nearest2d upsample_nearest2d_backward diagonal_backward "
        "index_select_backward lift_fresh _embedding_bag_backward _embedding_bag_per_sample_weights_backward",
    ("core", "data_dependent_output", "pt2_compliant_tag"): "_local_scalar_dense",
    ("core", "dynamic_output_shape", "pt2_compliant_tag"): "index.Tensor nonzero",
    ("core", "pt2_compliant_tag"):
        "_to_copy arange.start_step bmm cat empty.memory_format expand full mm permute select.int slice.Tensor "
        "squeeze.dim unsqueeze view "
        "as_strided empty_strided index_put sym_size.int sym_stride.int sym_numel sym_storage_offset sym_is_contiguous "
        "copy fill.Scalar alias flip full_like scalar_tensor cumsum squeeze.dims repeat diagonal index_select gather scatter_add scatter.src scatter.value scatter_reduce.two masked_scatter select_scatter "
        "_log_softmax _native_batch_norm_legit _native_batch_norm_legit.no_stats _native_batch_norm_legit_no_training "
        "_softmax addmm constant_pad_nd convolution convolution_backward max_pool2d_with_indices "
        "max_pool2d_with_indices_backward max_pool3d_with_indices native_group_norm native_group_norm_backward "
        "native_layer_norm native_layer_norm_backward reflection_pad1d reflection_pad2d reflection_pad3d "
        "replication_pad2d replication_pad3d "
        "_adaptive_avg_pool2d _adaptive_avg_pool2d_backward _adaptive_avg_pool3d _cdist_forward _pdist_forward "
        "adaptive_avg_pool1d avg_pool1d avg_pool2d avg_pool2d_backward avg_pool3d col2im embedding "
        "embedding_dense_backward _embedding_bag _fft_r2c _fft_c2r grid_sampler_2d upsample_bilinear2d.vec upsample_nearest2d.vec sort topk split_with_sizes",
    ("core", "pointwise", "pt2_compliant_tag"):
        "abs add.Scalar add.Tensor clone cos div.Scalar div.Tensor eq.Scalar eq.Tensor exp ge.Scalar ge.Tensor "
        "gt.Scalar gt.Tensor le.Scalar le.Tensor log lt.Scalar lt.Tensor maximum minimum mul.Scalar mul.Tensor "
        "ne.Scalar ne.Tensor neg pow.Scalar pow.Tensor_Scalar pow.Tensor_Tensor relu sigmoid sin sqrt sub.Scalar "
        "sub.Tensor tanh where.self "
        "acos acosh asin asinh atan atanh bitwise_not ceil cosh expm1 floor isinf isnan log10 log1p log2 logical_not "
        "reciprocal round rsqrt sign sinh tan trunc "
        "atan2 bitwise_and.Scalar bitwise_and.Tensor bitwise_or.Scalar bitwise_or.Tensor bitwise_xor.Scalar "
        "bitwise_xor.Tensor clamp clamp.Tensor div.Scalar_mode div.Tensor_mode elu erf fmod.Scalar fmod.Tensor gelu "
        "hardtanh leaky_relu logical_and logical_or logical_xor remainder.Scalar remainder.Tensor",
    ("core", "out", "pointwise", "pt2_compliant_tag"): "atan2.out",
    ("inplace", "pointwise", "pt2_compliant_tag"):
        "add_.Scalar add_.Tensor div_.Scalar div_.Tensor mul_.Scalar mul_.Tensor sub_.Scalar sub_.Tensor "
        "clamp_ clamp_.Tensor fmod_.Scalar fmod_.Tensor remainder_.Scalar remainder_.Tensor clamp_min_ clamp_max_ "
        "bitwise_and_.Tensor bitwise_and_.Scalar bitwise_or_.Tensor bitwise_or_.Scalar bitwise_xor_.Tensor "
        "bitwise_xor_.Scalar pow_.Tensor pow_.Scalar",
    ("core", "pt2_compliant_tag", "reduction"): "amax argmax max.dim mean mean.dim sum.dim_IntList amin argmin min.dim "
        "any any.dim any.dims var.correction var.dim prod prod.dim_int",
    ("inplace", "pt2_compliant_tag"): "copy_ fill_.Scalar fill_.Tensor index_put_ zero_ floor_divide_.Tensor "
        "floor_divide_.Scalar",
    ("inplace", "inplace_view", "pt2_compliant_tag"): "transpose_ t_ unsqueeze_ squeeze_ squeeze_.dim squeeze_.dims "
        "as_strided_",
    ("core", "nondeterministic_seeded", "pt2_compliant_tag"): "rand randn randperm native_dropout",
    ("pointwise", "pt2_compliant_tag"):
        "rsub.Scalar threshold_backward gelu_backward clamp_min clamp_min.Tensor clamp_max clamp_max.Tensor exp2 "
        "silu silu_backward hardsigmoid softplus square true_divide.Tensor positive clip clip.Tensor relu6 selu "
        "native_dropout_backward min.other max.other",
    ("maybe_aliasing_or_mutating", "pt2_compliant_tag"): "batch_norm",
    ("maybe_aliasing_or_mutating", "pointwise", "pt2_compliant_tag"): "conj_physical",
    ("maybe_aliasing_or_mutating", "nondeterministic_seeded", "pt2_compliant_tag"): "dropout",
    ("pt2_compliant_tag", "reduction"): "sum",
    ("core", "pt2_compliant_tag", "view_copy"): "slice_scatter",
    ("pt2_compliant_tag", "view_copy"): "lift_fresh_copy",
    ("core", "inplace", "inplace_view", "pt2_compliant_tag"): "resize_",
}


def test_operators_carry_the_tags_pytorch_gives_their_namesakes():
    expected = {name: tags for tags, names in PYTORCH_TAGS.items() for name in names.split()}
    defined = sorted(n.removeprefix("od::") for n in _C._dispatch_get_all_op_names() if n.startswith("od::"))
    assert sorted(expected) == defined
    for name in defined:
        base, _, overload = name.partition(".")
        op = getattr(getattr(opdispatch.ops.od, base), overload or "default")
        assert all(isinstance(t, opdispatch.Tag) for t in op.tags), name
        assert tuple(t.name for t in op.tags) == expected[name], name


# --- the NumPy bridge kernels run through ------------------------------------------------------


def test_call_numpy_gives_views_in_and_tensors_out():
    x = opdispatch.tensor([1.0, 2.0])
    assert _C._call_numpy(np.multiply, x, 2.0, out=x) is x  # an out= array is its tensor
    assert x.tolist() == [2.0, 4.0]
    t = _C._call_numpy(np.transpose, opdispatch.ones(2, 3))  # not C-contiguous: copied to C order
    assert t.shape == (3, 2) and t.stride() == (2, 1)
    s = _C._call_numpy(np.sum, x)  # a NumPy scalar becomes a 0-d tensor
    assert s.shape == () and s.item() == 6.0
    pair = _C._call_numpy(lambda a: (a, None), x)
    assert pair[0] is x and pair[1] is None
    with pytest.raises(RuntimeError, match="meta tensors have no data"):
        _C._call_numpy(np.negative, opdispatch.ones(2, device="meta"))
    with pytest.raises(ValueError, match="operands could not be broadcast"):
        _C._call_numpy(np.add, opdispatch.ones(2), opdispatch.ones(3))


def test_numpy_kernel_takes_its_calls_in_c_and_leaves_the_rest_to_its_fallback():
    fallback_calls = []

    def fallback(*args, **kwargs):
        fallback_calls.append((len(args), sorted(kwargs)))
        return _C._call_numpy(np.add, *args, **kwargs)

    kernel = _C._NumpyKernel(np.add, fallback, 2, 1)
    x, y = opdispatch.tensor([1.0, 2.0]), opdispatch.tensor([3.0, 4.0])
    assert kernel(x, y).tolist() == [4.0, 6.0] and fallback_calls == []  # the fast path
    assert kernel(x, 1.5).tolist() == [2.5, 3.5] and fallback_calls == []  # scalars pass through
    out = opdispatch.empty(2)
    assert kernel(x, y, out=out) is out and fallback_calls == [(2, ["out"])]  # keywords: fallback
    assert kernel(opdispatch.ones(2, 2), opdispatch.ones(2)).shape == (2, 2)  # a 2-D tensor: fallback
    assert fallback_calls[-1] == (2, [])
    with pytest.raises(ValueError, match="could not be broadcast"):  # NumPy refuses: the fallback raises
        kernel(opdispatch.ones(2), opdispatch.ones(3))
    assert len(fallback_calls) == 3
    with pytest.raises(RuntimeError, match="meta tensors have no data"):  # other errors: raised as they are
        kernel(opdispatch.ones(2, device="meta"), y)
    assert len(fallback_calls) == 3
    assert kernel.fn is np.add and kernel.__wrapped__ is fallback
    any_call = _C._NumpyKernel(np.add, fallback)
    assert any_call(x, y, out=opdispatch.empty(2)).tolist() == [4.0, 6.0] and len(fallback_calls) == 3
    with pytest.raises(TypeError, match="must be callable"):
        _C._NumpyKernel(np.add, None)
    with pytest.raises(ValueError, match="nargs and ndim"):
        _C._NumpyKernel(np.add, fallback, -2)


def test_kernels_ignore_floating_point_errors_and_leave_numpys_state_alone():
    previous = np.seterr(all="raise")
    try:
        big = opdispatch.tensor([3e38], dtype=opdispatch.float32)
        assert (big * 10).tolist() == [float("inf")]
        assert opdispatch.tensor([0.0]).log().tolist() == [float("-inf")]
        assert np.isnan(opdispatch.tensor([-1.0]).sqrt().item())
        with pytest.raises(FloatingPointError):
            np.float32(3e38) * np.float32(10)
        assert np.geterr()["over"] == "raise"
    finally:
        np.seterr(**previous)


# --- type promotion ------------------------------------------------------------------------
# Expected dtypes as PyTorch 2.13 gives them (run in its venv); see Note [Result type] in
# csrc/opdispatch/core/TypePromotion.h.

@pytest.mark.parametrize("dtype,number,expected,first", [
    (opdispatch.float32, 2.5, opdispatch.float32, 3.5),
    (opdispatch.float16, 2, opdispatch.float16, 3.0),
    (opdispatch.int8, 1, opdispatch.int8, 2),
    (opdispatch.int64, 2.5, opdispatch.float32, 3.5),  # a float number: the default dtype, not float64
    (opdispatch.bool, 1, opdispatch.int64, 2),
    (opdispatch.int32, True, opdispatch.int32, 2),
    (opdispatch.bool, 2.5, opdispatch.float32, 3.5),
    (opdispatch.uint8, -1, opdispatch.uint8, 0),  # out of range: wraps around, as in PyTorch
    (opdispatch.int8, 1000, opdispatch.int8, -23),
])
def test_python_numbers_count_only_when_of_a_higher_category(dtype, number, expected, first):
    t = opdispatch.ones(3, dtype=dtype)
    assert (t + number).dtype is expected and (t + number).tolist()[0] == first
    assert (number * t).dtype is expected
    assert (opdispatch.ones(3, dtype=dtype, device="meta") + number).dtype is expected


@pytest.mark.parametrize("a,b,expected", [
    (opdispatch.float32, opdispatch.float64, opdispatch.float64),
    (opdispatch.int32, opdispatch.float32, opdispatch.float32),  # NumPy would give float64
    (opdispatch.int8, opdispatch.uint8, opdispatch.int16),
    (opdispatch.bool, opdispatch.int16, opdispatch.int16),
    (opdispatch.float16, opdispatch.int8, opdispatch.float16),
    (opdispatch.int64, opdispatch.float16, opdispatch.float16),  # NumPy would give float64
    (opdispatch.float64, opdispatch.complex64, opdispatch.complex128),
    (opdispatch.uint8, opdispatch.bool, opdispatch.uint8),
])
def test_tensor_promotion_follows_pytorch(a, b, expected):
    out = opdispatch.ones(2, dtype=a) * opdispatch.ones(2, dtype=b)
    assert out.dtype is expected
    assert opdispatch.promote_types(a, b) is expected and opdispatch.result_type(opdispatch.ones(2, dtype=a),
                                                                                 opdispatch.ones(2, dtype=b)) is expected
    assert (opdispatch.ones(2, dtype=a, device="meta") * opdispatch.ones(2, dtype=b, device="meta")).dtype is expected


def test_integer_division_gives_the_default_float_dtype():
    out = opdispatch.tensor([1, 2, 3]) / opdispatch.tensor([2, 2, 2])
    assert out.dtype is opdispatch.float32
    assert out.tolist() == [0.5, 1.0, 1.5]
    assert opdispatch.tensor([1, 2, 3]).sin().dtype is opdispatch.float32
    assert opdispatch.tensor([True]).exp().dtype is opdispatch.float32


@pytest.mark.parametrize("a,b,expected,both_zero_dim", [
    (opdispatch.float32, opdispatch.float64, opdispatch.float32, opdispatch.float64),
    (opdispatch.int32, opdispatch.float64, opdispatch.float64, opdispatch.float64),
    (opdispatch.int8, opdispatch.int64, opdispatch.int8, opdispatch.int64),
    (opdispatch.bool, opdispatch.int8, opdispatch.int8, opdispatch.int8),
    (opdispatch.float32, opdispatch.complex128, opdispatch.complex64, opdispatch.complex128),
    (opdispatch.int64, opdispatch.complex128, opdispatch.complex128, opdispatch.complex128),
])
def test_zero_dim_tensors_count_below_tensors_with_dimensions(a, b, expected, both_zero_dim):
    zero_dim = opdispatch.tensor(1, dtype=b)
    assert (opdispatch.ones(3, dtype=a) + zero_dim).dtype is expected
    assert (opdispatch.ones((), dtype=a) + zero_dim).dtype is both_zero_dim


def test_result_type_of_zero_dim_tensors_and_numbers():
    assert opdispatch.result_type(opdispatch.ones((), dtype=opdispatch.int32), 2.5) is opdispatch.float32
    assert opdispatch.result_type(opdispatch.tensor(1, dtype=opdispatch.uint8), 5) is opdispatch.uint8
    assert opdispatch.can_cast(opdispatch.int64, opdispatch.float16)
    assert not opdispatch.can_cast(opdispatch.float32, opdispatch.int64)
    with pytest.raises(TypeError, match="must be a tensor or a Python number"):
        opdispatch.result_type(opdispatch.ones(2), "x")


def test_comparisons_promote_then_give_bool():
    out = opdispatch.ones(3, dtype=opdispatch.int64) < 2.5
    assert out.dtype is opdispatch.bool and out.tolist() == [True] * 3


# --- broadcasting and shape errors -------------------------------------------------------------------

@pytest.mark.parametrize("call,shapes", [
    (lambda x, y: x + y, "(2, 3) and (4,)"),
    (lambda x, y: x * y, "(2, 3) and (4,)"),
    (lambda x, y: opdispatch.maximum(x, y), "(2, 3) and (4,)"),
    (lambda x, y: x == y, "(2, 3) and (4,)"),
    (lambda x, y: opdispatch.where(x > 0, x, y), "(2, 3) and (2, 3) and (4,)"),
])
def test_broadcast_errors_name_the_op_and_both_shapes(call, shapes):
    with pytest.raises(RuntimeError, match=r"od::\w+.*" + shapes.replace("(", r"\(").replace(")", r"\)")):
        call(opdispatch.ones(2, 3), opdispatch.ones(4))


@pytest.mark.parametrize("call,message", [
    (lambda: opdispatch.ones(2, 3) @ opdispatch.ones(2, 3), r"od::matmul: shapes \(2, 3\) and \(2, 3\) cannot"),
    (lambda: opdispatch.ones(2, 3).mm(opdispatch.ones(4, 3)), r"od::mm: shapes \(2, 3\) and \(4, 3\) cannot"),
    (lambda: opdispatch.ones(2, 2, 3).bmm(opdispatch.ones(3, 3, 2)), r"od::bmm: batch sizes differ"),
    (lambda: opdispatch.ones(2).mm(opdispatch.ones(2, 2)), r"od::mm: expected 2-D tensors"),
    (lambda: opdispatch.ones(()) @ opdispatch.ones(2), r"od::matmul: both arguments need to be at least 1D"),
    (lambda: opdispatch.cat([opdispatch.ones(2, 3), opdispatch.ones(2, 2)]),
     r"od::cat: sizes of tensors must match except in dimension 0: tensor 0 has shape \[2, 3\] and tensor 1 has "
     r"shape \[2, 2\]"),
    (lambda: opdispatch.stack([opdispatch.ones(2), opdispatch.ones(3)]),
     r"od::stack: stack expects each tensor to be equal size, but got \[2\] at entry 0 and \[3\] at entry 1"),
    (lambda: opdispatch.ones(2, 3).add_(opdispatch.ones(4, 2, 3)),
     r"od::add_.Tensor: output with shape \[2, 3\] doesn't match the broadcast shape \[4, 2, 3\]"),
    (lambda: opdispatch.ones(2, 3).copy_(opdispatch.ones(2)), r"od::copy_: .* shape \[2\] .* shape \[2, 3\]"),
    (lambda: opdispatch.ones(6).view(4, -1), r"od::view: shape \[4, -1\] is invalid for input of size 6"),
    (lambda: opdispatch.ones(2, 3).expand(3, 3), r"od::expand: the expanded size of the tensor \(3\)"),
])
def test_shape_errors(call, message):
    with pytest.raises(RuntimeError, match=message):
        call()


def test_cat_of_no_tensors_is_a_value_error():
    # PyTorch 2.13: ValueError "torch.cat(): expected a non-empty list of Tensors" (also for a tuple).
    for empty in ([], ()):
        with pytest.raises(ValueError, match=r"^opdispatch.cat\(\): expected a non-empty list of Tensors$"):
            opdispatch.cat(empty)


# --- in place -----------------------------------------------------------------------------------------

def test_inplace_writes_into_the_tensors_own_memory():
    a = np.arange(6.0).reshape(2, 3)
    t = opdispatch.from_numpy(a)
    before = t.data_ptr()
    t.add_(opdispatch.ones(3), alpha=2).mul_(opdispatch.full([2, 1], 3.0, dtype=opdispatch.float64))
    t.sub_(opdispatch.ones(()))
    t.div_(opdispatch.full([], 2.0))
    assert t.data_ptr() == before
    np.testing.assert_allclose(a, ((np.arange(6.0).reshape(2, 3) + 2) * 3 - 1) / 2)
    assert t._version == 4
    t.zero_()
    assert not a.any()
    t.fill_(1.5)
    assert (a == 1.5).all() and t._version == 6


@pytest.mark.parametrize("call,message", [
    (lambda t, d: t.add_(opdispatch.ones(3, device=d)), "result type Float can't be cast to the desired output type Long"),
    (lambda t, d: t.div_(opdispatch.ones(3, dtype=opdispatch.int64, device=d)),
     "result type Float can't be cast to the desired output type Long"),  # true division gives float32
    (lambda t, d: t.mul_(1.5), "result type Float can't be cast to the desired output type Long"),
    (lambda t, d: t.add_(opdispatch.ones(3, dtype=opdispatch.int64, device=d), alpha=2.5),
     "For integral input tensors, argument alpha must not be a floating point number"),
])
@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_inplace_result_that_cannot_be_cast_raises_like_pytorch(call, message, device):
    t = opdispatch.ones(3, dtype=opdispatch.int64, device=device)
    with pytest.raises(RuntimeError, match=message):
        call(t, device)
    assert t._version == 0
    if device == "cpu":
        assert t.tolist() == [1, 1, 1]


def test_inplace_casts_that_pytorch_refuses():
    with pytest.raises(RuntimeError, match="result type Long can't be cast to the desired output type Bool"):
        opdispatch.ones(3, dtype=opdispatch.bool).add_(1)
    with pytest.raises(RuntimeError, match="result type ComplexFloat can't be cast to the desired output type Float"):
        opdispatch.ones(3).add_(opdispatch.ones(3, dtype=opdispatch.complex64))
    f = opdispatch.ones(3, dtype=opdispatch.float32)
    f.add_(opdispatch.ones(3, dtype=opdispatch.float64))  # same kind: allowed
    assert f.dtype is opdispatch.float32 and f.tolist() == [2.0, 2.0, 2.0]


def test_inplace_through_a_view_updates_the_base():
    base = opdispatch.zeros(3, 4)
    base[1].fill_(2.0)
    base[:, 3].add_(opdispatch.ones(3))
    assert base.tolist() == [[0, 0, 0, 1], [2, 2, 2, 3], [0, 0, 0, 1]]
    assert base._version == 2


def test_copy_casts_and_broadcasts():
    t = opdispatch.zeros(2, 3, dtype=opdispatch.int32)
    t.copy_(opdispatch.tensor([1.7, -2.2, 3.0]))
    assert t.tolist() == [[1, -2, 3], [1, -2, 3]] and t.dtype is opdispatch.int32


# --- views ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda t: t.view(3, 4), lambda t: t.reshape(2, 6), lambda t: t.transpose(0, 1), lambda t: t.permute(1, 0),
    lambda t: t[1], lambda t: t[:, 1:3], lambda t: t.unsqueeze(0), lambda t: t[None].squeeze(0),
    lambda t: t[1:2].squeeze(), lambda t: t.flatten(), lambda t: t[0].expand(2, 4), lambda t: t.t(),
    lambda t: t.to(opdispatch.float32), lambda t: t.contiguous(),
])
def test_views_share_storage_and_version_counter(make):
    t = opdispatch.arange(12.0).view(3, 4)
    v = make(t)
    assert v._shares_storage(t)
    t.add_(opdispatch.ones(()))
    assert v._version == t._version == 1
    assert np.shares_memory(v.numpy(), t.numpy())


def test_view_strides_match_pytorch():
    t = opdispatch.arange(24.0).view(2, 3, 4)
    assert t.transpose(0, 2).stride() == (1, 4, 12)
    assert t[:, 1].stride() == (12, 1) and t[:, 1].storage_offset() == 4
    assert t[:, :, ::2].stride() == (12, 4, 2)
    assert t.unsqueeze(1).stride() == (12, 12, 4, 1)
    assert t.unsqueeze(3).stride() == (12, 4, 1, 1)
    assert t[0].expand(2, 3, 4).stride() == (0, 4, 1)


def test_view_of_noncontiguous_raises_and_reshape_copies():
    t = opdispatch.arange(6.0).view(2, 3).t()
    with pytest.raises(RuntimeError, match=r"od::view: view size \[6\] is not compatible .* Use .reshape"):
        t.view(6)
    r = t.reshape(6)
    assert r.tolist() == [0, 3, 1, 4, 2, 5] and not r._shares_storage(t)


def test_select_and_slice_bounds():
    t = opdispatch.arange(6).view(2, 3)
    with pytest.raises(IndexError, match=r"od::select.int: index 3 out of range for tensor of size \[2, 3\] at "
                                         r"dimension 1"):
        views.select(t, 1, 3)
    with pytest.raises(IndexError, match="dimension 2 out of range"):
        views.select(t, 2, 0)
    assert views.slice_(t, 1, -2, 100).tolist() == [[1, 2], [4, 5]]
    assert views.slice_(t, 1, 5, 1).shape == (2, 0)
    with pytest.raises(RuntimeError, match="slice step must be positive"):
        views.slice_(t, 0, None, None, 0)


def test_permute_and_squeeze_rules():
    t = opdispatch.zeros(2, 1, 3)
    with pytest.raises(RuntimeError, match=r"od::permute: dims \[0, 0, 1\] must be a permutation"):
        t.permute(0, 0, 1)
    assert t.squeeze(0).shape == (2, 1, 3)
    assert t.squeeze(1).shape == (2, 3)
    assert t.flatten(0, 1).shape == (2, 3) and opdispatch.tensor(5.0).flatten().shape == (1,)


# --- factories and random ------------------------------------------------------------------------------

def test_factory_dtypes_follow_pytorch_defaults():
    assert opdispatch.zeros(2).dtype is opdispatch.float32
    assert opdispatch.full([2], 3).dtype is opdispatch.int64
    assert opdispatch.full([2], 3.0).dtype is opdispatch.float32
    assert opdispatch.full([2], False).dtype is opdispatch.bool
    assert opdispatch.arange(3).dtype is opdispatch.int64
    assert opdispatch.arange(0, 1, 0.5).tolist() == [0.0, 0.5]
    assert opdispatch.arange(10, 0, -3).tolist() == [10, 7, 4, 1]
    assert opdispatch.empty(2, 3).shape == (2, 3) and opdispatch.empty((4,)).shape == (4,)


@pytest.mark.parametrize("call,message", [
    (lambda: opdispatch.arange(0, 5, 0), "step must be nonzero"),
    (lambda: opdispatch.arange(0, 5, -1), "inconsistent with step sign"),
    (lambda: opdispatch.zeros(2, -1), r"negative dimension in size \[2, -1\]"),
    (lambda: opdispatch.rand(2, dtype=opdispatch.int64), "od::rand"),
    (lambda: opdispatch.zeros(2, device="cuda"), "has no memory"),
])
def test_factory_errors(call, message):
    with pytest.raises((RuntimeError, NotImplementedError), match=message):
        call()


def test_manual_seed_makes_random_factories_reproducible():
    opdispatch.manual_seed(7)
    a, b = opdispatch.rand(100), opdispatch.randn(3, 4, dtype=opdispatch.float64)
    opdispatch.manual_seed(7)
    assert opdispatch.rand(100).tolist() == a.tolist()
    assert opdispatch.randn(3, 4, dtype=opdispatch.float64).tolist() == b.tolist()
    values = a.numpy()
    assert a.dtype is opdispatch.float32 and (values >= 0).all() and (values < 1).all()
    assert opdispatch.randn(2, dtype=opdispatch.float16).dtype is opdispatch.float16
    opdispatch.manual_seed(7)
    p = opdispatch.randperm(50)
    opdispatch.manual_seed(7)
    assert opdispatch.randperm(50).tolist() == p.tolist() and sorted(p.tolist()) == list(range(50))
    assert p.dtype is opdispatch.int64 and opdispatch.randperm(3, dtype=opdispatch.float64).dtype is opdispatch.float64


def test_like_factories_keep_metadata_and_never_require_grad():
    x = opdispatch.ones(2, 3, dtype=opdispatch.float64, requires_grad=True)
    for fn in (opdispatch.zeros_like, opdispatch.ones_like, opdispatch.empty_like):
        y = fn(x)
        assert (y.shape, y.dtype, y.requires_grad, y.grad_fn) == ((2, 3), opdispatch.float64, False, None)
    assert opdispatch.zeros_like(x, dtype=opdispatch.int8).dtype is opdispatch.int8


# --- reductions, nn, conversions ------------------------------------------------------------------------

def test_reduction_rules():
    t = opdispatch.arange(6).view(2, 3)
    assert t.sum().dtype is opdispatch.int64 and t.sum().item() == 15
    assert t.sum((0, 1), keepdim=True).shape == (1, 1)
    assert opdispatch.ones(3, dtype=opdispatch.bool).sum().item() == 3
    with pytest.raises(RuntimeError, match="od::mean: could not infer output dtype"):
        t.mean()
    assert t.mean(dtype=opdispatch.float64).item() == 2.5
    with pytest.raises(RuntimeError, match="names a dimension twice"):
        t.sum((1, -1))
    with pytest.raises(IndexError, match="od::amax: expected reduction dimensions"):
        opdispatch.zeros(0, 3).amax(0)
    values, indices = opdispatch.tensor([[1.0, 5.0, 5.0], [7.0, 0.0, 7.0]]).max(1)
    assert values.tolist() == [5.0, 7.0] and indices.tolist() == [1, 0] and indices.dtype is opdispatch.int64
    assert opdispatch.tensor([[1, 9], [8, 2]]).argmax().item() == 1
    assert opdispatch.tensor(3.0).max(0).values.item() == 3.0


def test_softmax_is_stable_and_log_softmax_consistent():
    x = opdispatch.tensor([[1000.0, 1001.0], [-1000.0, -1000.0]], dtype=opdispatch.float64)
    np.testing.assert_allclose(x.softmax(1).numpy(), [[1 / (1 + np.e), np.e / (1 + np.e)], [0.5, 0.5]])
    np.testing.assert_allclose(x.log_softmax(1).exp().numpy(), x.softmax(1).numpy())
    with pytest.raises(RuntimeError, match="od::_softmax: expected a floating-point input"):
        opdispatch.arange(3).softmax(0)


def test_nll_loss_errors():
    logp = opdispatch.zeros(2, 3)
    with pytest.raises(IndexError, match="od::nll_loss_forward: Target 3 is out of bounds"):
        opdispatch.nll_loss(logp, opdispatch.tensor([0, 3]))
    with pytest.raises(RuntimeError, match=r"expected target of shape \[2\]"):
        opdispatch.nll_loss(logp, opdispatch.tensor([0, 1, 2]))
    with pytest.raises(RuntimeError, match="integer dtype"):
        opdispatch.nll_loss(logp, opdispatch.tensor([0.0, 1.0]))
    ignored = opdispatch.nll_loss(logp, opdispatch.tensor([-100, -100]))
    assert np.isnan(ignored.item())  # mean over zero total weight, as PyTorch


def test_where_needs_a_bool_condition():
    with pytest.raises(RuntimeError, match="od::where.self: expected condition to be a boolean tensor"):
        opdispatch.where(opdispatch.ones(2), opdispatch.ones(2), opdispatch.zeros(2))


def test_to_returns_self_unless_something_changes():
    t = opdispatch.ones(2)
    assert t.to(opdispatch.float32) is t and t.to("cpu") is t and t.contiguous() is t
    assert t.to(opdispatch.float32, copy=True) is not t
    assert od_copy.to_dtype(t, opdispatch.float64).dtype is opdispatch.float64
    m = t.to("meta")
    assert m.is_meta and m.to("meta") is m


def test_helpers_called_directly():
    g = opdispatch.arange(6.0).view(2, 3)
    assert views.slice_backward(g, [4, 3], 0, 1, 4, 2).tolist() == [[0, 0, 0], [0, 1, 2], [0, 0, 0], [3, 4, 5]]
    assert reduction.sum_to(opdispatch.ones(2, 3, 4), (3, 1)).tolist() == [[8.0]] * 3
    assert factories.arange(3, dtype=opdispatch.float64).dtype is opdispatch.float64
    assert elementwise.pow_scalar(2, opdispatch.arange(3)).tolist() == [1, 2, 4]


def test_t_is_an_operator_as_in_pytorch():
    # Values from PyTorch 2.13 (aten::t: its own schema, CompositeExplicitAutograd, a formula of its own).
    from opdispatch.utils._python_dispatch import TorchDispatchMode

    class Log(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.log = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.log.append(str(func))
            return func(*args, **(kwargs or {}))

    op = opdispatch.ops.od.t.default
    assert str(op._schema) == "od::t(Tensor(a) self) -> Tensor(a)" and op.is_view
    assert [str(tag) for tag in op.tags] == ["Tag.pt2_compliant_tag"]
    x, v = opdispatch.arange(6.0).view(2, 3), opdispatch.arange(3.0)
    with Log() as mode:
        y = x.t()
        opdispatch.t(x)
        v.t()
        op(x)
    assert mode.log == ["od.t.default"] * 4
    assert y.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]] and y.stride() == (1, 3) and y.storage_offset() == 0
    with pytest.raises(RuntimeError, match=r"^t\(\) expects a tensor with <= 2 dimensions, but self is 3D$"):
        opdispatch.ones(2, 3, 4).t()
    x = opdispatch.arange(6.0).view(2, 3).requires_grad_()
    (x.t() * opdispatch.arange(6.0).view(3, 2)).sum().backward()
    assert x.grad.tolist() == [[0.0, 2.0, 4.0], [1.0, 3.0, 5.0]]


def test_full_like_as_pytorch():
    # PyTorch 2.13: the fill value is cast to the dtype; input's dtype unless given; requires_grad honoured.
    x = opdispatch.ones(2, 3, dtype=opdispatch.int32)
    filled = opdispatch.full_like(x, 2.7)
    assert filled.dtype is opdispatch.int32 and filled.tolist() == [[2, 2, 2], [2, 2, 2]]
    wide = opdispatch.full_like(x, 2.5, dtype=opdispatch.float64)
    assert wide.dtype is opdispatch.float64 and wide.tolist() == [[2.5] * 3] * 2
    assert opdispatch.full_like(opdispatch.ones(2), 1.0, requires_grad=True).requires_grad
