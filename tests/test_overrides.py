"""The function layer (opdispatch.overrides, Note [The function layer] in
csrc/python/TorchFunction.cpp) behaves as PyTorch 2.13's torch.overrides on
the same program: tests/data/function_layer_snippet.py's output against
PyTorch's, recorded in tests/data/function_layer_snippet.torch.txt (rerun it
under PyTorch to record it again: python tests/data/function_layer_snippet.py
torch). The other tests pin what the program does not print."""
from __future__ import annotations

import inspect
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import opdispatch
from opdispatch import Tensor, _C
from opdispatch.overrides import TorchFunctionMode, get_default_nowrap_functions, is_tensor_method_or_property

DATA = Path(__file__).parent / "data"


def test_the_same_program_prints_what_pytorch_printed():
    done = subprocess.run([sys.executable, str(DATA / "function_layer_snippet.py"), "opdispatch"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (DATA / "function_layer_snippet.torch.txt").read_text()


class Record(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.calls = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.calls.append((func, types, args, kwargs))
        return func(*args, **(kwargs or {}))


def test_handlers_get_the_public_objects():
    x = opdispatch.ones(2)
    with Record() as mode:
        opdispatch.add(x, x, alpha=2)
        x.sum(0)
        x.grad
    (f1, t1, a1, k1), (f2, _, a2, _), (f3, _, a3, _) = mode.calls
    assert f1 is opdispatch.add and t1 == () and a1 == (x, x) and k1 == {"alpha": 2}
    assert f2 is Tensor.sum and a2 == (x, 0)
    assert f3 == Tensor.grad.__get__ and f3 in get_default_nowrap_functions() and a3 == (x,)
    assert is_tensor_method_or_property(Tensor.sum) and is_tensor_method_or_property(f3)
    assert not is_tensor_method_or_property(opdispatch.add)


def test_public_objects_keep_name_signature_and_docstring():
    assert Tensor.sum.__name__ == "sum" and Tensor.sum.__qualname__ == "Tensor.sum"
    assert "dim" in inspect.signature(Tensor.sum).parameters and Tensor.sum.__doc__
    assert opdispatch.zeros.__name__ == "zeros" and repr(opdispatch.zeros) == "<function zeros>"
    assert Tensor.__add__._public is Tensor.add and Tensor.__radd__ is Tensor.__add__


def test_modes_are_per_thread():
    seen = []

    def other():
        seen.append((_C._len_torch_function_stack(), _C._is_torch_function_mode_enabled()))
        opdispatch.ones(1).neg()

    with Record() as mode:
        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
    assert seen == [(0, False)] and mode.calls == []


def test_mode_stack_errors_leave_it_empty():
    with pytest.raises(RuntimeError, match="empty mode stack"):
        _C._pop_torch_function_stack()
    with pytest.raises(IndexError):
        _C._get_function_stack_at(0)
    with pytest.raises(ZeroDivisionError):
        with Record():
            raise ZeroDivisionError
    assert _C._len_torch_function_stack() == 0


def test_an_exception_in_a_handler_passes_through():
    class Fails(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            raise KeyError("from the mode")

    with pytest.raises(KeyError, match="from the mode"):
        with Fails():
            opdispatch.ones(1).neg()
    assert _C._len_torch_function_stack() == 0


def test_as_subclass_refuses_other_layouts_and_non_subclasses():
    class Slotted(Tensor):
        __slots__ = ("extra",)

    with pytest.raises(TypeError, match="same object layout"):
        opdispatch.ones(1).as_subclass(Slotted)
    with pytest.raises(TypeError, match="subclass of opdispatch.Tensor"):
        opdispatch.ones(1).as_subclass(int)


def test_overridable_arguments_are_checked():
    with pytest.raises(TypeError, match="must be callable"):
        _C._Overridable(1)
    with pytest.raises(ValueError, match="fast_nargs"):
        _C._Overridable(len, fast=len)
