"""Gradients of complex functions against PyTorch 2.13's
(the expected values are what PyTorch 2.13 CPU gives for the same calls):
the gradient of a product is the incoming gradient times the other factor's
conjugate (PyTorch: mul_tensor_backward), and that of every holomorphic
function (exp, log, sin, ..., div, pow) the incoming gradient times the
conjugate of its derivative (Note [Complex gradients] in
python/opdispatch/_builtins/elementwise.py; PyTorch: derivatives.yaml's
.conj()); od::conj_physical, which those need, conjugates the gradient."""
from __future__ import annotations

import numpy as np
import pytest

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


# --- holomorphic functions: grad times the derivative's conjugate (Note [Complex gradients]) -----------------------
# The gradients PyTorch 2.13 CPU gives for op(Z).backward(GRAD_Z) with Z and GRAD_Z below (complex128).
Z = np.array([0.5 + 0.25j, -0.3 + 0.8j])
W = np.array([1.5 - 0.5j, 0.2 + 0.6j])
GRAD_Z = np.array([1 + 0.5j, -2 + 1j])
HOLOMORPHIC_GRADIENTS = {
    "exp": [complex(1.8014166041590927, 0.3908330894815965), complex(-0.5008355866557866, 1.578993950466336)],
    "log": [complex(1.2000000000000002, 1.6), complex(-0.2739726027397261, -2.602739726027397)],
    "sin": [complex(0.8445957525377009, 0.5736838713236151), complex(-2.292947548680269, 1.8026069328232803)],
    "cos": [complex(-0.6053298630079824, -0.025554726317022686), complex(-1.6389181544507823, -1.3016410502610383)],
    "tanh": [complex(0.7073746593303314, 0.5940708343873967), complex(-1.9363289587289856, 3.348141082171554)],
    "sigmoid": [complex(0.2307044302148401, 0.13368372283604654), complex(-0.5335150458877824, 0.35673673641622317)],
    "sqrt": [complex(0.5740283069566114, 0.47907045117338815), complex(-1.0608217505378421, -0.5810951329493818)],
    "acos": [complex(-1.153173541444826, -0.3749933699403406), complex(1.6698474472711593, -0.5413346114193119)],
    "asin": [complex(1.153173541444826, 0.3749933699403406), complex(-1.6698474472711593, 0.5413346114193119)],
    "atan": [complex(0.7214854111405836, 0.5729442970822282), complex(-0.9702009702009697, 3.2571032571032577)],
    "acosh": [complex(-0.3749933699403407, 1.1531735414448263), complex(-0.541334611419312, -1.6698474472711595)],
    "asinh": [complex(0.8558813199996478, 0.545453546440822), complex(-1.7723775782487636, 2.1114032292720095)],
    "atanh": [complex(1.2972972972972971, 0.2162162162162162), complex(-1.359717421854229, 0.2240875080709484)],
    "cosh": [complex(0.6443852785631257, -0.026531271156264025), complex(1.1742026133161787, 1.2875985687473979)],
    "sinh": [complex(1.1570313255959668, 0.41736436063786053), complex(-1.6750381999719655, 0.2913953817189382)],
    "tan": [complex(1.3145307288246757, 0.26322421714951777), complex(-1.3120064333169688, 0.07679043704792599)],
    "expm1": [complex(1.8014166041590927, 0.3908330894815965), complex(-0.5008355866557864, 1.578993950466336)],
    "log1p": [complex(0.5945945945945945, 0.43243243243243235), complex(-1.946902654867257, -0.7964601769911506)],
    "log2": [complex(1.731234049066756, 2.3083120654223412), complex(-0.39525891531204477, -3.754959695464425)],
    "log10": [complex(0.5211533782839023, 0.694871171045203), complex(-0.11898478956253482, -1.1303555008440802)],
    "reciprocal": [complex(-0.6399999999999999, -3.5200000000000005), complex(-2.964908988553199, -0.7693751172827918)],
    "rsqrt": [complex(-0.5351889301918679, -1.2257353674427098), complex(-1.072770728110764, 0.9237381651307665)],
    "exp2": [complex(1.0500856548855542, 0.3137716561435719), complex(-0.6608479137651435, 1.0715334415787603)],
}


def _grads(fn, *values):
    tensors = [od.tensor(v, requires_grad=True) for v in values]
    fn(*tensors).backward(od.tensor(GRAD_Z))
    return [t.grad.numpy() for t in tensors]


@pytest.mark.parametrize("name", sorted(HOLOMORPHIC_GRADIENTS))
def test_the_gradient_of_a_holomorphic_function_is_grad_times_the_conjugate_derivative(name):
    (grad,) = _grads(getattr(od, name), Z)
    np.testing.assert_allclose(grad, HOLOMORPHIC_GRADIENTS[name], rtol=1e-12, atol=1e-12)


def test_the_gradients_of_a_complex_quotient():
    g_self, g_other = _grads(lambda a, b: a / b, Z, W)
    np.testing.assert_allclose(g_self, [complex(0.7000000000000001, 0.1), complex(-2.5, -2.5)], rtol=1e-12)
    np.testing.assert_allclose(g_other, [complex(-0.2, 0.14999999999999997), complex(4.75, 0.5000000000000004)], rtol=1e-12)


def test_the_gradients_of_complex_powers():
    (g,) = _grads(lambda a: a ** 3, Z)
    np.testing.assert_allclose(g, [complex(0.9375, -0.46875), complex(1.8600000000000008, -4.53)], rtol=1e-12)
    g_self, g_exponent = _grads(lambda a, b: a ** b, Z, W)
    np.testing.assert_allclose(g_self, [complex(1.6093332314784228, 0.43292290901154346), complex(-0.5025453169079536, 0.037573003869383975)], rtol=1e-12)
    np.testing.assert_allclose(g_exponent, [complex(-0.4332914437591, -0.0656789667212077), complex(0.9783718878500289, 0.8831305125346779)], rtol=1e-12)
    (g,) = _grads(lambda a: 2.0 ** a, Z)
    np.testing.assert_allclose(g, [complex(1.0500856548855542, 0.3137716561435719), complex(-0.6608479137651435, 1.0715334415787605)], rtol=1e-12)


def test_the_sigmoid_of_a_complex_tensor():
    # PyTorch 2.13: torch.sigmoid(torch.tensor([0.5 + 0.25j, -0.3 + 0.8j], dtype=torch.complex128))
    out = od.sigmoid(od.tensor(Z))
    assert out.dtype == od.complex128
    np.testing.assert_allclose(out.numpy(), 1 / (1 + np.exp(-Z)), rtol=1e-12)


def test_the_gradient_of_the_magnitude_of_a_complex_tensor_is_grad_times_sgn():
    # PyTorch 2.13: abs's gradient is grad * sgn(z) = grad * z / |z|, and 0 at z = 0 (a complex gradient of a real
    # output).
    z = od.tensor(np.array([0.5 + 0.25j, -0.3 + 0.8j, 0j]), requires_grad=True)
    z.abs().backward(od.tensor([1.0, -2.0, 3.0], dtype=od.float64))
    assert z.grad.dtype == od.complex128
    np.testing.assert_allclose(z.grad.numpy(), [0.8944271909999159 + 0.4472135954999579j,
                                                0.7022468831767834 - 1.872658355138089j, 0j], rtol=1e-12)
