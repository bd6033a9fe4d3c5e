"""A user's code, type-checked by `mypy --strict` in .ci/lint.sh (not run by
pytest): every assert_type states the type mypy must infer, so a public
function or _C binding that degrades to Any (or to a wrong type) fails CI."""
from __future__ import annotations

from typing import Any

from typing_extensions import assert_type

import opdispatch
from opdispatch import Tensor, _C, ops
from opdispatch.library import Library, custom_op, register_fake
from opdispatch.utils._python_dispatch import TorchDispatchMode

# Tensors
x = opdispatch.tensor([1.0, 2.0, 3.0])
assert_type(x, Tensor)
assert_type(opdispatch.ones(2, 3), Tensor)
assert_type(opdispatch.randn(4, requires_grad=True), Tensor)
assert_type(x.shape, tuple[int, ...])
assert_type(x.size(), tuple[int, ...])
assert_type(x.size(0), int)
assert_type(x.stride(), tuple[int, ...])
assert_type(x.dtype, opdispatch.dtype)
assert_type(x.device, opdispatch.device)
assert_type(x.requires_grad, bool)
assert_type(x.numel(), int)
assert_type(opdispatch.from_numpy(x.numpy()), Tensor)
assert_type(_C.empty([2, 2], dtype=opdispatch.float64, device="meta"), Tensor)
# Operators and methods give Tensors (the built-in operators are typed as returning one).
assert_type(x + 1, Tensor)
assert_type(x * x, Tensor)
assert_type(x == 1, Tensor)
assert_type(x.sum(), Tensor)
assert_type(x.detach(), Tensor)
assert_type(x[0], Tensor)
assert_type(x.grad, "Tensor | None")
assert_type(x.sum().item(), "bool | int | float | complex")
assert_type(float(x.sum()), float)
# Functional forms: the Tensor methods' signatures.
assert_type(opdispatch.add(x, x, alpha=2), Tensor)
assert_type(opdispatch.exp(x), Tensor)
assert_type(opdispatch.matmul(x, x), Tensor)
assert_type(opdispatch.cat([x, x]), Tensor)

# Dispatch keys and key sets
ks = _C.DispatchKeySet(_C.DispatchKey.CPU)
assert_type(ks, _C.DispatchKeySet)
assert_type(ks | _C.DispatchKeySet("AutogradCPU"), _C.DispatchKeySet)
assert_type(ks.highestPriorityTypeId(), _C.DispatchKey)
assert_type(ks.has(_C.DispatchKey.CPU), bool)
assert_type(list(ks), list[_C.DispatchKey])
assert_type(_C._dispatch_keys(x), _C.DispatchKeySet)

# Schemas and their structured argument types
schema = _C.parse_schema("ns::f(Tensor(a!) x, int[]? sizes, float alpha=1.0) -> Tensor")
assert_type(schema, _C.FunctionSchema)
assert_type(schema.arguments, list[_C.Argument])
assert_type(schema.returns, list[_C.Argument])
arg = schema.arguments[1]
assert_type(arg.name, str)
assert_type(arg.type, _C.Type)
assert_type(arg.kwarg_only, bool)
assert_type(arg.alias_info, "_C._AliasInfo | None")
if isinstance(arg.type, _C.OptionalType):
    assert_type(arg.type.getElementType(), _C.Type)
assert_type(_C.TensorType.get(), _C.TensorType)
assert_type(_C.ListType.ofInts(), _C.ListType)
assert_type(arg.type.isSubtypeOf(_C.OptionalType.ofTensor()), bool)

# Registration through Library
lib = Library("sample_user", "DEF")
assert_type(lib.define("mul2(Tensor x) -> Tensor"), str)


def mul2_cpu(t: Tensor) -> Tensor:
    return t * 2


lib.impl("mul2", mul2_cpu, "CPU")


# custom_op and register_fake
@custom_op("sample_user::scale", mutates_args=())
def scale(t: Tensor, factor: float) -> Tensor:
    return t * factor


@register_fake("sample_user::scale")
def _(t: Tensor, factor: float) -> Tensor:
    return opdispatch.empty_like(t)


assert_type(scale(x, 2.0), Any)

# Operator namespaces: calls return what the kernel returns (Any).
packet = ops.sample_user.mul2
assert_type(packet, opdispatch._ops.OpOverloadPacket)
assert_type(packet.default, opdispatch._ops.OpOverload)
assert_type(packet.default._schema, _C.FunctionSchema)


# A dispatch mode
class Counting(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        self.calls.append(str(func))
        return func(*args, **(kwargs or {}))


with Counting() as mode:
    ops.sample_user.mul2(x)
assert_type(mode, Counting)
assert_type(mode.calls, list[str])
