# Written after pytorch/executorch exir/delegate.py: a user-defined
# HigherOrderOperator (executorch_call_delegate) that calls a lowered module
# on tensors, with fallthroughs for the keys it does not handle, a dense
# kernel, an autograd kernel that defers its error to backward, a fake
# function, and a ProxyTorchDispatchMode rule that runs the module with
# tracing off, registers it on the tracer's root, records one node through
# tracer.create_proxy and ties the outputs to it (track_tensor_tree). The
# PyTorch 2.13 form (the same calls in the same order, with torch names and
# nn.Module as the lowered module's base) ran on PyTorch 2.13 first; the
# PyTorch-only parts (functionalization, the export graph passes) are left
# out, and the lowered module is a plain class (opdispatch has no nn.Module).
import opdispatch.utils._pytree as pytree
from opdispatch._C import DispatchKey
from opdispatch._higher_order_ops.utils import autograd_not_implemented, register_fake
from opdispatch._ops import HigherOrderOperator
from opdispatch.tracing import ProxyTorchDispatchMode, disable_proxy_modes_tracing, track_tensor_tree


class LoweredBackendModule:
    """What to_backend would produce: a backend id and the program it runs."""

    def __init__(self, program, backend_id):
        self.program = program
        self.backend_id = backend_id

    def original_module(self, *args):
        return self.program(*args)


class ExecutorchCallDelegate(HigherOrderOperator):
    def __init__(self):
        super().__init__("executorch_call_delegate")

    def __call__(self, lowered_module, *args):
        return super().__call__(lowered_module, *args)


executorch_call_delegate = ExecutorchCallDelegate()
for _key in (DispatchKey.PythonDispatcher, DispatchKey.PythonTLSSnapshot, DispatchKey.ADInplaceOrView,
             DispatchKey.BackendSelect, DispatchKey.AutocastCPU):
    executorch_call_delegate.fallthrough(_key)


def _lowered_module_name(root, lowered_module):
    index = 0
    while hasattr(root, f"lowered_module_{index}"):
        index += 1
    name = f"lowered_module_{index}"
    root.register_module(name, lowered_module)
    return name


def trace_call_delegate(proxy_mode, func_overload, lowered_module, *args):
    if not isinstance(lowered_module, LoweredBackendModule):
        raise ValueError("executorch_call_delegate()'s first argument must be a LoweredBackendModule")
    with disable_proxy_modes_tracing():
        out = call_delegate_cpu(lowered_module, *args)
    _lowered_module_name(proxy_mode.tracer.root, lowered_module)
    node_args = (lowered_module, *args)
    proxy_args = pytree.tree_map(proxy_mode.tracer.unwrap_proxy, node_args)
    out_proxy = proxy_mode.tracer.create_proxy("call_function", func_overload, proxy_args, {},
                                               name="executorch_call_delegate")
    return track_tensor_tree(out, out_proxy, constant=None, tracer=proxy_mode.tracer)


@executorch_call_delegate.py_impl(DispatchKey.CompositeExplicitAutograd)
def call_delegate_cpu(lowered_module, *args):
    return lowered_module.original_module(*args)


executorch_call_delegate.py_autograd_impl(autograd_not_implemented(executorch_call_delegate, deferred_error=True))


@executorch_call_delegate.py_impl(ProxyTorchDispatchMode)
def call_delegate_proxy_torch_dispatch_mode(mode, lowered_module, *args):
    return trace_call_delegate(mode, executorch_call_delegate, lowered_module, *args)


@register_fake(executorch_call_delegate)
def call_delegate_fake_tensor_mode(lowered_module, *args):
    return lowered_module.original_module(*args)
