"""Random factories (rand, randn, randperm) drawing from one module-level NumPy
Generator, reseeded by opdispatch.manual_seed. The Generator is made on first
use: numpy.random costs a third of `import opdispatch`."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from .. import _C
from .factories import FACTORY_KW, make
from ._registry import RANDOM, Op, defop
from .._tensor_type import Tensor

_generator: Optional[np.random.Generator] = None


def manual_seed(seed: int) -> None:
    """Reseeds the generator of rand/randn: the same seed gives the same
    values. PyTorch: torch.manual_seed."""
    global _generator
    _generator = np.random.default_rng(seed)


def _rng() -> np.random.Generator:
    """The generator, seeded from the OS on first use unless manual_seed seeded it."""
    global _generator
    if _generator is None:
        _generator = np.random.default_rng()
    return _generator


def _random(name: str, draw: str) -> Any:
    def kernel(size: Sequence[int], *, dtype: Any = None, layout: Any = None, device: Any = None,
               pin_memory: Any = None) -> Tensor:
        dtype = _C.float32 if dtype is None else dtype
        if not dtype.is_floating_point:
            raise RuntimeError(f"{name}: \"{draw}\" is not implemented for dtype {dtype}; use a floating-point dtype")

        def fill(shape: tuple[int, ...], dt: np.dtype) -> np.ndarray:
            # NumPy draws float32 or float64; float16 rounds a float32 draw.
            native = dt if dt in (np.float32, np.float64) else np.dtype(np.float32)
            sample: np.ndarray = getattr(_rng(), draw)(shape, dtype=native)
            return sample.astype(dt, copy=False)

        return make(name, size, dtype, device, fill)

    kernel.__name__ = name.replace("od::", "")
    return kernel


rand: Op = defop(f"rand(SymInt[] size, {FACTORY_KW}) -> Tensor", tags=RANDOM, backend=_random("od::rand", "random"))
randn: Op = defop(f"randn(SymInt[] size, {FACTORY_KW}) -> Tensor", tags=RANDOM, backend=_random("od::randn", "standard_normal"))


def _randperm(n: int, *, dtype: Any = None, layout: Any = None, device: Any = None, pin_memory: Any = None
              ) -> Tensor:
    """A random permutation of 0 .. n-1 drawn from the generator (dtype default int64). RuntimeError for a
    negative n or an integer dtype that cannot hold n - 1; NotImplementedError for bool, as PyTorch's."""
    dtype = _C.int64 if dtype is None else dtype
    if dtype == _C.bool:
        raise NotImplementedError("od::randperm: \"randperm\" not implemented for 'Bool'")
    if n > 1 and not (dtype.is_floating_point or dtype.is_complex) and n - 1 > np.iinfo(dtype.to_numpy()).max:
        raise RuntimeError(f"od::randperm: n - 1 = {n - 1} cannot be converted to {dtype} without overflow")
    return make("od::randperm", [n], dtype, device, lambda shape, dt: _rng().permutation(shape[0]).astype(dt))


# dtype=4: PyTorch's default, ScalarType Long (int64), as its schema prints it.
randperm: Op = defop("randperm(SymInt n, *, ScalarType? dtype=4, Layout? layout=None, Device? device=None, "
                     "bool? pin_memory=None) -> Tensor", tags=RANDOM, backend=_randperm)
