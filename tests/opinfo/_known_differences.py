"""The cases where a built-in operator still disagrees with PyTorch 2.13, each
with the kinds of difference (_cases.compare, space-separated, sorted) and
why. tests/test_opinfo.py fails for a listed case that agrees with PyTorch,
or differs in other ways, so this list only ever describes what is true:
fix an operator, then delete its lines. Issue 31 ends with it empty."""
from __future__ import annotations

# PyTorch's type promotion (c10::promoteTypes, by category): an integer tensor with a floating tensor or a Python
# float gives the floating tensor's dtype, or the default dtype float32 (true division of integers too); the od
# kernels follow NumPy 2's promotion, which gives float64 (int64 with float32 is float64). Issue 31 item 3.
_PROMOTION = "integer with floating operands: PyTorch float32, od (NumPy 2 promotion) float64"
# aten::mm (as addmm, bmm) requires both operands to have one dtype; od's kernel promotes them as NumPy does.
_MM_DTYPES = "mm of an int64 and a float matrix: PyTorch raises 'expected m1 and m2 to have the same dtype', od returns"
# PyTorch's _softmax_backward_data / _log_softmax_backward_data return grad_output's dtype (input_dtype matters
# only for a float32 gradient of a float16 input); od casts the result to input_dtype.
_SOFTMAX_BACKWARD_DTYPE = "PyTorch returns grad_output's dtype, od input_dtype"

#: Case id (_cases.Case.id) -> (kinds of difference, why).
KNOWN_DIFFERENCES: dict[str, tuple[str, str]] = {
    "add.Tensor#2": ("dtype", _PROMOTION),
    "add.Tensor#2/noncontiguous": ("dtype", _PROMOTION),
    "add.Scalar#3": ("dtype", _PROMOTION),
    "add.Scalar#3/noncontiguous": ("dtype", _PROMOTION),
    "mul.Scalar#1": ("dtype", _PROMOTION),
    "mul.Scalar#1/noncontiguous": ("dtype", _PROMOTION),
    "div.Tensor#2": ("dtype", _PROMOTION),
    "div.Tensor#2/noncontiguous": ("dtype", _PROMOTION),
    "div.Scalar#1": ("dtype", _PROMOTION),
    "div.Scalar#1/noncontiguous": ("dtype", _PROMOTION),
    "maximum#1": ("dtype", _PROMOTION),
    "maximum#1/noncontiguous": ("dtype", _PROMOTION),
    "where.self#1/float32": ("dtype", _PROMOTION),
    "cat#2/float32": ("dtype", _PROMOTION),
    "stack#2/float32": ("dtype", _PROMOTION),
    "mm#1": ("raises", _MM_DTYPES),
    "mm#1/float32": ("raises", _MM_DTYPES),
    "mm#1/noncontiguous": ("raises", _MM_DTYPES),
    "_softmax_backward_data#0/float32": ("dtype", _SOFTMAX_BACKWARD_DTYPE),
    "_softmax_backward_data#1/float32": ("dtype", _SOFTMAX_BACKWARD_DTYPE),
    "_softmax_backward_data#2": ("dtype", _SOFTMAX_BACKWARD_DTYPE),
    "_softmax_backward_data#2/noncontiguous": ("dtype", _SOFTMAX_BACKWARD_DTYPE),
    "_log_softmax_backward_data#0/float32": ("dtype", _SOFTMAX_BACKWARD_DTYPE),
    "_log_softmax_backward_data#1/float32": ("dtype", _SOFTMAX_BACKWARD_DTYPE),
    "_log_softmax_backward_data#2": ("dtype", _SOFTMAX_BACKWARD_DTYPE),
    "_log_softmax_backward_data#2/noncontiguous": ("dtype", _SOFTMAX_BACKWARD_DTYPE),
}
