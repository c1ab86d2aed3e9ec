"""Refusal vocabularies given from outside a runner: declared by an onnx.backend module
(`CONFORM_REFUSALS`) or on the command line (`--refusal KIND=REGEX`), checked, and added to what
a built-in runner already knows (see base.Vocabulary for what each kind means to a verdict)."""

from __future__ import annotations

import re
from typing import Any, Iterable

from ..errors import UsageError
from ..model import BuiltModel
from .base import NO_VOCABULARY, Runner, RunOutput, Vocabulary, first_line

KINDS = ("no_kernel", "unsupported", "invalid")
# What an onnx.backend module (or the backend class `--backend MODULE:ATTRIBUTE` names) sets to
# tell conform how its runtime says why it refused: {"no_kernel": [regex, ...], ...}.
DECLARED = "CONFORM_REFUSALS"
OPTION = "--refusal"

Refusals = tuple[tuple[str, str], ...]  # (kind, regex) pairs, in the order given


def checked_pattern(kind: Any, pattern: Any, source: str) -> tuple[str, str]:
    """(kind, pattern) when `kind` is one of KINDS and `pattern` a regular expression Python
    compiles; else a UsageError saying where it came from (`source`) and what is allowed."""
    if kind not in KINDS:
        raise UsageError(f"{source}: unknown refusal kind {kind!r} (choose from: {', '.join(KINDS)})")
    if not isinstance(pattern, str) or not pattern:
        raise UsageError(f"{source}: a {kind} pattern must be a non-empty regular expression, not {pattern!r}")
    try:
        re.compile(pattern)
    except re.error as error:
        raise UsageError(f"{source}: the {kind} pattern {pattern!r} is no regular expression ({error})") from None
    return kind, pattern


def parse_options(texts: Iterable[str]) -> Refusals:
    """The `--refusal KIND=REGEX` options given, as checked (kind, regex) pairs."""
    found = []
    for text in texts:
        kind, equals, pattern = text.partition("=")
        if not equals:
            raise UsageError(f"{OPTION} takes KIND=REGEX, not {text!r} (KIND: {', '.join(KINDS)})")
        found.append(checked_pattern(kind.strip(), pattern, f"{OPTION} {text}"))
    return tuple(found)


def declared(backend: Any, module: Any, spec: str) -> Refusals:
    """What the backend declares in its CONFORM_REFUSALS (on the backend class or object
    `--backend MODULE:ATTRIBUTE` names, else on its module), checked; none when it declares none."""
    source = f"{DECLARED} of backend '{spec}'"
    table = _attribute(backend, source)
    if table is None and module is not backend:
        table = _attribute(module, source)
    if table is None:
        return ()
    if not isinstance(table, dict):
        raise UsageError(f"{source} must be a dict of kind -> list of regular expressions (kinds: {', '.join(KINDS)}), "
                         f"not a value of type {type(table).__name__}")
    found = []
    for kind, patterns in table.items():
        for pattern in [patterns] if isinstance(patterns, str) else _listed(patterns, kind, source):
            found.append(checked_pattern(kind, pattern, source))
    return tuple(found)


def _attribute(holder: Any, source: str) -> Any:
    """The declaration on `holder`, or None; a backend's own code may run in reading it."""
    try:
        return getattr(holder, DECLARED, None)
    except Exception as error:  # a module __getattr__ or a property that raises: the backend's fault, said so
        raise UsageError(f"{source}: reading it raised {type(error).__name__}: {first_line(error)}") from None


def _listed(patterns: Any, kind: Any, source: str) -> list:
    if not isinstance(patterns, (list, tuple)):
        raise UsageError(f"{source}: {kind!r} must list regular expressions, not hold a value of type {type(patterns).__name__}")
    return list(patterns)


def vocabulary(refusals: Refusals) -> Vocabulary:
    """The pairs as a Vocabulary (regular expressions, kept in the order given)."""
    return Vocabulary(*(tuple(pattern for kind, pattern in refusals if kind == wanted) for wanted in KINDS))


def described(words: Vocabulary) -> dict[str, list[str]]:
    """A vocabulary as the report's runner description lists it: each kind that has patterns."""
    return {kind: list(getattr(words, kind)) for kind in KINDS if getattr(words, kind)}


def replay_words(refusals: Refusals) -> list[str]:
    """The `--refusal` options that give the same pairs again."""
    return [word for kind, pattern in refusals for word in (OPTION, f"{kind}={pattern}")]


def reclassified(run: RunOutput, added: Vocabulary) -> RunOutput:
    """A runner's refusal read again with `added` patterns beside the runner's own: the same as
    classifying it with both vocabularies at once (see base.classified), since a kind only ever
    grows. Outputs, crashes, timeouts and malformed answers are no refusals and stay as they are."""
    if run.error is None or run.fault is not None:
        return run
    no_kernel, unsupported, invalid = added.kinds(run.detail or run.error)
    no_kernel, unsupported, invalid = run.no_kernel or no_kernel, run.unsupported or unsupported, run.invalid or invalid
    if (no_kernel, unsupported, invalid) == (run.no_kernel, run.unsupported, run.invalid):
        return run
    return RunOutput(error=run.error, unsupported=unsupported, no_kernel=no_kernel, detail=run.detail, invalid=invalid)


class WithRefusals:
    """A built-in runner whose own vocabulary (its module's VOCABULARY) gets the patterns given
    on the command line: every refusal it answers is read again with them (`reclassified`)."""

    def __init__(self, runner: Runner, refusals: Refusals) -> None:
        import sys

        self._runner = runner
        self._refusals = refusals
        self._added = vocabulary(refusals)
        own = getattr(sys.modules.get(type(runner).__module__), "VOCABULARY", NO_VOCABULARY)
        self._used = own | self._added
        self.name = runner.name

    def describe(self) -> dict:
        return {**self._runner.describe(), "refusals": described(self._used)}

    def replay_options(self) -> list[str]:
        return [*self._runner.replay_options(), *replay_words(self._refusals)]

    def run(self, built: BuiltModel) -> RunOutput:
        return reclassified(self._runner.run(built), self._added)

    def __getattr__(self, name: str) -> Any:
        """Whatever else the runner offers (its provider, say), as it offers it; not a way of
        running cases around `run` (a `run_stream`), whose refusals would not be read again."""
        if name.startswith("_") or name == "run_stream":
            raise AttributeError(name)
        return getattr(self._runner, name)
