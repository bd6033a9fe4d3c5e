"""Switching the Python dispatcher on and off: while it is on, calls of an
:class:`~opdispatch._ops.OpOverload` consult the operator's ``py_impl``
kernels before its C++ kernels, at every key the call passes (Note [The
Python dispatcher] in csrc/python/PythonDispatcher.cpp). PyTorch:
torch/_dispatch/python.py. For example::

    @opdispatch.ops.mylib.foo.default.py_impl(DispatchKey.CPU)
    def foo_cpu(x):
        ...

    with enable_python_dispatcher():
        opdispatch.ops.mylib.foo(x)      # runs foo_cpu
"""
from __future__ import annotations

from .. import _C

__all__ = ["enable_python_dispatcher", "no_python_dispatcher"]

#: ``with enable_python_dispatcher():`` turns the Python dispatcher on for the
#: block on this thread (``r = enable_python_dispatcher()`` turns it on until
#: ``r`` is exited or destroyed), restoring the previous state after.
#: PyTorch: torch._dispatch.python.enable_python_dispatcher.
enable_python_dispatcher = _C._EnablePythonDispatcher

#: ``with no_python_dispatcher():`` turns it off for the block (e.g. inside a
#: py_impl kernel that calls the operator's C++ kernels). PyTorch: same name.
no_python_dispatcher = _C._DisablePythonDispatcher

