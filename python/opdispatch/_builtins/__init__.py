"""The built-in operator library ``od`` (``opdispatch.ops.od.*``): CPU kernels
on NumPy, Meta kernels and autograd formulas, registered through
opdispatch.library. Importing this package registers them."""
from __future__ import annotations

from . import (  # noqa: F401  (registration)
    activation,
    adaptive_pooling,
    avg_pooling,
    binary_math,
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
    indexing,
    linalg,
    linear,
    logical,
    loss,
    max_pooling,
    normalization,
    padding,
    pointwise_decompositions,
    random,
    reduction,
    scalar_queries,
    shape,
    softmax,
    sorting,
    unary_math,
    upsampling,
    views,
)
