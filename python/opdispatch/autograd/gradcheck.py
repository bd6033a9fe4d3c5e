"""gradcheck: compares analytical gradients with central finite differences.
PyTorch: torch.autograd.gradcheck."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .. import _C
from .._C import from_numpy
from .._tensor_type import Tensor
from .engine import grad
from .grad_mode import no_grad


class GradcheckError(RuntimeError):
    """An analytical gradient differs from the numerical one."""


def _outputs(result: Any) -> list[Tensor]:
    items = result if isinstance(result, (tuple, list)) else (result,)
    return [o for o in items if isinstance(o, Tensor) and o.dtype.is_floating_point]


def gradcheck(
    func: Callable[..., Any],
    inputs: Sequence[Any] | Any,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
) -> bool:
    """Checks the gradients of ``func(*inputs)`` with respect to every input
    tensor that requires grad (float64 cpu tensors) against central finite
    differences with step ``eps``; entries must agree within
    ``atol + rtol * |numerical|``.

    Returns True, or raises GradcheckError naming the input, output and the
    first mismatching entry (returns False instead with raise_exception=False).
    """
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    diff_inputs = [(i, t) for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    if not diff_inputs:
        raise ValueError("gradcheck: no input tensor requires grad")
    for i, t in diff_inputs:
        if t.dtype != _C.float64:
            raise ValueError(f"gradcheck: input {i} has dtype {t.dtype}; use float64 inputs for finite differences")

    outputs = _outputs(func(*inputs))
    with no_grad():
        base = [o.detach().numpy().copy() for o in outputs]
    for out_idx, out in enumerate(outputs):
        flat_size = base[out_idx].size
        analytical = [np.zeros((flat_size, t.numel())) for _, t in diff_inputs]
        for k in range(flat_size):
            onehot = np.zeros(base[out_idx].shape)
            onehot.reshape(-1)[k] = 1.0
            grads = grad(out, [t for _, t in diff_inputs], grad_outputs=from_numpy(onehot.astype(base[out_idx].dtype)),
                         retain_graph=True, allow_unused=True)
            for n, g in enumerate(grads):
                if g is not None:
                    analytical[n][k] = g.detach().numpy().reshape(-1)
        for n, (i, t) in enumerate(diff_inputs):
            data = t.detach().numpy()
            numerical = np.zeros((flat_size, t.numel()))
            for j in range(t.numel()):
                idx = np.unravel_index(j, data.shape) if data.ndim else ()
                orig = data[idx]
                with no_grad():
                    data[idx] = orig + eps
                    plus = _outputs(func(*inputs))[out_idx].detach().numpy().astype(np.float64).reshape(-1)
                    data[idx] = orig - eps
                    minus = _outputs(func(*inputs))[out_idx].detach().numpy().astype(np.float64).reshape(-1)
                    data[idx] = orig
                numerical[:, j] = (plus - minus) / (2 * eps)
            bad = np.abs(analytical[n] - numerical) > atol + rtol * np.abs(numerical)
            if bad.any():
                k, j = (int(v) for v in np.argwhere(bad)[0])
                msg = (
                    f"Jacobian mismatch for output {out_idx} with respect to input {i}: entry (output element {k}, "
                    f"input element {j}) is {analytical[n][k, j]!r} analytically but {numerical[k, j]!r} numerically\n"
                    f"analytical:\n{analytical[n]}\nnumerical:\n{numerical}"
                )
                if raise_exception:
                    raise GradcheckError(msg)
                return False
    return True
