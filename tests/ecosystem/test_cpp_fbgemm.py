"""FBGEMM_GPU's CPU operators (pytorch/FBGEMM,
fbgemm_gpu/src/input_combine_ops/input_combine_cpu.cpp and
fbgemm_gpu/src/layout_transform_ops/layout_transform_ops_cpu.cpp, with
fbgemm_gpu/utils/ops_utils.h), ported with the name map: two extensions that
each add a FRAGMENT to the fbgemm namespace, tags on def, kernels registered
with DISPATCH_TO_CPU (dispatch(DispatchKey::CPU, OPDISPATCH_FN(f))) inside a
fragment; built against the installed headers, checked against NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import opdispatch
from opdispatch import Tag, _C, ops

from _cpp_ports import build, t

# What FBGEMM's build defines for a PyTorch that has tags and python-module stubs.
FLAGS = ["-Iinclude", "-DHAS_PT2_COMPLIANT_TAG", "-DHAS_IMPL_ABSTRACT_PYSTUB"]


@pytest.fixture(scope="module", autouse=True)
def extensions():
    # Two shared libraries, as FBGEMM builds its ops: each adds a fragment of `fbgemm`.
    return [build("fbgemm", ["src/input_combine_ops/input_combine_cpu.cpp"], FLAGS, library="cpp_fbgemm_input"),
            build("fbgemm", ["src/layout_transform_ops/layout_transform_ops_cpu.cpp"], FLAGS,
                  library="cpp_fbgemm_layout")]


def as_list(tensors) -> list[np.ndarray]:
    return [x.numpy() for x in tensors]


# --- references ----------------------------------------------------------------------


def combine_reference(indices, offsets, weights, include_last, batch_size=0):
    combined_offsets, total = [0], 0
    for idx, off, last in zip(indices, offsets, include_last):
        size = len(off) - (1 if last else 0)
        combined_offsets += [total + int(o) for o in off[1:size]]
        total += len(idx)
        combined_offsets += [total] * (batch_size - size + 1 if batch_size else 1)
    return (np.concatenate(indices).astype(np.int32), np.array(combined_offsets, np.int32),
            weights_reference(indices, weights))


def weights_reference(indices, weights):
    if all(len(w) == 0 for w in weights):
        return np.zeros(0, np.float32)
    return np.concatenate([w if len(w) else np.ones(len(i), np.float32) for i, w in zip(indices, weights)])


TABLES = [np.array([3, 1, 4, 1, 5], np.int64), np.array([9, 2, 6], np.int32), np.array([5, 3, 5, 8], np.int64)]
OFFSETS = [np.array([0, 2, 5], np.int64), np.array([0, 1], np.int32), np.array([0, 1, 3, 4], np.int64)]


# --- the operators ---------------------------------------------------------------------


def test_both_extensions_add_to_the_fbgemm_namespace():
    names = {n for n in _C._dispatch_get_all_op_names() if n.startswith("fbgemm::")}
    assert names >= {f"fbgemm::{n}" for n in [
        "tbe_input_combine", "tbe_input_combine_with_length", "padding_fused_tbe_input_combine",
        "padding_fused_tbe_input_combine_with_length", "recat_embedding_grad_output_mixed_D_batch",
        "recat_embedding_grad_output_mixed_D", "recat_embedding_grad_output"]}
    for n in ["tbe_input_combine", "recat_embedding_grad_output_mixed_D"]:
        assert _C._dispatch_has_kernel_for_dispatch_key(f"fbgemm::{n}", "CPU")
        assert not _C._dispatch_has_kernel_for_dispatch_key(f"fbgemm::{n}", "CompositeImplicitAutograd")


def test_the_fake_impls_python_module_is_recorded_for_the_fragments_defs():
    # m.impl_abstract_pystub(...) at the top of the fragment (seed 000: _check_pystubs_once reads it back).
    assert _C._dispatch_pystub("fbgemm::tbe_input_combine", "") == \
        ("fbgemm_gpu.sparse_ops", "//deeplearning/fbgemm/fbgemm_gpu:sparse_ops_py")
    assert _C._dispatch_pystub("fbgemm::recat_embedding_grad_output", "") is None  # the other fragment has none


def test_pt2_compliant_tag_is_stored():
    assert ops.fbgemm.tbe_input_combine.default.tags == [Tag.pt2_compliant_tag]
    assert ops.fbgemm.tbe_input_combine_with_length.default.tags == [Tag.pt2_compliant_tag]
    assert ops.fbgemm.padding_fused_tbe_input_combine.default.tags == []


@pytest.mark.parametrize("with_weights", [False, True])
@pytest.mark.parametrize("include_last", [(True, False, True), (False, False, False)])
def test_tbe_input_combine_matches_the_reference(with_weights, include_last):
    rng = np.random.default_rng(0)
    weights = [rng.uniform(size=len(TABLES[0])).astype(np.float32), np.zeros(0, np.float32),
               rng.uniform(size=len(TABLES[2])).astype(np.float32)] if with_weights else \
        [np.zeros(0, np.float32)] * 3
    got = ops.fbgemm.tbe_input_combine([t(x) for x in TABLES], [t(x) for x in OFFSETS], [t(w) for w in weights],
                                       t(np.array(include_last)))
    assert [x.dtype for x in got] == [opdispatch.int32, opdispatch.int32, opdispatch.float32]
    for g, e in zip(as_list(got), combine_reference(TABLES, OFFSETS, weights, include_last)):
        np.testing.assert_array_equal(g, e)


def test_padding_fused_tbe_input_combine_pads_every_table_to_batch_size():
    weights = [np.zeros(0, np.float32)] * 3
    include_last = (False, False, False)
    got = ops.fbgemm.padding_fused_tbe_input_combine([t(x) for x in TABLES], [t(x) for x in OFFSETS],
                                                     [t(w) for w in weights], t(np.array(include_last)), 4)
    expected = combine_reference(TABLES, OFFSETS, weights, include_last, batch_size=4)
    assert len(expected[1]) == 1 + 4 * len(TABLES)
    for g, e in zip(as_list(got), expected):
        np.testing.assert_array_equal(g, e)


def test_tbe_input_combine_with_length_and_its_padded_variant():
    lengths = [np.array([2, 3], np.int64), np.array([1, 0, 2], np.int32), np.array([4], np.int64)]
    weights = [np.zeros(0, np.float32), np.array([0.5, 0.25, 2.0], np.float32), np.zeros(0, np.float32)]
    got = ops.fbgemm.tbe_input_combine_with_length([t(x) for x in TABLES], [t(x) for x in lengths],
                                                   [t(w) for w in weights])
    np.testing.assert_array_equal(got[0].numpy(), np.concatenate(TABLES).astype(np.int32))
    np.testing.assert_array_equal(got[1].numpy(), np.concatenate(lengths).astype(np.int32))
    np.testing.assert_array_equal(got[2].numpy(), weights_reference(TABLES, weights))
    padded = ops.fbgemm.padding_fused_tbe_input_combine_with_length([t(x) for x in TABLES], [t(x) for x in lengths],
                                                                    [t(w) for w in weights], 3)
    np.testing.assert_array_equal(padded[1].numpy(), [2, 3, 0, 1, 0, 2, 4, 0, 0])


def test_recat_embedding_grad_output_mixed_d_matches_the_reference():
    grad = np.arange(4 * 9, dtype=np.float32).reshape(4, 9)
    dims = [2, 4, 3]
    out = ops.fbgemm.recat_embedding_grad_output_mixed_D(t(grad), dims)
    bounds = np.cumsum([0] + dims)
    expected = np.concatenate([grad[:, bounds[d]:bounds[d + 1]].ravel() for d in range(len(dims))])
    np.testing.assert_array_equal(out.numpy(), expected)
    with pytest.raises(RuntimeError):
        ops.fbgemm.recat_embedding_grad_output_mixed_D(t(grad), [2, 4])


def test_an_operator_with_only_a_cuda_kernel_upstream_has_none_here():
    with pytest.raises(NotImplementedError, match="fbgemm::recat_embedding_grad_output"):
        ops.fbgemm.recat_embedding_grad_output(t(np.zeros((2, 2), np.float32)), [1, 1])
