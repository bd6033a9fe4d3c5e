"""Port of torchvision's meta kernels (pytorch/vision
torchvision/_meta_registrations.py): an IMPL library at the Meta key
(created lazily by an lru_cache'd function), kernels registered by
OpOverload, torch._check with lazy and plain-string messages, tuple outputs
with a meta tensor made by torch.empty(device="meta"), and the legacy
torch._custom_ops.impl_abstract / get_ctx().create_unbacked_symint() for
nms. The operators' definitions (C++ in torchvision) are in
ported/torchvision_extension.py; the port in
ported/torchvision_meta_registrations.py."""
from __future__ import annotations

import pytest

import opdispatch as torch
from _port import loaded


@pytest.fixture(scope="module")
def tv():
    with loaded("torchvision_extension"), loaded("torchvision_meta_registrations") as module:
        try:
            yield module
        finally:
            module.get_meta_lib()._destroy()
            module.get_meta_lib.cache_clear()


def meta(*shape, dtype=torch.float32):
    return torch.empty(*shape, dtype=dtype, device="meta")


def test_roi_ops_on_meta(tv):
    vision = torch.ops.torchvision
    x, rois = meta(2, 8, 16, 16), meta(3, 5)
    assert vision.roi_align(x, rois, 0.5, 4, 4, 2, True).shape == (3, 8, 4, 4)
    assert vision._roi_align_backward(meta(3, 8, 4, 4), rois, 0.5, 4, 4, 2, 8, 16, 16, 2, True).shape == (2, 8, 16, 16)
    out, mapping = vision.ps_roi_align(x, rois, 0.5, 2, 2, 2)
    assert out.shape == mapping.shape == (3, 2, 2, 2) and mapping.dtype == torch.int32 and mapping.is_meta
    out, argmax = vision.roi_pool(x, rois, 0.5, 4, 4)
    assert out.shape == (3, 8, 4, 4) and argmax.dtype == torch.int32
    assert vision._roi_pool_backward(out, rois, argmax, 0.5, 4, 4, 2, 8, 16, 16).shape == (2, 8, 16, 16)
    out, mapping = vision.ps_roi_pool(x, rois, 0.5, 2, 2)
    assert out.shape == (3, 2, 2, 2)
    assert vision._ps_roi_pool_backward(out, rois, mapping, 0.5, 2, 2, 2, 8, 16, 16).shape == (2, 8, 16, 16)
    assert vision._ps_roi_align_backward(out, rois, mapping, 0.5, 2, 2, 2, 2, 8, 16, 16).shape == (2, 8, 16, 16)


def test_deform_conv2d_on_meta(tv):
    x, w, offset, mask, bias = meta(2, 4, 9, 9), meta(6, 4, 3, 3), meta(2, 18, 7, 7), meta(2, 9, 7, 7), meta(6)
    out = torch.ops.torchvision.deform_conv2d(x, w, offset, mask, bias, 1, 1, 0, 0, 1, 1, 1, 1, True)
    assert out.shape == (2, 6, 7, 7)
    grads = torch.ops.torchvision._deform_conv2d_backward(out, x, w, offset, mask, bias, 1, 1, 0, 0, 1, 1, 1, 1, True)
    assert [g.shape for g in grads] == [(2, 4, 9, 9), (6, 4, 3, 3), (2, 18, 7, 7), (2, 9, 7, 7), (6,)]


def test_meta_kernel_checks(tv):
    with pytest.raises(RuntimeError, match=r"rois must have shape as Tensor\[K, 5\]"):
        torch.ops.torchvision.roi_align(meta(2, 8, 16, 16), meta(3, 4), 0.5, 4, 4, 2, True)
    with pytest.raises(RuntimeError, match="but type opdispatch.float64 does not equal opdispatch.float32"):
        torch.ops.torchvision.roi_pool(meta(2, 8, 16, 16, dtype=torch.float64), meta(3, 5), 0.5, 4, 4)
    # A plain string message is refused, but only when the check fails (as in PyTorch).
    with pytest.raises(TypeError, match="message must be a callable"):
        torch.ops.torchvision.ps_roi_pool(meta(2, 6, 16, 16), meta(3, 5), 0.5, 2, 2)


def test_nms_kernel_fake_and_opcheck(tv):
    boxes = torch.tensor([[0.0, 0, 10, 10], [1, 1, 10, 10], [20, 20, 30, 30], [0, 0, 9, 9]])
    scores = torch.tensor([0.9, 0.8, 0.7, 0.95])
    assert torch.ops.torchvision.nms(boxes, scores, 0.5).tolist() == [3, 2]
    with pytest.warns(FutureWarning, match="create_unbacked_symint is deprecated"):
        keep = torch.ops.torchvision.nms(meta(4, 4), meta(4), 0.5)
    assert keep.is_meta and keep.dim() == 1 and keep.dtype == torch.int64
    with pytest.raises(RuntimeError, match="boxes should have 4 elements in dimension 1, got 5"):
        torch.ops.torchvision.nms(meta(4, 5), meta(4), 0.5)
    with pytest.warns(FutureWarning):
        result = torch.library.opcheck(torch.ops.torchvision.nms.default, (boxes, scores, 0.5))
    assert set(result.values()) == {"SUCCESS"}


def test_registrations_are_at_the_meta_key(tv):
    assert torch._C._dispatch_has_kernel_for_dispatch_key("torchvision::roi_align", "Meta")
    assert not torch._C._dispatch_has_kernel_for_dispatch_key("torchvision::roi_align", "CPU")
    assert "torchvision/roi_align/Meta" in torch.library._impls
