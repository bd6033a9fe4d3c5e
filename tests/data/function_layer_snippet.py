"""The same function-layer program under PyTorch and opdispatch (argument: torch or opdispatch):
tests/test_overrides.py compares its output with tests/data/function_layer_snippet.torch.txt,
recorded from PyTorch 2.13 (python tests/data/function_layer_snippet.py torch)."""
import sys

NAME = sys.argv[1]
if NAME == "torch":
    import torch as lib
    from torch.overrides import (BaseTorchFunctionMode, TorchFunctionMode, get_default_nowrap_functions,
                                 handle_torch_function, has_torch_function, has_torch_function_unary,
                                 has_torch_function_variadic, is_tensor_like)
else:
    import opdispatch as lib
    from opdispatch.overrides import (BaseTorchFunctionMode, TorchFunctionMode, get_default_nowrap_functions,
                                      handle_torch_function, has_torch_function, has_torch_function_unary,
                                      has_torch_function_variadic, is_tensor_like)
from_utils = __import__(f"{NAME}.utils._python_dispatch", fromlist=["TorchDispatchMode"])
Tensor = lib.Tensor


def name(func):
    return getattr(func, "__name__", repr(func))


log = []


class Log(TorchFunctionMode):
    def __init__(self, tag):
        super().__init__()
        self.tag = tag

    def __torch_function__(self, func, types, args=(), kwargs=None):
        log.append(f"{self.tag}:{name(func)}")
        return func(*args, **(kwargs or {}))


x = lib.ones(2, 2)
with Log("outer"), Log("inner"):
    y = x.add(x)
    z = lib.sin(x)
    s = x.sum()
    m = x.mm(x)
    r = x.relu()
    lib.mul(x, 2)
print("nested modes:", log)
print("values:", y.tolist(), s.item(), m.tolist(), r.tolist())
log.clear()
with Log("m"):
    x + x
    x - 1
    x * x
    -x
    x @ x
    x < x  # noqa: B015  (the operator is what the mode sees)
    x.T
    x.requires_grad
    x.grad
    lib.zeros(2)
print("operators and properties:", log)
print("stack empty after:", lib._C._len_torch_function_stack(), lib._C._is_torch_function_mode_enabled())


class Sub(Tensor):
    seen = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.seen.append((name(func), [t.__name__ for t in types]))
        return super().__torch_function__(func, types, args, kwargs)


sub = lib.ones(3).as_subclass(Sub)
results = [sub + 1, sub.sum(), x.sum() + sub.sum(), lib.add(lib.ones(3), sub), lib.ones(3).mul(sub), sub.exp()]
print("subclass results:", [type(t).__name__ for t in results])
print("subclass saw:", Sub.seen)
print("grad is not wrapped:", type(sub.grad).__name__, Tensor.grad.__get__ in get_default_nowrap_functions())
print("tuple results:", type(sub.max(0)[0]).__name__, type(sub.max(0)[1]).__name__)


class Disabled(Tensor):
    __torch_function__ = lib._C._disabled_torch_function_impl


d = lib.ones(2).as_subclass(Disabled)
print("disabled subclass:", type(d + 1).__name__, type(d.sin()).__name__, has_torch_function((d,)))


class OnlyDispatch(Tensor):
    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        with lib._C._DisableTorchDispatch():
            return func(*args, **(kwargs or {}))


print("dispatch-only subclass disables the function layer:",
      OnlyDispatch.__torch_function__ is lib._C._disabled_torch_function_impl)

order = []


class Both(Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        order.append(f"function:{name(func)}")
        with lib._C.DisableTorchFunctionSubclass():
            return func(*args, **(kwargs or {}))

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        order.append(f"dispatch:{func.__name__.split('.')[0]}")
        with lib._C._DisableTorchDispatch():
            return func(*args, **(kwargs or {}))


b = Tensor._make_subclass(Both, lib.ones(2))
out = b.neg()
print("function layer first, then dispatch:", order, type(out).__name__, out.tolist())

with lib._C.DisableTorchFunctionSubclass():
    print("subclass overrides disabled:", type(sub + 1).__name__, lib._C._is_torch_function_enabled(),
          has_torch_function((sub,)))
    with Log("still"):
        log.clear()
        x.neg()
        print("modes still run:", log)
with lib._C.DisableTorchFunction():
    log.clear()
    with Log("off"):
        x.neg()
    print("all disabled:", log, lib._C._is_torch_function_all_disabled(), type(sub + 1).__name__)

a = lib.ones(2, requires_grad=True)
view = (a * 2).as_subclass(Sub)
print("as_subclass keeps the graph:", type(view).__name__, view.requires_grad, view.grad_fn is not None)
view.sum().backward()
print("grad through it:", a.grad.tolist())


class Duck:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return ("duck", name(func), [t.__name__ for t in types])


print("tensor-like object:", lib.add(Duck(), 1), lib.cat([lib.ones(1), Duck()]), is_tensor_like(Duck()),
      is_tensor_like(x), is_tensor_like(1))
print("has_torch_function:", has_torch_function((x, 1)), has_torch_function((x, sub)), has_torch_function_unary(sub),
      has_torch_function_variadic(x, Duck()), has_torch_function([[sub]]))


class Refuses:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return NotImplemented


try:
    lib.sin(Refuses())
except TypeError:
    print("all NotImplemented: TypeError")


def public(a, b=None):
    if has_torch_function((a,)):
        return handle_torch_function(public, (a,), a, b=b)
    return "plain"


print("handle_torch_function:", public(1), public(Duck()))


class Replace(BaseTorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func is Tensor.add or func is lib.add:
            return "replaced"
        return super().__torch_function__(func, types, args, kwargs)


with Replace():
    print("mode replaces:", x.add(1), lib.add(x, 1), x + x, x.mul(2).tolist())
