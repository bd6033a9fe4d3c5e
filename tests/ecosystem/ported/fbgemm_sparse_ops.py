# Ported from pytorch/FBGEMM: fbgemm_gpu/fbgemm_gpu/sparse_ops.py (the
# impl_abstract selection, permute_2D_sparse_data's fake impl and autograd
# formula, invert_permute_abstract, masked_select_jagged_1d, and _setup(),
# which registers them once guarded by torch.library._impls and
# torch._C._dispatch_has_kernel_for_dispatch_key). Registration code as in
# fbgemm with the name map (torch -> opdispatch). The operators are defined
# in C++ in fbgemm (TORCH_LIBRARY_FRAGMENT(fbgemm, m) in
# fbgemm_gpu/src/sparse_ops/sparse_ops_cpu.cpp); `_define_operators` below
# defines the same schemas from Python with NumPy CPU kernels.
from collections.abc import Callable
from typing import Any, Optional

import numpy as np

import opdispatch as torch
from opdispatch import Tensor


def _define_operators(lib):
    # Stand-in for fbgemm's C++ TORCH_LIBRARY_FRAGMENT(fbgemm, m) { m.def(...); DISPATCH_TO_CPU(...); }.
    lib.define("permute_2D_sparse_data(Tensor permute, Tensor lengths, Tensor values, Tensor? weights=None, "
               "SymInt? permuted_lengths_sum=None) -> (Tensor, Tensor, Tensor?)")
    lib.define("invert_permute(Tensor permute) -> Tensor")
    lib.define("masked_select_jagged_1d(Tensor values, Tensor lengths, Tensor mask) -> (Tensor, Tensor)")

    def permute_2D_sparse_data_cpu(permute, lengths, values, weights=None, permuted_lengths_sum=None):
        p, lens, vals = permute.numpy(), lengths.numpy(), values.numpy()
        offsets = np.concatenate([[0], np.cumsum(lens.reshape(-1))]).reshape(-1)
        segments = [(offsets[t * lens.shape[1] + b], offsets[t * lens.shape[1] + b + 1])
                    for t in p for b in range(lens.shape[1])]
        gather = np.concatenate([np.arange(s, e) for s, e in segments]).astype(np.int64) if segments else \
            np.zeros(0, np.int64)
        out_weights = None if weights is None else torch.from_numpy(np.ascontiguousarray(weights.numpy()[gather]))
        return (torch.from_numpy(np.ascontiguousarray(lens[p])), torch.from_numpy(np.ascontiguousarray(vals[gather])),
                out_weights)

    def invert_permute_cpu(permute):
        return torch.from_numpy(np.argsort(permute.numpy()).astype(permute.numpy().dtype))

    def masked_select_jagged_1d_cpu(values, lengths, mask):
        m, lens = mask.numpy().astype(bool), lengths.numpy()
        offsets = np.concatenate([[0], np.cumsum(lens)])
        new_lengths = np.array([m[offsets[i]:offsets[i + 1]].sum() for i in range(len(lens))], lens.dtype)
        return torch.from_numpy(np.ascontiguousarray(values.numpy()[m])), torch.from_numpy(new_lengths)

    lib.impl("permute_2D_sparse_data", permute_2D_sparse_data_cpu, "CPU")
    lib.impl("invert_permute", invert_permute_cpu, "CPU")
    lib.impl("masked_select_jagged_1d", masked_select_jagged_1d_cpu, "CPU")


_fbgemm_lib = torch.library.Library("fbgemm", "FRAGMENT")
_define_operators(_fbgemm_lib)


if hasattr(torch.library, "register_fake"):
    # pyre-ignore[9]
    impl_abstract = torch.library.register_fake
elif hasattr(torch.library, "impl_abstract"):
    impl_abstract = torch.library.impl_abstract
else:
    # pyre-ignore
    def impl_abstract(
        schema: str,
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        # no-op
        # pyre-ignore
        def wrapper(f: Callable[..., Any]) -> Callable[..., Any]:
            return f

        return wrapper


def permute_2D_sparse_data_meta(
    permute: Tensor,
    lengths: Tensor,
    values: Tensor,
    weights: Optional[Tensor] = None,
    permuted_lengths_sum: Optional[int] = None,
) -> tuple[Tensor, Tensor, Optional[Tensor]]:
    torch._check(
        lengths.dim() == 2, lambda: f"expected lengths.dim() == 2, got {lengths.dim()}"
    )
    T = permute.numel()
    B = lengths.size(1)
    indices = values
    permuted_lengths = lengths.new_empty([T, B])
    permuted_indices_size = 0
    if permuted_lengths_sum is not None:
        permuted_indices_size = permuted_lengths_sum
    else:
        ctx = torch.library.get_ctx()
        permuted_indices_size = ctx.new_dynamic_size()
    # pyre-fixme
    permuted_indices = indices.new_empty(permuted_indices_size)
    permuted_weights = None
    if weights is not None:
        # pyre-fixme
        permuted_weights = weights.new_empty(permuted_indices_size)
    return permuted_lengths, permuted_indices, permuted_weights


def invert_permute_abstract(permute: Tensor) -> Tensor:
    return torch.empty_like(permute)


# pyre-ignore
def permute_2D_sparse_data_setup_context(ctx, inputs, output):
    permute, lengths, values, weights, permuted_lengths_sum = inputs
    permuted_lengths, permuted_values, permuted_weights = output
    ctx.permute = permute
    ctx.permuted_lengths = permuted_lengths


# pyre-ignore
def permute_2D_sparse_data_backward(ctx, grad_lengths, grad_values, grad_weights):
    inv_permute = torch.ops.fbgemm.invert_permute(ctx.permute)
    permuted_grad_lengths, permuted_grad_values, permuted_grad_weights = (
        torch.ops.fbgemm.permute_2D_sparse_data(
            inv_permute, ctx.permuted_lengths, grad_values, grad_weights
        )
    )
    return (
        None,
        permuted_grad_lengths,
        permuted_grad_values,
        permuted_grad_weights,
        None,
    )


def masked_select_jagged_1d(
    values: Tensor, lengths: Tensor, mask: Tensor
) -> tuple[Tensor, Tensor]:
    torch._check(values.dim() == 1)
    torch._check(lengths.dim() == 1)
    torch._check(values.device == lengths.device)
    torch._check(values.device == mask.device)

    s0 = torch.library.get_ctx().new_dynamic_size()
    masked_values = values.new_empty([s0])
    masked_lengths = torch.empty_like(lengths)
    return masked_values, masked_lengths


def _setup() -> None:
    # pyre-ignore[16]
    _setup.done = getattr(_setup, "done", False)

    # pyre-ignore[2]
    def impl_abstract(op_name, fn) -> None:
        # NOTE: Failures have occasionally been observed with register_fake,
        # where the error signatures can be found in:
        # https://github.com/pytorch/pytorch/blob/main/torch/_library/fake_impl.py
        #
        # To work around this, we first check if the kernel is already registered
        # for the following dispatch keys, and if so, we skip the registration.
        for dkey in ["CompositeImplicitAutograd", "Meta"]:
            if torch._C._dispatch_has_kernel_for_dispatch_key(op_name, dkey):
                return
        torch.library.register_fake(op_name, fn)

    # pyre-ignore[2,24]
    def impl_autograd(op_name, fn, setup_context: Optional[Callable] = None) -> None:
        name_split = op_name.split("::")
        key = f"{name_split[0]}/{name_split[-1]}/Autograd"
        if key not in torch.library._impls:
            torch.library.register_autograd(op_name, fn, setup_context=setup_context)

    if not _setup.done:
        impl_autograd(
            "fbgemm::permute_2D_sparse_data",
            permute_2D_sparse_data_backward,
            setup_context=permute_2D_sparse_data_setup_context,
        )

        impl_abstract("fbgemm::permute_2D_sparse_data", permute_2D_sparse_data_meta)
        impl_abstract("fbgemm::invert_permute", invert_permute_abstract)
        impl_abstract("fbgemm::masked_select_jagged_1d", masked_select_jagged_1d)
        _setup.done = True


_setup()
