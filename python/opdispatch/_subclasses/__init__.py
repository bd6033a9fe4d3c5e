"""Tensor subclasses built on the Python key: fake tensors (FakeTensorMode)."""
from .fake_tensor import FakeTensor, FakeTensorMode, UnsupportedFakeTensorException

__all__ = ["FakeTensor", "FakeTensorMode", "UnsupportedFakeTensorException"]
