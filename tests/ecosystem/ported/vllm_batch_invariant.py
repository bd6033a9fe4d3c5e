# Written after vllm-project/vllm vllm/model_executor/layers/batch_invariant.py
# (enable_batch_invariant_mode / disable_batch_invariant_mode): a project that
# overrides built-in kernels from Python. Enabling creates one
# Library("aten", "IMPL") and registers batch-invariant kernels for mm,
# log-softmax, mean.dim and bmm at the device key; the module-level flag
# makes enabling idempotent; disabling destroys the Library, which restores
# the built-in kernels. The PyTorch 2.13 form (aten, "CPU", NumPy kernels of
# our own for the Triton ones) ran first. Name map: aten -> od, and
# aten::_log_softmax(self, dim, half_to_float) -> od::log_softmax.int(self,
# dim, dtype) (od has no _log_softmax yet; issue 31).
import numpy as np

import opdispatch as torch

calls = []


def mm_batch_invariant(a, b):
    calls.append("mm")
    return torch.from_numpy(np.stack([row @ b.numpy() for row in a.numpy()]))


def bmm_batch_invariant(a, b):
    calls.append("bmm")
    return torch.from_numpy(np.stack([np.stack([row @ bm for row in am]) for am, bm in zip(a.numpy(), b.numpy())]))


def _log_softmax_batch_invariant(x, dim, dtype=None):
    calls.append("log_softmax")
    assert dim in (-1, x.dim() - 1)
    a = x.numpy()
    shifted = a - a.max(axis=-1, keepdims=True)
    return torch.from_numpy(shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True)))


def mean_batch_invariant(x, dim, keepdim=False, dtype=None):
    calls.append("mean")
    a = x.numpy()
    count = np.prod([a.shape[d] for d in dim])
    return torch.from_numpy(np.asarray(a.sum(axis=tuple(dim), keepdims=keepdim) / count, dtype=a.dtype))


_batch_invariant_MODE = False
_batch_invariant_LIB = None


def enable_batch_invariant_mode():
    global _batch_invariant_MODE, _batch_invariant_LIB
    if _batch_invariant_MODE:
        return
    _batch_invariant_MODE = True
    _batch_invariant_LIB = torch.library.Library("od", "IMPL")
    _batch_invariant_LIB.impl("od::mm", mm_batch_invariant, "CPU")
    _batch_invariant_LIB.impl("od::log_softmax.int", _log_softmax_batch_invariant, "CPU")
    _batch_invariant_LIB.impl("od::mean.dim", mean_batch_invariant, "CPU")
    _batch_invariant_LIB.impl("od::bmm", bmm_batch_invariant, "CPU")


def disable_batch_invariant_mode():
    global _batch_invariant_MODE, _batch_invariant_LIB
    if _batch_invariant_LIB is not None:
        _batch_invariant_LIB._destroy()
    _batch_invariant_MODE = False
    _batch_invariant_LIB = None
