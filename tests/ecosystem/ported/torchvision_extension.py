# Stand-in for torchvision.extension: the operators torchvision defines in C++
# (TORCH_LIBRARY_FRAGMENT(torchvision, m) in pytorch/vision torchvision/csrc/ops/*.cpp),
# with their schemas, defined here from Python, and a NumPy CPU kernel for nms
# (torchvision/csrc/ops/cpu/nms_kernel.cpp) so the operator can run.
import numpy as np

import opdispatch as torch

_lib = torch.library.Library("torchvision", "DEF")
_lib.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
_lib.define("roi_align(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, SymInt pooled_width, "
            "int sampling_ratio, bool aligned) -> Tensor")
_lib.define("_roi_align_backward(Tensor grad, Tensor rois, float spatial_scale, SymInt pooled_height, "
            "SymInt pooled_width, SymInt batch_size, SymInt channels, SymInt height, SymInt width, "
            "int sampling_ratio, bool aligned) -> Tensor")
_lib.define("ps_roi_align(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, "
            "SymInt pooled_width, int sampling_ratio) -> (Tensor, Tensor)")
_lib.define("_ps_roi_align_backward(Tensor grad, Tensor rois, Tensor channel_mapping, float spatial_scale, "
            "SymInt pooled_height, SymInt pooled_width, int sampling_ratio, SymInt batch_size, SymInt channels, "
            "SymInt height, SymInt width) -> Tensor")
_lib.define("roi_pool(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, SymInt pooled_width) "
            "-> (Tensor, Tensor)")
_lib.define("_roi_pool_backward(Tensor grad, Tensor rois, Tensor argmax, float spatial_scale, SymInt pooled_height, "
            "SymInt pooled_width, SymInt batch_size, SymInt channels, SymInt height, SymInt width) -> Tensor")
_lib.define("ps_roi_pool(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, "
            "SymInt pooled_width) -> (Tensor, Tensor)")
_lib.define("_ps_roi_pool_backward(Tensor grad, Tensor rois, Tensor channel_mapping, float spatial_scale, "
            "SymInt pooled_height, SymInt pooled_width, SymInt batch_size, SymInt channels, SymInt height, "
            "SymInt width) -> Tensor")
_lib.define("deform_conv2d(Tensor input, Tensor weight, Tensor offset, Tensor mask, Tensor bias, SymInt stride_h, "
            "SymInt stride_w, SymInt pad_h, SymInt pad_w, SymInt dilation_h, SymInt dilation_w, SymInt groups, "
            "SymInt offset_groups, bool use_mask) -> Tensor")
_lib.define("_deform_conv2d_backward(Tensor grad, Tensor input, Tensor weight, Tensor offset, Tensor mask, "
            "Tensor bias, SymInt stride_h, SymInt stride_w, SymInt pad_h, SymInt pad_w, SymInt dilation_h, "
            "SymInt dilation_w, SymInt groups, SymInt offset_groups, bool use_mask) "
            "-> (Tensor, Tensor, Tensor, Tensor, Tensor)")


def _nms_cpu(dets, scores, iou_threshold):
    boxes, s = dets.numpy(), scores.numpy()
    order = np.argsort(-s, kind="stable")
    area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    keep, suppressed = [], np.zeros(len(s), bool)
    for i in order:
        if suppressed[i]:
            continue
        keep.append(i)
        xx1 = np.maximum(boxes[i, 0], boxes[:, 0])
        yy1 = np.maximum(boxes[i, 1], boxes[:, 1])
        xx2 = np.minimum(boxes[i, 2], boxes[:, 2])
        yy2 = np.minimum(boxes[i, 3], boxes[:, 3])
        inter = np.clip(xx2 - xx1, 0, None) * np.clip(yy2 - yy1, 0, None)
        suppressed |= inter / (area[i] + area - inter) > iou_threshold
    return torch.from_numpy(np.asarray(keep, np.int64))


_lib.impl("nms", _nms_cpu, "CPU")


def _has_ops():
    return True
