"""The built-in operator library ``od`` (``opdispatch.ops.od.*``): CPU kernels
on NumPy, Meta kernels and autograd formulas, registered through
opdispatch.library. Importing this package registers them."""
from __future__ import annotations

from . import (  # noqa: F401  (registration)
    activation,
    binary_math,
    comparison,
    copy,
    elementwise,
    factories,
    linalg,
    logical,
    nn,
    pointwise_decompositions,
    random,
    reduction,
    shape,
    unary_math,
    views,
)
