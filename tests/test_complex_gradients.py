"""Gradients of complex multiplication and conjugation against PyTorch 2.13's
(the expected values are what PyTorch 2.13 CPU gives for the same calls):
the gradient of a product is the incoming gradient times the other factor's
conjugate (PyTorch: mul_tensor_backward), and od::conj_physical, which that
needs, conjugates the gradient."""
from __future__ import annotations

import numpy as np

import opdispatch as od

A = np.array([1 + 2j, 3 - 1j])
B = np.array([2 - 1j, 0.5 + 1j])
GRAD = np.array([1 + 0.5j, -2 + 1j])


def test_the_gradient_of_a_complex_product_takes_the_conjugate_of_the_other_factor():
    a, b = od.tensor(A, requires_grad=True), od.tensor(B, requires_grad=True)
    (a * b).backward(od.tensor(GRAD))
    assert a.grad.tolist() == [1.5 + 2j, 2.5j] and b.grad.tolist() == [2 - 1.5j, -7 + 1j]


def test_the_gradient_of_a_square():
    a = od.tensor(A, requires_grad=True)
    (a * a).backward(od.tensor(GRAD))
    assert a.grad.tolist() == [4 - 3j, -14 + 2j]


def test_conj_physical_and_its_gradient():
    a = od.tensor(A, requires_grad=True)
    y = od.conj_physical(a)
    assert y.tolist() == [1 - 2j, 3 + 1j] and not y._shares_storage(a)
    y.backward(od.tensor(GRAD))
    assert a.grad.tolist() == [1 - 0.5j, -2 - 1j]
    real = od.tensor([1.0, -2.0])
    assert real.conj_physical() is real  # PyTorch returns a real tensor itself
