"""``Tensor`` as the modules below opdispatch._tensor name it (the built-in
kernels, autograd, the custom-op tools): to type checkers opdispatch.Tensor,
at run time _C.TensorBase (opdispatch._tensor, which imports those modules,
defines Tensor after them)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from . import _C

# Note [Every tensor is an opdispatch.Tensor]
# _C makes every tensor object of the class _set_tensor_class registered
# (opdispatch.Tensor) or of the class given to _make_subclass /
# _make_wrapper_subclass, which must derive from it (PyTorch:
# THPVariable_make_subclass). So every TensorBase is a Tensor, with its Python
# methods, and `isinstance(x, Tensor)` narrows to it: type checkers see the
# Python class, the runtime checks the C type.
if TYPE_CHECKING:
    from ._tensor import Tensor as Tensor
else:
    Tensor = _C.TensorBase
