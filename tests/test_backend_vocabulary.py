"""A runtime's own refusal vocabulary: declared by a backend (CONFORM_REFUSALS), given on the
command line (--refusal KIND=REGEX), reaching worker processes, listed in the report; and the
adapter of docs/gating-your-runtime.md, run as the page gives it."""

from __future__ import annotations

import importlib.util
import json
import pickle
import re
import sys
import types
from pathlib import Path

import pytest

from conformance.errors import UsageError
from conformance.runners import RunnerSpec
from conformance.runners.base import RunOutput, Vocabulary, classified
from conformance.runners.refusals import KINDS, WithRefusals, declared, parse_options, reclassified, vocabulary
from conftest import ROOT, replayed

GUIDE = ROOT / "docs" / "gating-your-runtime.md"
CLIP = ("--op", "Clip", "--opset", "13", "--no-hypothesis")
# What tests/backends/refusing.py refuses, in its own words.
REFUSED_DOUBLE = "MyRuntime: Unsupported data type DOUBLE"
REFUSED_FLOAT16 = "MyRuntime: Unsupported data type FLOAT16"
# The runner of this module's fake runtime knows this phrase (see WithRefusals: the module's VOCABULARY).
VOCABULARY = Vocabulary.literal(no_kernel=("no such kernel here",))


def allowed_kinds_named(message: str) -> bool:
    return all(kind in message for kind in ("no_kernel", "unsupported", "invalid"))


# --- the vocabulary itself ---------------------------------------------------------------------

def test_refusal_options_become_checked_pairs_in_the_order_given():
    assert parse_options(["no_kernel=Unsupported data type", "invalid=a=b", "unsupported= x"]) == (
        ("no_kernel", "Unsupported data type"), ("invalid", "a=b"), ("unsupported", " x"))


@pytest.mark.parametrize("given, said", [
    ("bogus=x", "unknown refusal kind 'bogus'"),
    ("unsupported=(", "is no regular expression"),
    ("unsupported", "takes KIND=REGEX"),
    ("invalid=", "non-empty regular expression"),
])
def test_a_bad_refusal_option_is_a_usage_error_naming_the_kinds(given, said):
    with pytest.raises(UsageError) as raised:
        parse_options([given])
    assert said in raised.value.message
    assert said.startswith(("is no", "non-empty")) or allowed_kinds_named(raised.value.message)


@pytest.mark.parametrize("table, said", [
    ({"not_supported": ["x"]}, "unknown refusal kind 'not_supported'"),
    ({"invalid": ["[a-"]}, "is no regular expression"),
    ({"invalid": [3]}, "non-empty regular expression"),
    ({"invalid": 3}, "must list regular expressions"),
    (["no_kernel", "x"], "must be a dict"),
])
def test_a_bad_declaration_names_the_backend_and_what_is_allowed(table, said):
    module = types.SimpleNamespace(CONFORM_REFUSALS=table)
    with pytest.raises(UsageError) as raised:
        declared(module, module, "my_runtime")
    assert "CONFORM_REFUSALS of backend 'my_runtime'" in raised.value.message and said in raised.value.message


def test_a_declaration_that_raises_when_read_is_the_backends_fault_said_so():
    class Raising:
        @property
        def CONFORM_REFUSALS(self):
            raise RuntimeError("not today")

    with pytest.raises(UsageError, match="CONFORM_REFUSALS of backend 'm': reading it raised RuntimeError: not today"):
        declared(Raising(), types.SimpleNamespace(), "m")


def test_a_backend_class_declaration_wins_over_its_module_and_one_string_is_one_pattern():
    module = types.SimpleNamespace(CONFORM_REFUSALS={"invalid": ["module's"]})
    backend = types.SimpleNamespace(CONFORM_REFUSALS={"unsupported": "class's"})
    assert declared(backend, module, "m:B") == (("unsupported", "class's"),)
    assert declared(types.SimpleNamespace(), module, "m:B") == (("invalid", "module's"),)
    assert declared(module, module, "m") == (("invalid", "module's"),) and declared(types.SimpleNamespace(), types.SimpleNamespace(), "m") == ()


MESSAGES = ["Exception from src/core.cpp:105:\nUnsupported data type COMPLEX64",
            "StridedSlice is typable only if axis is a const", "Input is invalid: rank 3", "something else broke"]
ADDED = vocabulary((("unsupported", r"Unsupported data type \w+"), ("no_kernel", "typable only if"),
                    ("invalid", "is invalid"), ("unsupported", "is invalid")))


@pytest.mark.parametrize("own", [Vocabulary(), Vocabulary(no_kernel=("COMPLEX",)), Vocabulary(invalid=("broke",))])
@pytest.mark.parametrize("message", MESSAGES)
def test_reading_a_refusal_again_with_added_words_is_classifying_it_with_both(own, message):
    once = classified(RuntimeError(message), own | ADDED)
    again = reclassified(classified(RuntimeError(message), own), ADDED)
    flags = lambda run: (run.error, run.unsupported, run.no_kernel, run.invalid, run.detail)
    assert flags(again) == flags(once)


def test_added_words_change_refusals_only():
    said = RunOutput.failed("Unsupported data type DOUBLE")
    assert reclassified(said, ADDED).unsupported and not reclassified(said, ADDED).no_kernel
    crashed = RunOutput.crashed("Unsupported data type DOUBLE")
    answered = RunOutput(outputs=())
    assert reclassified(crashed, ADDED) is crashed and reclassified(answered, ADDED) is answered
    assert reclassified(RunOutput.failed("nothing known"), ADDED).unsupported is False


# --- the runner spec and built-in runners ---------------------------------------------------------

def test_a_spec_keeps_its_refusals_through_a_pickle_and_refuses_bad_ones():
    spec = RunnerSpec("reference", refusals=[("no_kernel", "x+")])
    assert spec.refusals == (("no_kernel", "x+"),)  # a tuple: frozen and hashable
    assert pickle.loads(pickle.dumps(spec)) == spec and hash(spec) == hash(pickle.loads(pickle.dumps(spec)))
    with pytest.raises(UsageError) as raised:
        RunnerSpec(refusals=(("sometimes", "x"),))
    assert allowed_kinds_named(raised.value.message)


def test_a_built_in_runner_adds_the_given_words_to_its_own():
    made = RunnerSpec("reference", refusals=(("unsupported", "custom words"),)).make()
    described = made.describe()
    assert described["name"] == "onnx.reference"
    assert described["refusals"]["unsupported"] == ["custom words"]
    assert described["refusals"]["no_kernel"] and "custom words" not in described["refusals"]["no_kernel"]
    assert made.replay_options()[-2:] == ["--refusal", "unsupported=custom words"]
    assert "refusals" not in RunnerSpec("reference").make().describe()  # nothing given: the runner as it is


class _FakeRuntime:
    """A built-in runner's stand-in that refuses every model with `words`."""

    name = "fake"

    def __init__(self, words: str) -> None:
        self.words = words
        self.provider = "somewhere"

    def describe(self) -> dict:
        return {"name": self.name}

    def replay_options(self) -> list[str]:
        return ["--runner", "fake"]

    def run(self, built) -> RunOutput:
        return classified(RuntimeError(self.words), VOCABULARY)


def test_a_wrapped_runner_reads_its_refusals_with_its_own_words_and_the_given_ones():
    given = WithRefusals(_FakeRuntime("no such kernel here"), (("invalid", "kernel"),))
    run = given.run(None)
    assert run.no_kernel and run.invalid  # its own word, and the added one, both heard
    assert given.describe()["refusals"] == {"no_kernel": ["no\\ such\\ kernel\\ here"], "invalid": ["kernel"]}
    assert given.provider == "somewhere" and not hasattr(given, "run_stream")
    plain = WithRefusals(_FakeRuntime("dynamic rank"), (("unsupported", "dynamic"),)).run(None)
    assert plain.unsupported and not plain.no_kernel


# --- on the command line -----------------------------------------------------------------------

def outcomes_by_message(report: dict, fragment: str) -> set[str]:
    return {r["outcome"] for r in report["results"] if fragment in (r["message"] or "")}


def test_a_backend_declares_its_words_and_a_silent_one_fails_the_same_refusals(conform):
    types_ = ("--dtype", "double", "--dtype", "float16", "--dtype", "float")
    declaring = conform("run", *CLIP, *types_, "--backend", "refusing")
    assert outcomes_by_message(declaring.report, REFUSED_DOUBLE) == {"unsupported"}
    assert outcomes_by_message(declaring.report, REFUSED_FLOAT16) == {"unsupported"}  # refused in run(), not prepare()
    assert declaring.report["runner"]["refusals"] == {"no_kernel": ["has no kernel for"],
                                                      "unsupported": [r"Unsupported data type [A-Z0-9]+"]}
    silent = conform("run", *CLIP, *types_, "--backend", "refusing:Silent")
    assert outcomes_by_message(silent.report, REFUSED_DOUBLE) == {"fail"} and silent.code == 1
    assert "refusals" not in silent.report["runner"]
    passing = {r["id"] for r in declaring.report["results"] if r["outcome"] == "pass"}
    assert passing and passing == {r["id"] for r in silent.report["results"] if r["outcome"] == "pass"}


def test_refusals_given_on_the_command_line_reach_worker_processes_and_replays(conform, tmp_path):
    given = conform("run", *CLIP, "--dtype", "double", "--dtype", "float", "--backend", "refusing:Silent",
                    "--refusal", "unsupported=Unsupported data type", "--jobs", "2")
    refused = [r for r in given.report["results"] if REFUSED_DOUBLE in (r["message"] or "")]
    assert refused and {r["outcome"] for r in refused} == {"unsupported"}
    assert given.report["runner"]["refusals"] == {"unsupported": ["Unsupported data type"]}
    assert "--refusal 'unsupported=Unsupported data type'" in refused[0]["replay"]
    again = replayed(conform, refused[0])
    assert [r["outcome"] for r in again.report["results"]] == ["unsupported"]


def test_a_backend_declaring_an_unknown_kind_stops_the_run_before_any_case(conform):
    result = conform("run", *CLIP, "--backend", "bad_refusals")
    assert result.code == 2 and "Traceback" not in result.stderr + result.stdout
    assert "CONFORM_REFUSALS of backend 'bad_refusals': unknown refusal kind 'not_supported'" in result.stderr
    assert allowed_kinds_named(result.stderr)
    bad_option = conform("run", *CLIP, "--refusal", "nokernel=x")
    assert bad_option.code == 2 and allowed_kinds_named(bad_option.stderr) and "Traceback" not in bad_option.stderr


def test_onnxruntime_takes_added_words_too(conform):
    # onnxruntime rejects Slice-13's invalid cases ("rejected invalid input": pass); words that
    # say it has no kernel make them not judged.
    plain = conform("run", "--op", "Slice", "--opset", "13", "--no-hypothesis", "--dtype", "float")
    rejected = {r["id"] for r in plain.report["results"] if r["message"].startswith("rejected invalid input")}
    added = conform("run", "--op", "Slice", "--opset", "13", "--no-hypothesis", "--dtype", "float",
                    "--refusal", "no_kernel=ONNXRuntimeError")
    outcome = {r["id"]: r["outcome"] for r in added.report["results"]}
    assert rejected and {outcome[i] for i in rejected} == {"unsupported"}
    assert "ONNXRuntimeError" in added.report["runner"]["refusals"]["no_kernel"]
    assert "NOT_IMPLEMENTED" in added.report["runner"]["refusals"]["no_kernel"]  # onnxruntime's own, kept


def test_diff_gives_the_words_to_its_first_runner(conform, tmp_path):
    result = conform("diff", *CLIP, "--dtype", "double", "--backend", "refusing:Silent", "--against", "reference",
                     "--refusal", "unsupported=Unsupported data type", "--report-json", "d.json")
    doc = json.loads((tmp_path / "d.json").read_text())
    assert result.code in (0, 1), result.stderr
    assert doc["runner"]["first"]["refusals"] == {"unsupported": ["Unsupported data type"]}
    assert "refusals" not in doc["runner"]["second"]
    assert {r["outcome"] for r in doc["results"]} == {"unsupported"}


# --- the guide's adapter -----------------------------------------------------------------------

def guide_adapter() -> str:
    """The one ```python block after the guide's adapter marker."""
    text = GUIDE.read_text()
    after = text[text.index("<!-- adapter: my_runtime.py"):]
    return re.search(r"```python\n(.*?)```", after, re.S).group(1)


def test_the_guides_adapter_runs_clip_and_gates_to_exit_0(conform, tmp_path, monkeypatch):
    source = guide_adapter()
    assert 60 <= len(source.splitlines()) <= 100
    (tmp_path / "my_runtime.py").write_text(source)
    monkeypatch.setenv("PYTHONPATH", f"{tmp_path}")  # the guide's PYTHONPATH=.
    first = conform("run", *CLIP, "--backend", "my_runtime", "--write-expect", "mine.yaml")
    assert first.code in (0, 1), first.stderr
    report = first.report
    spec = importlib.util.spec_from_file_location("my_runtime", tmp_path / "my_runtime.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert report["runner"]["refusals"] == {kind: module.CONFORM_REFUSALS[kind] for kind in KINDS}
    unsupported = [r["message"] for r in report["results"] if r["outcome"] == "unsupported"]
    assert any("NOT_IMPLEMENTED" in m for m in unsupported)  # onnxruntime's words, declared by the adapter
    assert any("my_runtime's API cannot carry" in m for m in unsupported)  # its NotImplementedError
    assert not [r for r in report["results"] if r["message"].startswith("runtime rejected a valid input")]
    gated = conform("run", *CLIP, "--backend", "my_runtime", "--expect", "mine.yaml", "--ci")
    assert gated.code == 0, gated.stdout


def test_the_guides_vocabulary_classifies_its_runtimes_refusals(tmp_path, monkeypatch):
    (tmp_path / "my_runtime.py").write_text(guide_adapter())
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "my_runtime", raising=False)
    from conformance.runners.backend import BackendRunner

    words = BackendRunner("my_runtime").vocabulary
    graph = classified(RuntimeError("[ONNXRuntimeError] : 10 : INVALID_GRAPH : This is an invalid model."), words)
    kernel = classified(RuntimeError("[ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : Could not find an implementation"), words)
    other = classified(RuntimeError("[ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : boom"), words)
    assert graph.unsupported and graph.invalid and not graph.no_kernel
    assert kernel.no_kernel and not other.unsupported and not other.invalid
    monkeypatch.delitem(sys.modules, "my_runtime", raising=False)
