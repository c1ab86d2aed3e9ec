"""What a runner declares its runtime needs of a model (runners.base.ModelNeeds), and the line that
ends a run whose cases were mostly unsupported, so that a run which judged little never ends quietly."""

from __future__ import annotations

import sys

import pytest

from conformance.compare import FAIL, PASS, UNSUPPORTED, Verdict
from conformance.execute import Result, RunOptions, select_examples
from conformance.reference.base import Expected
from conformance.report.hints import unjudged_line
from conformance.runners import RunnerSpec
from conformance.runners.base import ModelNeeds


def test_tract_declares_static_shapes_and_initializers_read_without_importing_tract(monkeypatch):
    monkeypatch.setitem(sys.modules, "tract", None)  # an import of it raises ImportError
    needs = RunnerSpec("tract").model_needs()
    assert (needs.shapes, needs.mode, needs.words()) == ("static", "initializer", "static shapes, initializer inputs")
    assert "load time" in needs.reason


@pytest.mark.parametrize("spec", [RunnerSpec("openvino"), RunnerSpec("onnxruntime"), RunnerSpec("reference"),
                                  RunnerSpec(backend="static_only")])
def test_runtimes_that_compile_symbolic_dims_declare_no_needs(spec):
    assert spec.model_needs() == ModelNeeds() and ModelNeeds().words() == ""


# ---- the line that ends a run of mostly unsupported cases ------------------------------------

SYMBOLIC_REFUSAL = "Caused by: 2: Impossible to unify Sym(starts_d0) with Sym(ends_d0)."


@pytest.fixture(scope="module")
def slice_cases():
    return select_examples(RunOptions(op="Slice", opset=13, dtypes=("float",), use_hypothesis=False))[:10]


def result(example, outcome: str, message: str = "", **extra) -> Result:
    return Result(example, Expected(readings=()), Verdict(outcome, message), extra=extra)


def test_most_cases_refused_for_symbolic_dims_point_to_static_shapes(slice_cases):
    results = [result(e, UNSUPPORTED, SYMBOLIC_REFUSAL) for e in slice_cases[:9]] + [result(slice_cases[9], PASS)]
    assert unjudged_line(results, "tract") == ("9 of 10 cases unsupported: most of the run was not judged "
                                               "(tract refuses symbolic dims; try --shapes static)")


def test_refusals_of_both_kinds_name_both_options_not_yet_used(slice_cases):
    constant = "StridedSlice is typable only if stride is a const"
    results = [result(e, UNSUPPORTED, SYMBOLIC_REFUSAL if i % 2 else constant) for i, e in enumerate(slice_cases)]
    assert unjudged_line(results).endswith("(the runtime refuses symbolic dims and non-constant inputs; "
                                           "try --shapes static and --mode initializer)")
    static = [result(e, UNSUPPORTED, constant, shapes="static", mode="input") for e in slice_cases]
    assert unjudged_line(static).endswith("(the runtime refuses non-constant inputs; try --mode initializer)")


def test_other_refusals_are_told_by_the_most_common_one(slice_cases):
    results = [result(e, UNSUPPORTED, "cannot carry bfloat16" if i < 7 else "no kernel for Slice") for i, e in enumerate(slice_cases)]
    assert unjudged_line(results) == ("10 of 10 cases unsupported: most of the run was not judged "
                                      "(the most common refusal, 7 of them: cannot carry bfloat16)")
    # Refused for symbolic dims with static shapes already used: no option left to try.
    tried = [result(e, UNSUPPORTED, SYMBOLIC_REFUSAL, shapes="static", mode="initializer") for e in slice_cases]
    assert unjudged_line(tried).endswith(f"(the most common refusal, 10 of them: {SYMBOLIC_REFUSAL})")


def test_half_or_fewer_unsupported_or_failures_give_no_line(slice_cases):
    half = [result(e, UNSUPPORTED if i % 2 else PASS, SYMBOLIC_REFUSAL) for i, e in enumerate(slice_cases)]
    failing = [result(e, FAIL, SYMBOLIC_REFUSAL) for e in slice_cases]  # judged: a refusal of a valid case fails it
    assert unjudged_line(half) is None and unjudged_line(failing) is None and unjudged_line([]) is None


# ---- on the command line, with an engine that refuses symbolic dims ---------------------------

# static_only refuses symbolic dims ("has a dynamic shape") and index inputs that are not constants;
# declared as `unsupported`, those refusals judge nothing.
SLICE_13 = ("run", "--op", "Slice", "--opset", "13", "--dtype", "float", "--no-hypothesis", "--backend", "static_only",
            "--jobs", "1", "--refusal", "unsupported=has a dynamic shape|is not a constant")


def test_a_run_of_refusals_ends_saying_most_of_it_was_not_judged(conform):
    refused = conform(*SLICE_13)
    summary = refused.report["summary"]
    assert summary["unsupported"] == summary["total"] > 0 and refused.code == 0
    assert refused.stdout.splitlines()[-1] == (
        f"warning: {summary['total']:,} of {summary['total']:,} cases unsupported: most of the run was not judged "
        "(backend:static_only refuses symbolic dims; try --shapes static)")
    assert "conformant" not in refused.stdout
    gated = conform(*SLICE_13, "--fail-on-unsupported")
    assert gated.code == 1 and gated.stdout.splitlines()[-1].startswith("warning: ")


def test_a_run_that_judged_its_cases_has_no_such_line(conform):
    judged = conform(*SLICE_13, "--shapes", "static", "--mode", "initializer")
    summary = judged.report["summary"]
    assert summary["pass"] * 2 > summary["total"], summary
    assert "warning:" not in judged.stdout and "not judged" not in judged.stdout.splitlines()[-1]
