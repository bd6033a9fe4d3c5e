"""The demo's C++ operator: the example extension (examples/extension, shipped
inside the package as opdispatch/examples/extension) compiled with
cpp_extension.load, and an autograd formula for its ``relu`` registered with
opdispatch.library.register_autograd, so the hidden layer's activation can be
trained through."""
from __future__ import annotations

import dataclasses
import functools
import time
from pathlib import Path
from typing import Any

from .. import cpp_extension
from .._ops import OpOverload, ops
from ..library import Library, register_autograd

#: Where the example's sources are looked for, in order: installed with the
#: package (CMakeLists.txt installs them beside ``_C``), then the source tree
#: this file is in.
SOURCE_DIRS = (
    Path(cpp_extension._PACKAGE_DIR) / "examples" / "extension",
    Path(__file__).resolve().parents[3] / "examples" / "extension",
)


@dataclasses.dataclass(frozen=True)
class DemoExtension:
    """The loaded example extension: the ``relu`` operator, now differentiable,
    and how the shared library was obtained."""

    relu: OpOverload
    loaded: cpp_extension.LoadedExtension
    seconds: float  # time spent compiling (or finding the cached build) and loading
    # The library holding the autograd registration; it lives as long as this object.
    _autograd_lib: Library = dataclasses.field(repr=False)


def example_sources() -> list[Path]:
    """The example extension's ``.cpp`` files. Raises FileNotFoundError naming
    every directory searched when none holds them."""
    for d in SOURCE_DIRS:
        sources = sorted(d.glob("*.cpp"))
        if sources:
            return sources
    searched = ", ".join(str(d) for d in SOURCE_DIRS)
    raise FileNotFoundError(
        f"the example C++ extension's sources were not found (searched {searched}); "
        f'reinstall opdispatch from its source tree: pip install ".[demo]"'
    )


def _relu_setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.save_for_backward(output)


def _relu_backward(ctx: Any, grad: Any) -> Any:
    """d relu(x) / dx = [relu(x) > 0] (0 at x == 0, as PyTorch): od::gt.Scalar and od::mul.Tensor."""
    (out,) = ctx.saved_tensors
    return grad * (out > 0)


@functools.cache
def load_extension(namespace: str = "myext") -> DemoExtension:
    """Builds (or finds in the cache) and loads the example extension with its
    operators in ``namespace``, and registers the autograd formula of
    ``<namespace>::relu``. Cached per namespace: a namespace is defined once per process.

    Raises FileNotFoundError (no sources, no compiler), cpp_extension.CompileError,
    RuntimeError (``namespace`` already defined by another library).
    """
    start = time.perf_counter()
    loaded = cpp_extension.load(
        namespace, example_sources(), extra_cflags=[f"-DOPDISPATCH_EXAMPLE_NS={namespace}"]
    )
    relu = getattr(ops, namespace).relu.default
    lib = Library(namespace, "FRAGMENT")
    register_autograd(relu, _relu_backward, setup_context=_relu_setup_context, lib=lib)
    return DemoExtension(relu, loaded, time.perf_counter() - start, lib)
