"""Every built-in operator against PyTorch 2.13's ATen namesake, on every
OpInfo sample (tests/op_db.py, tests/opinfo/), its variants (each dtype of
OpInfo.dtypes, non-contiguous, column-major) and its error samples: values
within tolerance, result dtypes, shapes and strides, aliasing, raising or
not, in-place effects.
PyTorch's results come live from $OPDISPATCH_TORCH_PYTHON's venv if set,
else from tests/data/opinfo/ (tests/opinfo/make_references.py writes them).
docs/builtin-operators.rst says how to add samples and refresh references."""
from __future__ import annotations

import copy
import json
import subprocess

import numpy as np
import pytest

from op_db import OPS, OPS_BY_NAME, S, Const, OpInfo, a, instantiate, ints
from opinfo import family_names
from opinfo._cases import ERROR, Case, as_reference, cases, compare, run_od, spread, values_are_specified
from opinfo._known_differences import KNOWN_DIFFERENCES
from opinfo._references import DATA, ENV, SCRIPT, WORKER, MissingReference, Source, load, torch_python

CASES = {info.name: cases(info) for info in OPS}
SOURCE = Source(torch_python(), [c for per_op in CASES.values() for c in per_op])
FAMILIES = ["op_db", *family_names()]
live_only = pytest.mark.skipif(torch_python() is None, reason=f"set {ENV} to a PyTorch venv's python")


def problems(per_op: list[Case], source, known: dict[str, tuple[str, str]]) -> list[str]:
    """What is wrong with opdispatch's results of one operator's cases:
    differences from PyTorch's (``source.result``) not in ``known``, entries
    of ``known`` that no longer describe their case, error samples PyTorch
    accepts, and cases without a stored result."""
    found = []
    for case in per_op:
        try:
            expected = source.result(case)
        except MissingReference as e:
            found.append(str(e))
            continue
        if case.variant == ERROR and "raises" not in expected:
            found.append(f"{case.id} ({case.sample}) is an error sample but PyTorch returns: make it a sample")
            continue
        diffs = compare(expected, run_od(case))
        kinds = " ".join(sorted({kind for kind, _ in diffs}))
        listed = known.get(case.id)
        if listed is None and diffs:
            found.append(f"{case.id} ({case.sample}) differs in {kinds}: " + "; ".join(text for _, text in diffs))
        elif listed is not None and kinds != listed[0]:
            now = "agrees with PyTorch" if not diffs else "differs in " + "; ".join(text for _, text in diffs)
            found.append(f"{case.id} is listed in tests/opinfo/_known_differences.py as differing in {listed[0]} "
                         f"({listed[1]}) but now {now}: update the list")
    return found


@pytest.mark.parametrize("info", OPS, ids=lambda info: info.name)
def test_matches_pytorch(info):
    found = problems(CASES[info.name], SOURCE, KNOWN_DIFFERENCES)
    assert not found, "\n".join(found)


def test_known_differences_name_current_cases():
    current = {case.id for per_op in CASES.values() for case in per_op}
    assert sorted(set(KNOWN_DIFFERENCES) - current) == []


@pytest.mark.parametrize("family", FAMILIES)
def test_stored_references_are_pytorch_2_13s_for_current_samples(family):
    stored = load(family)
    keys = {case.key for info in OPS if info.family == family for case in CASES[info.name]}
    assert stored["torch"] is not None and stored["torch"].startswith("2.13."), f"run `{SCRIPT}`"
    stale = sorted(set(stored["cases"]) - keys)
    assert stale == [], f"references of samples no longer in op_db: run `{SCRIPT} --family {family}`"


@live_only
@pytest.mark.parametrize("family", FAMILIES)
def test_stored_references_match_live_pytorch(family):
    stored = load(family)["cases"]
    problems = []
    for info in (i for i in OPS if i.family == family):
        for case in CASES[info.name]:
            entry = stored.get(case.key)
            if entry is None:
                problems.append(f"{case.id}: not stored")
            elif compare(SOURCE.live()[case.key], entry["result"]):
                problems.append(f"{case.id}: stored {entry['result']} but PyTorch gives {SOURCE.live()[case.key]}")
    assert not problems, f"run `{SCRIPT} --family {family}`:\n" + "\n".join(problems)


@live_only
def test_the_worker_names_an_operator_pytorch_lacks():
    neg = Case(OPS_BY_NAME["neg"], 0, "", S(np.array([2.0])))
    calls = [{"op": "no_such_op.x", "args": [], "kwargs": {}}, neg.call()]
    done = subprocess.run([torch_python(), str(WORKER)], input=json.dumps(calls), capture_output=True, text=True)
    reply = json.loads(done.stdout)
    assert reply["torch"].startswith("2.13.")
    assert reply["results"][0] == {"missing": f"PyTorch {reply['torch']} has no aten::no_such_op.x"}
    assert reply["results"][1]["returns"]["tensor"]["values"] == [-2.0]


# --- the harness itself -----------------------------------------------------------------------------------------------


def test_sample_values_depend_only_on_their_own_entry():
    """Note [Sample values per entry]: an entry made between two others leaves the later one's values alone."""
    OpInfo("first", [])
    alone = [a(2, 3), ints(4)]
    OpInfo("first", [])
    OpInfo("inserted", [S(a(5), ints(3)), S(a(2, 2))])
    after = [a(2, 3), ints(4)]
    assert all(np.array_equal(x, y) for x, y in zip(alone, after))
    OpInfo("first", [])
    assert not np.array_equal(a(2, 3), a(2, 3))  # within an entry, each draw is new


def test_variants_of_a_sample():
    x64, y32, d0 = a(2, 3), a(3).astype(np.float32), a()
    info = OpInfo("add.Tensor", [S(x64, y32), S(ints(3), ints(3)), S(d0, Const(a(1)))])
    by_id = {c.id: c for c in cases(info)}
    assert list(by_id) == ["add.Tensor#0", "add.Tensor#0/float16", "add.Tensor#0/float32", "add.Tensor#0/float64",
                           "add.Tensor#0/noncontiguous", "add.Tensor#0/column_major", "add.Tensor#1",
                           "add.Tensor#1/noncontiguous", "add.Tensor#2", "add.Tensor#2/float16",
                           "add.Tensor#2/float32"]
    # no float64 copy of float64 arrays, no other layout of a 0-d array, a one-element one or a 1-d one's columns
    assert [x.dtype for x in by_id["add.Tensor#0/float32"].sample.args] == [np.float32, np.float32]
    assert isinstance(by_id["add.Tensor#2/float32"].sample.args[1], Const)
    (x, y), _ = instantiate(by_id["add.Tensor#0/noncontiguous"].sample, "cpu")
    assert (x.stride(), y.stride()) == ((6, 2), (2,)) and not x.is_contiguous()
    assert np.array_equal(x.numpy(), x64) and np.array_equal(y.numpy(), y32)
    assert spread(d0) is d0
    (x, y), _ = instantiate(by_id["add.Tensor#0/column_major"].sample, "cpu")
    assert (x.stride(), y.stride()) == ((1, 2), (1,)) and np.array_equal(x.numpy(), x64)
    (meta, _), _ = instantiate(by_id["add.Tensor#0/noncontiguous"].sample, "meta")
    assert meta.is_meta and meta.stride() == (6, 2)


def test_keys_digest_the_contents():
    info = OPS_BY_NAME["add.Tensor"]
    case = Case(info, 0, "", S(np.array([1.0, 2.0]), np.array([3.0])))
    same = Case(info, 5, "float64", S(np.array([1.0, 2.0]), np.array([3.0])))
    other_value = Case(info, 0, "", S(np.array([1.0, 2.5]), np.array([3.0])))
    other_dtype = Case(info, 0, "", S(np.array([1.0, 2.0], np.float32), np.array([3.0])))
    other_layout = Case(info, 0, "", S(spread(np.array([1.0, 2.0])), np.array([3.0])))
    other_scalar = Case(info, 0, "", S(np.array([1.0, 2.0]), np.array([3.0]), alpha=2))
    keys = [c.key for c in (case, other_value, other_dtype, other_layout, other_scalar)]
    assert case.key == same.key and len(set(keys)) == 5 and all(k.startswith("add.Tensor ") for k in keys)


def test_a_sample_without_reference_fails_naming_the_script():
    case = Case(OPS_BY_NAME["neg"], 0, "", S(np.array([123.25])))
    with pytest.raises(MissingReference) as e:
        Source(None, []).result(case)
    assert "neg#0" in str(e.value) and SCRIPT in str(e.value) and "tests/data/opinfo/op_db.json" in str(e.value)


def test_arguments_without_wire_form_are_named():
    case = Case(OPS_BY_NAME["neg"], 0, "", S(a(2), object()))
    with pytest.raises(TypeError, match=r"neg#0: the PyTorch comparison cannot pass <object"):
        case.call()


def _result(name: str, sample) -> dict:
    return run_od(Case(OPS_BY_NAME[name], 0, "", sample))


def test_compare_finds_each_kind_of_difference():
    x, y = np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([0.5, 0.25])
    base = _result("add.Tensor", S(x, y))
    assert compare(base, copy.deepcopy(base)) == []

    def kinds(edit, expected=base) -> list[str]:
        other = copy.deepcopy(base)
        edit(other)
        return [kind for kind, _ in compare(expected, other)]

    out = lambda r: r["returns"]["tensor"]  # noqa: E731
    assert kinds(lambda r: out(r).update(dtype="float32")) == ["dtype"]
    assert kinds(lambda r: out(r).update(shape=[4])) == ["shape"]
    assert kinds(lambda r: out(r).update(stride=[1, 2])) == ["strides"]
    assert kinds(lambda r: out(r)["values"][1].__setitem__(0, 3.5 + 1e-6)) == ["values"]
    unspecified = as_reference(OPS_BY_NAME["randn"], base)
    assert out(unspecified)["values"] is None and out(base)["values"] is not None
    assert kinds(lambda r: out(r)["values"][1].__setitem__(0, 3.5 + 1e-6), unspecified) == []
    assert kinds(lambda r: out(r)["values"][1].__setitem__(0, 3.5 + 1e-9)) == []  # float64: rtol 1e-7
    assert kinds(lambda r: out(r).update(aliases="args[0]")) == ["aliasing"]
    assert kinds(lambda r: r.update(returns={"seq": [r["returns"]]})) == ["type"]
    assert kinds(lambda r: r.update(mutated={"args[0]": {"dtype": "float64", "shape": [2, 2], "values": x.tolist()}})
                 ) == ["mutation"]
    assert kinds(lambda r: r.update(bumped=["args[0]"])) == ["version"]
    raising = {"raises": {"family": "RuntimeError", "type": "NotImplementedError", "message": "m"}}
    assert [k for k, _ in compare(base, raising)] == ["raises"]
    assert compare(raising, {"raises": {"family": "RuntimeError", "type": "RuntimeError", "message": "n"}}) == []
    assert [k for k, _ in compare(raising, {"raises": {"family": "IndexError", "type": "IndexError",
                                                        "message": "n"}})] == ["raises"]


def test_results_record_views_in_place_effects_and_errors():
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    view = _result("transpose.int", S(x, 0, 1))["returns"]["tensor"]
    assert (view["aliases"], view["is"], view["stride"], view["values"]) == ("args[0]", None, [1, 2], [[1, 3], [2, 4]])
    inplace = _result("add_.Tensor", S(x, np.array([1.0, 1.0])))
    assert inplace["returns"]["tensor"]["is"] == "args[0]" and inplace["bumped"] == ["args[0]"]
    assert inplace["mutated"] == {"args[0]": {"dtype": "float64", "shape": [2, 2], "values": [[2, 3], [4, 5]]}}
    error = _result("add.Tensor", S(a(2), a(3)))
    assert error["raises"]["family"] == "RuntimeError" and "od::add.Tensor" in error["raises"]["message"]


def test_values_of_random_and_uninitialized_outputs_are_not_compared():
    assert not values_are_specified(OPS_BY_NAME["randn"]) and not values_are_specified(OPS_BY_NAME["empty_like"])
    assert values_are_specified(OPS_BY_NAME["add.Tensor"]) and values_are_specified(OPS_BY_NAME["zeros"])
    assert values_are_specified(OpInfo("no_such_op", []))  # its cases raise; test_meta names the entry


def test_every_family_has_its_file_and_every_file_a_family():
    assert {info.family for info in OPS} == set(FAMILIES)
    assert all(info.family == "unary_math" for info in OPS if info.name in ("acos", "isnan"))
    assert sorted(p.stem for p in DATA.glob("*.json")) == sorted(FAMILIES)


class _Given:
    """A source of PyTorch results that gives one result for every case."""

    def __init__(self, result: dict) -> None:
        self._result = result

    def result(self, case: Case) -> dict:
        return self._result


def test_problems_name_differences_stale_known_differences_and_accepted_error_samples():
    info = OpInfo("mm", [S(np.eye(2), np.ones((2, 1)))], error_samples=[S(np.ones((2, 3)), np.ones((2, 3)))])
    right, error = cases(info)[0], cases(info)[-1]
    assert (right.id, error.id) == ("mm#0", "mm#error0")
    pytorch = _Given(run_od(right))
    assert problems([right], pytorch, {}) == []
    assert problems([right], pytorch, {"mm#0": ("dtype", "why")}) == [
        "mm#0 is listed in tests/opinfo/_known_differences.py as differing in dtype (why) but now agrees with "
        "PyTorch: update the list"]
    other = copy.deepcopy(run_od(right))
    other["returns"]["tensor"]["dtype"] = "float32"
    assert problems([right], _Given(other), {}) == ["mm#0 (float64[2, 2], float64[2, 1]) differs in dtype: output: "
                                                    "PyTorch dtype float32, od float64"]
    assert problems([right], _Given(other), {"mm#0": ("dtype", "why")}) == []
    assert problems([error], pytorch, {}) == [
        "mm#error0 (float64[2, 3], float64[2, 3]) is an error sample but PyTorch returns: make it a sample"]
    raising = {"raises": {"family": "RuntimeError", "type": "RuntimeError", "message": "mat1 and mat2 shapes"}}
    assert problems([error], _Given(raising), {}) == []
    assert "od returns" in problems([right], _Given(raising), {})[0]
