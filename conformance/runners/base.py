"""The runner interface: a built single-node model in, outputs or a classified error out."""

from __future__ import annotations

import re
import unittest
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Protocol

import numpy as np

from ..dtypes import from_numpy
from ..lifetime import interruptions, memory_limit_note
from ..model import BuiltModel
from ..telling import telling_line
from ..text import printable


@dataclass(frozen=True, eq=False)
class RunOutput:
    """What a runtime did with one model: outputs, or an error (marked when it means 'unsupported')."""

    outputs: tuple[np.ndarray, ...] = ()
    error: str | None = None
    unsupported: bool = False
    # The outcome the runner decided, not the comparison: "crash" (its process died, or the runtime
    # raised what ends a process or ran out of memory), "timeout" (it hung), "fallback" (another
    # provider ran the node) or "fail" (it answered, with no outputs: see checked_outputs).
    fault: str | None = None
    # The refusal says the runtime has no implementation for this op version or type (or cannot
    # be handed it): nothing about whether the input is valid, so it is no rejection of an invalid one.
    no_kernel: bool = False
    # The runtime's whole message (bounded: see bounded_detail) where `error` is only its telling
    # line; None where the message says it all.
    detail: str | None = None
    # The refusal says the input or model is invalid, in the runtime's own words (its Vocabulary's
    # `invalid` patterns): an invalid case's rejection that is certainly one, whatever else it says.
    invalid: bool = False

    @classmethod
    def failed(cls, error: str, detail: str | None = None) -> "RunOutput":
        return cls(error=error, detail=detail)

    @classmethod
    def crashed(cls, message: str) -> "RunOutput":
        return cls(error=message, fault="crash")

    @classmethod
    def malformed(cls, message: str) -> "RunOutput":
        """An answer that is no outputs: the runtime's fault, whatever the case expects (a `fail`)."""
        return cls(error=message, fault="fail")

    @classmethod
    def not_supported(cls, reason: str, no_kernel: bool = False, detail: str | None = None) -> "RunOutput":
        return cls(error=reason, unsupported=True, no_kernel=no_kernel, detail=detail)

    @classmethod
    def timed_out(cls, seconds: float, last_words: str = "") -> "RunOutput":
        """A call that overran the case timeout of `seconds`, wherever it was caught; `last_words`:
        what the runtime wrote to stderr during it (see runtime_log.written_since)."""
        return cls(error=timeout_message(seconds) + last_words, fault="timeout")


@dataclass(frozen=True)
class ModelNeeds:
    """How a runtime needs its models built, declared as data on its runner class
    (`model_needs`): the `--shapes` and `--mode` a run uses for it unless the user gives them,
    and why, in words a run's note quotes ("its runtime resolves shapes at load time"). None
    leaves that option at conform's default."""

    shapes: str | None = None
    mode: str | None = None
    reason: str = ""

    def words(self) -> str:
        """'static shapes, initializer inputs': what it asks for, as a note says it."""
        asked = [f"{self.shapes} shapes" if self.shapes else "", f"{self.mode} inputs" if self.mode else ""]
        return ", ".join(word for word in asked if word)


class Runner(Protocol):
    """One runtime under test. Implementations keep their own session caches.

    A runner that can work on one case while the caller prepares the next also offers
    `run_stream(models) -> outputs`, in order, None for None (see `runners.isolated`). A runner
    class may declare `model_needs: ModelNeeds`, read from the class before any runner is made
    (see RunnerSpec.model_needs).
    """

    name: str

    def describe(self) -> dict:
        """Name, version and options of the runtime, for the report."""

    def run(self, built: BuiltModel) -> RunOutput:
        """Run the model on its feeds; never raises for a runtime's own errors."""

    def replay_options(self) -> list[str]:
        """The CLI options that select this runner again, for the replay command."""


class SessionCache:
    """Sessions keyed by model bytes, least recently used dropped first. A model the runtime
    refused is remembered as its refusal (the RunOutput `refused` makes of the error), so its
    later cases are answered without asking the runtime again or classifying its error again."""

    # A session of a single-node model holds ~40-100 KB. Cases reuse the models of their unit (a
    # hypothesis group of 20, a chunk of 64 case-file cases) soon after each other, and seldom a
    # model of an earlier unit: 128 sessions keep every reuse, and a runtime process ~36 MB
    # smaller than 512 did (Cast-19, one job: 184 -> 147 MB, the same time).
    SIZE = 128

    def __init__(self, create: Callable[[BuiltModel], Any], refused: Callable[[Exception], RunOutput],
                 size: int = SIZE) -> None:
        self._create = create
        self._refused = refused
        self._size = size
        self._items: OrderedDict[bytes, tuple[Any, RunOutput | None]] = OrderedDict()

    def get(self, built: BuiltModel) -> tuple[Any, RunOutput | None]:
        """(session, None), or (None, the refusal) when the runtime refused the model; or (None, a
        crash) when making the session crashed (see `raised`), which is not remembered: it says
        how the runtime fared then, not what it makes of the model."""
        found = self._items.get(built.data)
        if found is None:
            found = self._make(built)
            if found[1] is None or found[1].fault is None:
                self._items[built.data] = found
                if len(self._items) > self._size:
                    self._items.popitem(last=False)
        else:
            self._items.move_to_end(built.data)
        return found

    def forget(self, built: BuiltModel) -> None:
        """Drop the session of this case's model, so that its next case gets a fresh one."""
        self._items.pop(built.data, None)

    def _make(self, built: BuiltModel) -> tuple[Any, RunOutput | None]:
        heard = interruptions()
        try:
            return self._create(built), None
        except Exception as error:  # a runtime refusing a model is a result, not a crash
            interrupted_since(heard)
            return None, self._refused(error)
        except BaseException as error:
            return None, raised(error, heard)


def timeout_message(seconds: float) -> str:
    """What a case that overran the case timeout is told, wherever it was caught."""
    return f"no answer within {seconds:g} s; worker killed"


def first_line(error: BaseException) -> str:
    """The line of an exception's message that says why (see telling_line); its class name when it says nothing."""
    return telling_line(read_safely(str, error)) or type(error).__name__


DETAIL_LIMIT = 16 * 1024


def bounded_detail(text: str, limit: int = DETAIL_LIMIT) -> str:
    """A runtime's whole message, printable, at most about `limit` bytes (UTF-8): a longer one keeps
    its head and its tail (where a panic or a cause chain ends) around a note of what was left out."""
    text = printable(text.strip())
    data = text.encode("utf-8", "replace")
    if len(data) <= limit:
        return text
    half = limit // 2
    left_out = len(data) - 2 * half
    head = data[:half].decode("utf-8", "ignore")
    tail = data[-half:].decode("utf-8", "ignore")
    return f"{head}\n[... {left_out} bytes left out ...]\n{tail}"


def detail_of(text: str, message: str) -> str | None:
    """The bounded whole message `text` where it says more than its one-line `message`; else None."""
    return bounded_detail(text) if text.strip() != message else None


def read_safely(read: Callable[[Any], str], thing: Any) -> str:
    """`read(thing)` (str, repr) of something a runtime made, which may raise when read (an
    exception whose __str__ raises SystemExit would end conform's process with `--no-isolation`);
    what it is, in words, when it does. conform's own interruption meanwhile is raised again."""
    heard = interruptions()
    try:
        return read(thing)
    except BaseException as failure:
        interrupted_since(heard)
        return f"{type(thing).__name__} (reading it raised {type(failure).__name__})"


@dataclass(frozen=True)
class Vocabulary:
    """How one runtime says why it refused a model or a run: regular expressions searched in its
    whole message, one tuple per kind of refusal.

    - `no_kernel`: it has no implementation of the op version or type (or cannot be handed it):
      nothing about the input, so neither a valid nor an invalid case is judged (`unsupported`).
    - `unsupported`: it does not support what the case asks (a dynamic rank, a non-constant
      input): `unsupported` for a valid case, and not a rejection of an invalid one either.
    - `invalid`: it says the input or model is invalid: for an invalid case a rejection that
      passes even where an `unsupported` pattern matches too (onnxruntime's INVALID_GRAPH is both
      a refusal of what its own schemas lag behind and a rejection of what the text forbids).
    Any other refusal is an error: a valid case's `fail`, an invalid case's rejection."""

    no_kernel: tuple[str, ...] = ()
    unsupported: tuple[str, ...] = ()
    invalid: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for kind in ("no_kernel", "unsupported", "invalid"):
            patterns = tuple(getattr(self, kind))
            object.__setattr__(self, kind, patterns)
            object.__setattr__(self, f"_{kind}", _compiled(patterns))

    @classmethod
    def literal(cls, no_kernel: tuple[str, ...] = (), unsupported: tuple[str, ...] = (),
                invalid: tuple[str, ...] = ()) -> "Vocabulary":
        """A vocabulary of plain phrases rather than regular expressions."""
        escape = lambda phrases: tuple(re.escape(phrase) for phrase in phrases)
        return cls(escape(no_kernel), escape(unsupported), escape(invalid))

    def __or__(self, other: "Vocabulary") -> "Vocabulary":
        """Both vocabularies' patterns (a runner's own and those given on the command line)."""
        return Vocabulary(self.no_kernel + other.no_kernel, self.unsupported + other.unsupported,
                          self.invalid + other.invalid)

    def says(self, kind: str, text: str) -> bool:
        """Whether `text` holds one of the `kind` patterns."""
        return getattr(self, f"_{kind}").search(text) is not None

    def kinds(self, text: str) -> tuple[bool, bool, bool]:
        """What `text` says, as (no kernel, unsupported, invalid): no kernel is unsupported too."""
        no_kernel = self.says("no_kernel", text)
        return no_kernel, no_kernel or self.says("unsupported", text), self.says("invalid", text)


def _compiled(patterns: tuple[str, ...]) -> "re.Pattern[str]":
    """One pattern searching for any of `patterns`; one that never matches for none."""
    return re.compile("|".join(f"(?:{pattern})" for pattern in patterns) if patterns else r"(?!)")


NO_VOCABULARY = Vocabulary()


def classified(error: BaseException, vocabulary: Vocabulary = NO_VOCABULARY) -> RunOutput:
    """A runtime's refusal as a result, in the kinds `Vocabulary` names. It has no kernel when it
    says so in a way runtimes share whatever their vocabulary (NotImplementedError;
    unittest.SkipTest, which onnx's backend test runner takes as "not supposed to implement it",
    BackendIsNotSupposedToImplementIt; an exception class named NotImplemented, as onnxruntime
    raises for an op version or type it has no kernel for, also through its onnx.backend) or in
    its own words; it is unsupported or says the input is invalid in its own words; else it is an
    error. A MemoryError refuses nothing: the runtime ran out of memory, a crash of its case (in
    a worker, one the memory limit made)."""
    if isinstance(error, MemoryError):
        return RunOutput.crashed(f"the runtime ran out of memory: {first_line(error)}{memory_limit_note()}")
    whole = read_safely(str, error)
    text = telling_line(whole) or type(error).__name__
    detail = detail_of(whole, text)
    no_kernel, unsupported, invalid = vocabulary.kinds(whole)
    no_kernel = no_kernel or _says_not_implemented(error)
    return RunOutput(error=text, unsupported=unsupported or no_kernel, no_kernel=no_kernel, detail=detail, invalid=invalid)


def raised(error: BaseException, heard: int, vocabulary: Vocabulary = NO_VOCABULARY) -> RunOutput:
    """What anything a runtime raised makes of its case. An exception that is no Exception
    (SystemExit, KeyboardInterrupt, GeneratorExit...) would end the process that runs the runtime,
    this one with `--no-isolation`: a crash of the case, and the run goes on. When conform itself
    was interrupted meanwhile (`heard`: `lifetime.interruptions()` before the call), whatever the
    runtime made of it, KeyboardInterrupt is raised again. Anything else is `classified`."""
    interrupted_since(heard)
    if isinstance(error, Exception):
        return classified(error, vocabulary)
    return RunOutput.crashed(f"the runtime raised {shown(error)}, which would end the process running it")


def interrupted_since(heard: int) -> None:
    """Raise KeyboardInterrupt when conform's own signal handlers raised one since `heard` (see
    lifetime.interruptions): a runtime that caught it, or turned it into something else, does
    not keep conform from stopping."""
    if interruptions() != heard:
        raise KeyboardInterrupt


def shown(error: BaseException) -> str:
    """An exception as a verdict names it, as it would be raised: `SystemExit(0)`."""
    return f"{type(error).__name__}({', '.join(read_safely(repr, argument)[:200] for argument in error.args)})"


def checked_outputs(answer: Any, count: int, who: str = "the runtime") -> RunOutput:
    """What a runtime's run returned, as its RunOutput: a list or tuple of `count` outputs, each an
    array of a tensor type (or what numpy makes one of: a number, a nested list; strings are
    taken as a string tensor's objects, another byte order as this machine's). Anything else is
    the case's `fail`, saying what came back (`who`: the runtime, as the message names it); an
    answer that raises when read (a list whose __len__ raises) too, and a `crash` where what it
    raises would end the process reading it."""
    heard = interruptions()
    try:
        return _checked_outputs(answer, count, who)
    except BaseException as failure:
        interrupted_since(heard)
        raised_what = f"{type(failure).__name__}"
        if not isinstance(failure, Exception):
            return RunOutput.crashed(f"{who}'s answer ({_kind_of(answer)}) raised {raised_what} when read, which would "
                                     "end the process reading it")
        return RunOutput.malformed(f"{who} returned {_kind_of(answer)}, which raised {raised_what} when read")


def _checked_outputs(answer: Any, count: int, who: str) -> RunOutput:
    if not isinstance(answer, (list, tuple)):
        return RunOutput.malformed(f"{who} returned {_kind_of(answer)}, not a list of arrays")
    if len(answer) != count:
        return RunOutput.malformed(f"{who} returned {len(answer)} outputs; the model has {count}")
    outputs = []
    for index, value in enumerate(answer):
        array = _array(value)
        if isinstance(array, str):
            return RunOutput.malformed(f"{who}'s output {index} is {array}")
        outputs.append(array)
    return RunOutput(tuple(outputs))


def _array(value: Any) -> np.ndarray | str:
    """The output as an array of a tensor type, or what it is instead, in words."""
    if value is None:
        return "None, not an array"
    try:
        array = np.asarray(value)
    except Exception as error:  # whatever numpy makes of an object it cannot take
        return f"{_kind_of(value)}, which numpy makes no array of ({first_line(error)})"
    kind = array.dtype.kind
    if kind == "O":
        return _strings(value, array)
    if kind in "US":
        return array.astype(object)
    if not array.dtype.isnative:
        array = array.astype(array.dtype.newbyteorder("="))
    try:
        from_numpy(array.dtype)
    except (ValueError, KeyError, TypeError):
        return f"an array of numpy's {array.dtype}, which is no tensor type"
    return array


def _strings(value: Any, array: np.ndarray) -> np.ndarray | str:
    """An array of Python objects: a string tensor's, when each is a str (or bytes)."""
    if array.ndim == 0 and not isinstance(value, np.ndarray):
        return f"{_kind_of(value)}, not an array"
    for item in array.flat:
        if not isinstance(item, (str, bytes)):
            return f"an array of Python objects ({_kind_of(item)} among them), where only a string tensor's holds objects: str"
    return array


def _kind_of(value: Any) -> str:
    """What a value is, in words: None, or 'a value of type dict'."""
    return "None" if value is None else f"a value of type {type(value).__name__}"


def _says_not_implemented(error: BaseException) -> bool:
    return isinstance(error, (NotImplementedError, unittest.SkipTest)) or type(error).__name__ == "NotImplemented"
