"""Imprecise is not wrong: the grades of a budgeted result, the wrong-answer lines, the `imprecise`
outcome and --strict-precision, and budgets no tighter than the bounds well-regarded libraries
document (glibc's measured answers included, computed by glibc itself where this machine has it).

Every figure expected here is worked out from the formats' layouts and the documented bounds
(../shared/PRECISION.md), not read back from the code under test."""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import subprocess
import sys

import ml_dtypes
import mpmath
import numpy as np
import pytest

from conformance.case import Example
from conformance.compare import FAIL, IMPRECISE, PASS, judge
from conformance.precision import (BEYOND_BUDGET, COMPOSITE, CORRECTLY_ROUNDED, ELEMENTARY, FAITHFUL, WITHIN_BUDGET,
                                   WRONG_ANSWER_LINES, Budget, check, ulp_error)
from conformance.reference import activation, arithmetic, covered_ops, for_op, math_unary, trigonometry
from conformance.reference.base import Expected, Reading
from conformance.reference.elementwise import Elementwise, answer
from conformance.registry import versions
from conformance.runners.base import RunOutput
from conftest import with_test_backends

FOUR = Budget(4, "test budget")
STEP32 = 2.0 ** -23  # float32's spacing in [1, 2)
STEP64 = 2.0 ** -52


def graded(precise, actual, dtype, budget=FOUR):
    precise = np.array(precise, dtype=np.float64)
    return check(precise, precise.astype(dtype), np.array(actual, dtype=np.float64).astype(dtype), budget)


# --- grades on constructed values ---

def test_float32_grades_from_the_exact_value():
    exact = 1.0 + STEP32 / 4  # rounds to 1.0
    assert graded([exact], [1.0], np.float32).grade == CORRECTLY_ROUNDED
    assert graded([exact], [1.0 + STEP32], np.float32).grade == FAITHFUL  # 0.75 ULP: the other neighbour
    assert graded([exact], [1.0 + 3 * STEP32], np.float32).grade == WITHIN_BUDGET  # 2.75 ULP, budget 4
    beyond = graded([exact], [1.0 + 6 * STEP32], np.float32)  # 5.75 ULP: beyond 4, within the line 8
    assert beyond.grade == BEYOND_BUDGET and beyond.imprecise and not beyond.is_wrong
    wrong = graded([exact], [1.0 + 10 * STEP32], np.float32)  # 9.75 ULP: beyond the line
    assert wrong.grade == BEYOND_BUDGET and wrong.is_wrong and not wrong.imprecise


def test_a_result_is_as_good_as_its_worst_element():
    exact = [1.0, 1.0 + STEP32 / 4]
    assert graded(exact, [1.0, 1.0 + STEP32], np.float32).grade == FAITHFUL
    assert graded(exact, [1.0 + 5 * STEP32, 1.0], np.float32).grade == BEYOND_BUDGET


def test_float64_grades_give_the_reference_its_half_ulp():
    # A float64 reference is the correctly rounded value: one ULP from it may be faithful (the exact
    # value may lie between them), two are not; budget 2.5 admits 3 ULP from it, the line 8.5.
    budget = Budget(2.5, "test")
    assert graded([1.0], [1.0], np.float64, budget).grade == CORRECTLY_ROUNDED
    assert graded([1.0], [1.0 + STEP64], np.float64, budget).grade == FAITHFUL
    assert graded([1.0], [1.0 + 3 * STEP64], np.float64, budget).grade == WITHIN_BUDGET
    assert graded([1.0], [1.0 + 4 * STEP64], np.float64, budget).imprecise
    assert graded([1.0], [1.0 + 9 * STEP64], np.float64, budget).is_wrong


def test_a_missed_special_value_is_wrong_whatever_the_budget():
    assert graded([np.nan], [1.0], np.float32, Budget(1000, "any")).is_wrong
    assert graded([0.0], [2.0 ** -149], np.float32, Budget(1000, "any")).is_wrong  # a zero is judged exactly
    assert graded([np.inf], [3.0e38], np.float32, Budget(1000, "any")).is_wrong


# --- the wrong-answer lines ---

def test_the_lines_per_dtype_and_kind_and_never_below_the_budget():
    elementary, composite = Budget(1, "x"), Budget(1, "x", kind=COMPOSITE)
    lines = [(b.wrong_answer_line(t)) for t in (np.float16, ml_dtypes.bfloat16, np.float32, np.float64) for b in (elementary, composite)]
    assert lines == [2, 4, 2, 4, 8, 16, 8, 16]
    assert Budget(20, "wide").wrong_answer_line(np.float32) == 20
    assert WRONG_ANSWER_LINES["float32"] == {ELEMENTARY: 8, COMPOSITE: 16}


def declared_budgets():
    """(op, dtype name, budget) for every budget an element-wise declaration gives a float type it allows."""
    found = []
    for op in covered_ops():
        family = getattr(for_op(op), "family", None)
        if not isinstance(family, Elementwise):
            continue
        for name in ("float16", "bfloat16", "float", "double"):
            budget = family.budgets.get(name, family.budget)
            if isinstance(budget, Budget):
                found.append((op, name, budget))
    return found


NUMPY_TYPES = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float": np.float32, "double": np.float64}


def test_every_declared_budget_lies_below_its_line_and_names_its_kind():
    budgets = declared_budgets()
    assert len({op for op, _, _ in budgets}) >= 20  # trigonometry, math_unary, activations, Pow
    for op, name, budget in budgets:
        assert budget.ulps < budget.wrong_answer_line(NUMPY_TYPES[name]), (op, name, budget.ulps)
    kinds = {op: budget.kind for op, name, budget in budgets if name == "float"}
    assert (kinds["Tanh"], kinds["Sin"], kinds["Pow"]) == (ELEMENTARY,) * 3
    assert (kinds["Elu"], kinds["Sigmoid"], kinds["Mish"]) == (COMPOSITE,) * 3


# --- judging with real declarations ---

def example(op: str, dtype: str, values, attributes: dict | None = None, *more) -> Example:
    """The latest version of `op` on `values` (and `more` inputs after them) of `dtype`, every input of that type."""
    version = max((v for v in versions(op) if dtype in v.allowed(v.inputs[0].type_param)), key=lambda v: v.since_version)
    arrays = [np.array(a, dtype=np.float64).astype(NUMPY_TYPES[dtype]) for a in (values, *more)]
    types = {formal.type_param: dtype for formal in version.inputs[:len(arrays)]}
    inputs = {formal.name: array for formal, array in zip(version.inputs, arrays)}
    return Example(version, "unit", types, inputs, dict(attributes or {}), "unit", version.inputs[0].type_param)


def stepped(rounded: np.ndarray, exact: np.ndarray, steps: int) -> np.ndarray:
    """The correctly rounded values moved `steps` places along their type's grid, away from the
    exact value (toward it where `steps` is negative)."""
    wide = rounded.astype(np.float64)
    away = np.where(wide >= exact, 1, -1) * np.sign(steps)
    bits = rounded.copy().view({2: np.int16, 4: np.int32, 8: np.int64}[rounded.dtype.itemsize])
    bits += (away * np.sign(wide)).astype(bits.dtype) * abs(steps)
    return bits.view(rounded.dtype)


def judged(declaration: Elementwise, op: str, dtype: str, values, steps: int):
    """The verdict on a runtime `steps` ULP from the correctly rounded answer, away from the exact one."""
    expected = answer(declaration, example(op, dtype, values))
    reading = expected.readings[0]
    actual = stepped(reading.outputs[0], reading.precise[0], steps)
    return judge(expected, RunOutput(outputs=(actual,)))


TANH_INPUTS = [0.23307041823863983, 0.5, -0.75, 1.25, 1e-3]


def test_a_three_ulp_float32_tanh_is_imprecise_not_a_failure():
    verdict = judged(activation.TANH, "Tanh", "float", TANH_INPUTS, 3)
    assert verdict.outcome == IMPRECISE and verdict.grade == BEYOND_BUDGET
    assert 3.0 <= verdict.ulp <= 3.5  # 3 steps away from the correctly rounded value, itself <= 0.5 off
    assert "values beyond 2.5 ULP" in verdict.message and "within the wrong-answer line 8 ULP" in verdict.message


def test_beyond_the_line_a_tanh_fails():
    verdict = judged(activation.TANH, "Tanh", "float", TANH_INPUTS, 9)
    assert verdict.outcome == FAIL and verdict.grade == BEYOND_BUDGET
    assert "beyond the wrong-answer line 8 ULP" in verdict.message


def test_within_the_budget_a_tanh_passes_with_its_grade():
    assert judged(activation.TANH, "Tanh", "float", TANH_INPUTS, 0).grade == CORRECTLY_ROUNDED
    verdict = judged(activation.TANH, "Tanh", "float", TANH_INPUTS, 2)
    assert verdict.outcome == PASS and verdict.grade == WITHIN_BUDGET and "within budget" in verdict.message


def test_the_line_still_catches_a_sigmoid_of_minus_20_returned_as_zero():
    expected = answer(activation.SIGMOID, example("Sigmoid", "float", [-20.0, 0.5]))
    verdict = judge(expected, RunOutput(outputs=(np.array([0.0, expected.readings[0].outputs[0][1]], np.float32),)))
    assert verdict.outcome == FAIL


def test_the_line_still_catches_elu_cancelling_in_exp_minus_one():
    # alpha * (exp(x) - 1) in float32 at x = -1e-3 loses 10 bits to cancellation: 86 ULP, beyond 16.
    x = np.array([-1e-3], np.float32)
    expected = answer(activation.ELU, example("Elu", "float", x, {"alpha": 1.0}))
    cancelled = (np.exp(x) - np.float32(1)).astype(np.float32)
    error = float(ulp_error(expected.readings[0].precise[0], cancelled)[0])
    assert 80 < error < 90
    assert judge(expected, RunOutput(outputs=(cancelled,))).outcome == FAIL


def test_several_readings_prefer_one_within_budget_and_tell_imprecision_against_the_nearest():
    precise = np.array([1.0 + STEP32 / 4])
    near = Reading((np.float32([1.0]),), "near", (precise,))
    far = Reading((np.float32([2.0]),), "far", (precise * 2,))
    expected = Expected(readings=(near, far), budgets=(FOUR,), ambiguity="two readings")
    imprecise = judge(expected, RunOutput(outputs=(np.float32([1.0 + 6 * STEP32]),)))
    assert imprecise.outcome == IMPRECISE and imprecise.reading == "near" and "of 2 allowed" in imprecise.message
    assert judge(expected, RunOutput(outputs=(np.float32([2.0 + 2 * STEP32]),))).reading == "far"


# --- budgets no tighter than the documented bounds ---

# (op, dtype, k): the largest bound a well-regarded library documents for it, in ULP from the
# correctly rounded result (PRECISION.md: glibc scalar and libmvec, CUDA): a result k places from
# the correctly rounded value, on the far side from the exact one, must be within the budget.
DOCUMENTED = [
    ("Exp", "float", 2), ("Exp", "double", 1), ("Log", "float", 3), ("Log", "double", 1), ("Erf", "float", 2),
    ("Erf", "double", 2), ("Pow", "float", 4), ("Pow", "double", 2), ("Sin", "float", 2), ("Sin", "double", 2),
    ("Cos", "float", 2), ("Cos", "double", 2), ("Tan", "float", 4), ("Tan", "double", 2), ("Asin", "float", 2),
    ("Acos", "float", 2), ("Atan", "float", 2), ("Sinh", "float", 3), ("Sinh", "double", 2), ("Cosh", "float", 2),
    ("Cosh", "double", 2), ("Asinh", "float", 3), ("Asinh", "double", 3), ("Acosh", "float", 4), ("Acosh", "double", 3),
    ("Atanh", "float", 3), ("Atanh", "double", 2), ("Tanh", "float", 2), ("Tanh", "double", 2),
    # a native half-precision kernel within 1 ULP of the correctly rounded result
    ("Exp", "float16", 1), ("Sin", "float16", 1), ("Tanh", "bfloat16", 1), ("Pow", "float16", 1),
]
DECLARATIONS = {d.op: d for module in (trigonometry, math_unary, activation, arithmetic) for d in module.DECLARED}
INPUTS = {"Acosh": [1.1040891670124455, 1.5, 3.0], "Asin": [0.3, -0.6], "Acos": [0.3, -0.6], "Atanh": [-0.11970062028984674, 0.5],
          "Log": [0.75, 1.5, 3.0], "Pow": [0.75, 1.5, 3.0]}


@pytest.mark.parametrize("op, dtype, k", DOCUMENTED)
def test_a_documented_bound_is_within_the_budget(op, dtype, k):
    values = INPUTS.get(op, [0.8021998203571385, -0.3, 1.7])
    exponents = [[1.3] * len(values)] if op == "Pow" else []
    expected = answer(DECLARATIONS[op], example(op, dtype, values, None, *exponents))
    reading = expected.readings[0]
    actual = stepped(reading.outputs[0], reading.precise[0], k)
    verdict = judge(expected, RunOutput(outputs=(actual,)))
    assert verdict.outcome == PASS, verdict.message


def _glibc():
    """This machine's libm if it is glibc's, with its version; None elsewhere."""
    try:
        version = ctypes.CDLL(None).gnu_get_libc_version
    except (AttributeError, OSError):
        return None
    version.restype = ctypes.c_char_p
    path = ctypes.util.find_library("m")
    return (ctypes.CDLL(path), version().decode()) if path else None


def glibc_answer(name: str, x: float, exact: mpmath.mpf, dtype, from_rounded: int) -> tuple[float, bool]:
    """glibc's `name`(x) called through ctypes where this is glibc; elsewhere the value glibc 2.36
    gives, built from the exact value: the correctly rounded one moved `from_rounded` places away
    from it. With whether it is glibc 2.36's own answer (measured so)."""
    found = _glibc()
    if found is not None:
        libm, version = found
        function = getattr(libm, name)
        c_type = ctypes.c_float if dtype == np.float32 else ctypes.c_double
        function.restype, function.argtypes = c_type, [c_type]
        return float(function(x)), version == "2.36"
    rounded = np.array([float(exact)], dtype=np.float64).astype(dtype)
    return float(stepped(rounded, np.array([float(exact)]), from_rounded)[0]), True


# glibc 2.36's measured answers (PRECISION.md): (libm name, op, dtype, input, ULP from the
# correctly rounded result, ULP from the exact value).
GLIBC_236 = [("tanhf", "Tanh", "float", 0.23307041823863983, 2, 2.05),
             ("sinh", "Sinh", "double", 0.8021998203571385, 2, None),
             ("acosh", "Acosh", "double", 1.1040891670124455, 2, None),
             ("atanh", "Atanh", "double", -0.11970062028984674, 2, None)]


@pytest.mark.parametrize("name, op, dtype, x, from_rounded, from_exact", GLIBC_236)
def test_glibcs_measured_answers_are_within_the_budgets(name, op, dtype, x, from_rounded, from_exact):
    mpmath.mp.prec = 200
    exact = getattr(mpmath, op.lower())(mpmath.mpf(x))
    numpy_type = NUMPY_TYPES[dtype]
    value, as_measured = glibc_answer(name, x, exact, numpy_type, from_rounded)
    expected = answer(DECLARATIONS[op], example(op, dtype, [x]))
    actual = np.array([value]).astype(numpy_type)
    if as_measured:  # the answer glibc 2.36 gives: as far off as measured, beyond the budgets it had
        error = float(ulp_error(expected.readings[0].precise[0], actual)[0])
        assert error == pytest.approx(from_exact if from_exact is not None else from_rounded, abs=0.01)
    verdict = judge(expected, RunOutput(outputs=(actual,)))
    assert verdict.outcome == PASS, verdict.message


# --- the run: --strict-precision, the report, expectations, merge ---

TANH_CASE = ("--op", "Tanh", "--dtype", "float", "--no-hypothesis", "--case", "Tanh-13/values/float", "--backend", "imprecise")


def test_an_imprecise_run_exits_0_and_under_strict_precision_1(conform, tmp_path):
    # The test backend moves every float32 answer three ULP: Tanh's budget is 2.5, its line 8.
    loose = conform("run", *TANH_CASE, "--report-json", str(tmp_path / "loose.json"))
    strict = conform("run", *TANH_CASE, "--strict-precision", "--report-json", str(tmp_path / "strict.json"))
    assert loose.code == 0 and strict.code == 1, loose.stdout[-2000:] + strict.stdout[-2000:]
    for path, gated in (("loose.json", False), ("strict.json", True)):
        doc = json.loads((tmp_path / path).read_text())
        [record] = doc["results"]
        assert (record["outcome"], record["grade"], record["budget_ulps"], record["wrong_answer_ulps"]) == \
            (IMPRECISE, BEYOND_BUDGET, 2.5, 8.0)
        assert doc["options"]["strict_precision"] is gated and doc["summary"][IMPRECISE] == 1
        assert doc["precision"][0]["imprecise"] == 1 and doc["precision"][0]["grade"] == BEYOND_BUDGET
        assert ("--strict-precision" in record["replay"]) is gated
    assert "FAIL" not in loose.stdout and "1 imprecise" in loose.stdout  # told in the profile, not among failures
    assert "IMPRECISE" in strict.stdout  # a failure of the strict run: drawn as one
    # A merge of the reports judges each as its run was told.
    assert conform("merge", str(tmp_path / "loose.json"), "--report-json", str(tmp_path / "m1.json")).code == 0
    assert conform("merge", str(tmp_path / "strict.json"), "--report-json", str(tmp_path / "m2.json")).code == 1
    merged = json.loads((tmp_path / "m2.json").read_text())
    assert merged["summary"][IMPRECISE] == 1 and merged["precision"][0]["imprecise"] == 1


def test_an_expectation_covers_an_imprecise_case_as_xfail_only_under_strict_precision(conform, tmp_path):
    (tmp_path / "expect.yaml").write_text(
        "expectations:\n  - op: Tanh\n    case: Tanh-13/values/float\n    reason: three ULP off, on purpose\n")
    args = (*TANH_CASE, "--expect", str(tmp_path / "expect.yaml"), "--strict")
    loose = conform("run", *args, "--report-json", str(tmp_path / "loose.json"))
    strict = conform("run", *args, "--strict-precision", "--report-json", str(tmp_path / "strict.json"))
    assert loose.code == 0 and strict.code == 0, loose.stdout[-2000:] + strict.stdout[-2000:]
    loose_doc, strict_doc = (json.loads((tmp_path / p).read_text()) for p in ("loose.json", "strict.json"))
    assert loose_doc["results"][0]["outcome"] == IMPRECISE and not loose_doc["stale_expectations"]
    assert strict_doc["results"][0]["outcome"] == "xfail" and strict_doc["results"][0]["grade"] == BEYOND_BUDGET


def test_the_pytest_plugin_fails_an_imprecise_item_only_under_strict_precision(tmp_path):
    args = ["--conform-op", "Tanh", "--conform-dtype", "float", "--conform-no-hypothesis", "--conform-case",
            "Tanh-13/values/float", "--conform-backend", "imprecise", "-q", "-p", "no:cacheprovider"]

    def session(*more: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "pytest", *args, *more], cwd=tmp_path, capture_output=True,
                              text=True, timeout=600, env={**with_test_backends(), "COLUMNS": "400"})

    assert session().returncode == 0
    gated = session("--conform-strict-precision")
    assert gated.returncode == 1 and "imprecise: " in gated.stdout, gated.stdout[-2000:]


def test_verify_and_diff_count_an_imprecise_answer_as_allowed_unless_strict_precision():
    from conformance.compare import Verdict
    from conformance.differential import keeps_to_spec
    from conformance.execute import Result
    from conformance.golden import agreeing

    ex = example("Tanh", "float", [0.5])
    imprecise = Result(ex, answer(activation.TANH, ex), Verdict(IMPRECISE, "3 ULP", ulp=3.0, grade=BEYOND_BUDGET))
    assert agreeing(imprecise) and keeps_to_spec(imprecise)
    assert not agreeing(imprecise, strict_precision=True) and not keeps_to_spec(imprecise, strict_precision=True)
