# Written after albanD/subclass_zoo max_mem_tracker.py: a TorchDispatchMode
# that tracks every tensor an operator returns in a WeakIdKeyDictionary, each
# entry's weak reference recomputing the live total when it dies, and keeps
# the maximum (sizes rounded up to the allocator's 512-byte blocks); run under
# FakeTensorMode so no memory is allocated. The original ran on PyTorch 2.13
# first (1536, then 2048). It tracks the tensor's storage,
# t.untyped_storage() with size() * element_size(); opdispatch's Tensor has
# no untyped_storage yet (issue 28 item 3, another branch), so this port
# tracks the tensor itself with numel() * element_size(), which is the same
# for tensors that are not views. TODO(#28): storages once they land.
import math
import weakref

import opdispatch as torch
from opdispatch.utils._python_dispatch import TorchDispatchMode
from opdispatch.utils._pytree import tree_map_only
from opdispatch.utils.weak import WeakIdKeyDictionary

MEMORY_USE = WeakIdKeyDictionary()
MEMORY_MAX = 0
PYTORCH_MIN_ALLOCATE = 2**9


def update_stats():
    global MEMORY_MAX
    curr_use = 0
    for k in MEMORY_USE.keys():
        curr_use += math.ceil(k.numel() * k.element_size() / PYTORCH_MIN_ALLOCATE) * PYTORCH_MIN_ALLOCATE
    MEMORY_MAX = max(MEMORY_MAX, curr_use)


def track(t):
    def on_death(_):
        update_stats()

    st = t
    MEMORY_USE[st] = weakref.ref(st, on_death)
    update_stats()


class MemoryTrackingMode(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args, kwargs=None):
        res = func(*args, **kwargs or {})
        tree_map_only(torch.Tensor, track, res)
        return res
