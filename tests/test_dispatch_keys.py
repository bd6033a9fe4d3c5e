"""opdispatch._C.DispatchKey and DispatchKeySet: names, priority order, set
algebra, alias keys and the named key sets (docs/architecture.rst, "Dispatch keys")."""
from __future__ import annotations

import copy
import pickle

import pytest

import opdispatch
from opdispatch import _C, library

K = _C.DispatchKey
KS = _C.DispatchKeySet

# docs/architecture.rst: the runtime keys, lowest to highest priority, then the alias keys.
# The device backends and their autograd keys are in PyTorch's backend order.
DEVICE_BACKENDS = ["CPU", "CUDA", "HIP", "XLA", "MPS", "IPU", "XPU", "HPU", "VE", "Lazy", "MTIA", "MAIA",
                   "PrivateUse1", "Meta"]
BACKENDS = DEVICE_BACKENDS + ["QuantizedCPU", "SparseCPU"]
AUTOGRAD_KEYS = ["AutogradOther"] + ["Autograd" + b for b in DEVICE_BACKENDS]
AUTOCAST_KEYS = ["AutocastCPU", "AutocastXPU", "AutocastHPU", "AutocastXLA", "AutocastMPS", "AutocastCUDA",
                 "AutocastPrivateUse1"]
RUNTIME_KEYS = (
    BACKENDS + ["BackendSelect", "Python", "Functionalize", "ADInplaceOrView"] + AUTOGRAD_KEYS + AUTOCAST_KEYS
    + ["FuncTorchBatched", "FuncTorchVmapMode", "PythonTLSSnapshot", "PreDispatch", "PythonDispatcher"]
)
ALIAS_KEYS = [
    "Autograd", "CompositeImplicitAutograd", "FuncTorchBatchedDecomposition",
    "CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional",
]
# The device types (as PyTorch spells them in torch.device and Library.impl) and their backend keys.
DEVICE_TYPES = {
    "cpu": "CPU", "cuda": "CUDA", "hip": "HIP", "xla": "XLA", "mps": "MPS", "ipu": "IPU", "xpu": "XPU",
    "hpu": "HPU", "ve": "VE", "lazy": "Lazy", "mtia": "MTIA", "maia": "MAIA", "privateuseone": "PrivateUse1",
    "meta": "Meta",
}


def ks(*names: str) -> _C.DispatchKeySet:
    out = KS(K.Undefined)
    for n in names:
        out = out | KS(getattr(K, n))
    return out


# --- DispatchKey ------------------------------------------------------------------


def test_dispatch_key_names_are_exactly_the_designed_keys_in_priority_order():
    assert list(K.__members__) == ["Undefined"] + RUNTIME_KEYS + ALIAS_KEYS


def test_dispatch_key_values_are_priorities():
    assert int(K.Undefined) == 0
    assert [int(getattr(K, n)) for n in RUNTIME_KEYS] == list(range(1, len(RUNTIME_KEYS) + 1))
    # Alias keys come after every runtime key.
    assert min(int(getattr(K, n)) for n in ALIAS_KEYS) > int(K.PythonDispatcher)


@pytest.mark.parametrize("name", ["Undefined"] + RUNTIME_KEYS + ALIAS_KEYS)
def test_key_name_parse_roundtrip(name):
    key = getattr(K, name)
    assert _C._dispatch_key_name(key) == name
    assert _C._parse_dispatch_key(name) == key
    assert _C._dispatch_key_parse(name) == key  # the name is accepted where a key is
    assert _C._dispatch_key_parse(key) == key


@pytest.mark.parametrize("bad", ["", "cpu", "Cpu", "CPU ", "AutogradFunctionality", "Vulkan", "NotAKey"])
def test_parse_dispatch_key_returns_none_for_unknown_names(bad):
    assert _C._parse_dispatch_key(bad) is None


def test_unknown_key_name_where_a_key_is_expected_is_a_value_error_listing_keys():
    with pytest.raises(ValueError, match=r"could not parse dispatch key 'NotAKey'.*CPU.*AutogradCPU.*"
                                         r"CompositeImplicitAutograd"):
        _C._dispatch_key_parse("NotAKey")
    with pytest.raises(ValueError, match="NotAKey"):
        _C._dispatch_is_alias_key("NotAKey")


def test_key_arguments_must_be_keys_or_names():
    with pytest.raises(TypeError):
        _C._dispatch_key_name(3)


@pytest.mark.parametrize("device, key", DEVICE_TYPES.items())
def test_dispatch_key_for_device(device, key):
    # PyTorch: torch._C._dispatch_key_for_device gives the same names.
    assert _C._dispatch_key_for_device(device) == key


def test_every_device_backend_has_a_device_type():
    assert sorted(DEVICE_TYPES.values()) == sorted(DEVICE_BACKENDS)


@pytest.mark.parametrize("device, key", DEVICE_TYPES.items())
def test_tensors_on_a_device_carry_its_backend_key(device, key):
    t = _C.empty_strided((2,), (1,), None, device)
    assert str(t.device) == device
    assert _C._dispatch_keys(t) == ks(key)
    t.requires_grad = True
    assert _C._dispatch_keys(t) == ks(key, "ADInplaceOrView", "Autograd" + key)


@pytest.mark.parametrize("bad", ["tpu", "fpga", "CPU", "xpu0"])
def test_dispatch_key_for_unknown_device_raises_value_error(bad):
    with pytest.raises(ValueError, match=f"unknown device '{bad}'. Expected one of cpu, cuda, hip, .*xpu.*privateuseone"):
        _C._dispatch_key_for_device(bad)


@pytest.mark.parametrize("device", ["cpu:0", "cuda:1"])
def test_dispatch_key_for_device_with_index_raises(device):
    with pytest.raises(ValueError, match=f"not have a device index; got {device}"):
        _C._dispatch_key_for_device(device)


@pytest.mark.parametrize("name", ALIAS_KEYS)
def test_alias_keys_are_alias_keys(name):
    assert _C._dispatch_is_alias_key(getattr(K, name))


@pytest.mark.parametrize("name", ["Undefined"] + RUNTIME_KEYS)
def test_runtime_keys_are_not_alias_keys(name):
    assert not _C._dispatch_is_alias_key(getattr(K, name))


def test_is_included_in_alias():
    inc = _C._dispatch_is_included_in_alias
    for b in BACKENDS:
        assert inc(getattr(K, b), K.CompositeExplicitAutograd)
        assert inc(getattr(K, b), K.CompositeExplicitAutogradNonFunctional)
        assert inc(getattr(K, b), K.CompositeImplicitAutograd)
        assert not inc(getattr(K, b), K.Autograd)
    for a in AUTOGRAD_KEYS:
        assert inc(getattr(K, a), K.Autograd)
        assert inc(getattr(K, a), K.CompositeImplicitAutograd)
        assert not inc(getattr(K, a), K.CompositeExplicitAutograd)
    for other in ["BackendSelect", "Python", "ADInplaceOrView", "AutocastCPU", "PythonDispatcher"]:
        for alias in ["Autograd", "CompositeImplicitAutograd", "CompositeExplicitAutograd"]:
            assert not inc(getattr(K, other), getattr(K, alias))
    assert inc(K.FuncTorchBatched, K.FuncTorchBatchedDecomposition)
    assert not inc(K.CPU, K.FuncTorchBatchedDecomposition)
    # Undefined has no bit: it is in no alias set (the Undefined table entry is special-cased).
    assert not inc(K.Undefined, K.CompositeImplicitAutograd)
    # A runtime key "includes" itself, as in PyTorch.
    assert inc(K.CPU, K.CPU)
    assert not inc(K.CUDA, K.CPU)
    assert inc("AutogradMeta", "Autograd")


@pytest.mark.parametrize("autograd, backends", [
    *(("Autograd" + b, [b]) for b in DEVICE_BACKENDS),
    ("AutogradOther", ["QuantizedCPU", "SparseCPU"]),
    ("CPU", []), ("XPU", []), ("ADInplaceOrView", []), ("AutocastXPU", []), ("Autograd", []),
])
def test_backend_keyset_from_autograd(autograd, backends):
    assert _C._dispatch_get_backend_keyset_from_autograd(getattr(K, autograd)) == ks(*backends)


def test_autogradother_backends():
    assert _C._dispatch_autogradother_backends == ks("QuantizedCPU", "SparseCPU")
    assert repr(_C._dispatch_autogradother_backends) == "DispatchKeySet(QuantizedCPU, SparseCPU)"


# --- DispatchKeySet ---------------------------------------------------------------


def test_keyset_repr_lists_keys_lowest_priority_first():
    assert repr(ks("AutogradCPU", "CPU")) == "DispatchKeySet(CPU, AutogradCPU)"
    assert repr(ks("AutogradMeta", "Meta", "ADInplaceOrView")) == \
        "DispatchKeySet(Meta, ADInplaceOrView, AutogradMeta)"
    assert repr(KS(K.Undefined)) == "DispatchKeySet()"
    assert _C._dispatch_keyset_to_string(ks("CPU", "Python")) == "DispatchKeySet(CPU, Python)"


def test_keyset_from_name():
    assert KS("AutogradCPU") == KS(K.AutogradCPU)


def test_keyset_algebra():
    a = ks("CPU", "AutogradCPU", "Python")
    b = ks("CPU", "Meta")
    assert a | b == ks("CPU", "Meta", "AutogradCPU", "Python")
    assert a & b == ks("CPU")
    assert a - b == ks("AutogradCPU", "Python")
    assert b - a == ks("Meta")
    assert (a - a).empty()
    assert not a.empty()
    # Operations return new sets; the operands are unchanged.
    assert a == ks("CPU", "AutogradCPU", "Python")


def test_keyset_has_add_remove():
    s = ks("CPU")
    assert s.has(K.CPU) and not s.has(K.AutogradCPU)
    t = s.add(K.AutogradCPU)
    assert t == ks("CPU", "AutogradCPU") and s == ks("CPU")
    assert t.has(K.AutogradCPU)
    assert t.remove(K.CPU) == ks("AutogradCPU")
    assert t.remove(K.Meta) == t  # removing an absent key is a no-op
    assert s.add(K.CPU) == s
    assert not s.has(K.Undefined)
    assert not ks("AutogradCPU").has(K.Autograd)  # an alias key is never in a runtime set
    assert s.add("Meta") == ks("CPU", "Meta")


def test_keyset_equality_hash_and_iteration():
    assert ks("CPU", "Meta") == ks("Meta", "CPU")
    assert ks("CPU") != ks("Meta")
    assert len({ks("CPU", "Meta"), ks("Meta", "CPU"), ks("CPU")}) == 2
    assert list(ks("AutogradCPU", "CPU", "Python")) == [K.CPU, K.Python, K.AutogradCPU]


def test_keyset_compares_with_other_types_like_python_objects_do():
    s = ks("CPU")
    assert (s == None) is False  # noqa: E711 - the point of the test
    assert s != "CPU" and s != 3
    assert s in [None, 3, ks("CPU")]
    with pytest.raises(TypeError, match="unsupported operand type"):
        s | 3
    with pytest.raises(TypeError, match="unsupported operand type"):
        s & K.CPU
    with pytest.raises(TypeError, match="unsupported operand type"):
        s - "CPU"


def test_highest_priority_type_id():
    assert ks("CPU", "AutogradCPU").highestPriorityTypeId() == K.AutogradCPU
    assert ks("CPU", "ADInplaceOrView").highestPriorityTypeId() == K.ADInplaceOrView
    assert ks("Meta", "CPU").highestPriorityTypeId() == K.Meta
    assert ks("PythonDispatcher", "CPU").highestPriorityTypeId() == K.PythonDispatcher
    assert KS(K.Undefined).highestPriorityTypeId() == K.Undefined
    for name in RUNTIME_KEYS:
        assert KS(getattr(K, name)).highestPriorityTypeId() == getattr(K, name)


@pytest.mark.parametrize("name", ALIAS_KEYS)
def test_keyset_from_alias_key_is_empty_as_in_pytorch(name):
    # PyTorch 2.13: DispatchKeySet(DispatchKey.Autograd) == DispatchKeySet() (its repr is "DispatchKeySet()");
    # _dispatch_get_runtime_keyset gives the runtime keys an alias key stands for.
    assert KS(getattr(K, name)) == KS(K.Undefined)
    assert repr(KS(getattr(K, name))) == "DispatchKeySet()"


def test_guards_take_a_key_or_a_key_set():
    tls = _C._dispatch_tls_is_dispatch_key_excluded
    for arg in (K.Python, KS(K.Python)):
        with _C._ExcludeDispatchKeyGuard(arg):
            assert tls(K.Python)
        assert not tls(K.Python)
        with _C._IncludeDispatchKeyGuard(arg):
            assert _C._dispatch_tls_is_dispatch_key_included(K.Python)
        assert not _C._dispatch_tls_is_dispatch_key_included(K.Python)


def test_raii_guards_hold_from_construction_until_they_go():
    # PyTorch 2.13's _DisableTorchDispatch and _AutoDispatchBelowAutograd are RAII objects: in effect from
    # construction; `del` or __exit__ ends them. (_Exclude/_IncludeDispatchKeyGuard act only inside `with`, as there.)
    tls = _C._dispatch_tls_is_dispatch_key_excluded
    guard = _C._DisableTorchDispatch()
    assert tls(K.Python)
    del guard
    assert not tls(K.Python)
    guard = _C._AutoDispatchBelowAutograd()
    assert tls(K.AutogradCPU)
    del guard
    assert not tls(K.AutogradCPU)
    with _C._DisableTorchDispatch():
        assert tls(K.Python)
    assert not tls(K.Python)
    unentered = _C._ExcludeDispatchKeyGuard(KS(K.Python))
    assert not tls(K.Python)
    del unentered


@pytest.mark.parametrize("method", ["add", "remove"])
def test_keyset_add_remove_alias_key_raise_value_error(method):
    with pytest.raises(ValueError, match=f"DispatchKeySet.{method} needs a runtime dispatch key; Autograd"):
        getattr(ks("CPU"), method)(K.Autograd)


def test_keyset_full():
    full = _C._dispatch_keyset_full()
    assert list(full) == [getattr(K, n) for n in RUNTIME_KEYS]
    assert full.highestPriorityTypeId() == K.PythonDispatcher


@pytest.mark.parametrize("name", RUNTIME_KEYS)
def test_keyset_full_after_is_every_lower_priority_key_and_the_python_dispatcher(name):
    # PyTorch: FULL_AFTER(k) adds PythonDispatcher, so a redispatch keeps the Python dispatcher
    # (Note [FULL_AFTER keeps the Python dispatcher]); FULL_AFTER(PythonDispatcher) is just the keys below.
    i = RUNTIME_KEYS.index(name)
    below = [getattr(K, n) for n in RUNTIME_KEYS[:i]]
    expected = below if name == "PythonDispatcher" else below + [K.PythonDispatcher]
    assert list(_C._dispatch_keyset_full_after(getattr(K, name))) == expected


def test_keyset_full_after_edge_cases():
    assert list(_C._dispatch_keyset_full_after(K.CPU)) == [K.PythonDispatcher]
    assert _C._dispatch_keyset_full_after(K.Undefined).empty()
    with pytest.raises(ValueError, match="_dispatch_keyset_full_after needs a runtime dispatch key; Autograd"):
        _C._dispatch_keyset_full_after(K.Autograd)


def test_after_autograd_keyset():
    # PyTorch: after_autograd_keyset = FULL_AFTER(AutogradOther): everything below autograd.
    s = _C._after_autograd_keyset
    assert s == _C._dispatch_keyset_full_after(K.AutogradOther)
    assert s.has(K.ADInplaceOrView) and s.has(K.CPU) and s.has(K.Python)
    for a in AUTOGRAD_KEYS:
        assert not s.has(getattr(K, a))


def test_after_ADInplaceOrView_keyset():
    s = _C._after_ADInplaceOrView_keyset
    assert s == _C._dispatch_keyset_full_after(K.ADInplaceOrView)
    assert not s.has(K.ADInplaceOrView)
    assert s.has(K.Functionalize) and s.has(K.Meta)
    assert s == _C._after_autograd_keyset.remove(K.ADInplaceOrView)


def test_redispatch_mask_idiom():
    # What an autograd kernel does with its keyset: drop itself and everything above.
    call_keys = ks("CPU", "ADInplaceOrView", "AutogradCPU", "Python")
    below = call_keys & _C._dispatch_keyset_full_after(K.AutogradCPU)
    assert below == ks("CPU", "ADInplaceOrView", "Python")
    assert (below & _C._after_ADInplaceOrView_keyset).highestPriorityTypeId() == K.Python


# --- pickling ------------------------------------------------------------------------


@pytest.mark.parametrize("names", [(), ("CPU",), ("XPU", "AutogradXPU", "ADInplaceOrView"),
                                   tuple(RUNTIME_KEYS)])
def test_keyset_pickles_and_copies(names):
    s = ks(*names)
    for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):
        assert pickle.loads(pickle.dumps(s, protocol)) == s
    assert copy.deepcopy(s) == s and copy.copy(s) == s


def test_keyset_pickles_by_key_names():
    # The bits of a key move when keys are added; the names do not.
    data = pickle.dumps(ks("CPU", "AutogradHPU"))
    assert b"AutogradHPU" in data and b"CPU" in data


@pytest.mark.parametrize("state, error", [
    ((("CPU", "NotAKey"),), "could not parse dispatch key 'NotAKey'"),
    ((("CPU", "Autograd"),), "Autograd is an alias key"),
    (("CPU",), "a pickled DispatchKeySet is a tuple of key names"),
])
def test_unpickling_a_bad_keyset_state_raises(state, error):
    s = KS.__new__(KS)  # what pickle does before __setstate__
    with pytest.raises(ValueError, match=error):
        s.__setstate__(state)


@pytest.mark.parametrize("name", ["Undefined"] + RUNTIME_KEYS + ALIAS_KEYS)
def test_dispatch_key_pickles_by_name(name):
    key = getattr(K, name)
    data = pickle.dumps(key)
    assert name.encode() in data
    assert pickle.loads(data) is key
    assert copy.deepcopy(key) is key


# --- device types in the Python registration API ----------------------------------------


@pytest.mark.parametrize("device, key", DEVICE_TYPES.items())
def test_library_impl_device_type_registers_at_its_backend_key(ns, lib, device, key):
    lib.define("f(Tensor x) -> Tensor")
    library.impl(f"{ns}::f", device, lambda x: x, lib=lib)
    assert _C._dispatch_has_kernel_for_dispatch_key(f"{ns}::f", key)
    assert [k for k in BACKENDS if _C._dispatch_has_kernel_for_dispatch_key(f"{ns}::f", k)] == [key]
    if device != "meta":  # a Python kernel on meta must not see data; nothing else to check there
        x = _C.empty_strided((2,), (1,), None, device)
        assert getattr(opdispatch.ops, ns).f(x) is x


@pytest.mark.parametrize("device", ["xpu", "hpu", "mtia", "lazy", "privateuseone"])
def test_custom_op_device_types_and_register_kernel_use_the_new_backend_keys(ns, device):
    @library.custom_op(f"{ns}::g", mutates_args=(), device_types=device)
    def g(x: opdispatch.Tensor) -> opdispatch.Tensor:
        return x.clone()

    key = DEVICE_TYPES[device]
    assert _C._dispatch_has_kernel_for_dispatch_key(f"{ns}::g", key)
    assert not _C._dispatch_has_kernel_for_dispatch_key(f"{ns}::g", "CPU")
    g.register_kernel("xpu" if device != "xpu" else "hpu", lambda x: x.clone())
    assert _C._dispatch_has_kernel_for_dispatch_key(f"{ns}::g", "XPU" if device != "xpu" else "HPU")
