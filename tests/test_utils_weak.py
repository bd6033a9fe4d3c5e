"""opdispatch.utils.weak (PyTorch: torch.utils.weak): identity-keyed weak
dictionaries for tensors, as PyTorch 2.13's behave (an entry per object,
gone when the object dies; tensors equal in value are distinct keys)."""
from __future__ import annotations

import gc

import opdispatch
from opdispatch.utils.weak import WeakIdKeyDictionary, WeakIdRef


def test_entries_are_per_object_and_die_with_it():
    d = WeakIdKeyDictionary()
    a, b = opdispatch.ones(2), opdispatch.ones(2)  # equal values, distinct keys
    d[a], d[b] = "a", "b"
    assert len(d) == 2 and d[a] == "a" and d[b] == "b" and a in d and opdispatch.zeros(1) not in d
    assert [k is a or k is b for k in d] == [True, True]
    del a
    gc.collect()
    assert len(d) == 1 and list(d.values()) == ["b"]
    del d[b]
    assert len(d) == 0 and 3 not in d  # not weak-referenceable: simply absent


def test_weak_id_ref_compares_by_identity():
    a = opdispatch.ones(2)
    assert WeakIdRef(a) == WeakIdRef(a) and hash(WeakIdRef(a)) == id(a)
    assert WeakIdRef(a) != WeakIdRef(opdispatch.ones(2))
