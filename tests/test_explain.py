"""opdispatch.explain on built-in, custom (Library.define, custom_op) and C++
extension operators: the key set and its sources, the hops with the rule and
the registration site of each kernel, failures and their fixes. Each
explanation is checked against the call itself where the call can run."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import opdispatch
from opdispatch import _C
from opdispatch.library import custom_op

from _extension_build import EXAMPLE, cmake_build
from _helpers import keys


def hop_summary(e) -> list[tuple[str, str]]:
    return [(h.key, h.entry.rule) for h in e.hops]


def test_builtin_op_on_a_tensor_that_requires_grad():
    x = opdispatch.randn(2, requires_grad=True)
    e = opdispatch.explain(opdispatch.ops.od.add.Tensor, x, opdispatch.randn(2), alpha=2)
    assert e.op == "od::add.Tensor"
    assert e.schema == "od::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
    sources = {k.key: (k.sources, k.removed) for k in e.keys}
    assert list(sources) == ["AutogradCPU", "ADInplaceOrView", "CPU"]  # highest priority first
    assert sources["CPU"] == (("self", "other"), "")
    assert sources["AutogradCPU"] == (("self",), "")
    assert sources["ADInplaceOrView"][1].startswith("skipped: a fallthrough kernel (C++ opdispatch/csrc/")
    assert hop_summary(e) == [("AutogradCPU", "autograd kernel"), ("CPU", "kernel")]
    assert e.hops[0].keyset == ("AutogradCPU", "CPU") and e.hops[1].keyset == ("CPU",)
    assert e.hops[0].entry.source == "Autograd" and e.hops[1].entry.source == "CPU"
    site = e.hops[1].entry.site
    file, line = site.rsplit(":", 1)
    assert file.endswith("opdispatch/_builtins/elementwise.py")
    assert "add.Tensor" in open(file).read().splitlines()[int(line) - 1]
    assert e.error is None and e.fix is None
    text = str(e)
    assert "Hop 1: AutogradCPU" in text and "Hop 2: CPU" in text and f"kernel: Python {site}" in text
    assert "redispatches to the keys below autograd" in text and "computes the result" in text


def test_a_packet_resolves_the_overload_as_a_call_does():
    x = opdispatch.randn(2)
    assert opdispatch.explain(opdispatch.ops.od.add, x, 2.0).op == "od::add.Scalar"
    assert opdispatch.explain(opdispatch.ops.od.add, x, x).op == "od::add.Tensor"
    assert opdispatch.explain("od::add", x, x).op == "od::add.Tensor"
    assert opdispatch.explain("od::add.Scalar", x, 3).op == "od::add.Scalar"


def test_meta_tensors_and_thread_local_exclusion():
    m = opdispatch.empty(2, 3, device="meta")
    e = opdispatch.explain(opdispatch.ops.od.mm, m, opdispatch.empty(3, 4, device="meta"))
    assert hop_summary(e) == [("Meta", "kernel")]
    with _C._ExcludeDispatchKeyGuard(keys("Meta")):
        e = opdispatch.explain(opdispatch.ops.od.mm, m, opdispatch.empty(3, 4, device="meta"))
    assert e.tls_excluded == ("Meta",)
    assert [(k.key, k.removed) for k in e.keys] == [("Meta", "excluded by the TLS exclude set")]
    assert hop_summary(e) == [("Undefined", "missing")]
    assert "no kernel of od::mm serves Undefined" in e.error and "CompositeExplicitAutograd" in e.fix


def test_included_keys_are_listed_with_their_source(lib, ns):
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: x, "CPU")
    lib.impl("f", lambda x: x, "PrivateUse1")
    with _C._IncludeDispatchKeyGuard(keys("PrivateUse1")):
        e = opdispatch.explain(f"{ns}::f", opdispatch.randn(1))
    assert e.tls_included == ("PrivateUse1",)
    assert [(k.key, k.sources) for k in e.keys] == [("PrivateUse1", ("TLS include set",)), ("CPU", ("x",))]
    assert hop_summary(e) == [("PrivateUse1", "kernel")]


def test_a_call_without_tensors_uses_the_undefined_entry():
    e = opdispatch.explain(opdispatch.ops.od.zeros, [2, 3])
    assert e.keys == () and hop_summary(e) == [("Undefined", "default backend kernel")]
    assert e.hops[0].entry.source == "CompositeExplicitAutograd"
    assert "Hop 1: Undefined  (no key left: the Undefined entry)" in str(e)


def test_a_failing_call_says_why_and_what_registration_would_serve_it(lib, ns):
    lib.define("g(Tensor x) -> Tensor")
    line = inspect.currentframe().f_lineno + 1
    lib.impl("g", lambda x: x, "CPU")
    m = opdispatch.empty(2, device="meta")
    e = opdispatch.explain(f"{ns}::g", m)
    assert hop_summary(e) == [("Meta", "missing")]
    assert e.hops[0].then == "the call raises NotImplementedError"
    assert e.error == (f"no kernel of {ns}::g serves Meta: none is registered at Meta, no alias-key kernel covers it "
                       f"and Meta has no backend fallback.")
    assert f"lib.impl('{ns}::g', fn, 'Meta')" in e.fix and "Its kernels are registered at: CPU." in e.fix
    with pytest.raises(NotImplementedError, match=f"'{ns}::g' with arguments from the 'Meta' backend"):
        opdispatch.ops.__getattr__(ns).g(m)  # the call fails as explained
    assert e.hops == opdispatch.explain(f"{ns}::g", m).hops  # explaining changed nothing
    assert opdispatch.explain(f"{ns}::g", opdispatch.randn(2)).hops[0].entry.site == f"{__file__}:{line}"


def test_alias_kernels_name_their_alias_key(lib, ns):
    lib.define("h(Tensor x) -> Tensor")
    lib.impl("h", lambda x: x, "CompositeExplicitAutograd")
    lib.define("d(Tensor x) -> Tensor")
    lib.impl("d", lambda x: x, "CompositeImplicitAutograd")
    x = opdispatch.randn(1, requires_grad=True)
    e = opdispatch.explain(f"{ns}::h", x)
    assert hop_summary(e) == [("AutogradCPU", "backend fallback"), ("CPU", "default backend kernel")]
    assert "the CompositeExplicitAutograd kernel, which serves every backend key" in str(e)
    e = opdispatch.explain(f"{ns}::d", x)
    assert hop_summary(e) == [("AutogradCPU", "math kernel")]  # decomposes: no second hop
    assert e.hops[0].entry.source == "CompositeImplicitAutograd" and "decomposes" in e.hops[0].then


def test_ambiguous_autogradother_is_a_failure_with_a_fix(lib, ns):
    lib.define("amb(Tensor x) -> Tensor")
    lib.impl("amb", lambda x: x, "CompositeImplicitAutograd")
    lib.impl("amb", lambda x: x, "SparseCPU")
    entry = opdispatch._introspection.table_entries(f"{ns}::amb")["AutogradOther"]
    assert entry.rule == "ambiguous autogradother"
    t = _C.empty((1,), device="cpu")
    with _C._IncludeDispatchKeyGuard(keys("AutogradOther")):
        e = opdispatch.explain(f"{ns}::amb", t)
    assert hop_summary(e) == [("AutogradOther", "ambiguous autogradother")]
    assert e.error and "register a kernel at AutogradOther or at Autograd" in e.fix


def test_custom_op_with_fake_kernel_and_autograd(ns):
    @custom_op(f"{ns}::twice", mutates_args=())
    def twice(x: opdispatch.Tensor) -> opdispatch.Tensor:
        return opdispatch.from_numpy(x.numpy() * 2)

    @twice.register_fake
    def _(x):
        return opdispatch.empty_like(x)

    twice.register_autograd(lambda ctx, grad: grad * 2)
    x = opdispatch.randn(2, requires_grad=True)
    e = opdispatch.explain(twice, x)
    assert e.op == f"{ns}::twice"
    assert [h.key for h in e.hops] == ["AutogradCPU", "CPU"]
    assert e.hops[0].entry.source == "Autograd"
    assert e.hops[1].entry.source in ("CPU", "CompositeExplicitAutograd")  # custom_op's device-agnostic kernel
    assert hop_summary(opdispatch.explain(twice, opdispatch.empty(2, device="meta")))[0][0] == "Meta"
    np.testing.assert_allclose(twice(x).detach().numpy(), x.detach().numpy() * 2)


def test_cpp_extension_ops_show_their_cpp_kernels():
    opdispatch.ops.load_library(cmake_build())
    x = opdispatch.randn(3, requires_grad=True)
    e = opdispatch.explain(opdispatch.ops.myext.relu_, x)
    assert hop_summary(e) == [("AutogradCPU", "backend fallback"), ("ADInplaceOrView", "kernel"), ("CPU", "kernel")]
    assert e.hops[1].entry.origin.startswith(f"C++ {EXAMPLE / 'inplace_or_view.cpp'}:")
    assert e.hops[1].then == "redispatches to the keys below ADInplaceOrView"
    assert e.hops[2].entry.origin.startswith(f"C++ {EXAMPLE / 'cpu_kernels.cpp'}:")
    # The autograd layer's fallback (a default registration replacing the core's, Note [Default fallbacks]).
    assert e.hops[0].entry.site.rpartition(":")[0] == opdispatch._library.autograd.__file__
    e = opdispatch.explain(opdispatch.ops.myext.call_op, x, "od::neg")
    assert hop_summary(e) == [("AutogradCPU", "math kernel")]
    assert e.hops[0].entry.origin.startswith(f"C++ {EXAMPLE / 'call_op.cpp'}:")


def test_bad_arguments_raise_what_the_call_would():
    x = opdispatch.randn(2)
    with pytest.raises(TypeError) as explained:
        opdispatch.explain(opdispatch.ops.od.mm, x, "not a tensor")
    with pytest.raises(TypeError) as called:
        opdispatch.ops.od.mm(x, "not a tensor")
    assert str(explained.value) == str(called.value)
    with pytest.raises(TypeError, match="explain: expected an operator"):
        opdispatch.explain(42, x)
    with pytest.raises(RuntimeError):
        opdispatch.explain("od::no_such_op.default", x)
