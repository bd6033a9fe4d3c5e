"""opdispatch.Tensor: the Python class of every tensor (its C++ part is
opdispatch._C.TensorBase): autograd attributes and methods."""
from __future__ import annotations

from typing import Any, Optional

from . import _C
from .autograd import engine, graph

_requires_grad_slot = _C.TensorBase.requires_grad


class Tensor(_C.TensorBase):
    """A strided tensor whose operations go through the dispatcher."""

    # --- autograd -------------------------------------------------------------

    def _get_requires_grad(self) -> bool:
        return _requires_grad_slot.__get__(self)

    def _set_requires_grad(self, value: bool) -> None:
        if not graph.is_leaf(self):
            raise RuntimeError(
                "you can only change requires_grad flags of leaf tensors. If you want to use a computed tensor "
                "in a subgraph that doesn't require differentiation use t_no_grad = t.detach()."
            )
        _requires_grad_slot.__set__(self, value)

    requires_grad = property(_get_requires_grad, _set_requires_grad,
                             doc="Whether operations on this tensor are recorded for backward.")

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        """Sets requires_grad in place and returns self."""
        self.requires_grad = requires_grad
        return self

    @property
    def grad(self) -> Optional["Tensor"]:
        """The accumulated gradient (leaves, and tensors that retain_grad())."""
        meta = graph.get_meta(self)
        return None if meta is None else meta.grad

    @grad.setter
    def grad(self, value: Optional["Tensor"]) -> None:
        if value is not None and tuple(value.shape) != tuple(self.shape):
            raise RuntimeError(f"assigned grad has shape {tuple(value.shape)}, but the tensor has shape {tuple(self.shape)}")
        graph.meta_for_write(self).grad = value

    @property
    def grad_fn(self) -> Optional[graph.Node]:
        """The node that computed this tensor (None for leaves)."""
        return graph.grad_fn(self)

    @property
    def is_leaf(self) -> bool:
        """True unless the tensor was computed by a recorded operation."""
        return graph.is_leaf(self)

    @property
    def retains_grad(self) -> bool:
        meta = graph.get_meta(self)
        return meta is not None and meta.retains_grad

    def retain_grad(self) -> None:
        """Keeps ``.grad`` for this non-leaf tensor after backward."""
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on a tensor that has requires_grad=False")
        meta = graph.meta_for_write(self)
        if meta.grad_fn is None or meta.retains_grad:
            return
        meta.retains_grad = True
        meta.grad_fn.retain_output(meta.output_nr, self)

    def detach(self) -> "Tensor":
        """A tensor sharing this one's memory and version counter, outside the graph."""
        return _C._as_strided(self, self.shape, self.stride(), self.storage_offset())

    def backward(self, gradient: Optional["Tensor"] = None, retain_graph: Optional[bool] = None,
                 create_graph: bool = False, inputs: Any = None) -> None:
        """Accumulates gradients of this tensor into the leaves' ``.grad``; see
        opdispatch.autograd.backward."""
        engine.backward(self, gradient, retain_graph=retain_graph, create_graph=create_graph, inputs=inputs)

    def __repr__(self) -> str:
        return f"opdispatch.Tensor(shape={tuple(self.shape)}, dtype={self.dtype}, device='{self.device}')"


_C._set_tensor_class(Tensor)
