"""Matrix products: mm (2-D), bmm (3-D batches), matmul (NumPy's and
PyTorch's matmul rules: 1-D operands are promoted then squeezed, batch
dimensions broadcast) and addmm (beta * self + alpha * mat1 @ mat2, linear's
product with a bias)."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from . import elementwise, views
from .elementwise import as_dtype, input_grad
from ._numpy import broadcast_shape, call_numpy, check_device, meta_like, opmath
from ._pointwise import SAME_DTYPE, fast_path
from ._registry import CORE, PT2, Kernels, Op, defop
from .._tensor_type import Tensor


def _matmul_shape(op: str, a: Sequence[int], b: Sequence[int]) -> tuple[int, ...]:
    """The output shape of matmul; RuntimeError naming both shapes if they cannot be multiplied."""
    a, b = tuple(a), tuple(b)
    if not a or not b:
        raise RuntimeError(f"{op}: both arguments need to be at least 1D, but they are {len(a)}D and {len(b)}D")
    a2 = (1,) + a if len(a) == 1 else a
    b2 = b + (1,) if len(b) == 1 else b
    if a2[-1] != b2[-2]:
        raise RuntimeError(f"{op}: shapes {a} and {b} cannot be multiplied ({a2[-2]}x{a2[-1]} and {b2[-2]}x{b2[-1]})")
    rows = () if len(a) == 1 else (a2[-2],)
    cols = () if len(b) == 1 else (b2[-1],)
    return broadcast_shape(op, a2[:-2], b2[:-2]) + rows + cols


#: Products of operands of at most 2 dims (where dot and matmul agree): the
#: ndarray method goes straight to BLAS, np.matmul through the generalized-ufunc
#: machinery and np.dot through __array_function__ (about 3x the time for 4x4).
_dot = np.ndarray.dot


#: Per dtype, the names PyTorch's matrix products print: the ScalarType's (bmm) and the C++ type's (mm, matmul;
#: caffe2::TypeMeta::name).
_TYPE_NAMES = {"float16": ("Half", "c10::Half"), "bfloat16": ("BFloat16", "c10::BFloat16"),
               "float32": ("Float", "float"), "float64": ("Double", "double"),
               "complex64": ("ComplexFloat", "c10::complex<float>"),
               "complex128": ("ComplexDouble", "c10::complex<double>"), "bool": ("Bool", "bool"),
               "int8": ("Char", "signed char"), "uint8": ("Byte", "unsigned char"), "int16": ("Short", "short int"),
               "int32": ("Int", "int"), "int64": ("Long", "long int")}


def _check_same_dtype(op: str, self: Tensor, other: Tensor) -> None:
    """RuntimeError unless both operands have one dtype (matrix products do
    not promote), naming ``op``, with PyTorch's messages: bmm's from its
    checkSameType, dot's for two vectors, addmm's CPU kernel's otherwise."""
    if self.dtype == other.dtype:
        return
    (a_scalar, a_cpp), (b_scalar, b_cpp) = _TYPE_NAMES[self.dtype.name], _TYPE_NAMES[other.dtype.name]
    if op == "od::bmm":
        raise RuntimeError(f"{op}: expected scalar type {a_scalar} but found {b_scalar}")
    if self.ndim == other.ndim == 1:
        raise RuntimeError(f"{op}: dot : expected both vectors to have same dtype, but found {a_scalar} and {b_scalar}")
    raise RuntimeError(f"{op}: expected m1 and m2 to have the same dtype, but got: {a_cpp} != {b_cpp}")


def _checked(op: str, ndim: int) -> Kernels:
    """Kernels of ``op`` for operands of exactly ``ndim`` dims (any ndim >= 1 when ndim is 0)."""
    def check(self: Tensor, other: Tensor) -> tuple[int, ...]:
        check_device(op, self, other)
        if ndim and (self.ndim != ndim or other.ndim != ndim):
            raise RuntimeError(f"{op}: expected {ndim}-D tensors, got shapes {list(self.shape)} and "
                               f"{list(other.shape)}")
        if ndim == 3 and self.shape[0] != other.shape[0]:
            raise RuntimeError(f"{op}: batch sizes differ: shapes {list(self.shape)} and {list(other.shape)}")
        shape = _matmul_shape(op, self.shape, other.shape)
        _check_same_dtype(op, self, other)
        return shape

    def cpu(self: Tensor, other: Tensor) -> Tensor:
        # NumPy checks the shapes; check() names the operator and the shapes when it refuses them. bmm
        # checks first (np.matmul would broadcast a batch size of 1, which bmm refuses), and so does a 0-d
        # operand (which ndarray.dot would multiply).
        a, b = self.ndim, other.ndim
        if ndim == 3 or (ndim and (a != ndim or b != ndim)) or not (a and b) or self.dtype != other.dtype:
            check(self, other)
        try:
            return call_numpy(_dot if a <= 2 and b <= 2 else np.matmul, self, other)
        except ValueError:
            check(self, other)
            raise

    def meta(self: Tensor, other: Tensor) -> Tensor:
        return meta_like(check(self, other), self.dtype)

    if ndim == 2:  # mm: two 2-D operands, the only call it accepts, go to ndarray.dot in C
        return fast_path({"cpu": cpu, "meta": meta}, _dot, 2, 2, SAME_DTYPE)
    return {"cpu": cpu, "meta": meta}


def _save_inputs(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.save_for_backward(*inputs)


def _mm_backward(ctx: Any, grad: Tensor) -> tuple[Any, Any]:
    self, mat2 = ctx.saved_tensors
    g_self = as_dtype(mm(grad, views.transpose(mat2, 0, 1)), self.dtype) if ctx.needs_input_grad[0] else None
    g_mat2 = as_dtype(mm(views.transpose(self, 0, 1), grad), mat2.dtype) if ctx.needs_input_grad[1] else None
    return g_self, g_mat2


def _bmm_backward(ctx: Any, grad: Tensor) -> tuple[Any, Any]:
    self, mat2 = ctx.saved_tensors
    g_self = as_dtype(bmm(grad, views.transpose(mat2, 1, 2)), self.dtype) if ctx.needs_input_grad[0] else None
    g_mat2 = as_dtype(bmm(views.transpose(self, 1, 2), grad), mat2.dtype) if ctx.needs_input_grad[1] else None
    return g_self, g_mat2


def _matmul_backward(ctx: Any, grad: Tensor) -> tuple[Any, Any]:
    """The 2-D formula on the operands with their 1-D dims restored, summed over broadcast batch dims."""
    self, other = ctx.saved_tensors
    a = views.unsqueeze(self, 0) if self.ndim == 1 else self
    b = views.unsqueeze(other, -1) if other.ndim == 1 else other
    if other.ndim == 1:
        grad = views.unsqueeze(grad, -1)
    if self.ndim == 1:
        grad = views.unsqueeze(grad, -2)
    g_self = g_other = None
    if ctx.needs_input_grad[0]:
        g_self = views.reshape(input_grad(matmul(grad, views.transpose(b, -1, -2)), a), self.shape)
    if ctx.needs_input_grad[1]:
        g_other = views.reshape(input_grad(matmul(views.transpose(a, -1, -2), grad), b), other.shape)
    return g_self, g_other


mm: Op = defop("mm(Tensor self, Tensor mat2) -> Tensor", tags=CORE, **_checked("od::mm", 2),
               backward=_mm_backward, setup_context=_save_inputs)
bmm: Op = defop("bmm(Tensor self, Tensor mat2) -> Tensor", tags=CORE, **_checked("od::bmm", 3),
                backward=_bmm_backward, setup_context=_save_inputs)
matmul: Op = defop("matmul(Tensor self, Tensor other) -> Tensor", tags=PT2, **_checked("od::matmul", 0),
                   backward=_matmul_backward, setup_context=_save_inputs)


@opmath
def _addmm_of(bias: np.ndarray, a: np.ndarray, b: np.ndarray, beta: Any, alpha: Any) -> np.ndarray:
    out: np.ndarray = _dot(a, b)
    if alpha != 1:
        out *= alpha
    if beta == 0:  # PyTorch: self is ignored, so its NaNs do not propagate
        return out
    out += bias if beta == 1 else bias * beta
    return out


def _check_addmm(self: Tensor, mat1: Tensor, mat2: Tensor) -> tuple[int, ...]:
    op = "od::addmm"
    check_device(op, self, mat1, mat2)
    if mat1.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"{op}: expected 2-D matrices mat1 and mat2, got shapes {list(mat1.shape)} and "
                           f"{list(mat2.shape)}")
    shape = _matmul_shape(op, mat1.shape, mat2.shape)
    if broadcast_shape(op, self.shape, shape) != shape:
        raise RuntimeError(f"{op}: self of shape {list(self.shape)} does not broadcast to the product's shape "
                           f"{list(shape)}")
    if not self.dtype == mat1.dtype == mat2.dtype:
        raise RuntimeError(f"{op}: expected self, mat1 and mat2 of one dtype, got {self.dtype}, {mat1.dtype} and "
                           f"{mat2.dtype}")
    return shape


def _addmm_cpu(self: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    _check_addmm(self, mat1, mat2)
    return call_numpy(_addmm_of, self, mat1, mat2, beta, alpha)


def _addmm_meta(self: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    return meta_like(_check_addmm(self, mat1, mat2), mat1.dtype)


def _addmm_setup(ctx: Any, inputs: tuple[Any, ...], keyword_only_inputs: dict[str, Any], output: Any) -> None:
    _, mat1, mat2 = inputs
    ctx.beta, ctx.alpha = keyword_only_inputs.get("beta", 1), keyword_only_inputs.get("alpha", 1)
    ctx.save_for_backward(mat1, mat2)


def _addmm_backward(ctx: Any, grad: Tensor) -> tuple[Any, Any, Any]:
    """PyTorch: derivatives.yaml addmm (self's gradient summed to its shape by the engine)."""
    mat1, mat2 = ctx.saved_tensors
    beta, alpha = ctx.beta, ctx.alpha
    needs = ctx.needs_input_grad
    g_self = (grad if beta == 1 else elementwise.mul_scalar(grad, beta)) if needs[0] else None
    scaled = grad if alpha == 1 else elementwise.mul_scalar(grad, alpha)
    g_mat1 = mm(scaled, views.transpose(mat2, 0, 1)) if needs[1] else None
    g_mat2 = mm(views.transpose(mat1, 0, 1), scaled) if needs[2] else None
    return g_self, g_mat1, g_mat2


addmm: Op = defop("addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
                  tags=CORE, cpu=_addmm_cpu, meta=_addmm_meta, backward=_addmm_backward, setup_context=_addmm_setup)
