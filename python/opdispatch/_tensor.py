"""opdispatch.Tensor: the Python class of every tensor (its C++ part is
opdispatch._C.TensorBase)."""
from __future__ import annotations

from . import _C


class Tensor(_C.TensorBase):
    """A strided tensor whose operations go through the dispatcher."""

    def __repr__(self) -> str:
        return f"opdispatch.Tensor(shape={tuple(self.shape)}, dtype={self.dtype}, device='{self.device}')"


_C._set_tensor_class(Tensor)
