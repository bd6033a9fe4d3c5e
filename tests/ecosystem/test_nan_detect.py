"""Port of albanD/subclass_zoo's NanDetect (nan_detect.py): a
TorchDispatchMode that runs each operator and raises, naming the operator
and its arguments, when the result holds a NaN (tested with Python's any()
over ``res != res``, which iterates the result inside the handler, where
the mode is off). The mode is written here after the original; its PyTorch
2.13 form ran first and gave the results asserted (the messages there read
aten.div.Tensor and tensors printed without their default dtype)."""
from __future__ import annotations

import pytest

import opdispatch as torch
from opdispatch.utils._python_dispatch import TorchDispatchMode


class NanDetect(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args, kwargs=None):
        kwargs = kwargs or {}
        res = func(*args, **kwargs)
        if any(res != res):
            raise RuntimeError(f"Function {func}(*{args}, **{kwargs}) returned a NaN")
        return res


def test_nan_detect_names_the_operator_that_made_a_nan():
    a = torch.tensor([0.0])
    assert a.div(a).isnan().tolist() == [True]  # no mode: NaN passes silently
    with pytest.raises(RuntimeError) as info, NanDetect():
        a.div(a)
    assert str(info.value) == ("Function od.div.Tensor(*(tensor([0.], dtype=opdispatch.float32), "
                               "tensor([0.], dtype=opdispatch.float32)), **{}) returned a NaN")
    with NanDetect():
        assert (a + 1).tolist() == [1.0] and (a * 2).tolist() == [0.0]
    with pytest.raises(RuntimeError, match=r"^Function od\.sqrt\.default\(\*\(tensor\(\[ 1\., -1\.\]"), NanDetect():
        torch.tensor([1.0, -1.0]).sqrt()
