"""Gradients of _fft_r2c and _fft_c2r against PyTorch 2.13's (EXPECTED was
recorded by running the same computation there), gradcheck of the two
through a real-valued round trip, and the one-sided=False refusal."""
from __future__ import annotations

import numpy as np
import pytest

import opdispatch
from opdispatch.autograd import gradcheck

ops = opdispatch.ops.od
X0 = np.sin(np.arange(24.0)).reshape(2, 3, 4)
C0 = (np.cos(np.arange(18.0)) + 1j * np.sin(np.arange(18.0) * 0.7)).reshape(2, 3, 3)

EXPECTED = {('c2r', (2,), 4, 0): [[[(3.402282+0j), (0.349329-0.667453j), (0.248389+0j)], [(-0.298953+0j), (1.17912-1.151167j), (0.569265+0j)], [(-3.618938+0j), (0.505198-0.166815j), (0.164166+0j)]], [[(-2.323747+0j), (-0.812995+1.030273j), (-0.450291+0j)], [(1.934882+0j), (-1.094388+0.91347j), (-0.490499+0j)], [(3.725987+0j), (0.019875-0.368267j), (0.094819+0j)]]], ('c2r', (2,), 5, 2): [[[(0.752928+0j), (0.094635-0.273481j), (0.152437-0.061916j)], [(-0.460555+0j), (0.290459-0.312172j), (0.240834-0.070675j)], [(-0.818085+0j), (-0.053542+0.229317j), (-0.118366+0.051917j)]], [[(0.344817+0j), (-0.298034+0.344614j), (-0.257579+0.07802j)], [(0.866868+0j), (0.011378-0.180563j), (0.081925-0.040879j)], [(-0.222178+0j), (0.299643-0.370159j), (0.26917-0.083804j)]]], ('c2r', (1,), 5, 1): [[[(-0.181758+0j), (-0.403868+0j), (-0.589902+0j)], [(1.636976-1.647453j), (1.835665-1.180811j), (1.870379-0.608691j)], [(0.78085-0.222473j), (0.704401-0.159458j), (0.565029-0.082198j)]], [[(0.79987+0j), (0.76017+0j), (0.652566+0j)], [(-1.244142-0.952901j), (-0.77298-1.469112j), (-0.232769-1.854093j)], [(-0.027081-0.128681j), (0.208464-0.19839j), (0.425387-0.250378j)]]], ('c2r', (0, 2), 4, 2): [[[(0.134817+0j), (-0.057958+0.045352j), (-0.025238+0j)], [(0.204491+0j), (0.010591-0.029712j), (0.009846+0j)], [(0.013381+0j), (0.065634-0.066885j), (0.032373+0j)]], [[(0.715754+0j), (0.14529-0.212216j), (0.087335+0j)], [(-0.279229+0j), (0.284188-0.25808j), (0.13247+0j)], [(-0.918116+0j), (0.060665+0.025181j), (0.008668+0j)]]], ('r2c', (2,), 0): [[[4.0, 3.51033, 2.161209, 0.282949], [-1.664587, -3.204574, -3.95997, -3.745827], [-2.614574, -0.843183, 1.134649, 2.834679]], [[3.840681, 3.906351, 3.015609, 1.386541], [-0.582, -2.408048, -3.644521, -3.988689], [-3.356286, -1.902148, 0.017703, 1.933219]]], ('r2c', (1,), 1): [[[1.732051, 1.520018, 0.935831, 0.12252], [-0.720787, -1.387621, -1.714717, -1.621991], [-1.132144, -0.365109, 0.491317, 1.227452]], [[1.663064, 1.691499, 1.305797, 0.60039], [-0.252013, -1.042715, -1.578124, -1.727153], [-1.453315, -0.823654, 0.007666, 0.837108]]], ('r2c', (0, 2), 2): [[[1.0, 0.877583, 0.540302, 0.070737], [-0.416147, -0.801144, -0.989992, -0.936457], [-0.653644, -0.210796, 0.283662, 0.70867]], [[0.96017, 0.976588, 0.753902, 0.346635], [-0.1455, -0.602012, -0.91113, -0.997172], [-0.839072, -0.475537, 0.004426, 0.483305]]]}


@pytest.mark.parametrize("key", [k for k in EXPECTED if k[0] == "c2r"])
def test_c2r_gradient_matches_pytorch(key):
    _, dim, n, normalization = key
    c = opdispatch.tensor(C0, requires_grad=True)
    out = ops._fft_c2r(c, list(dim), normalization, n)
    w = opdispatch.tensor(np.cos(np.arange(out.numel()) * 0.3).reshape(tuple(out.shape)))
    (out * w).sum().backward()
    np.testing.assert_allclose(c.grad.numpy(), np.array(EXPECTED[key]), atol=1e-5)


@pytest.mark.parametrize("key", [k for k in EXPECTED if k[0] == "r2c"])
def test_r2c_gradient_matches_pytorch(key):
    _, dim, normalization = key
    x = opdispatch.tensor(X0, requires_grad=True)
    out = ops._fft_r2c(x, list(dim), normalization, True)
    back = ops._fft_c2r(out, list(dim), 0, X0.shape[dim[-1]])
    (back * opdispatch.tensor(np.cos(np.arange(24) * 0.5).reshape(2, 3, 4))).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.array(EXPECTED[key]), atol=1e-5)


@pytest.mark.parametrize(("dim", "normalization"), [([2], 0), ([1], 1), ([0, 2], 2), ([2, 0], 0)])
def test_round_trip_gradcheck(dim, normalization):
    x = opdispatch.tensor(X0[:, :, :3], requires_grad=True)  # an odd length: no Nyquist bin
    y = opdispatch.tensor(X0, requires_grad=True)

    def f(t):
        return ops._fft_c2r(ops._fft_r2c(t, dim, normalization, True), dim, normalization, t.shape[dim[-1]])

    assert gradcheck(f, (x,)) and gradcheck(f, (y,))


def test_the_two_sided_gradient_is_refused():
    out = ops._fft_r2c(opdispatch.tensor(X0, requires_grad=True), [2], 0, False)
    with pytest.raises(RuntimeError, match="od::_fft_r2c: the derivative for onesided=False is not implemented"):
        ops._fft_c2r(out[..., :3], [2], 0, 4).sum().backward()
