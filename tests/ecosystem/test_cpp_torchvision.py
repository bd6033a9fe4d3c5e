"""torchvision's C++ operators (pytorch/vision, torchvision/csrc: vision.cpp,
ops/nms.cpp, ops/roi_pool.cpp, ops/cpu/*_kernel.cpp,
ops/autocast/cpu/nms_kernel.cpp), ported with the name map: one namespace
defined by fragments in several files, OPDISPATCH_SELECTIVE_SCHEMA/_NAME,
OPDISPATCH_FN, typed C++ entry points, an AutocastCPU kernel; built against
the installed headers and called from Python, checked against NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import opdispatch
from opdispatch import _C, ops

from _cpp_ports import build, t

SOURCES = ["vision.cpp", "ops/nms.cpp", "ops/roi_pool.cpp", "ops/cpu/nms_kernel.cpp", "ops/cpu/roi_pool_kernel.cpp",
           "ops/autocast/cpu/nms_kernel.cpp"]


@pytest.fixture(scope="module", autouse=True)
def extension():
    return build("torchvision", SOURCES)


# --- references ----------------------------------------------------------------------


def nms_reference(boxes: np.ndarray, scores: np.ndarray, iou: float) -> list[int]:
    order = sorted(range(len(scores)), key=lambda i: -scores[i])  # stable, as torchvision's sort
    areas = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    keep, suppressed = [], set()
    for n, i in enumerate(order):
        if i in suppressed:
            continue
        keep.append(i)
        for j in order[n + 1:]:
            w = max(0.0, min(boxes[i, 2], boxes[j, 2]) - max(boxes[i, 0], boxes[j, 0]))
            h = max(0.0, min(boxes[i, 3], boxes[j, 3]) - max(boxes[i, 1], boxes[j, 1]))
            inter = w * h
            if inter / (areas[i] + areas[j] - inter) > iou:
                suppressed.add(j)
    return keep


def roi_pool_reference(x: np.ndarray, rois: np.ndarray, scale: float, ph_n: int, pw_n: int):
    n_rois, channels, height, width = len(rois), x.shape[1], x.shape[2], x.shape[3]
    out = np.zeros((n_rois, channels, ph_n, pw_n), x.dtype)
    arg = np.full((n_rois, channels, ph_n, pw_n), -1, np.int32)
    for n, (b, *xy) in enumerate(rois):
        x0, y0, x1, y1 = (int(np.floor(v * scale + 0.5)) for v in xy)
        rw, rh = max(x1 - x0 + 1, 1), max(y1 - y0 + 1, 1)
        for ph in range(ph_n):
            hs = min(max(int(np.floor(ph * rh / ph_n)) + y0, 0), height)
            he = min(max(int(np.ceil((ph + 1) * rh / ph_n)) + y0, 0), height)
            for pw in range(pw_n):
                ws = min(max(int(np.floor(pw * rw / pw_n)) + x0, 0), width)
                we = min(max(int(np.ceil((pw + 1) * rw / pw_n)) + x0, 0), width)
                if he <= hs or we <= ws:
                    continue
                for c in range(channels):
                    window = x[int(b), c, hs:he, ws:we]
                    k = int(np.argmax(window))
                    out[n, c, ph, pw] = window.flat[k]
                    arg[n, c, ph, pw] = (hs + k // (we - ws)) * width + ws + k % (we - ws)
    return out, arg


def random_boxes(n: int, seed: int, dtype=np.float32) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    xy = rng.uniform(0, 50, (n, 2))
    wh = rng.uniform(5, 30, (n, 2))
    return np.concatenate([xy, xy + wh], axis=1).astype(dtype), rng.uniform(0, 1, n).astype(dtype)


# --- the operators ---------------------------------------------------------------------


def test_the_fragments_of_every_file_define_the_namespace():
    names = {n for n in _C._dispatch_get_all_op_names() if n.startswith("torchvision::")}
    assert names >= {"torchvision::_cuda_version", "torchvision::nms", "torchvision::roi_pool",
                     "torchvision::_roi_pool_backward"}
    assert str(ops.torchvision.nms.default._schema) == \
        "torchvision::nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor"
    assert str(ops.torchvision._cuda_version.default._schema) == "torchvision::_cuda_version() -> int _0"


def test_cuda_version_is_inferred_from_a_function_pointer():
    assert ops.torchvision._cuda_version() == -1  # built without WITH_CUDA
    assert _C._dispatch_has_kernel_for_dispatch_key("torchvision::_cuda_version", "CompositeImplicitAutograd")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("iou", [0.0, 0.3, 0.7])
def test_nms_matches_the_reference(dtype, iou):
    boxes, scores = random_boxes(40, seed=3, dtype=dtype)
    keep = ops.torchvision.nms(t(boxes), t(scores), iou)
    assert keep.dtype == opdispatch.int64
    assert keep.numpy().tolist() == nms_reference(boxes, scores, iou)


def test_nms_checks_its_arguments():
    boxes, scores = random_boxes(4, seed=0)
    with pytest.raises(RuntimeError, match="boxes should have 4 elements in dimension 1, got 3"):
        ops.torchvision.nms(t(boxes[:, :3]), t(scores), 0.5)
    with pytest.raises(RuntimeError, match="dets should have the same type as scores"):
        ops.torchvision.nms(t(boxes.astype(np.float64)), t(scores), 0.5)


def test_autocast_cpu_kernel_casts_and_redispatches_below_autocast():
    # The AutocastCPU kernel casts both inputs to float32, excludes AutocastCPU
    # and calls nms again through its typed C++ entry point: mixed dtypes
    # that the CPU kernel rejects work under autocast.
    boxes, scores = random_boxes(30, seed=5)
    mixed = (t(boxes.astype(np.float64)), t(scores))
    with _C._IncludeDispatchKeyGuard(_C.DispatchKeySet(_C.DispatchKey.AutocastCPU)):
        keep = ops.torchvision.nms(*mixed, 0.5)
        assert not _C._dispatch_tls_is_dispatch_key_excluded(_C.DispatchKey.AutocastCPU)  # the guard was undone
    assert keep.numpy().tolist() == nms_reference(boxes, scores, 0.5)
    with pytest.raises(RuntimeError, match="same type"):
        ops.torchvision.nms(*mixed, 0.5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_roi_pool_and_its_backward_match_the_reference(dtype):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3, 10, 12)).astype(dtype)
    rois = np.array([[0, 1.2, 0.6, 6.1, 5.3], [1, 0.0, 0.0, 11.0, 9.0], [1, 4.0, 3.0, 4.4, 3.2],
                     [0, 18.0, 2.0, 25.0, 7.0]], dtype)
    out, argmax = ops.torchvision.roi_pool(t(x), t(rois), 0.5, 3, 2)
    ref_out, ref_arg = roi_pool_reference(x, rois, 0.5, 3, 2)
    assert argmax.dtype == opdispatch.int32
    np.testing.assert_array_equal(argmax.numpy(), ref_arg)
    np.testing.assert_allclose(out.numpy(), ref_out)

    grad = rng.standard_normal(ref_out.shape).astype(dtype)
    grad_input = ops.torchvision._roi_pool_backward(t(grad), t(rois), argmax, 0.5, 3, 2, 2, 3, 10, 12)
    expected = np.zeros_like(x)
    for (n, c, ph, pw), k in np.ndenumerate(ref_arg):
        if k >= 0:
            expected[int(rois[n, 0]), c].flat[k] += grad[n, c, ph, pw]
    np.testing.assert_allclose(grad_input.numpy(), expected, rtol=1e-6)
