"""The built-in higher-order operators: ``cond`` (``opdispatch.ops.higher_order.cond``)
and ``map`` (over ``opdispatch.ops.higher_order.map_impl``). PyTorch: torch._higher_order_ops."""
from __future__ import annotations

from .cond import cond
from .map import map, map_impl

__all__ = ["cond", "map", "map_impl"]
