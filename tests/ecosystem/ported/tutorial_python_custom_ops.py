# Ported from pytorch/tutorials: advanced_source/python_custom_ops.py
# ("Python Custom Operators"). Registration code as in the tutorial with the
# name map (torch -> opdispatch); PIL's crop/paste are replaced by small NumPy
# kernels (to_pil_image / pil_to_tensor below), and the torch.compile and
# plotting cells are left out (opdispatch has no compiler).
import numpy as np

import opdispatch as torch


def to_pil_image(pic):
    # Stand-in for torchvision.transforms.functional.to_pil_image: a CHW NumPy copy.
    return pic.detach().numpy().copy()


def pil_to_tensor(img):
    # Stand-in for torchvision's pil_to_tensor (the tutorial divides by 255 after it).
    return torch.from_numpy(np.ascontiguousarray(img) * 255.0)


class _Image:
    # Stand-in for PIL.Image.Image.paste: pastes im2 into im1 at (x0, y0), in place.
    @staticmethod
    def paste(im1, im2, coord):
        x0, y0 = coord[0], coord[1]
        im1[:, y0:y0 + im2.shape[1], x0:x0 + im2.shape[2]] = im2


class PIL:
    class Image:
        Image = _Image


from typing import Sequence  # noqa: E402  (where the tutorial imports it)

# Use torch.library.custom_op to define a new custom operator.
# If your operator mutates any input Tensors, their names must be specified
# in the mutates_args argument.
@torch.library.custom_op("mylib::crop", mutates_args=())
def crop(pic: torch.Tensor, box: Sequence[int]) -> torch.Tensor:
    img = to_pil_image(pic.cpu())
    x0, y0, x1, y1 = box
    cropped_img = img[:, y0:y1, x0:x1]  # img.crop(box)
    return (pil_to_tensor(cropped_img) / 255.).to(pic.device, pic.dtype)

# Use register_fake to add a FakeTensor kernel for the operator
@crop.register_fake
def _(pic, box):
    channels = pic.shape[0]
    x0, y0, x1, y1 = box
    return pic.new_empty(channels, y1 - y0, x1 - x0)


@torch.library.custom_op("mylib::paste", mutates_args=())
def paste(im1: torch.Tensor, im2: torch.Tensor, coord: Sequence[int]) -> torch.Tensor:
    assert im1.device == im2.device
    assert im1.dtype == im2.dtype
    im1_pil = to_pil_image(im1.cpu())
    im2_pil = to_pil_image(im2.cpu())
    PIL.Image.Image.paste(im1_pil, im2_pil, coord)
    return (pil_to_tensor(im1_pil) / 255.).to(im1.device, im1.dtype)

@paste.register_fake
def _(im1, im2, coord):
    assert im1.device == im2.device
    assert im1.dtype == im2.dtype
    return torch.empty_like(im1)


def backward(ctx, grad_output):
    grad_input = grad_output.new_zeros(ctx.pic_shape)
    grad_input = paste(grad_input, grad_output, ctx.coords)
    return grad_input, None

def setup_context(ctx, inputs, output):
    pic, box = inputs
    ctx.coords = box[:2]
    ctx.pic_shape = pic.shape

crop.register_autograd(backward, setup_context=setup_context)


@torch.library.custom_op("mylib::numpy_sin", mutates_args={"output"}, device_types="cpu")
def numpy_sin(input: torch.Tensor, output: torch.Tensor) -> None:
    assert input.device == output.device
    assert input.device.type == "cpu"
    input_np = input.numpy()
    output_np = output.numpy()
    np.sin(input_np, out=output_np)
