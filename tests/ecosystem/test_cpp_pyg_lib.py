"""pyg-lib's sampled_op and nearest (pyg-team/pyg-lib, pyg_lib/csrc/ops/sampled.cpp,
nearest.cpp, ops/cpu/sampled_kernel.cpp, ops/cpu/nearest_kernel.cpp), ported
with the name map (AT_DISPATCH_FLOATING_TYPES -> OPDISPATCH_DISPATCH_FLOATING_TYPES
with the rest): fragments of the `pyg` namespace with
OPDISPATCH_SELECTIVE_SCHEMA, C++ entry points that check their arguments with
TensorArg / CheckedFrom / checkAllDefined / checkSameType / checkContiguous /
checkDim / checkSize (or flatten them with view + contiguous) and call the
operator through `findSchemaOrThrow(...).typed<decltype(fn)>()`, a CPU kernel
of `index_select` and Tensor operators, and a dtype-dispatched CPU kernel that
allocates with `empty(sizes, x.options().dtype(kLong))`. Built against the
installed headers; the values and messages are PyTorch 2.13's for the same
code built with torch (the PyTorch form, with upstream's names).
entry_points.cpp is test glue: it exposes the C++ entry points as operators."""
from __future__ import annotations

import numpy as np
import pytest

import opdispatch
from opdispatch import _C, ops

from _cpp_ports import build, t

SOURCES = ["pyg_lib/csrc/ops/sampled.cpp", "pyg_lib/csrc/ops/cpu/sampled_kernel.cpp", "pyg_lib/csrc/ops/nearest.cpp",
           "pyg_lib/csrc/ops/cpu/nearest_kernel.cpp", "entry_points.cpp"]


@pytest.fixture(scope="module", autouse=True)
def extension():
    return build("pyg_lib", SOURCES)


LEFT = np.arange(12.0, dtype=np.float32).reshape(4, 3)
RIGHT = np.arange(6.0, dtype=np.float32).reshape(2, 3) + 1
LEFT_INDEX = np.array([0, 2, 3])
RIGHT_INDEX = np.array([1, 0, 1])


def test_the_fragments_define_upstreams_schemas_with_cpu_kernels():
    assert str(ops.pyg.sampled_op.default._schema) == (
        "pyg::sampled_op(Tensor left, Tensor right, Tensor? left_index, Tensor? right_index, str op) -> Tensor")
    assert str(ops.pyg.nearest.default._schema) == (
        "pyg::nearest(Tensor x, Tensor y, Tensor? ptr_x=None, Tensor? ptr_y=None) -> Tensor")
    for name in ("pyg::sampled_op", "pyg::nearest"):
        assert _C._dispatch_has_kernel_for_dispatch_key(name, "CPU")


@pytest.mark.parametrize("fn, ufunc", [("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                                       ("div", np.divide)])
def test_sampled_op_applies_fn_to_the_picked_rows(fn, ufunc):
    out = ops.pyg.sampled_op(t(LEFT), t(RIGHT), t(LEFT_INDEX), t(RIGHT_INDEX), fn)
    np.testing.assert_allclose(out.numpy(), ufunc(LEFT[LEFT_INDEX], RIGHT[RIGHT_INDEX]), rtol=1e-6)
    # The C++ entry point: the same result after its checks and the typed dispatcher call.
    entry = ops.pyg_port.sampled_op_entry(t(LEFT), t(RIGHT), t(LEFT_INDEX), t(RIGHT_INDEX), fn)
    np.testing.assert_array_equal(entry.numpy(), out.numpy())


def test_sampled_op_without_indices_uses_the_rows_as_they_are():
    out = ops.pyg_port.sampled_op_entry(t(LEFT[:2]), t(RIGHT), None, None, "mul")
    np.testing.assert_array_equal(out.numpy(), [[0.0, 2.0, 6.0], [12.0, 20.0, 30.0]])  # PyTorch 2.13's values


# PyTorch 2.13's messages for the same calls of the entry point (first line). An argument at position 0 is
# named without a number ("for 'left'"), as ATen's TensorArg printing has it.
@pytest.mark.parametrize("args, message", [
    ((LEFT, RIGHT, LEFT_INDEX, np.array([1, 0])),
     "Expected tensor to have size 2 at dimension 0, but got size 3 for argument #2 'left_index' "
     "(while checking arguments for sampled_op)"),
    ((LEFT, RIGHT, None, None),
     "Expected tensor to have size 2 at dimension 0, but got size 4 for 'left' "
     "(while checking arguments for sampled_op)"),
    ((LEFT, RIGHT[:, :2], LEFT_INDEX, RIGHT_INDEX),
     "Expected tensor to have size 2 at dimension 1, but got size 3 for 'left' "
     "(while checking arguments for sampled_op)"),
    ((LEFT, RIGHT, LEFT_INDEX.reshape(3, 1), RIGHT_INDEX),
     "Expected 1-dimensional tensor, but got 2-dimensional tensor for argument #2 'left_index' "
     "(while checking arguments for sampled_op)"),
])
def test_the_entry_points_checks_give_atens_messages(args, message):
    with pytest.raises(RuntimeError) as e:
        ops.pyg_port.sampled_op_entry(*[None if a is None else t(a) for a in args], "add")
    assert str(e.value).splitlines()[0] == message


def test_a_non_contiguous_argument_is_refused():
    transposed = opdispatch.from_numpy(np.arange(12.0, dtype=np.float32).reshape(3, 4)).t()
    with pytest.raises(RuntimeError, match=r"^Expected contiguous tensor, but got non-contiguous tensor for 'left' "
                                           r"\(while checking arguments for sampled_op\)"):
        ops.pyg_port.sampled_op_entry(transposed, t(RIGHT), t(LEFT_INDEX), t(RIGHT_INDEX), "add")


def test_checksametype_names_the_arguments_and_types_as_pytorch_does():
    # PyTorch 2.13's messages, with its "torch.FloatTensor" under the name map (processErrorMsg's legacy names).
    cases = [((t(LEFT), t(RIGHT.astype(np.float64)), t(LEFT_INDEX), t(RIGHT_INDEX)),
              "Expected tensor for 'left' to have the same type as tensor for argument #1 'right'; but type "
              "opdispatch.FloatTensor does not equal opdispatch.DoubleTensor (while checking arguments for sampled_op)"),
             ((t(LEFT), t(RIGHT), t(LEFT_INDEX), t(RIGHT_INDEX.astype(np.int32))),
              "Expected tensor for argument #2 'left_index' to have the same type as tensor for argument #3 "
              "'right_index'; but type opdispatch.LongTensor does not equal opdispatch.IntTensor (while checking "
              "arguments for sampled_op)")]
    for args, message in cases:
        with pytest.raises(RuntimeError) as e:
            ops.pyg_port.sampled_op_entry(*args, "add")
        assert str(e.value).splitlines()[0] == message


def test_an_unknown_function_is_an_index_error_from_map_at():
    # PyTorch 2.13: IndexError "map::at" (std::out_of_range from the kernel's std::map::at).
    with pytest.raises(IndexError, match="^map::at$"):
        ops.pyg.sampled_op(t(LEFT), t(RIGHT), t(LEFT_INDEX), t(RIGHT_INDEX), "pow")


# --- nearest ---------------------------------------------------------------------------

X = np.array([[0.0, 0.0], [1.0, 1.0], [5.0, 5.0], [9.0, 1.0]], np.float32)
Y = np.array([[1.0, 0.0], [8.0, 2.0], [4.0, 4.0]], np.float32)


def nearest_reference(x, y, ptr_x=None, ptr_y=None):
    ptr_x = [0, len(x)] if ptr_x is None else ptr_x
    ptr_y = [0, len(y)] if ptr_y is None else ptr_y
    out = np.empty(len(x), np.int64)
    for b in range(len(ptr_x) - 1):
        ys = y[ptr_y[b]:ptr_y[b + 1]]
        for i in range(ptr_x[b], ptr_x[b + 1]):
            out[i] = ptr_y[b] + np.argmin(((ys - x[i]) ** 2).sum(1))
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nearest_finds_the_closest_point_of_y(dtype):
    out = ops.pyg.nearest(t(X.astype(dtype)), t(Y.astype(dtype)))
    assert out.dtype == opdispatch.int64  # x.options().dtype(kLong)
    np.testing.assert_array_equal(out.numpy(), [0, 0, 2, 1])  # PyTorch 2.13's values
    np.testing.assert_array_equal(out.numpy(), nearest_reference(X, Y))
    ptr_x, ptr_y = np.array([0, 2, 4]), np.array([0, 1, 3])
    batched = ops.pyg.nearest(t(X.astype(dtype)), t(Y.astype(dtype)), t(ptr_x), t(ptr_y))
    np.testing.assert_array_equal(batched.numpy(), [0, 0, 2, 1])
    np.testing.assert_array_equal(batched.numpy(), nearest_reference(X, Y, ptr_x, ptr_y))


def test_nearest_entry_point_flattens_the_features():
    out = ops.pyg_port.nearest_entry(t(X.reshape(4, 2, 1)), t(Y.reshape(3, 1, 2)))
    np.testing.assert_array_equal(out.numpy(), [0, 0, 2, 1])
    with pytest.raises(RuntimeError, match="^x and y must have the same feature dim$"):
        ops.pyg_port.nearest_entry(t(X), t(Y[:, :1]))


def test_nearest_dispatches_on_the_floating_types_only():
    # PyTorch 2.13: NotImplementedError "\"nearest_cpu\" not implemented for 'Int'" (AT_DISPATCH_FLOATING_TYPES).
    with pytest.raises(NotImplementedError, match="^\"nearest_cpu\" not implemented for 'Int'$"):
        ops.pyg.nearest(t(X.astype(np.int32)), t(Y.astype(np.int32)))
