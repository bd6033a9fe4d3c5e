# Written after pytorch/pytorch torch/_subclasses/fake_utils.py
# (CrossRefFakeMode, _check_fake_real_tensors): a TorchDispatchMode that runs
# every operator twice, on FakeTensors in a fresh FakeTensorMode (inputs
# converted with from_tensor(static_shapes=True); operators that cannot run
# on fakes are skipped) and on the real inputs, and compares the outputs'
# count, requires_grad, storage offset and metadata, raising
# MetadataMismatchError. The original ran on PyTorch 2.13 first. Changes:
# torch._prims.utils.compare_tensor_meta is a small comparison of our own
# (sizes, dtype, device, strides); the aliasing check is left out (it needs
# untyped_storage, which issue 28 item 3 adds).
import functools
import warnings

import opdispatch as torch
import opdispatch.utils._pytree as pytree
from opdispatch._subclasses.fake_tensor import FakeTensorMode, MetadataMismatchError, UnsupportedFakeTensorException
from opdispatch._subclasses.symbolic_shapes import ShapeEnv
from opdispatch.utils._python_dispatch import TorchDispatchMode

od = torch.ops.od


def has_meta(func):
    return torch._C._dispatch_has_computed_kernel_for_dispatch_key(func.name(), "Meta")


def compare_tensor_meta(a, b, check_sizes=True, check_strides=False):
    if check_sizes and tuple(a.shape) != tuple(b.shape):
        raise MetadataMismatchError(f"Shapes {tuple(a.shape)} and {tuple(b.shape)} are not equal!")
    if a.dtype != b.dtype:
        raise MetadataMismatchError(f"Dtypes {a.dtype} and {b.dtype} are not equal!")
    if str(a.device) != str(b.device):
        raise MetadataMismatchError(f"Devices {a.device} and {b.device} are not equal!")
    if check_strides and tuple(a.stride()) != tuple(b.stride()):
        raise MetadataMismatchError(f"Strides {tuple(a.stride())} and {tuple(b.stride())} are not equal!")


def _check_fake_real_tensors(real_out, fake_out, context="", sizes=True, strides=False, storage_offset=True,
                             requires_grad=True):
    if requires_grad and real_out.requires_grad != fake_out.requires_grad:
        raise MetadataMismatchError(f"{context} mismatched requires_grad-ness of outputs. This usually means that "
                                    f"you have added autograd support for your operator at a dispatch key other "
                                    f"than Autograd, which will lead to problems")
    if storage_offset and real_out.storage_offset() != fake_out.storage_offset():
        raise MetadataMismatchError(f"{context} mismatched storage offset")
    compare_tensor_meta(real_out, fake_out, check_sizes=sizes, check_strides=strides)


class CrossRefFakeMode(TorchDispatchMode):
    def __init__(self, ignore_op_fn=None, *, check_strides=True, check_aliasing=True, only_check_ops_with_meta=True):
        super().__init__()
        self.ignore_op_fn = ignore_op_fn if ignore_op_fn is not None else lambda fn: False
        self.check_strides = check_strides
        self.check_aliasing = check_aliasing
        self.only_check_ops_with_meta = only_check_ops_with_meta

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        fake_r = None
        if (
            not self.ignore_op_fn(func)
            and (not self.only_check_ops_with_meta or has_meta(func))
            and torch.Tag.dynamic_output_shape not in func.tags
            and torch.Tag.inplace_view not in func.tags
            and torch.Tag.data_dependent_output not in func.tags
        ):
            try:
                with FakeTensorMode(shape_env=ShapeEnv()) as fake_mode:
                    fake_args, fake_kwargs = pytree.tree_map_only(
                        torch.Tensor, functools.partial(fake_mode.from_tensor, static_shapes=True), (args, kwargs))
                    with warnings.catch_warnings():
                        fake_r = func(*fake_args, **fake_kwargs)
            except UnsupportedFakeTensorException:
                pass

        context = f"When comparing the output of {func} on FakeTensor and concrete Tensors, found"
        r = func(*args, **kwargs)
        if fake_r is not None:
            r_flat = pytree.tree_leaves(r)
            f_flat = pytree.tree_leaves(fake_r)
            if len(f_flat) != len(r_flat):
                raise AssertionError(f"{context} mismatch in number of returns {len(f_flat)} != {len(r_flat)}")
            for idx, (r_out, f_out) in enumerate(zip(r_flat, f_flat)):
                r_is_ten = isinstance(r_out, torch.Tensor)
                if r_is_ten != isinstance(f_out, torch.Tensor):
                    raise AssertionError(f"{context} mismatched number of tensor outputs")
                if r_is_ten:
                    try:
                        _check_fake_real_tensors(r_out, f_out, sizes=True, strides=self.check_strides,
                                                 storage_offset=True, requires_grad=True)
                    except Exception as e:
                        error_message = (f"{context} mismatched tensor metadata: {e}" if len(r_flat) == 1
                                         else f"{context} mismatched tensor metadata for output[{idx}]: {e}")
                        raise MetadataMismatchError(error_message) from e
        return r
