# Written after pytorch/pytorch torch/testing/_internal/two_tensor.py
# (TwoTensor): a traceable wrapper subclass holding two tensors of one
# geometry, which runs every operator on both and wraps the results again,
# handing them to return_and_correct_aliasing so that views alias their base
# and in-place / out= operators return the tensor they wrote. The original
# ran on PyTorch 2.13 first. Changes beyond the name map: the constructor's
# torch._disable_dynamo and mark_subclass_constructor_exportable_experimental
# decorators are left out (opdispatch has no compiler or exporter), and so
# is the check for cond_op, whose results the original returns unchanged.
# TwoTensorMode, after the same file, makes every tensor a constructor
# returns a TwoTensor.
import opdispatch as torch
import opdispatch.utils._pytree as pytree
from opdispatch._subclasses.fake_tensor import _is_tensor_constructor
from opdispatch.utils._python_dispatch import TorchDispatchMode, return_and_correct_aliasing


class TwoTensor(torch.Tensor):
    @staticmethod
    def __new__(cls, a, b, outer_size=None, outer_stride=None, *, requires_grad=None):
        outer_size = a.size() if outer_size is None else outer_size
        outer_stride = a.stride() if outer_stride is None else outer_stride
        same = (a.device == b.device and a.layout == b.layout and a.requires_grad == b.requires_grad
                and a.dtype == b.dtype)
        if not same:
            raise AssertionError("Expected a and b to have same device, layout, requires_grad, and dtype")
        wrapper = torch.Tensor._make_wrapper_subclass(
            cls, outer_size, strides=outer_stride, storage_offset=a.storage_offset(), device=a.device,
            layout=a.layout, requires_grad=requires_grad or a.requires_grad, dtype=a.dtype)
        if a.shape != b.shape:
            raise AssertionError(f"Expected a.shape == b.shape, got {a.shape} != {b.shape}")
        if a.stride() != b.stride():
            raise AssertionError(f"Expected a.stride() == b.stride(), got {a.stride()} != {b.stride()}")
        if a.storage_offset() != b.storage_offset():
            raise AssertionError("Expected a.storage_offset() == b.storage_offset(), "
                                 f"got {a.storage_offset()} != {b.storage_offset()}")
        return wrapper

    def __init__(self, a, b, outer_size=None, outer_stride=None, *, requires_grad=None):
        self.a = a
        self.b = b

    def __repr__(self):
        return f"TwoTensor({self.a!r}, {self.b!r})"

    def __tensor_flatten__(self):
        return ["a", "b"], None

    @staticmethod
    def __tensor_unflatten__(inner_tensors, meta, outer_size, outer_stride):
        if meta is not None:
            raise AssertionError("Expected meta to be None")
        a, b = inner_tensors["a"], inner_tensors["b"]
        if type(a) is torch.Tensor and (outer_size is None or outer_stride is None):
            raise AssertionError("Expected outer_size and outer_stride for plain inner tensors")
        return TwoTensor(a, b, outer_size, outer_stride)

    @classmethod
    def __torch_dispatch__(cls, func, types, args, kwargs):
        kwargs = {} if kwargs is None else kwargs
        out_a = func(*pytree.tree_map_only(TwoTensor, lambda x: x.a, args),
                     **pytree.tree_map_only(TwoTensor, lambda x: x.a, kwargs))
        out_b = func(*pytree.tree_map_only(TwoTensor, lambda x: x.b, args),
                     **pytree.tree_map_only(TwoTensor, lambda x: x.b, kwargs))
        flat_a, spec = pytree.tree_flatten(out_a)
        flat_b = pytree.tree_leaves(out_b)
        flat = [cls(x, y) if isinstance(x, torch.Tensor) else x for x, y in zip(flat_a, flat_b, strict=True)]
        return return_and_correct_aliasing(func, args, kwargs, pytree.tree_unflatten(flat, spec))

    def get_elem_a(self):
        return self.a


class TwoTensorMode(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **kwargs)
        if _is_tensor_constructor(func):
            out = TwoTensor(out, out.clone())
        return out
