"""Tensor._base and Tensor._is_view() as PyTorch 2.13's: a tensor a view
operator made knows the root of its chain of views whether or not autograd
records anything (Note [Views know their base] in _builtins/_registry.py).
Expected values from the same program run on PyTorch 2.13."""
from __future__ import annotations

import copy

import pytest

import opdispatch as torch

ROOT = torch.arange(6.0)
X = ROOT.view(2, 3)

# name -> (how the tensor is made, PyTorch 2.13's _is_view())
CASES = {
    "root": (lambda: ROOT, False), "view": (lambda: X, True), "t": (lambda: X.t(), True),
    "view_of_view": (lambda: X.t().unsqueeze(0), True), "transpose": (lambda: X.transpose(0, 1), True),
    "select": (lambda: X[0], True), "slice": (lambda: X[:, 1:], True), "expand": (lambda: ROOT[:1].expand(3), True),
    "reshape_view": (lambda: X.reshape(3, 2), True), "reshape_copy": (lambda: X.t().reshape(6), False),
    "contiguous_copy": (lambda: X.t().contiguous(), False), "contiguous_self": (lambda: X.contiguous(), True),
    "detach": (lambda: X.detach(), False), "clone": (lambda: X.clone(), False),
    "index_copy": (lambda: X[[0]], False), "permute": (lambda: X.permute(1, 0), True),
    "squeeze": (lambda: X.unsqueeze(0).squeeze(0), True), "diagonal": (lambda: X.diagonal(), True),
    "as_strided": (lambda: X.as_strided((2,), (1,)), True), "flatten": (lambda: X.flatten(), True),
    "split": (lambda: X.split(1)[1], True), "add": (lambda: X + 1, False),
    "alias": (lambda: torch.ops.od.alias.default(X), True),
}


@pytest.mark.parametrize("name", CASES)
def test_views_know_their_root_base(name):
    make, is_view = CASES[name]
    t = make()
    assert t._is_view() is is_view
    assert t._base is (ROOT if is_view else None)


def test_views_under_no_grad_of_meta_tensors_and_of_tensors_that_require_grad():
    with torch.no_grad():
        assert X[0]._base is ROOT
    m = torch.ones(2, 3, device="meta")
    assert m.t()._is_view() and m.t()._base is m
    y = torch.ones(3, requires_grad=True)
    z = y * 2
    assert z.view(3)._base is z and y[1:]._base is y and y._base is None and not y._is_view()


def test_an_update_of_a_view_gives_its_base_history():
    # PyTorch 2.13: x.grad_fn is CopySlices, x and v require grad, w.grad == [0.0, 1.0].
    x = torch.zeros(4)
    v = x[:2]
    w = torch.ones(2, requires_grad=True)
    v.add_(w)
    assert x.grad_fn.name() == "CopySlices" and x.requires_grad and v.requires_grad
    (x * torch.arange(4.0)).sum().backward()
    assert w.grad.tolist() == [0.0, 1.0]


def test_the_base_is_kept_alive_and_not_converted_to_a_subclass():
    class S(torch.Tensor):
        pass

    v = torch.arange(4.0).view(2, 2)
    assert v._base.tolist() == [0.0, 1.0, 2.0, 3.0]  # the root lives while its view does
    s = torch.arange(4.0).as_subclass(S)
    sv = s.view(2, 2)
    assert type(sv) is S and type(sv._base) is torch.Tensor and sv._base is not s  # as PyTorch 2.13
    assert torch.Tensor._base.__get__ in torch.overrides.get_default_nowrap_functions()
    assert copy.deepcopy(X)._base is None
