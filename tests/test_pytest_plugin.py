"""The pytest plugin: conform's cases as pytest items, judged as `conform run` judges them under the
same options, a runtime that crashes or hangs costing one item, and bad options one error line."""

import re
import subprocess
import sys
import textwrap

import pytest

from conformance.reference import covered_ops
from conftest import CRASHING, EXITING, PASSING, failing_starts, with_test_backends

FAILING = ("fail", "error", "crash", "timeout", "fallback")
SLICE_13 = ("--conform-op", "Slice", "--conform-opset", "13", "--conform-no-hypothesis")


def pytest_session(tmp_path, *args: str) -> subprocess.CompletedProcess:
    """`pytest ARGS` in tmp_path, as a user's CI runs it, the test backends importable."""
    env = {**with_test_backends(), "COLUMNS": "400"}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600, env=env)


def counts_of(completed: subprocess.CompletedProcess) -> dict[str, int]:
    line = completed.stdout.strip().splitlines()[-1]
    return {kind: int(n) for n, kind in re.findall(r"(\d+) (passed|failed|skipped|xfailed)", line)}


def pytest_counts(tmp_path, *args: str) -> dict[str, int]:
    return counts_of(pytest_session(tmp_path, *args))


def as_pytest_counts(results: list[dict], failing: tuple[str, ...] = FAILING) -> dict[str, int]:
    """What pytest should count for these `conform run` results: failed, passed, skipped."""
    outcomes = [r["outcome"] for r in results]
    counts = {"failed": sum(o in failing for o in outcomes),
              "skipped": sum(o in ("unsupported", "skipped") and o not in failing for o in outcomes),
              "passed": sum(o in ("pass", "ambiguous", "lenient", "imprecise", "xpass") and o not in failing for o in outcomes)}
    return {kind: n for kind, n in counts.items() if n}


def as_plugin_options(options: tuple[str, ...]) -> list[str]:
    """`run`'s options as the plugin spells them: each --NAME as --conform-NAME, values as they are."""
    return [f"--conform-{word[2:]}" if word.startswith("--") else word for word in options]


def test_pytest_plugin_reports_the_same_counts_as_conform_run(conform, tmp_path):
    run = conform("run", "--op", "Slice", "--opset", "13", "--no-hypothesis")
    assert pytest_counts(tmp_path, *SLICE_13) == as_pytest_counts(run.report["results"])


@pytest.mark.parametrize("options", [
    ("--dtype", "float", "--mode", "all"),
    # --max-elements 6: some cases too large, skipped as run skips them
    ("--dtype", "uint8", "--runner", "reference", "--max-elements", "6"),
    # --refusal unsupported=.: every rejection unsupported, not a pass
    ("--dtype", "int64", "--optimizations", "both", "--refusal", "unsupported=.", "--no-hypothesis"),
    ("--dtype", "double", "--no-yaml", "--examples", "5", "--seed", "3", "--shapes", "static"),
])
def test_pytest_plugin_takes_runs_options_and_counts_as_run_does(conform, tmp_path, options):
    run = conform("run", "--op", "Slice", "--opset", "13", *options)
    plugin = as_plugin_options(options)
    assert pytest_counts(tmp_path, "--conform-op", "Slice", "--conform-opset", "13", *plugin) == as_pytest_counts(run.report["results"])


def test_pytest_plugin_reruns_one_item_by_the_id_its_failure_names(tmp_path):
    case = "Slice-13/negative_step_int_max_end/float/int32"  # onnxruntime gets it wrong
    session = pytest_session(tmp_path, *SLICE_13, "--conform-case", case, "--conform-case", "Slice-13/negative_end/float/int64")
    assert counts_of(session) == {"failed": 1, "passed": 1}, session.stdout
    assert f"FAILED ::{case} - fail:" in session.stdout, "the id the failure shows is the one to pass back"


def test_pytest_plugin_leaves_no_hypothesis_folder_in_the_users_project(tmp_path):
    # Drawing Clip's cases, hypothesis caches the constants of conform's source under .hypothesis/
    # in the working folder: a user's project, where the plugin runs.
    session = pytest_session(tmp_path, "--conform-op", "Clip", "--conform-opset", "13", "--conform-examples", "3")
    assert counts_of(session).get("passed"), session.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == [], "conform's draws store nothing in the user's project"


def test_pytest_plugin_names_the_mode_and_level_of_an_item_where_there_are_several(tmp_path):
    collected = pytest_session(tmp_path, *SLICE_13, "--conform-dtype", "float", "--conform-mode", "all",
                               "--conform-optimizations", "both", "--collect-only", "-k", "negative_end and int64")
    names = set(re.findall(r"::(\S+)", collected.stdout))
    assert {f"{PASSING}[{mode},optimizations-{level}]" for mode in ("input", "initializer", "constant")
            for level in ("on", "off")} <= names
    one = pytest_session(tmp_path, *SLICE_13, "--conform-dtype", "float", "--collect-only", "-k", "negative_end and int64")
    assert PASSING in set(re.findall(r"::(\S+)", one.stdout))


def test_pytest_plugin_a_crash_or_hang_fails_its_item_and_the_session_goes_on(conform, tmp_path):
    # The runtime ran in pytest's own process: the first case that crashed it ended the session
    # (killed by SIGSEGV, no summary), and a hang hung it.
    options = ("--dtype", "float", "--backend", "crashy", "--timeout", "2")
    run = conform("run", "--op", "Slice", "--opset", "13", "--no-hypothesis", *options)
    int64 = [r for r in run.report["results"] if r["id"].endswith("/int64")]
    assert {"crash", "timeout", "pass"} <= {r["outcome"] for r in int64}
    session = pytest_session(tmp_path, *SLICE_13, *as_plugin_options(options),
                             "-k", "int64", "-rfp")
    assert session.returncode == pytest.ExitCode.TESTS_FAILED, session.stdout[-2000:] + session.stderr[-2000:]
    assert counts_of(session) == as_pytest_counts(int64)
    assert re.search(rf"FAILED ::{CRASHING} - crash: the runtime's worker process died: killed by signal SIGSEGV", session.stdout)
    assert re.search(rf"FAILED ::{EXITING} - crash: the runtime's worker process died: exited with code 7", session.stdout)
    assert re.search(r"FAILED ::Slice-13/start_beyond_dim/float/int64 - timeout: no answer within 2 s", session.stdout)
    [hung] = [r for r in int64 if r["outcome"] == "timeout"]
    assert f"replay: {hung['replay']}" in session.stdout and "--timeout 2" in hung["replay"]  # the run's replay, timeout and all
    assert f"PASSED ::{PASSING}" in session.stdout


@pytest.mark.parametrize("option, outcome, case, unless", [
    ("--conform-strict-validation", "lenient", "Slice-10/negative_axis_before_11/float/int64", "passed"),
    ("--conform-fail-on-unsupported", "unsupported", "Slice-13/omitted_axes_full_rank/complex64/int64", "skipped"),
])
def test_pytest_plugin_an_option_that_makes_an_outcome_fail_a_run_fails_its_item(tmp_path, option, outcome, case, unless):
    version, name, dtype, _ = case.split("/")
    args = ("--conform-op", "Slice", "--conform-opset", version.split("-")[1], "--conform-no-hypothesis",
            "--conform-dtype", dtype, "-k", f"{name} and int64", "-rfp")
    assert pytest_counts(tmp_path, *args) == {unless: 1}
    gated = pytest_session(tmp_path, *args, option)
    assert counts_of(gated) == {"failed": 1} and f"FAILED ::{case} - {outcome}: " in gated.stdout


ONE_CASE_FILE = """\
op: Slice
cases:
  - name: mine
    spec: a case of the user's own, that onnxruntime passes
    versions: [13]
    dtypes: [float]
    types: {Tind: [int64]}
    inputs: {data: [1, 2, 3, 4], starts: [1], ends: [3]}
  - name: also_mine
    spec: another
    versions: [13]
    dtypes: [float]
    types: {Tind: [int64]}
    inputs: {data: [1, 2, 3, 4], starts: [0], ends: [2]}
"""


def test_pytest_plugin_under_strict_an_xpass_fails_its_item_and_a_stale_expectation_the_session(tmp_path):
    (tmp_path / "mine.yaml").write_text(ONE_CASE_FILE)
    (tmp_path / "expect.yaml").write_text(textwrap.dedent("""\
        expectations:
          - {op: Slice, case: Slice-13/mine/float/int64, reason: was broken once}
          - {op: Slice, match: no_such_case, reason: gone}
        """))
    args = ("--conform-op", "Slice", "--conform-no-hypothesis", "--conform-only-cases", "mine.yaml", "--conform-expect", "expect.yaml",
            "-rfp")
    loose = pytest_session(tmp_path, *args)
    stale = "conform: STALE expectation at expect.yaml:3 matches no case: gone"
    assert loose.returncode == 0 and counts_of(loose) == {"passed": 2} and stale in loose.stdout
    strict = pytest_session(tmp_path, *args, "--conform-strict")
    assert strict.returncode == pytest.ExitCode.TESTS_FAILED and counts_of(strict) == {"failed": 1, "passed": 1}
    assert "FAILED ::Slice-13/mine/float/int64 - xpass: passes, but is listed as a known deviation" in strict.stdout
    assert f"{stale} (fails the session under --conform-strict)" in strict.stdout
    # Only the stale entry fails the session: without the xpass, it exits 1 all the same.
    alone = pytest_session(tmp_path, *args, "--conform-strict", "-k", "also_mine")
    assert counts_of(alone) == {"passed": 1} and "stale expectations not judged: 1 of 2 conform items ran" in alone.stdout
    assert alone.returncode == 0  # not every item ran: a stale entry may only lack its cases
    (tmp_path / "expect.yaml").write_text("expectations:\n  - {op: Slice, match: no_such_case, reason: gone}\n")
    only_stale = pytest_session(tmp_path, *args, "--conform-strict")
    assert counts_of(only_stale) == {"passed": 2} and only_stale.returncode == pytest.ExitCode.TESTS_FAILED


def test_pytest_plugin_failures_show_the_diff(tmp_path):
    completed = pytest_session(tmp_path, *SLICE_13, "-k", "negative_step_int_max_end and float")
    assert "values differ" in completed.stdout or "expected float" in completed.stdout
    assert "replay: conform run --op Slice --opset 13" in completed.stdout
    # What the console's panel says: what was expected and what came back, not the inputs alone.
    assert "expected (spec): float[4, 0] []" in completed.stdout and "actual: float[4, 5] [4.0, 3.0" in completed.stdout
    # The outcome line once, first (pytest's summary quotes it), where the panel's text repeated it.
    failures = completed.stdout.split("= FAILURES =")[1].split("short test summary")[0]
    items = re.split(r"^_+ \S+ _+$", failures, flags=re.M)[1:]
    assert items
    for item in items:
        first, *rest = item.strip().splitlines()
        assert first.startswith("fail: ") and not any(line.startswith("fail: ") for line in rest), item


@pytest.mark.parametrize("options, message", [
    (("--conform-op", "Nope"), f"ERROR: conform: unknown op 'Nope' (covered: {', '.join(covered_ops())})"),
    (("--conform-op", "Slice", "--conform-provider", "cuda"), "ERROR: conform: provider 'cuda' (CUDAExecutionProvider) not available"),
    (("--conform-op", "Slice", "--conform-mode", "inputs"),
     "ERROR: conform: --conform-mode takes one of input, initializer, constant or all, not 'inputs'"),
    (("--conform-op", "Slice", "--conform-opset", "13", "--conform-dtype", "float8e4m3fn"),
     "ERROR: conform: dtype 'float8e4m3fn' is not allowed by Slice-13 (allowed: bfloat16, bool, "),
    (("--conform-op", "Slice", "--conform-shapes", "both"),
     "ERROR: conform: --conform-shapes takes symbolic or static, not 'both'"),
    (("--conform-op", "Slice", "--conform-refusal", "sometimes=x"), "ERROR: conform: --conform-refusal sometimes=x: "),
    (("--conform-op", "Slice", "--conform-timeout", "0"), "ERROR: conform: --conform-timeout takes seconds from 0.1 to 86400, not 0"),
    (("--conform-op", "Slice", "--conform-max-elements", "0"), "ERROR: conform: --conform-max-elements takes a count of at least 1, not 0"),
    (("--conform-op", "Slice", "--conform-only-cases", "missing.yaml"), "ERROR: conform: missing.yaml: no such case file or folder"),
    (("--conform-op", "Slice", "--conform-cases", "bad.yaml"), "ERROR: conform: bad.yaml:4: unknown key 'dtypse' (did you mean 'dtypes'?)"),
    (("--conform-op", "Slice", "--conform-case", "Slice-13/no_such_case/float/int64"),
     "ERROR: conform: no case with id Slice-13/no_such_case/float/int64"),
    # conform's options, named as the plugin names them: pytest has no --no-yaml.
    (("--conform-op", "Slice", "--conform-no-yaml", "--conform-no-hypothesis"),
     "ERROR: conform: nothing to run: --conform-no-yaml and --conform-no-hypothesis together leave no source of cases"),
])
def test_pytest_plugin_bad_options_are_one_error_line_not_an_internal_error(tmp_path, options, message):
    (tmp_path / "bad.yaml").write_text("op: Slice\ncases:\n  - name: x\n    dtypse: [float]\n")
    completed = pytest_session(tmp_path, *options)
    output = completed.stdout + completed.stderr
    assert completed.returncode == pytest.ExitCode.USAGE_ERROR, output
    assert message in output and "INTERNALERROR" not in output and "Traceback" not in output


def test_pytest_plugin_a_runtime_no_worker_can_load_stops_the_session_with_one_line(tmp_path, monkeypatch):
    for name, value in failing_starts(tmp_path / "loads.txt").items():
        monkeypatch.setenv(name, value)
    completed = pytest_session(tmp_path, *SLICE_13, "--conform-backend", "fails_starting")
    output = completed.stdout + completed.stderr
    assert completed.returncode == pytest.ExitCode.USAGE_ERROR, output
    assert "conform: the runtime could not be loaded in a worker process: two workers in a row failed to load it" in output
    assert "run with --conform-no-isolation to load it in this process" in output and " --no-isolation" not in output
    assert "Traceback" not in output and "INTERNALERROR" not in output
    assert 2 <= len((tmp_path / "loads.txt").read_text().splitlines()) <= 3  # two workers tried (and a spare), not one an item


def test_pytest_plugin_examples_0_draws_no_hypothesis_case(tmp_path):
    drawn_none = pytest_counts(tmp_path, "--conform-op", "Clip", "--conform-opset", "13", "--conform-examples", "0")
    yaml_only = pytest_counts(tmp_path, "--conform-op", "Clip", "--conform-opset", "13", "--conform-no-hypothesis")
    assert drawn_none == yaml_only


def test_pytest_plugin_an_entry_covers_what_the_options_make_failing_in_the_levels_it_names(tmp_path):
    # Under --conform-strict-validation an entry for a lenient case left its item failed; and the
    # session took every item for one at the first runner's level, so an entry about the other
    # level was never judged stale.
    lenient = "Slice-10/negative_axis/float/int64"  # onnxruntime accepts a negative axis before Slice-11
    (tmp_path / "mine.yaml").write_text(textwrap.dedent("""\
        op: Slice
        cases:
          - {name: negative_axis, spec: no meaning before Slice-11, versions: [10], dtypes: [float], types: {Tind: [int64]},
             inputs: {data: [[1, 2], [3, 4]], starts: [0], ends: [1], axes: [-1]}, expect: {error: negative-axis}}
        """))
    (tmp_path / "expect.yaml").write_text(textwrap.dedent(f"""\
        expectations:
          - {{op: Slice, case: {lenient}, optimizations: off, reason: accepts a negative axis}}
          - {{op: Slice, optimizations: off, match: no_such_case, reason: gone}}
        """))
    args = ("--conform-op", "Slice", "--conform-opset", "10", "--conform-no-hypothesis", "--conform-only-cases", "mine.yaml",
            "--conform-strict-validation", "--conform-optimizations", "both", "--conform-expect", "expect.yaml", "--conform-strict", "-rfx")
    session = pytest_session(tmp_path, *args)
    assert counts_of(session) == {"failed": 1, "xfailed": 1}
    assert f"FAILED ::{lenient}[optimizations-on] - lenient: " in session.stdout
    assert f"XFAIL ::{lenient}[optimizations-off] - expected deviation: accepts a negative axis" in session.stdout
    assert "conform: STALE expectation at expect.yaml:3 matches no case: gone" in session.stdout
    assert "STALE expectation at expect.yaml:2" not in session.stdout and session.returncode == pytest.ExitCode.TESTS_FAILED


def test_pytest_plugin_an_entry_about_cases_its_dtype_left_out_is_not_stale(tmp_path):
    # Under --conform-strict, a session of float cases failed on an entry about int64 cases.
    (tmp_path / "expect.yaml").write_text(textwrap.dedent("""\
        expectations:
          - {op: Clip, dtypes: [int64], when: int64-beyond-int32, reason: int64 beyond int32 left unclipped}
          - {op: Clip, dtypes: [float], when: nan-bound, reason: no runtime here deviates on these}
          - {op: Clip, runner: cdua, when: nan-bound, reason: a runner misspelt}
          - {op: Clip, optimizations: off, when: nan-bound, reason: only without graph optimizations}
        """))
    args = ("--conform-op", "Clip", "--conform-opset", "13", "--conform-dtype", "float", "--conform-no-hypothesis",
            "--conform-expect", "expect.yaml", "--conform-strict")
    session = pytest_session(tmp_path, *args)
    assert "conform: STALE expectation at expect.yaml:3" in session.stdout and "expect.yaml:2" not in session.stdout
    # Told as `conform run` tells them, in the plugin's terms: neither stale nor silently dead.
    assert ("conform: 1 expectation matched no case and was not judged stale: --conform-dtype left out cases they may match"
            in session.stdout)
    assert "conform: 1 expectation for other runners, not judged here: cdua" in session.stdout
    assert ("conform: 1 expectation for input modes or optimization levels this run did not have, not judged here: "
            "--conform-optimizations off") in session.stdout
    assert session.returncode == pytest.ExitCode.TESTS_FAILED
    (tmp_path / "expect.yaml").write_text("expectations:\n  - {op: Clip, dtypes: [int64], when: int64-beyond-int32, reason: x}\n")
    assert pytest_session(tmp_path, *args).returncode == pytest.ExitCode.OK


def test_pytest_plugin_under_xdist_judges_the_expectations_over_every_worker(tmp_path):
    # Under `pytest -n 2` no stale entry was told and none failed the session: each worker ran only
    # some of the items, so none judged, and the controller, which runs none, knew nothing of them.
    (tmp_path / "expect.yaml").write_text(textwrap.dedent("""\
        expectations:
          - {op: Clip, dtypes: [int64], when: int64-beyond-int32, reason: int64 beyond int32 left unclipped}
          - {op: Clip, dtypes: [int64], match: "no_such*", reason: gone}
          - {op: Clip, runner: cdua, when: nan-bound, reason: a runner misspelt}
        """))
    args = ("--conform-op", "Clip", "--conform-opset", "13", "--conform-dtype", "int64",
            "--conform-no-hypothesis", "--conform-expect", "expect.yaml", "--conform-strict")
    alone, spread = pytest_session(tmp_path, *args), pytest_session(tmp_path, *args, "-n", "2")
    assert counts_of(spread) == counts_of(alone) and counts_of(spread)["xfailed"] >= 1
    for session in (alone, spread):
        told = [line for line in session.stdout.splitlines() if line.startswith("conform: ")]
        assert told == ["conform: STALE expectation at expect.yaml:3 matches no case: gone (fails the session under --conform-strict)",
                        "conform: 1 expectation for other runners, not judged here: cdua"], session.stdout[-2000:]
        assert session.returncode == pytest.ExitCode.TESTS_FAILED
    part = pytest_session(tmp_path, *args, "-n", "2", "-k", "not rank0_input")
    assert re.search(r"conform: stale expectations not judged: (\d+) of \1", part.stdout) is None
    assert re.search(r"conform: stale expectations not judged: \d+ of \d+ conform items ran", part.stdout)
    assert part.returncode == pytest.ExitCode.OK
