"""The built-in operator library ``od`` (``opdispatch.ops.od.*``): CPU kernels
on NumPy, Meta kernels and autograd formulas, registered through
opdispatch.library. Importing this package registers them."""
from __future__ import annotations

from . import (  # noqa: F401  (registration)
    adaptive_pooling,
    avg_pooling,
    comparison,
    convolution,
    copy,
    distance,
    dropout,
    elementwise,
    embedding,
    factories,
    fold,
    grid_sampler,
    linalg,
    linear,
    loss,
    max_pooling,
    normalization,
    padding,
    random,
    reduction,
    shape,
    softmax,
    unary_math,
    upsampling,
    views,
)
