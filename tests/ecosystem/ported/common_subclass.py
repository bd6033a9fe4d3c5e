# Written after PyTorch's torch/testing/_internal/common_subclass.py, the
# subclass examples PyTorch's own tests share: WrapperTensor, a base whose
# __new__ asks the class for an example tensor and keyword overrides
# (get_wrapper_properties) and refuses subclasses that redefine size,
# stride, dtype, layout, device or requires_grad; WrapperTensorWithCustomSizes
# on it (dispatch_sizes_strides_policy="sizes", unwrapping and rewrapping
# every call); and NonWrapperTensor, a _make_subclass tensor that records
# the last function called in extra state from __torch_function__ (copied
# on deepcopy, which needs its new_empty). The name map only.
# DiagTensorBelow and SparseTensor of the same file need od::diag,
# count_nonzero and unbind (issue 28 item 8), so they are not ported yet.
from copy import deepcopy

import opdispatch as torch
from opdispatch.utils._pytree import tree_map


class WrapperTensor(torch.Tensor):
    @staticmethod
    def __new__(cls, *args, **kwargs):
        t, kwargs = cls.get_wrapper_properties(*args, **kwargs)
        size = kwargs.pop("size") if "size" in kwargs else t.size()
        for name, default in (("dtype", t.dtype), ("layout", t.layout), ("device", t.device),
                              ("requires_grad", False)):
            kwargs.setdefault(name, default)
        wrapper = torch.Tensor._make_wrapper_subclass(cls, size, **kwargs)
        wrapper._validate_methods()
        return wrapper

    @classmethod
    def get_wrapper_properties(cls, *args, **kwargs):
        # An example tensor and the keywords that override its properties.
        raise NotImplementedError("You need to implement get_wrapper_properties")

    def _validate_methods(self):
        # Properties redefined in Python would not be seen by C++ callers.
        for name in ["size", "stride", "dtype", "layout", "device", "requires_grad"]:
            if getattr(self.__class__, name) is not getattr(torch.Tensor, name):
                raise RuntimeError(f"Subclass {self.__class__.__name__} is overwriting the property {name} but "
                                   "this is not allowed as such change would not be reflected to c++ callers.")


class WrapperTensorWithCustomSizes(WrapperTensor):
    @classmethod
    def get_wrapper_properties(cls, t, requires_grad=False):
        return t, {"requires_grad": requires_grad, "dispatch_sizes_strides_policy": "sizes"}

    def __init__(self, t, requires_grad=False):
        self.t = t

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        if not all(issubclass(cls, t) for t in types):
            return NotImplemented

        def unwrap(e):
            return e.t if isinstance(e, WrapperTensorWithCustomSizes) else e

        def wrap(e):
            return WrapperTensorWithCustomSizes(e) if isinstance(e, torch.Tensor) else e

        return tree_map(wrap, func(*tree_map(unwrap, args), **tree_map(unwrap, kwargs or {})))

    def __repr__(self):
        return super().__repr__(tensor_contents=f"t={self.t}")


class NonWrapperTensor(torch.Tensor):
    def __new__(cls, data):
        t = torch.Tensor._make_subclass(cls, data)
        t.extra_state = {"last_func_called": None}
        return t

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        result = super().__torch_function__(func, types, args, kwargs)
        if isinstance(result, cls):
            if func is torch.Tensor.__deepcopy__:  # a copy keeps the original's state
                result.extra_state = deepcopy(args[0].extra_state)
            else:
                result.extra_state = {"last_func_called": func.__name__}
        return result

    def new_empty(self, shape):  # deepcopy makes the copy with it
        return type(self)(torch.empty(shape))
