"""opdispatch.ops: namespaces, OpOverloadPacket (overload lookup, resolution
of packet calls, refresh), OpOverload (attributes, the C call path,
redispatch, py_impl, decompose), import_module and load_library."""
from __future__ import annotations

import copy
import pickle
import textwrap

import numpy as np
import pytest

from opdispatch import _C, ops
from opdispatch._ops import OperatorBase, OpOverload, OpOverloadPacket
from opdispatch.library import Library, Tag
from _helpers import as_numpy, tensor

DK = _C.DispatchKey


def scale(x, factor):
    return tensor(as_numpy(x) * factor)


@pytest.fixture
def foo(ns, lib):
    """ns::foo(Tensor x) -> Tensor (CPU: x * 2) and ns::foo.int(Tensor x, int y) -> Tensor (CPU: x * y)."""
    lib.define("foo(Tensor x) -> Tensor")
    lib.define("foo.int(Tensor x, int y) -> Tensor")
    lib.impl("foo", lambda x: scale(x, 2), "CPU")
    lib.impl("foo.int", lambda x, y: scale(x, y), "CPU")
    return getattr(ops, ns).foo


# --- namespaces ----------------------------------------------------------------------


def test_namespace_and_packet_are_cached_plain_attributes(ns, foo):
    namespace = getattr(ops, ns)
    assert vars(ops)[ns] is namespace
    assert vars(namespace)["foo"] is foo
    assert namespace.foo is foo and getattr(ops, ns).foo is foo
    assert vars(foo)["default"] is foo.default
    assert foo.default is foo.default
    assert repr(namespace) == f"opdispatch.ops.{ns}"
    # Module-like, as PyTorch's (torch.ops.aten.__name__ == "torch.ops.aten", __file__ "torch.ops").
    assert namespace.__name__ == f"opdispatch.ops.{ns}" and namespace.__file__ == "opdispatch.ops"
    assert ops.higher_order.__name__ == "opdispatch.ops.higher_order"


def test_unknown_op_names_the_namespace_and_lists_its_ops(ns, foo, lib):
    lib.define("bar(Tensor x) -> Tensor")
    namespace = getattr(ops, ns)
    with pytest.raises(AttributeError, match=rf"'{ns}'.*'nope'.*{ns}::nope is not defined.*: bar, foo\.") as e:
        namespace.nope
    assert "library.define" in str(e.value)
    assert not hasattr(namespace, "nope")
    with pytest.raises(AttributeError, match="No operators are defined in namespace"):
        ops.t_no_such_namespace.foo


def test_dunder_lookups_are_attribute_errors(ns, foo):
    assert not hasattr(ops, "__wrapped__")
    assert not hasattr(getattr(ops, ns), "__wrapped__")
    assert not hasattr(foo, "__wrapped__")
    assert "__wrapped__" not in vars(ops)


def test_iteration_over_namespaces_and_ops(ns, foo, lib):
    lib.define("bar(Tensor x) -> Tensor")
    assert ns in list(ops)
    assert sorted(getattr(ops, ns)) == ["bar", "foo"]
    assert {"bar", "foo"} <= set(dir(getattr(ops, ns)))
    lib._destroy()
    assert ns not in list(ops)
    assert list(getattr(ops, ns)) == []


def test_an_op_may_be_called_name(ns, lib):
    lib.define("name(Tensor x) -> Tensor")
    lib.impl("name", lambda x: x, "CPU")
    x = tensor([1.0])
    assert getattr(ops, ns).name(x) is x


def test_import_module(ns, tmp_path, monkeypatch):
    module = f"mod_{ns}"
    (tmp_path / f"{module}.py").write_text(
        textwrap.dedent(
            f"""
            import opdispatch.library
            opdispatch.library.define("{ns}::imported", "(Tensor x) -> Tensor")
            opdispatch.library.impl("{ns}::imported", "cpu", lambda x: x)
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    ops.import_module(module)
    x = tensor([1.0])
    assert getattr(ops, ns).imported(x) is x
    with pytest.raises(ModuleNotFoundError):
        ops.import_module(f"{module}_missing")


def test_load_library_of_a_missing_file_raises(tmp_path):
    before = set(ops.loaded_libraries)
    with pytest.raises(OSError):
        ops.load_library(tmp_path / "nope.so")
    assert ops.loaded_libraries == before


# --- packets -------------------------------------------------------------------------


def test_packet_overloads_and_schemas(ns, foo):
    assert isinstance(foo, OpOverloadPacket)
    assert foo.overloads() == ["default", "int"]
    assert {k: str(v) for k, v in foo._schemas.items()} == {
        "": f"{ns}::foo(Tensor x) -> Tensor",
        "int": f"{ns}::foo.int(Tensor x, int y) -> Tensor",
    }
    # As PyTorch 2.13 prints them: <OpOverloadPacket(op='aten.add')>, aten.add.
    assert repr(foo) == f"<OpOverloadPacket(op='{ns}.foo')>" and str(foo) == f"{ns}.foo"
    assert foo.__name__ == "foo"
    assert foo.op is foo
    assert copy.deepcopy(foo) is foo


def test_unknown_overload_lists_the_overloads(ns, foo):
    with pytest.raises(AttributeError, match=rf"'{ns}::foo' has no overload named 'float'.*default, int"):
        foo.float
    assert not hasattr(foo, "float")


def test_packet_call_resolves_the_overload(ns, foo):
    x = tensor([1.0, 2.0])
    np.testing.assert_allclose(foo(x).numpy(), [2.0, 4.0])  # .default
    np.testing.assert_allclose(foo(x, 3).numpy(), [3.0, 6.0])  # .int
    np.testing.assert_allclose(foo(x, y=4).numpy(), [4.0, 8.0])  # .int, by keyword
    np.testing.assert_allclose(foo(x=x).numpy(), [2.0, 4.0])
    assert _C._jit_resolve_packet(f"{ns}::foo", x) == "default"
    assert _C._jit_resolve_packet(f"{ns}::foo", x, y=1) == "int"


def test_packet_call_that_matches_nothing_lists_every_schema(ns, foo):
    x = tensor([1.0])
    with pytest.raises(TypeError, match="failed to match any schema") as e:
        foo(x, x)
    message = str(e.value)
    assert f"{ns}::foo(Tensor x) -> Tensor" in message
    assert f"{ns}::foo.int(Tensor x, int y) -> Tensor" in message
    assert "argument 'y' (position 2) must be int, not Tensor" in message
    with pytest.raises(TypeError, match="failed to match any schema"):
        _C._jit_resolve_packet(f"{ns}::foo", x, x, x)


def test_packet_with_one_overload_raises_its_own_error(ns, lib):
    lib.define("bar(Tensor x, int n) -> Tensor")
    with pytest.raises(TypeError, match=rf"^{ns}::bar\(\): argument 'n' \(position 2\) must be int, not str$"):
        getattr(ops, ns).bar(tensor([1.0]), "two")


def test_packet_sees_overloads_defined_later(ns, lib):
    lib.define("baz(Tensor x) -> Tensor")
    lib.impl("baz", lambda x: scale(x, 2), "CPU")
    packet = getattr(ops, ns).baz
    x = tensor([1.0])
    np.testing.assert_allclose(packet(x).numpy(), [2.0])
    with pytest.raises(TypeError):
        packet(x, 5)
    other = Library(ns, "FRAGMENT")
    other.define("baz.int(Tensor x, int y) -> Tensor")
    other.impl("baz.int", lambda x, y: scale(x, y), "CPU")
    assert getattr(ops, ns).baz is packet
    assert packet.overloads() == ["default", "int"]
    np.testing.assert_allclose(packet(x, 5).numpy(), [5.0])
    other._destroy()
    assert packet.overloads() == ["default"]
    with pytest.raises(TypeError):
        packet(x, 5)


def test_packet_sees_overloads_defined_outside_opdispatch_library(ns, lib):
    lib.define("baz(Tensor x) -> Tensor")
    packet = getattr(ops, ns).baz
    cpp_lib = _C._dispatch_library("FRAGMENT", ns, "")
    cpp_lib.def_("baz.y(Tensor y) -> Tensor")
    cpp_lib.impl_t_t("baz.y", "CPU")  # a C++ kernel returning its input
    x = tensor([1.0])
    assert packet(y=x) is x
    cpp_lib.reset()
    assert packet.overloads() == ["default"]


def test_overload_names_come_from_the_dispatchers_index(ns, lib):
    """ops' lookups ask the dispatcher for one operator's overloads (_dispatch_find_overload_names), not
    for every operator: the defined ones, in the order first seen, without impl-only entries."""
    lib.define("idx.b(Tensor x) -> Tensor")
    lib.define("idx(Tensor x) -> Tensor")
    lib.define("idx2(Tensor x) -> Tensor")
    lib.impl("idx_impl_only", lambda x: x, "CPU")
    other = Library(ns, "FRAGMENT")
    other.define("idx.a(Tensor x) -> Tensor")
    assert _C._dispatch_find_overload_names(f"{ns}::idx") == ["b", "", "a"]
    assert _C._dispatch_find_overload_names(f"{ns}::idx_impl_only") == []
    assert _C._dispatch_find_overload_names(f"{ns}::missing") == []
    other._destroy()
    assert _C._dispatch_find_overload_names(f"{ns}::idx") == ["b", ""]
    assert getattr(ops, ns).idx.overloads() == ["b", "default"]


def test_packet_whose_op_was_removed(ns):
    lib = Library(ns, "FRAGMENT")
    lib.define("gone(Tensor x) -> Tensor")
    packet = getattr(ops, ns).gone
    lib._destroy()
    with pytest.raises(RuntimeError, match=rf"no overload of {ns}::gone is defined"):
        packet(tensor([1.0]))
    with pytest.raises(AttributeError, match="no longer defined"):
        packet.default


# --- overloads -----------------------------------------------------------------------


def test_opoverload_attributes(ns, foo, lib):
    op = foo.default
    assert isinstance(op, OpOverload) and isinstance(op, _C._DispatchOperator) and isinstance(op, OperatorBase)
    assert str(op._schema) == f"{ns}::foo(Tensor x) -> Tensor"
    assert op._name == f"{ns}::foo" and op.name() == f"{ns}::foo"
    assert op._overloadname == "default"
    assert op.namespace == ns
    assert op.overloadpacket is foo
    assert op.op is op
    assert op.tags == []
    assert op.__name__ == "foo.default"
    assert op._handle.schema() == op._schema
    # As PyTorch 2.13 prints them: <OpOverload(op='aten.add', overload='Tensor')>, aten.add.Tensor.
    assert repr(op) == f"<OpOverload(op='{ns}.foo', overload='default')>" and str(op) == f"{ns}.foo.default"
    assert repr(foo.int) == f"<OpOverload(op='{ns}.foo', overload='int')>"
    assert foo.int._name == f"{ns}::foo.int" and foo.int._overloadname == "int"
    assert copy.copy(op) is op and copy.deepcopy(op) is op
    lib.define("tagged(Tensor x) -> Tensor", tags=[Tag.core, Tag.pointwise])
    assert getattr(ops, ns).tagged.default.tags == [Tag.core, Tag.pointwise]


def test_pickling_is_by_name(ns, foo):
    assert pickle.loads(pickle.dumps(foo.default)) is foo.default
    assert pickle.loads(pickle.dumps(foo.int)) is foo.int
    assert pickle.loads(pickle.dumps(foo)) is foo


def test_opoverload_hash_and_eq_are_identity(ns, foo):
    table = {foo.default: "default", foo.int: "int"}
    assert table[getattr(ops, ns).foo.default] == "default"
    assert foo.default == foo.default and foo.default != foo.int
    assert len({foo.default, foo.default, foo.int}) == 2


def test_opoverload_call_is_the_c_call(ns, foo):
    # No Python-level __call__: calling an OpOverload is _C._DispatchOperator's tp_call.
    assert "__call__" not in OpOverload.__dict__
    assert type(foo.default).__call__ is _C._DispatchOperator.__call__
    x = tensor([1.0, 2.0])
    np.testing.assert_allclose(foo.default(x).numpy(), [2.0, 4.0])
    np.testing.assert_allclose(foo.int(x, 3).numpy(), [3.0, 6.0])
    np.testing.assert_allclose(foo.int(x=x, y=3).numpy(), [3.0, 6.0])


def test_argument_errors_name_the_operator_and_argument(ns, foo):
    x = tensor([1.0])
    with pytest.raises(TypeError, match=rf"{ns}::foo.int\(\): argument 'y' \(position 2\) must be int, not float"):
        foo.int(x, 1.5)
    with pytest.raises(TypeError, match=rf"{ns}::foo.int\(\) missing value for argument 'y'"):
        foo.int(x)
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'z'"):
        foo.int(x, 1, z=2)
    with pytest.raises(TypeError, match=r"takes 2 positional arguments but 3 were given"):
        foo.int(x, 1, 2)


def test_an_argument_named_self_can_be_passed_by_keyword(ns, lib):
    lib.define("me(Tensor self, int n=1) -> Tensor")
    lib.impl("me", lambda self, n=1: self, "CPU")
    x = tensor([1.0])
    assert getattr(ops, ns).me(self=x) is x
    assert getattr(ops, ns).me.default(self=x, n=2) is x


def test_missing_kernel_names_the_operator_and_key(ns, lib):
    lib.define("nokernel(Tensor x) -> Tensor")
    lib.impl("nokernel", lambda x: x, "Meta")
    with pytest.raises(NotImplementedError, match=rf"{ns}::nokernel.*CPU"):
        getattr(ops, ns).nokernel(tensor([1.0]))


def test_calling_an_overload_whose_definition_was_removed(ns):
    lib = Library(ns, "FRAGMENT")
    lib.define("gone(Tensor x) -> Tensor")
    op = getattr(ops, ns).gone.default
    lib._destroy()
    with pytest.raises(RuntimeError, match="its definition was removed"):
        op(tensor([1.0]))


def test_redispatch(ns, lib):
    lib.define("rd(Tensor x) -> Tensor")
    lib.impl("rd", lambda x: scale(x, 2), "CPU")
    lib.impl("rd", lambda x: scale(x, 3), "Meta")
    op = getattr(ops, ns).rd.default
    x = tensor([1.0])
    np.testing.assert_allclose(op.redispatch(_C.DispatchKeySet(DK.CPU), x).numpy(), [2.0])
    # redispatch uses the given key set, not the tensor's: a CPU tensor sent to the Meta kernel.
    np.testing.assert_allclose(op.redispatch(_C.DispatchKeySet(DK.Meta), x=x).numpy(), [3.0])


def test_has_kernel_for_dispatch_key(ns, foo):
    op = foo.default
    assert op.has_kernel_for_dispatch_key(DK.CPU)
    assert not op.has_kernel_for_dispatch_key(DK.Meta)
    assert op.has_kernel_for_any_dispatch_key(_C.DispatchKeySet(DK.CPU) | _C.DispatchKeySet(DK.Meta))
    assert not op.has_kernel_for_any_dispatch_key(_C.DispatchKeySet(DK.Meta))
    op.py_impl(DK.Meta)(lambda x: x)
    assert op.has_kernel_for_dispatch_key(DK.Meta)
    assert op.has_kernel_for_any_dispatch_key(_C.DispatchKeySet(DK.Meta))
    assert not foo.int.has_kernel_for_dispatch_key(DK.Meta)  # py_kernels are per overload


def test_py_impl(ns, foo):
    op = foo.default

    @op.py_impl(DK.AutogradCPU)
    def autograd_rule(x):
        return x

    assert op.py_kernels == {DK.AutogradCPU: autograd_rule}
    with pytest.raises(RuntimeError, match=rf"Trying to override a python impl for .*AutogradCPU on operator {ns}::foo"):
        op.py_impl(DK.AutogradCPU)(lambda x: x)
    with pytest.raises(ValueError, match="register a mode"):
        op.py_impl(DK.Python)(lambda x: x)
    with pytest.raises(TypeError, match="DispatchKey"):
        op.py_impl("CPU")(lambda x: x)
    # The registry is data: a normal call still goes to the CPU kernel.
    x = tensor([1.0])
    x.requires_grad = True
    assert op(x) is not x


def test_decompose(ns, lib):
    lib.define("dec(Tensor x) -> Tensor")
    lib.impl("dec", lambda x: scale(x, 10), "CompositeImplicitAutograd")
    lib.impl("dec", lambda x: scale(x, 2), "CPU")
    op = getattr(ops, ns).dec.default
    x = tensor([1.0])
    np.testing.assert_allclose(op(x).numpy(), [2.0])  # the backend kernel wins a call
    np.testing.assert_allclose(op.decompose(x).numpy(), [10.0])  # the decomposition on request
    np.testing.assert_allclose(op._call_for_dispatch_key("CPU", x).numpy(), [2.0])
    op.py_impl(DK.CompositeImplicitAutograd)(lambda x: scale(x, 100))
    np.testing.assert_allclose(op.decompose(x).numpy(), [100.0])


def test_decompose_without_a_decomposition(ns, foo):
    assert foo.default.decompose(tensor([1.0])) is NotImplemented
    with pytest.raises(RuntimeError, match=rf"{ns}::foo has no kernel registered at CompositeImplicitAutograd"):
        foo.default._call_for_dispatch_key(DK.CompositeImplicitAutograd, tensor([1.0]))


def test_python_fallbacks_receive_the_opoverload(ns, foo):
    seen = []

    def fallback(op, *args, **kwargs):
        seen.append(op)
        return args[0]

    fb = Library("_", "IMPL")
    fb.fallback(fallback, "PrivateUse1")
    try:
        with _C._IncludeDispatchKeyGuard(_C.DispatchKeySet(DK.PrivateUse1)):
            x = tensor([1.0])
            assert foo(x) is x
            assert foo(x, 2) is x
    finally:
        fb._destroy()
    assert seen[0] is foo.default and seen[1] is foo.int


def test_unknown_operator_suggests_close_names_and_leaves_room_for_pythons_hint():
    with pytest.raises(AttributeError) as e:
        ops.od.ad
    message = str(e.value)
    # od::pad is as close as od::add (one letter added); difflib lists ties in reverse name order
    assert "Did you mean pad, add, " in message
    # Python may append ". Did you mean: 'add'?" when it prints the traceback: no ".." then.
    assert not message.endswith(".")


# --- issue 28's audit of the ops objects, each against PyTorch 2.13 -----------------------------------------


def test_operator_handle_schema_and_debug_are_methods():
    # PyTorch 2.13: op._handle.schema() is a FunctionSchema, op._handle.debug() "registered at ...".
    handle = ops.od.add.Tensor._handle
    assert str(handle.schema()) == "od::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
    assert handle.debug().startswith("registered at ")


@pytest.mark.parametrize("name, expected", [
    # PyTorch 2.13's aten values: add.Tensor False, add_.Tensor False (a write), view, transpose.int,
    # reshape, contiguous, to.dtype and select.int True, zero_ False.
    ("add.Tensor", False), ("add_.Tensor", False), ("view.default", True), ("transpose.int", True),
    ("reshape.default", True), ("contiguous.default", True), ("to.dtype", True), ("select.int", True),
    ("zero_.default", False),
])
def test_is_view(name, expected):
    packet, overload = name.split(".")
    assert getattr(getattr(ops.od, packet), overload).is_view is expected


def test_is_view_with_mixed_annotations_is_false(ns):
    lib = Library(ns, "FRAGMENT")
    try:
        lib.define("mixed(Tensor(a) x, Tensor(b!) y) -> Tensor(a)")
        lib.define("reads(Tensor(a) x, Tensor(b) y) -> Tensor(a)")
        assert getattr(ops, ns).mixed.default.is_view is False
        assert getattr(ops, ns).reads.default.is_view is True
    finally:
        lib._destroy()


def test_a_schema_parse_error_is_a_runtime_error_and_a_value_error(ns):
    # PyTorch 2.13: Library.define("dummy") raises RuntimeError ("... only the operator name was given").
    lib = Library(ns, "FRAGMENT")
    try:
        with pytest.raises(RuntimeError, match=r"expected '\(' but found end of input at position 5") as info:
            lib.define("dummy")
        assert isinstance(info.value, ValueError) and type(info.value) is _C.SchemaParseError
        with pytest.raises(RuntimeError):
            _C.parse_schema("f(Tensor x -> Tensor")
    finally:
        lib._destroy()
