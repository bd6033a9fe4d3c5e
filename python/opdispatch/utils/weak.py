"""Weak containers keyed by object identity, for tensors (whose ``==`` is
elementwise, so ``weakref.WeakKeyDictionary`` cannot hold them).
PyTorch: torch/utils/weak.py."""
from __future__ import annotations

import weakref
from collections.abc import Iterator, MutableMapping
from typing import Any, Generic, TypeVar

__all__ = ["WeakIdKeyDictionary", "WeakIdRef", "WeakTensorKeyDictionary"]

_K = TypeVar("_K")
_V = TypeVar("_V")


class WeakIdRef(weakref.ref):  # type: ignore[type-arg]
    """A weak reference hashed and compared by the referent's ``id`` (taken
    while it lives), so two references to one object are equal keys.
    PyTorch: torch.utils.weak.WeakIdRef."""

    __slots__ = ("_id",)

    def __init__(self, key: Any, callback: Any = None) -> None:
        self._id = id(key)
        super().__init__(key, callback)  # type: ignore[call-arg]  # (weakref.ref takes them; typeshed has only __new__)

    def __hash__(self) -> int:
        return self._id

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, WeakIdRef):
            return NotImplemented
        a, b = self(), other()
        return a is b if a is not None and b is not None else self is other

    def __ne__(self, other: object) -> bool:  # (weakref.ref's own compares the referents with ==)
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal


class WeakIdKeyDictionary(MutableMapping[_K, _V], Generic[_K, _V]):
    """A dict whose keys are held weakly and compared by identity: an entry
    goes when its key dies. Keys must support weak references (TypeError
    otherwise). PyTorch: torch.utils.weak.WeakIdKeyDictionary."""

    def __init__(self) -> None:
        self.data: dict[WeakIdRef, _V] = {}
        data = self.data

        def remove(ref: WeakIdRef) -> None:
            data.pop(ref, None)

        self._remove = remove

    def __getitem__(self, key: _K) -> _V:
        return self.data[WeakIdRef(key)]

    def __setitem__(self, key: _K, value: _V) -> None:
        self.data[WeakIdRef(key, self._remove)] = value

    def __delitem__(self, key: _K) -> None:
        del self.data[WeakIdRef(key)]

    def __contains__(self, key: object) -> bool:
        try:
            return WeakIdRef(key) in self.data
        except TypeError:
            return False

    def __iter__(self) -> Iterator[_K]:
        for ref in list(self.data):
            key = ref()
            if key is not None:
                yield key

    def __len__(self) -> int:
        return sum(1 for ref in list(self.data) if ref() is not None)


#: A dictionary with tensor keys held weakly, by identity (tensors' ``==``
#: is elementwise). PyTorch: torch.utils.weak.WeakTensorKeyDictionary.
WeakTensorKeyDictionary = WeakIdKeyDictionary
