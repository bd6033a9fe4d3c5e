# Written after PyTorch's torch/testing/_internal/custom_tensor.py, the
# traceable wrapper subclasses PyTorch's own tests use:
# ConstantExtraMetadataTensor wraps one tensor and carries an int attribute
# in its flatten metadata (it rewraps every result and fixes aliasing with
# return_and_correct_aliasing); CustomTensorPlainOut wraps two tensors, runs
# each operator on both and returns the plain sum of the two results, except
# for view operators (func.is_view), which give the subclass back (PyTorch's
# comment: it stands in for torchao's quantised tensors). The name map only.
from collections import namedtuple

import opdispatch as torch
import opdispatch.utils._pytree as pytree
from opdispatch.utils._python_dispatch import return_and_correct_aliasing

FancyNamedTuple = namedtuple("FancyNamedTuple", ["foo", "bar"])


def _wrapper_kwargs(elem):
    return {"strides": elem.stride(), "storage_offset": elem.storage_offset(), "device": elem.device,
            "layout": elem.layout, "requires_grad": elem.requires_grad, "dtype": elem.dtype}


class ConstantExtraMetadataTensor(torch.Tensor):
    @staticmethod
    def __new__(cls, elem):
        return torch.Tensor._make_wrapper_subclass(cls, elem.shape, **_wrapper_kwargs(elem))

    def __init__(self, elem):
        self.elem = elem
        self.constant_attribute = 4

    def __repr__(self):
        return f"CustomTensor({self.elem!r})"

    def get_complicated_metadata(self):
        return FancyNamedTuple(self.constant_attribute, self.constant_attribute)

    def __tensor_flatten__(self):
        return ["elem"], self.constant_attribute

    def add_constant(self, a):
        self.constant_attribute += a

    @staticmethod
    def __tensor_unflatten__(inner_tensors, meta, outer_size, outer_stride):
        if meta is None:
            raise AssertionError("Expected meta to not be None")
        out = ConstantExtraMetadataTensor(inner_tensors["elem"])
        out.constant_attribute = meta
        return out

    @classmethod
    def __torch_dispatch__(cls, func, types, args, kwargs):
        kwargs = kwargs or {}
        unwrap = lambda x: x.elem  # noqa: E731
        out_inner = func(*pytree.tree_map_only(ConstantExtraMetadataTensor, unwrap, args),
                         **pytree.tree_map_only(ConstantExtraMetadataTensor, unwrap, kwargs))
        flat, spec = pytree.tree_flatten(out_inner)
        # Non-tensor results pass through as the inner call gave them.
        wrapped = [ConstantExtraMetadataTensor(o) if isinstance(o, torch.Tensor) else o for o in flat]
        return return_and_correct_aliasing(func, args, kwargs, pytree.tree_unflatten(wrapped, spec))


class CustomTensorPlainOut(torch.Tensor):
    @staticmethod
    def __new__(cls, elem1, elem2):
        return torch.Tensor._make_wrapper_subclass(cls, elem1.shape, **_wrapper_kwargs(elem1))

    def __init__(self, elem1, elem2):
        self.elem1 = elem1
        self.elem2 = elem2

    def get_elem(self):
        return self.elem1

    def __repr__(self):
        return f"CustomTensorPlainOut({self.elem1!r}, {self.elem2!r})"

    def __tensor_flatten__(self):
        return ["elem1", "elem2"], None

    @staticmethod
    def __tensor_unflatten__(inner_tensors, meta, outer_size, outer_stride):
        return CustomTensorPlainOut(inner_tensors["elem1"], inner_tensors["elem2"])

    @classmethod
    def __torch_dispatch__(cls, func, types, args, kwargs):
        kwargs = kwargs or {}
        first, second = (lambda x: x.elem1), (lambda x: x.elem2)
        out1 = func(*pytree.tree_map_only(CustomTensorPlainOut, first, args),
                    **pytree.tree_map_only(CustomTensorPlainOut, first, kwargs))
        out2 = func(*pytree.tree_map_only(CustomTensorPlainOut, second, args),
                    **pytree.tree_map_only(CustomTensorPlainOut, second, kwargs))
        flat1, spec = pytree.tree_flatten(out1)
        flat2, spec = pytree.tree_flatten(out2)
        if func.is_view:
            views = (CustomTensorPlainOut(t1, t2) for t1, t2 in zip(flat1, flat2, strict=True))
            return return_and_correct_aliasing(func, args, kwargs, pytree.tree_unflatten(views, spec))
        return pytree.tree_unflatten((flat1[i] + flat2[i] for i in range(len(flat1))), spec)
