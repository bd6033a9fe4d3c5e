"""The built-in operator library ``od`` (``opdispatch.ops.od.*``): CPU kernels
on NumPy, Meta kernels and autograd formulas, registered through
opdispatch.library. Importing this package registers them."""
from __future__ import annotations

from . import copy, elementwise, factories, reduction, views  # noqa: F401  (registration)
