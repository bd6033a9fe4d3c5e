"""Port of pytorch/tutorials advanced_source/python_custom_ops.py (the
"Python Custom Operators" tutorial): custom_op crop/paste with fake impls, a
register_autograd formula built from another custom op, a mutable custom op
(mutates_args={"output"}, device_types="cpu") without a fake impl, and the
tutorial's opcheck runs. The ported code is in ported/tutorial_python_custom_ops.py."""
from __future__ import annotations

import numpy as np
import pytest

import opdispatch as torch
from _port import loaded
from opdispatch._library.opcheck import OpCheckError


@pytest.fixture(scope="module")
def tut():
    with loaded("tutorial_python_custom_ops") as module:
        yield module


def _img():
    ramp = np.linspace(0, 1, 64, dtype=np.float32)
    return torch.from_numpy(np.ones((3, 64, 64), np.float32) * ramp * ramp[:, None])


def test_crop_values_and_fake(tut):
    img = _img()
    cropped = tut.crop(img, (10, 10, 50, 50))
    assert cropped.shape == (3, 40, 40) and cropped.dtype == torch.float32
    np.testing.assert_allclose(cropped.numpy(), img.numpy()[:, 10:50, 10:50], rtol=1e-6)
    meta = torch.ops.mylib.crop(torch.empty(3, 64, 64, device="meta"), [10, 10, 50, 50])
    assert meta.is_meta and meta.shape == (3, 40, 40)


def test_crop_gradient_is_one_in_the_cropped_region(tut):
    img = _img().requires_grad_()
    result = tut.crop(img, (10, 10, 50, 50))
    result.sum().backward()
    expected = np.zeros((3, 64, 64), np.float32)
    expected[:, 10:50, 10:50] = 1
    np.testing.assert_allclose(img.grad.numpy(), expected)


def test_tutorial_opcheck_examples(tut):
    examples = [
        [torch.randn(3, 64, 64), [0, 0, 10, 10]],
        [torch.randn(3, 91, 91, requires_grad=True), [10, 0, 20, 10]],
        [torch.randn(3, 60, 60, dtype=torch.double), [3, 4, 32, 20]],
        [torch.randn(3, 512, 512, requires_grad=True, dtype=torch.double), [3, 4, 32, 45]],
    ]
    for example in examples:
        torch.library.opcheck(tut.crop, example)


def test_mutable_numpy_sin(tut):
    x = torch.randn(3)
    out = torch.empty(3)
    tut.numpy_sin(x, out)
    np.testing.assert_allclose(out.numpy(), np.sin(x.numpy()), rtol=1e-6)
    example_inputs = [
        [torch.randn(3), torch.empty(3)],
        [torch.randn(0, 3), torch.empty(0, 3)],
        [torch.randn(1, 2, 3, 4, dtype=torch.double), torch.empty(1, 2, 3, 4, dtype=torch.double)],
    ]
    for example in example_inputs:
        torch.library.opcheck(tut.numpy_sin, example)


def test_opcheck_catches_a_missing_mutates_args(tut):
    # The tutorial: "opcheck would error out if we forgot to add the output to mutates_args".
    @torch.library.custom_op("mylib::numpy_sin_undeclared", mutates_args=(), device_types="cpu")
    def numpy_sin_undeclared(input: torch.Tensor, output: torch.Tensor) -> None:
        np.sin(input.numpy(), out=output.numpy())

    try:
        with pytest.raises(OpCheckError, match="output is not defined as mutable"):
            torch.library.opcheck(numpy_sin_undeclared, [torch.randn(3), torch.empty(3)])
    finally:
        numpy_sin_undeclared._destroy()
