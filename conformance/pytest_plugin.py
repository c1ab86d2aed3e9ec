"""pytest plugin: `pytest --conform-op Slice --conform-opset 13` turns conform's cases into pytest items.

Loaded through the `pytest11` entry point when conform is installed (or with `-p
conformance.pytest_plugin`, or `pytest_plugins = ["conformance.pytest_plugin"]` in a conftest.py).
Without `--conform-op` it adds nothing. Its options are `conform run`'s, prefixed `--conform-`, and
judge as `run` does: the runtime runs in a worker process (a case that crashes or hangs it fails
its item as a crash or timeout, and the session goes on), an item fails where its outcome fails a
run under the same options (with what the console report's panel shows of the case: inputs, expected and actual outputs, the diff, the replay command),
unsupported cases skip, expected deviations xfail, an imprecise case passes unless
`--conform-strict-precision`, and under `--conform-strict` an xpass fails its item and a stale
expectation fails the session. Under pytest-xdist (`-n N`) each worker sends what
its items ran to the controller (a `Tally`), which judges the expectations for the whole session.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:  # imported where the plugin is used, not whenever pytest starts
    from .execute import RunOptions
    from .runners import Runner

OPTIONS = (
    ("--conform-op", {"help": "Run conform's cases of this op as pytest items."}),
    ("--conform-opset", {"type": int, "help": "The version in force at this opset (default: every version)."}),
    ("--conform-dtype", {"action": "append", "default": [], "help": "Only these dtypes (repeatable)."}),
    ("--conform-case", {"action": "append", "default": [],
                        "help": "Only the case with this id (repeatable): an item's name, as a failure names it."}),
    ("--conform-provider", {"default": "cpu", "help": "onnxruntime provider: cpu, cuda or dml."}),
    ("--conform-backend", {"help": "An onnx.backend-style MODULE[:ATTRIBUTE] to test instead."}),
    ("--conform-runner", {"default": "onnxruntime",
                          "help": "onnxruntime, reference (onnx.reference), openvino or tract."}),
    ("--conform-refusal", {"action": "append", "default": [], "metavar": "KIND=REGEX",
                           "help": "Add to the runner's refusal vocabulary (KIND: no_kernel, unsupported, invalid; repeatable)."}),
    ("--conform-examples", {"type": int, "help": "Hypothesis examples per op version x dtype."}),
    ("--conform-seed", {"type": int, "default": 0, "help": "Hypothesis seed."}),
    ("--conform-no-hypothesis", {"action": "store_true", "help": "Only the YAML cases."}),
    ("--conform-no-yaml", {"action": "store_true", "help": "Only the hypothesis cases."}),
    ("--conform-cases", {"action": "append", "default": [], "help": "Extra case files or folders (repeatable)."}),
    ("--conform-only-cases", {"action": "append", "default": [],
                              "help": "Use only these case files or folders, not the built-in ones (repeatable)."}),
    ("--conform-mode", {"default": "input", "help": "Non-data inputs as input|initializer|constant|all."}),
    ("--conform-shapes", {"default": "symbolic", "help": "Graph inputs' dims: symbolic, or static (each case's own)."}),
    ("--conform-optimizations", {"default": "on", "help": "onnxruntime graph optimizations: on|off|both."}),
    ("--conform-strict-zero", {"action": "store_true", "help": "Tell +0.0 from -0.0."}),
    ("--conform-strict-validation", {"action": "store_true", "help": "Fail when a runtime accepts invalid input."}),
    ("--conform-fail-on-unsupported", {"action": "store_true", "help": "Fail on unsupported cases."}),
    ("--conform-strict-precision", {"action": "store_true",
                                    "help": "Fail an imprecise case (beyond its precision budget, within its wrong-answer line)."}),
    ("--conform-expect", {"help": "Expectations file of known deviations."}),
    ("--conform-strict", {"action": "store_true", "help": "An xpass fails its item; a stale expectation fails the session."}),
    ("--conform-timeout", {"type": float, "help": "Seconds a case may take before it is a timeout (default: as conform run's)."}),
    ("--conform-max-elements", {"type": int, "help": "Skip cases whose output would be larger (default: as conform run's)."}),
    ("--conform-no-isolation", {"action": "store_true",
                                "help": "Run the runtime in pytest's process (a crash ends the session)."}),
    ("--conform-memory-limit", {"type": int, "help": "MiB of memory each worker process may allocate "
                                                     "(default: half this machine's memory, at least 2048; 0: no limit)."}),
)


def in_plugin_terms(message: str) -> str:
    """A message of conform's, its `run` options named as this plugin names them: the advice "run
    with --no-isolation" is `--conform-no-isolation` here (pytest has no `--no-isolation`)."""
    names = {name for name, _ in OPTIONS}

    def renamed(option: re.Match) -> str:
        prefixed = f"--conform-{option[1]}"
        return prefixed if prefixed in names else option[0]

    return re.sub(r"(?<![\w-])--([a-z][a-z-]*)", renamed, message)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("conform", "ONNX operator conformance (conform)")
    for name, settings in OPTIONS:
        group.addoption(name, **settings)


@dataclass
class Tally:
    """What a session's conform items ran, as judging its expectations needs it: how many of how
    many, the index of each entry that matched a case as it says, and the case ids and variants
    (`ran_variants`) that ran. Plain data: an xdist worker sends its own, the controller adds them up."""

    items: int
    ran_count: int = 0
    used: set[int] = field(default_factory=set)
    ran: set[tuple] = field(default_factory=set)
    ran_ids: set[str] = field(default_factory=set)
    runner_info: dict = field(default_factory=dict)

    def sent(self) -> dict:
        """As execnet carries it between processes (lists, not sets)."""
        return {"items": self.items, "ran_count": self.ran_count, "used": sorted(self.used),
                "ran": [list(variant) for variant in self.ran], "ran_ids": sorted(self.ran_ids), "runner_info": self.runner_info}

    def count(self, result, runner_info: dict, used: int | None) -> None:
        """Count in an item's result and the entry it counts as a match of (`judge_result`)."""
        from .expectations import variant_of

        self.ran_count += 1
        self.ran.add(variant_of(result, runner_info))
        self.ran_ids.add(result.example.id)
        if used is not None:
            self.used.add(used)

    def add(self, sent: dict) -> None:
        """Count in a worker's tally (as `sent`)."""
        self.items = max(self.items, sent["items"])
        self.ran_count += sent["ran_count"]
        self.used.update(sent["used"])
        self.ran.update(tuple(variant) for variant in sent["ran"])
        self.ran_ids.update(sent["ran_ids"])
        self.runner_info = self.runner_info or sent["runner_info"]


@dataclass(eq=False)
class ConformSession:
    """What a session's conform items share: the run's options, a runner per optimization level,
    the expectations and the outcomes that fail an item; and the tally of what its items ran, from
    which the stale expectations are found once every item has run. On an xdist controller, which
    runs no item, it has no runner, and its tally adds up the workers'."""

    options: RunOptions
    runners: dict[str, Runner]  # by optimization level
    expectations: list
    failing: frozenset[str]
    strict: bool
    tally: Tally
    _unmatched: tuple[list, list] | None = field(default=None, init=False)

    def close(self) -> None:
        for runner in self.runners.values():
            close = getattr(runner, "close", None)
            if close is not None:
                close()

    def unmatched(self) -> tuple[list, list] | None:
        """The expectations no case matched, as a run judges them: stale, and not judged (the
        session's options left out cases they may match); None when not every item ran (then any
        could be stale only for want of its cases). Worked out once, when every item has run."""
        from .expectations import judge_unmatched, unmatched_entries

        tally = self.tally
        if not self.expectations or tally.ran_count < tally.items:
            return None
        if self._unmatched is None:
            unmatched = unmatched_entries(self.expectations, tally.used, tally.ran, tally.runner_info)
            self._unmatched = judge_unmatched(unmatched, self.options, tally.ran_ids)
        return self._unmatched


SESSION = pytest.StashKey[ConformSession]()


class ConformItem(pytest.Item):
    """One conform case, in one input mode at one optimization level, as a pytest test."""

    def __init__(self, *, example, mode: str, level: str, conform: ConformSession, **kwargs) -> None:
        super().__init__(**kwargs)
        self.example, self.mode, self.level, self.conform = example, mode, level, conform

    def runtest(self) -> None:
        from .errors import ConformError
        from .execute import at_level, run_one
        from .expectations import judge_result

        conform = self.conform
        runner = conform.runners[self.level]
        try:
            result = at_level(run_one(self.example, runner, conform.options, self.mode), self.level, len(conform.runners))
        except ConformError as error:  # the runtime cannot be loaded at all: no case can run
            pytest.exit(f"conform: {in_plugin_terms(error.message)}", returncode=pytest.ExitCode.USAGE_ERROR)
        info = runner.describe()
        result, used = judge_result(result, conform.expectations, info, conform.failing, conform.strict)
        conform.tally.count(result, info, used)
        self.user_properties.append(("outcome", result.outcome))
        if result.outcome in conform.failing:
            raise ConformFailure(result)
        if result.outcome == "xfail":
            pytest.xfail(result.verdict.message)
        if result.outcome in ("unsupported", "skipped"):
            pytest.skip(f"{result.outcome}: {result.verdict.message}")

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, ConformFailure):
            return excinfo.value.describe()
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.example.source, None, self.name


class ConformFailure(AssertionError):
    """A case the runtime got wrong; `describe` is the diff a person reads."""

    def __init__(self, result) -> None:
        super().__init__(result.verdict.message)
        self.result = result

    def describe(self) -> str:
        """The outcome first (pytest's summary line quotes it), then what the console report's
        panel says of the case, and the commands that replay it."""
        from .report.console import failure_text, replay_lines

        result = self.result
        return "\n".join([f"{result.outcome}: {result.verdict.message}", failure_text(result, verdict_line=False).plain,
                          *replay_lines(result)])


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list) -> None:
    if not config.getoption("--conform-op"):
        return
    from .errors import ConformError

    try:
        conform = _conform_session(config)
        config.add_cleanup(conform.close)
        added = _items(session, conform)  # reads the case files: a missing or malformed one is a usage error too
    except ConformError as error:
        # pytest prints a UsageError as one "ERROR:" line and exits 4, where any other exception
        # would be an INTERNALERROR traceback.
        raise pytest.UsageError(f"conform: {in_plugin_terms(error.message)}") from None
    config.stash[SESSION] = conform
    conform.tally.items = len(added)
    items.extend(added)


def _conform_session(config: pytest.Config, with_runners: bool = True) -> ConformSession:
    from . import casefile, strategies
    from .dtypes import dtype
    from .execute import DEFAULT_MAX_ELEMENTS, RunOptions, parse_choice, parse_shapes
    from .expectations import load
    from .model import MODES
    from .reference import for_op
    from .report import gate_record, recorded_gate
    from .runners import DEFAULT_TIMEOUT, MAX_TIMEOUT, MIN_TIMEOUT, OPTIMIZATIONS, make_runner
    from .runners.refusals import parse_options as parse_refusals
    from .errors import UsageError
    from .lifetime import limit_worker_memory

    option = config.getoption
    memory_limit = option("--conform-memory-limit")
    if memory_limit is not None and memory_limit < 0:
        raise UsageError(f"--conform-memory-limit takes MiB, at least 0 (no limit), not {memory_limit}")
    limit_worker_memory(memory_limit)
    examples, timeout = option("--conform-examples"), option("--conform-timeout")
    timeout = DEFAULT_TIMEOUT if timeout is None else timeout
    if not MIN_TIMEOUT <= timeout <= MAX_TIMEOUT:
        raise UsageError(f"--conform-timeout takes seconds from {MIN_TIMEOUT} to {MAX_TIMEOUT}, not {timeout:g}")
    max_elements = option("--conform-max-elements")
    max_elements = DEFAULT_MAX_ELEMENTS if max_elements is None else max_elements
    if max_elements < 1:
        raise UsageError(f"--conform-max-elements takes a count of at least 1, not {max_elements}")
    options = RunOptions(
        op=for_op(option("--conform-op")).op, opset=option("--conform-opset"),
        dtypes=tuple(dtype(name).name for name in option("--conform-dtype")),
        strict_zero=option("--conform-strict-zero"),
        case_roots=casefile.case_roots(map(Path, option("--conform-cases")), map(Path, option("--conform-only-cases"))),
        use_yaml=not option("--conform-no-yaml"), use_hypothesis=not option("--conform-no-hypothesis"),
        examples=strategies.DEFAULT_EXAMPLES if examples is None else examples, seed=option("--conform-seed"),
        modes=parse_choice(option("--conform-mode"), MODES, "--conform-mode"), timeout=timeout,
        strict_validation=option("--conform-strict-validation"), fail_on_unsupported=option("--conform-fail-on-unsupported"),
        strict_precision=option("--conform-strict-precision"),
        max_elements=max_elements, case_ids=tuple(option("--conform-case")), shapes=parse_shapes(option("--conform-shapes")),
    )
    refusals = parse_refusals(option("--conform-refusal"))
    levels = parse_choice(option("--conform-optimizations"), OPTIMIZATIONS, "--conform-optimizations")
    runners = {level: make_runner(option("--conform-runner"), option("--conform-provider"), option("--conform-backend"), level,
                                  isolate=not option("--conform-no-isolation"), timeout=options.timeout, refusals=refusals)
               for level in levels if with_runners}
    expect = option("--conform-expect")
    gate = gate_record(options.strict_validation, options.fail_on_unsupported, option("--conform-strict"), options.strict_precision)
    failing, strict = recorded_gate({"options": gate})
    runner_info = next(iter(runners.values())).describe() if runners else {}  # on an xdist controller, the workers'
    return ConformSession(options, runners, load(Path(expect)) if expect else [], failing, strict, Tally(0, runner_info=runner_info))


def _items(session: pytest.Session, conform: ConformSession) -> list[ConformItem]:
    """An item per case, input mode and optimization level; named by the case's id, with the mode
    and level in brackets where the session has more than one of them."""
    from .execute import check_case_ids_found, select_examples
    from .scratch import hypothesis_storage_aside

    modes, levels = conform.options.modes, tuple(conform.runners)
    items = []
    with hypothesis_storage_aside():
        examples = select_examples(conform.options)
    check_case_ids_found(examples, conform.options)
    for example in examples:
        for level in levels:
            for mode in modes:
                tags = [tag for tag, shown in ((mode, len(modes) > 1), (f"optimizations-{level}", len(levels) > 1)) if shown]
                name = f"{example.id}[{','.join(tags)}]" if tags else example.id
                items.append(ConformItem.from_parent(session, name=name, example=example, mode=mode, level=level,
                                                     conform=conform))
    return items


@pytest.hookimpl(tryfirst=True)  # on an xdist worker, before xdist sends its workeroutput
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    conform = session.config.stash.get(SESSION, None)
    if conform is not None and hasattr(session.config, "workeroutput"):
        session.config.workeroutput["conform"] = conform.tally.sent()
    unmatched = conform.unmatched() if conform is not None and conform.strict else None
    if unmatched is None or not unmatched[0]:  # no stale entry
        return
    if session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    conform = config.stash.get(SESSION, None)
    if conform is None or not conform.expectations:
        return
    from .expectations import not_judged_lines

    unmatched, tally = conform.unmatched(), conform.tally
    if unmatched is None:
        terminalreporter.write_line(f"conform: stale expectations not judged: {tally.ran_count} of {tally.items} "
                                    "conform items ran")
        return
    stale, unjudged = unmatched
    under_strict = " (fails the session under --conform-strict)" if conform.strict else ""
    for entry in stale:
        terminalreporter.write_line(f"conform: STALE {entry.stale_text()}{under_strict}")
    for line in not_judged_lines(conform.expectations, unjudged, tally.ran, tally.runner_info, conform.options):
        terminalreporter.write_line(f"conform: {in_plugin_terms(line)}")


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook, called on its controller as each worker finishes
def pytest_testnodedown(node, error) -> None:
    sent = getattr(node, "workeroutput", {}).get("conform")
    if sent is None:  # no conform items, or a worker that died: its items did not all run
        return
    config = node.config
    if SESSION not in config.stash:
        from .errors import ConformError

        try:
            config.stash[SESSION] = _conform_session(config, with_runners=False)
        except ConformError:  # each worker has said so, as a usage error
            return
    config.stash[SESSION].tally.add(sent)
