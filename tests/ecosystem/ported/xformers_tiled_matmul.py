# Ported from facebookresearch/xformers: xformers/ops/tiled_matmul.py (the
# custom op xformers_python::tiled_matmul_fwd on flattened Tensor[] grids,
# its fake impl, and its register_autograd formula, which calls the op
# itself). Registration code as in xformers with the name map
# (torch -> opdispatch). Changes: device_types "cuda" -> "cpu"; the Triton
# path is off (_should_use_triton returns False) and the fallback loop's
# torch.mm(..., out=) / addmm_ are a NumPy kernel writing the out tiles.
from typing import List, Tuple


import opdispatch as torch


def _should_use_triton(device, dtype) -> bool:
    return False


def check_inputs(
    a: List[List[torch.Tensor]],
    b: List[List[torch.Tensor]],
) -> Tuple[List[int], List[int], List[int]]:
    assert len(a) >= 1 and len(a[0]) >= 1 and all(len(row) == len(a[0]) for row in a), (
        "the first operand must be a non-empty two-dimensional regular list of lists "
        "of tenors"
    )
    assert len(b) >= 1 and len(b[0]) >= 1 and all(len(row) == len(b[0]) for row in b), (
        "the second operand must be a non-empty two-dimensional regular list of lists "
        "of tenors"
    )

    m_tiles = len(a)
    k_tiles = len(a[0])
    assert len(b) == k_tiles, (
        "the first operand's inner dimension must match the second operand's outer "
        f"dimension, got {k_tiles} and {len(b)}"
    )
    n_tiles = len(b[0])

    ms = [a[tile_m][0].shape[0] for tile_m in range(m_tiles)]
    ns = [b[0][tile_n].shape[1] for tile_n in range(n_tiles)]
    aks = [a[0][tile_k].shape[1] for tile_k in range(k_tiles)]
    bks = [b[tile_k][0].shape[0] for tile_k in range(k_tiles)]

    for tile_k in range(k_tiles):
        assert aks[tile_k] == bks[tile_k], (
            f"the tensors on column {tile_k} of the first operand and those on row "
            f"{tile_k} of the second operand must have the same size along the k "
            f"dimension, got {aks[tile_k]} and {bks[tile_k]}"
        )
    ks = aks

    return ms, ns, ks


def tiled_matmul_out(
    a: List[List[torch.Tensor]],
    b: List[List[torch.Tensor]],
    out: List[List[torch.Tensor]],
) -> None:
    ms, ns, ks = check_inputs(a, b)

    if (
        len(ms) <= 3
        and len(ks) <= 3
        and len(ns) <= 3
        and _should_use_triton(a[0][0].device, a[0][0].dtype)
    ):
        raise AssertionError("no Triton here")
    else:
        for tile_m in range(len(ms)):
            for tile_n in range(len(ns)):
                acc = a[tile_m][0].numpy() @ b[0][tile_n].numpy()  # torch.mm(..., out=out[tile_m][tile_n])
                for tile_k in range(1, len(ks)):
                    acc = acc + a[tile_m][tile_k].numpy() @ b[tile_k][tile_n].numpy()  # addmm_
                out[tile_m][tile_n].numpy()[...] = acc


def _flatten(x: List[List[torch.Tensor]], rows: int, cols: int) -> List[torch.Tensor]:
    assert len(x) == rows
    assert all(len(row) == cols for row in x)
    flat_x = [elem for row in x for elem in row]
    assert len(flat_x) == rows * cols
    return flat_x


def _unflatten(
    flat_x: List[torch.Tensor], rows: int, cols: int
) -> List[List[torch.Tensor]]:
    assert len(flat_x) == cols * rows
    x = [
        flat_x[row_offset : row_offset + cols]
        for row_offset in range(0, rows * cols, cols)
    ]
    assert len(x) == rows
    assert all(len(row) == cols for row in x)
    return x


def _flattened_transpose(
    flat_x: List[torch.Tensor], rows: int, cols: int
) -> List[torch.Tensor]:
    x = _unflatten(flat_x, rows, cols)
    transposed_x = [[elem.t() for elem in col] for col in zip(*x)]
    flat_transposed_x = _flatten(transposed_x, cols, rows)
    return flat_transposed_x


# PyTorch (custom_op and torch.compile, but also the dispatcher in general)
# have a hard time with Tensor[][] args. Thus we flatten them into Tensor[] to
# pass them into and out of this operator.
# See: https://github.com/pytorch/pytorch/issues/113022
@torch.library.custom_op(
    "xformers_python::tiled_matmul_fwd",
    mutates_args=(),
    device_types="cpu",
)
def tiled_matmul_fwd(
    flat_a: List[torch.Tensor],
    flat_b: List[torch.Tensor],
    ms: List[int],
    ns: List[int],
    ks: List[int],
) -> List[torch.Tensor]:
    a = _unflatten(flat_a, len(ms), len(ks))
    b = _unflatten(flat_b, len(ks), len(ns))

    c = [[a[0][0].new_empty((m, n)) for n in ns] for m in ms]
    tiled_matmul_out(a, b, out=c)

    return _flatten(c, len(ms), len(ns))


@torch.library.register_fake("xformers_python::tiled_matmul_fwd")
def tiled_matmul_fwd_fake(
    flat_a: List[torch.Tensor],
    flat_b: List[torch.Tensor],
    ms: List[int],
    ns: List[int],
    ks: List[int],
) -> List[torch.Tensor]:
    c = [[flat_a[0][0].new_empty((m, n)) for n in ns] for m in ms]
    return _flatten(c, len(ms), len(ks))


def tiled_matmul_setup_context(ctx, inputs, output):
    flat_a, flat_b, ctx.ms, ctx.ns, ctx.ks = inputs
    ctx.save_for_backward(*flat_a, *flat_b)


def tiled_matmul_bwd(ctx, flat_grad_c):
    assert len(ctx.saved_tensors) == len(ctx.ms) * len(ctx.ks) + len(ctx.ks) * len(
        ctx.ns
    )
    flat_a = ctx.saved_tensors[: len(ctx.ms) * len(ctx.ks)]
    flat_b = ctx.saved_tensors[-len(ctx.ks) * len(ctx.ns) :]

    flat_transposed_a = _flattened_transpose(flat_a, len(ctx.ms), len(ctx.ks))
    flat_transposed_b = _flattened_transpose(flat_b, len(ctx.ks), len(ctx.ns))

    flat_grad_a = tiled_matmul_fwd(
        flat_grad_c, flat_transposed_b, ctx.ms, ctx.ks, ctx.ns
    )
    flat_grad_b = tiled_matmul_fwd(
        flat_transposed_a, flat_grad_c, ctx.ks, ctx.ns, ctx.ms
    )

    return flat_grad_a, flat_grad_b, None, None, None


torch.library.register_autograd(
    "xformers_python::tiled_matmul_fwd",
    tiled_matmul_bwd,
    setup_context=tiled_matmul_setup_context,
)


def tiled_matmul(
    a: List[List[torch.Tensor]],
    b: List[List[torch.Tensor]],
) -> List[List[torch.Tensor]]:
    """Multiply two matrices given as grids of tiles: out[m][n] = sum(a[m][k] @ b[k][n] for k in range(...))."""
    # Inputs are checked inside the op, but we check them as well to make sure
    # that they are "regular" and can be flattened.
    ms, ns, ks = check_inputs(a, b)
    flat_a = _flatten(a, len(ms), len(ks))
    flat_b = _flatten(b, len(ks), len(ns))
    flat_c = tiled_matmul_fwd(flat_a, flat_b, ms, ns, ks)
    c = _unflatten(flat_c, len(ms), len(ns))
    return c
