"""pytest plugin: `pytest --conform-op Slice --conform-opset 13` turns conform's cases into pytest items.

Loaded through the `pytest11` entry point when conform is installed (or with `-p
conformance.pytest_plugin`, or `pytest_plugins = ["conformance.pytest_plugin"]` in a conftest.py).
Without `--conform-op` it adds nothing. A failing case fails its item with the same diff and
replay command the console report shows; unsupported cases skip; expected deviations xfail.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .report import FAILING


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("conform", "ONNX operator conformance (conform)")
    group.addoption("--conform-op", default=None, help="Run conform's cases of this op as pytest items.")
    group.addoption("--conform-opset", type=int, default=None, help="The version in force at this opset.")
    group.addoption("--conform-provider", default="cpu", help="onnxruntime provider: cpu, cuda or dml.")
    group.addoption("--conform-backend", default=None, help="An onnx.backend-style module to test instead.")
    group.addoption("--conform-examples", type=int, default=None, help="Hypothesis examples per op version x dtype.")
    group.addoption("--conform-seed", type=int, default=0, help="Hypothesis seed.")
    group.addoption("--conform-no-hypothesis", action="store_true", help="Only the YAML cases.")
    group.addoption("--conform-expect", default=None, help="Expectations file of known deviations.")


class ConformItem(pytest.Item):
    """One conform case as a pytest test."""

    def __init__(self, *, example, context, **kwargs) -> None:
        super().__init__(**kwargs)
        self.example = example
        self.context = context

    def runtest(self) -> None:
        from .execute import run_one
        from .expectations import apply

        runner, options, expectations = self.context
        result = run_one(self.example, runner, options)
        [result], _ = apply([result], expectations, runner.describe())
        self.user_properties.append(("outcome", result.outcome))
        if result.outcome == "xfail":
            pytest.xfail(result.verdict.message)
        if result.outcome in ("unsupported", "skipped"):
            pytest.skip(f"{result.outcome}: {result.verdict.message}")
        if result.outcome in FAILING:
            raise ConformFailure(result)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, ConformFailure):
            return excinfo.value.describe()
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.example.source, None, self.example.id


class ConformFailure(AssertionError):
    """A case the runtime got wrong; `describe` is the diff a person reads."""

    def __init__(self, result) -> None:
        super().__init__(result.verdict.message)
        self.result = result

    def describe(self) -> str:
        from .values import describe

        result = self.result
        lines = [f"{result.outcome}: {result.verdict.message}", f"source: {result.example.source}"]
        lines += [f"input {n}: {describe(a) if a is not None else '(omitted)'}" for n, a in result.example.inputs.items()]
        for mismatch in result.verdict.mismatches:
            lines += mismatch.lines()
        lines.append(f"replay: {result.replay}")
        return "\n".join(lines)


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list) -> None:
    if not config.getoption("--conform-op"):
        return
    from .errors import ConformError

    try:
        items.extend(_conform_items(session, config))
    except ConformError as error:
        # pytest prints a UsageError as one "ERROR:" line and exits 4, where any other exception
        # would be an INTERNALERROR traceback.
        raise pytest.UsageError(f"conform: {error.message}") from None


def _conform_items(session: pytest.Session, config: pytest.Config) -> list[ConformItem]:
    from . import strategies
    from .execute import RunOptions, select_examples
    from .expectations import load
    from .reference import for_op
    from .runners import make_runner

    examples = config.getoption("--conform-examples")
    options = RunOptions(
        op=for_op(config.getoption("--conform-op")).op, opset=config.getoption("--conform-opset"),
        use_hypothesis=not config.getoption("--conform-no-hypothesis"),
        examples=strategies.DEFAULT_EXAMPLES if examples is None else examples, seed=config.getoption("--conform-seed"),
    )
    runner = make_runner(provider=config.getoption("--conform-provider"), backend=config.getoption("--conform-backend"))
    expect = config.getoption("--conform-expect")
    context = (runner, options, load(Path(expect)) if expect else [])
    return [ConformItem.from_parent(session, name=e.id, example=e, context=context) for e in select_examples(options)]
