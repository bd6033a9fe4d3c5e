# Written after pytorch/pytorch torch/utils/flop_counter.py: a registry of
# FLOP formulas keyed by OpOverload (register_flop_formula on a packet
# registers every overload; formulas get shapes through shape_wrapper,
# outputs as out_shape), and FlopCounterMode, a TorchDispatchMode that runs
# each call and adds the formula's count under its overload packet
# (get_total_flops, get_flop_counts). The PyTorch 2.13 form ran first with
# the same calls. Only the mm and bmm formulas: addmm, baddbmm and
# convolution wait for those od operators (issue 31); the module hierarchy
# tracking (ModuleTracker, nn.Module hooks) is left out (no nn.Module).
from collections import defaultdict
from functools import wraps

import opdispatch as torch
from opdispatch.utils._python_dispatch import TorchDispatchMode
from opdispatch.utils._pytree import tree_map

od = torch.ops.od

flop_registry = {}


def shape_wrapper(f):
    @wraps(f)
    def with_shapes(*args, out_val=None, **kwargs):
        args, kwargs, out_shape = tree_map(lambda x: x.shape if isinstance(x, torch.Tensor) else x,
                                           (args, kwargs, out_val))
        return f(*args, out_shape=out_shape, **kwargs)

    return with_shapes


def register_flop_formula(targets, get_raw=False):
    def register_fun(flop_formula):
        if not get_raw:
            flop_formula = shape_wrapper(flop_formula)
        for target in targets if isinstance(targets, (list, tuple)) else [targets]:
            if isinstance(target, torch._ops.OpOverloadPacket):
                for overload in target.overloads():
                    flop_registry[getattr(target, overload)] = flop_formula
            else:
                flop_registry[target] = flop_formula
        return flop_formula

    return register_fun


@register_flop_formula(od.mm)
def mm_flop(a_shape, b_shape, *args, out_shape=None, **kwargs):
    m, k = a_shape
    k2, n = b_shape
    assert k == k2
    return 2 * m * n * k


@register_flop_formula(od.bmm)
def bmm_flop(a_shape, b_shape, out_shape=None, **kwargs):
    b, m, k = a_shape
    b2, k2, n = b_shape
    assert b == b2 and k == k2
    return 2 * b * m * n * k


class FlopCounterMode(TorchDispatchMode):
    def __init__(self, custom_mapping=None):
        super().__init__()
        self.flop_counts = defaultdict(lambda: defaultdict(int))
        self.flop_registry = {**flop_registry, **{k: shape_wrapper(v) for k, v in (custom_mapping or {}).items()}}

    def get_total_flops(self):
        return sum(self.flop_counts["Global"].values())

    def get_flop_counts(self):
        return {name: dict(counts) for name, counts in self.flop_counts.items()}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs if kwargs else {}
        out = func(*args, **kwargs)
        if func in self.flop_registry:
            self.flop_counts["Global"][func._overloadpacket] += self.flop_registry[func](*args, **kwargs,
                                                                                         out_val=out)
        return out
