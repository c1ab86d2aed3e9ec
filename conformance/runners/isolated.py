"""Runs another runner in a worker process, so a runtime that crashes or hangs costs one case.

One worker per runner, reused across cases. If the worker dies (segfault, abort, os._exit) the
case is a `crash` with the signal or exit code, and a fresh worker starts; if a case takes longer
than the timeout, the worker is killed and replaced and the case is a `timeout`. From the first
replacement on, a spare worker loads its runtime beside the running one, so the next replacement
waits for no start-up. A worker that fails to load its runtime (it dies before it is ready, as a
spare that died while it waited would, or it is not ready within WORKER_START_SECONDS) fails no
case: its cases go to a fresh worker, and a runtime that two workers in a row fail so to load
cannot be loaded in a worker (UnavailableError), rather than costing every case a worker's start.

`run_stream` keeps several cases in flight, so the worker always has the next cases queued while
this process prepares new cases and judges answered ones; they are sent several to a write, and
answers read as many as have arrived (see `wire.Channel`). The worker answers in order and starts
a case only after answering the one before, so when it dies or hangs the case it was running is
the oldest unanswered one: that case is the crash or timeout, and the cases sent after it go to
the fresh worker.

A worker's stderr goes to a file of its own (see runtime_log), and each of its frames says how
far that file had got: a crash or timeout quotes what the runtime wrote after the last answer,
that is while running the case that died or hung, and a failed load what it wrote while loading.

A worker answers a case as a crash when its runtime raised what ends a process (SystemExit...) or
ran out of memory (see base.raised, and lifetime's memory limit): such a runtime is not trusted
with more cases, and the worker is replaced as if it had died, the cases after it sent to the
fresh one. A worker is ended with its process group, and so with whatever its runtime started.

A crashed case is run again alone in a fresh worker (its model and feeds, nothing before it), and
its output (`Crashed`) says what came of that (`forensics`, a record the JSON report keeps as
`crash`): it crashes alone, so its replay command shows the crash; or it does not, and the crash
came after earlier cases of that worker (heap corruption by one of them lands on a later, innocent
case), which it names, most recent first (the last BEFORE_NAMED, with how many more). The fresh
worker then runs the cases after it. A case whose worker hung is not run again (that would cost a
second timeout). Run again so, a crash that reproduces costs a second worker's death, so a case is
not run again where a case of the same model crashed alone before it (a runtime that crashes on a
kind of case crashes on many), nor once RUN_AGAIN_LIMIT crashed cases were: its record says why.
Cases are named by the `case_id` the caller gives a BuiltModel (see execute.named); one without
is NO_ID.

A runner made within a command is closed when the command ends (see scratch.Command), however it
ends: its workers are the command's, and a command hands back no runner to close them (the runner
would go with its command's last frame, which a traceback may hold long after).
"""

from __future__ import annotations

import pickle
import select
import signal
import time
from collections import deque
from dataclasses import dataclass
from functools import lru_cache
from multiprocessing.connection import Connection
from typing import Iterable, Iterator, NamedTuple

import onnx

from .. import scratch
from ..errors import UnavailableError
from ..lifetime import LoggedWorker, died_of_memory_note, end_group, kill_worker, start_logged_worker
from ..runtime_log import CaseMarks, position, written_since
from ..model import BuiltModel
from . import DEFAULT_TIMEOUT, RunnerSpec
from .base import Runner, RunOutput
from .wire import SMALLEST_BUDGET, Channel, dump_case, pack_output, unpack_case, unpack_output


# The first frame of every worker, once its runtime is loaded: a case's timeout starts then, so
# that a worker's start-up (importing the runtime takes ~0.3 s, more on a busy machine) never makes
# its first case a timeout, nor, with a short --timeout, every case after each replacement too.
# READY is followed by how far the worker's stderr file got while it loaded (see runtime_log).
# Requests are pickles, so neither word can be mistaken for one.
READY = b"ready"
STOP = b""
WORKER_START_SECONDS = 60.0
BEFORE_NAMED = 10  # of the cases a crashed case's worker ran before it, the most recent named
RUN_AGAIN_LIMIT = 20  # crashed cases a runner runs again alone, at most
NO_ID = "(a case with no id)"


class _Pending(NamedTuple):
    """A case sent to the worker and not answered yet: its request, its id (see the module's
    docstring) and its model's bytes."""

    request: bytes
    case: str
    model: bytes


@dataclass(frozen=True, eq=False)
class Crashed(RunOutput):
    """A crash, with what running the case again alone made of it (`forensics`: see `account`)."""

    forensics: dict | None = None


def account(forensics: dict) -> str:
    """A crash's forensics in words: whether it crashes alone, and the cases its worker ran before
    it. `forensics`: `alone` (True, False, or None where it was not run again), `rerun` (what
    running it again did, or why it was not), `before` (the ids of the last cases its worker ran
    before it, most recent first) and `ran_before` (how many it ran before it in all)."""
    before = _named(forensics["before"], forensics["ran_before"])
    if forensics["alone"]:
        return f"crashes alone: {forensics['rerun']}, so its replay command shows the crash"
    if forensics["alone"] is False and not forensics["ran_before"]:
        return f"{forensics['rerun']}, and no case ran before it in its worker: a crash that does not always happen"
    if forensics["alone"] is False:
        return (f"{forensics['rerun']}: a crash after earlier cases (possible memory corruption by an earlier case); "
                f"before it in that worker, most recent first: {before}")
    return forensics["rerun"] + (f"; before it in that worker, most recent first: {before}" if before else "")


def _named(cases: list[str], count: int) -> str:
    return ", ".join(cases) + (f" and {count - len(cases)} more" if count > len(cases) else "")


def _serve(spec: RunnerSpec, connection: Connection) -> None:
    runner = spec.make()
    channel = Channel(connection)
    try:
        # Every frame tells how far the worker's stderr file has got, so that what the runtime
        # writes during a case that kills or hangs the worker can be told from what came before.
        channel.send([READY + str(position()).encode()])
        while (request := channel.receive()) != STOP:
            data, feeds, elem_types = unpack_case(pickle.loads(request))
            answer = pack_output(runner.run(BuiltModel(_parsed(data), data, feeds, elem_types)))
            channel.send([pickle.dumps((answer, position()), pickle.HIGHEST_PROTOCOL)])  # each answer as soon as it is known
    except (EOFError, OSError):
        return  # the parent is gone


@lru_cache(maxsize=2048)
def _parsed(data: bytes) -> onnx.ModelProto:
    """Parsed once per distinct model: most cases share their model with many others."""
    return onnx.load_from_string(data)


def _end(process, connection: Connection, kill: bool = True) -> None:
    """End a worker (killed first unless it was asked to stop) and what its runtime started, and
    close its end of the pipe; a spare, which holds no case, is ended so, with nothing of it waited
    for but its exit."""
    if kill:
        kill_worker(process)
    process.join(5)
    end_group(process)
    connection.close()


def death(exitcode: int | None) -> str:
    """How a process ended, in words: the signal that killed it, or its exit code."""
    if exitcode is not None and exitcode < 0:
        try:
            return f"killed by signal {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exited with code {exitcode}"


class _NotLoaded(Exception):
    """A worker that failed to load its runtime; `how` says how (see load_failure)."""

    def __init__(self, how: str) -> None:
        super().__init__(how)
        self.how = how


def load_failure(died: str | None) -> str:
    """How a worker failed to load its runtime, after "it": it died so (`died`: how it ended), or,
    with None, it was stopped still loading after WORKER_START_SECONDS."""
    if died is None:
        return f"had not loaded it after {WORKER_START_SECONDS:g} s, and was stopped"
    return f"died while loading it: {died}"


def not_loadable(how: str) -> UnavailableError:
    """The error of a runtime that two worker processes in a row failed to load, before running any
    case; `how` says how the second failed (see load_failure)."""
    return UnavailableError(f"the runtime could not be loaded in a worker process: two workers in a row failed to load "
                            f"it, before running any case (the second {how}); run with --no-isolation to load it in "
                            f"this process and see the runtime's own error")


class IsolatedRunner:
    """The runner a spec names, driven in a worker process."""

    def __init__(self, spec: RunnerSpec, timeout: float = DEFAULT_TIMEOUT, keep_spare: bool = True,
                 loaded: bool = False) -> None:
        """`keep_spare`: whether to keep a spare worker once one has died (see the module's
        docstring); not where other processes keep every core busy, as `--jobs` workers do.
        `loaded`: the runtime is known to load (a careful `--jobs` worker's, which a worker before
        it loaded): the runner here, which checks that and describes the runtime, is then made
        only when asked to describe it, and this process does not import the runtime (~20 MB)."""
        self.spec = spec
        self.timeout = timeout
        self.keep_spare = keep_spare
        self._made_local = None if loaded else spec.make()  # fails here, in the parent, when the runtime is not available
        self.name = spec.runner_name
        self._process = None
        self._channel: Channel | None = None
        self._poller = None
        self._ready = False
        self.overlap_bytes = SMALLEST_BUDGET  # the worker's channel's write budget, once it starts
        self.restarts = 0
        self._spare: LoggedWorker | None = None  # the next worker, loading its runtime already
        self._stderr: str | None = None  # the file the worker's stderr goes to
        self._logged = 0  # how far that file had got when the worker last answered
        self._marks = CaseMarks(None)  # where each case's lines begin in that file
        self._ran: deque[str] = deque(maxlen=BEFORE_NAMED)  # the last cases the worker answered, oldest first
        self._ran_count = 0  # how many it answered
        self._crashed_alone: dict[bytes, str] = {}  # a model of which a case crashed alone: that case
        self.runs_again = 0  # crashed cases run again alone
        scratch.at_command_end(self.close)

    @property
    def _local(self) -> Runner:
        if self._made_local is None:
            self._made_local = self.spec.make()
        return self._made_local

    def describe(self) -> dict:
        return {**self._local.describe(), "isolation": "worker process", "timeout": self.timeout}

    def replay_options(self) -> list[str]:
        return self._local.replay_options()

    def start(self) -> None:
        """Start the worker now rather than at the first case, so its start-up overlaps other work."""
        if self._process is None:
            self._start()

    def _start(self) -> None:
        self._process, connection, self._stderr = self._next_worker()
        self._marks.close()
        self._marks = CaseMarks(self._stderr)
        self._ran.clear()
        self._ran_count = 0
        if self.restarts and self.keep_spare:
            # A runtime that died or hung once may do it again: the worker that would replace this
            # one starts loading its runtime now (~35 ms of a crash's ~55 ms), beside its cases.
            self._spare = self._new_worker()
        self._channel = Channel(connection)
        self.overlap_bytes = self._channel.write_budget()
        self._ready = False
        # Connection.poll builds a selector for every call; where the pipe is a file descriptor
        # (POSIX), one poll object per worker answers the same question for a fraction of the cost.
        self._poller = select.poll() if hasattr(select, "poll") else None
        if self._poller is not None:
            self._poller.register(connection.fileno(), select.POLLIN)

    def _next_worker(self) -> LoggedWorker:
        """The spare worker, when one is alive; else a worker started now."""
        spare, self._spare = self._spare, None
        if spare is not None:
            if spare.process.is_alive():
                return spare
            _end(spare.process, spare.connection)
        return self._new_worker()

    def _new_worker(self) -> LoggedWorker:
        return start_logged_worker(_serve, (self.spec,), daemon=True)

    def _stop(self, kill: bool, lost: bool = True) -> str:
        """End the worker and say how it ended; `lost`: it died or hung in a case of the run, and
        counts in `restarts` (not so when it is closed, left with answers no case will read, or
        ended by a case run again alone)."""
        process, self._process = self._process, None
        if process is None:  # never started, or it failed to
            return "not started"
        _end(process, self._channel.connection, kill)
        self._channel, self._poller = None, None
        self.restarts += lost
        return death(process.exitcode)

    def run(self, built: BuiltModel) -> RunOutput:
        return next(self.run_stream([built]))

    def run_stream(self, builts: Iterable[BuiltModel | None]) -> Iterator[RunOutput | None]:
        """An output for each model, in order, with later models sent before earlier answers are
        read; None (a case with nothing to run) gives None, after every earlier answer.

        Cases are in flight together only while all their requests stay within the channel's write
        budget (wire.Channel.write_budget: 21 KiB on Linux, 4 KiB where pipes are small): a write
        then never waits for the worker, which may be busy writing an answer and not reading, so
        neither side can block the other. A larger case waits until every earlier one is answered,
        and goes alone. Cases not yet sent go in one write once they hold a quarter of the budget;
        when the budget is full, this process sends what it holds and reads answers until half the
        budget is free: those answer earlier writes, which the worker has had time for, and it has
        the later ones to run meanwhile. (A deep queue matters: with 4 KiB, ~8 of Slice-13's cases,
        this process caught up with the worker and waited on it.)
        """
        waiting: deque[_Pending] = deque()  # cases not answered yet, oldest first
        unsent: list[bytes] = []  # the newest of them, not written yet
        in_flight = unsent_bytes = 0  # the waiting requests' bytes together, and the unsent ones'
        try:
            for built in builts:
                request = None if built is None else dump_case(built.data, built.feeds, built.elem_types)
                size = 0 if request is None else len(request)
                if request is None or in_flight + size > self.overlap_bytes:
                    self._send(unsent, waiting)
                    unsent_bytes = 0
                    keep = 0 if request is None else min(self.overlap_bytes // 2, self.overlap_bytes - size)
                    while waiting and in_flight > keep:
                        in_flight -= len(waiting[0].request)
                        yield self._answer(waiting)
                if request is None:
                    yield None
                    continue
                waiting.append(_Pending(request, built.case_id or NO_ID, built.data))
                unsent.append(request)
                in_flight += size
                unsent_bytes += size
                if unsent_bytes >= self.overlap_bytes // 4:  # so that the worker starts before the budget fills
                    self._send(unsent, waiting)
                    unsent_bytes = 0
            self._send(unsent, waiting)
            while waiting:
                yield self._answer(waiting)
        finally:
            if waiting:  # abandoned with answers outstanding: none may be read as another case's
                self._stop(kill=True, lost=False)

    def _send(self, unsent: list[bytes], waiting: deque) -> None:
        """Write the unsent requests (the newest waiting ones) in one go."""
        if not unsent:
            return
        count = len(unsent)
        self.start()
        try:
            self._channel.send(unsent)
        except OSError:
            if len(waiting) == count:  # the worker died between cases: these go to a fresh one
                self._stop(kill=True)
                self._resend(waiting)
            # else the oldest case's answer will show the death; the rest are sent again then
        finally:
            unsent.clear()

    def _answer(self, waiting: deque) -> RunOutput:
        """The oldest waiting case's output; a crash or timeout is that case's, and the cases
        after it are sent to a fresh worker. A worker that fails to load its runtime, before any
        case ran, fails no case: the cases go to a fresh worker (see the module's docstring)."""
        failed_to_load = False
        while True:
            try:
                if not self._ready:
                    self._wait_until_loaded()
                if self._arrives_within(self.timeout):
                    pending = waiting.popleft()
                    answer, logged = pickle.loads(self._channel.receive())
                    outcome = unpack_output(answer)
                    if outcome.fault == "crash":  # answered, by a runtime not to be trusted with more cases
                        self._mark(pending.case, logged)
                        self._stop(kill=True)
                        outcome = self._crashed(outcome.error or "crash", pending, detail=outcome.detail)
                        self._resend(waiting)
                        return outcome
                    self._answered(pending.case, logged)
                    return outcome
                self._stop(kill=True)
                last_words = self._last_words()
                self._marks.mark_if_written(self._logged, f"case {waiting[0].case} (it hung its worker)", self._stderr)
                outcome = RunOutput.timed_out(self.timeout, last_words)
            except _NotLoaded as failure:
                if failed_to_load:
                    raise not_loadable(failure.how) from None
                failed_to_load = True
                self._resend(waiting)
                continue
            except (EOFError, OSError):
                died = self._stop(kill=False)
                last_words = self._last_words()
                pending = waiting.popleft()
                self._marks.mark_if_written(self._logged, f"case {pending.case} (its worker died in it)", self._stderr)
                outcome = self._crashed(f"the runtime's worker process died: {died}", pending,
                                        f"{last_words}{died_of_memory_note(last_words)}")
                self._resend(waiting)
                return outcome
            waiting.popleft()
            self._resend(waiting)
            return outcome

    def _answered(self, case: str, logged: int) -> None:
        """The worker answered `case`, its stderr file then `logged` bytes long."""
        self._mark(case, logged)
        self._ran.append(case)
        self._ran_count += 1

    def _mark(self, case: str, logged: int) -> None:
        """Mark where `case`'s lines begin when it wrote any (see runtime_log.CaseMarks)."""
        if logged > self._logged:
            self._marks.mark(self._logged, f"case {case}")
        self._logged = logged

    def _crashed(self, message: str, pending: _Pending, tail: str = "", detail: str | None = None) -> Crashed:
        """The crash of the case `pending` (its worker stopped), run again alone first; `message`
        says how it crashed and `tail` (the runtime's last words) ends it. Where it did not crash
        alone, the message says so before `tail` (see `account`)."""
        forensics = {"before": list(reversed(self._ran)), "ran_before": self._ran_count}
        forensics["alone"], forensics["rerun"] = self._run_again_alone(pending)
        note = f"; {account(forensics)}" if forensics["alone"] is False else ""
        return Crashed(error=f"{message}{note}{tail}", fault="crash", detail=detail, forensics=forensics)

    def _run_again_alone(self, pending: _Pending) -> tuple[bool | None, str]:
        """Whether the crashed case crashes alone (None: not known), and what running it again
        alone did, or why it was not run again (see the module's docstring)."""
        known = self._crashed_alone.get(pending.model)
        if known is not None:
            return None, f"not run again alone: {known}, of the same model, crashed alone"
        if self.runs_again >= RUN_AGAIN_LIMIT:
            return None, f"not run again alone: {RUN_AGAIN_LIMIT} crashed cases were run again before it, the most one runner does"
        self.runs_again += 1
        alone, what = self._alone(pending)
        if alone:
            self._crashed_alone[pending.model] = pending.case
        return alone, what

    def _alone(self, pending: _Pending) -> tuple[bool | None, str]:
        """Run the case in a fresh worker, nothing before it: whether it crashed (None: it hung,
        or the worker failed to load the runtime) and what happened, in words. A worker it does
        not crash runs the cases after it."""
        label = f"{pending.case} (run again alone)"
        self.start()
        try:
            self._channel.send([pending.request])
        except OSError:
            pass  # the fresh worker died at once: waiting for it to load shows it
        try:
            if not self._ready:
                self._wait_until_loaded()
            if not self._arrives_within(self.timeout):
                self._stop(kill=True, lost=False)
                self._marks.mark_if_written(self._logged, f"case {label}", self._stderr)
                return None, f"run again alone in a fresh worker, it gave no answer within {self.timeout:g} s"
            answer, logged = pickle.loads(self._channel.receive())
        except _NotLoaded as failure:
            return None, f"not run again alone: a fresh worker failed to load the runtime (it {failure.how})"
        except (EOFError, OSError):
            died = self._stop(kill=False, lost=False)
            self._marks.mark_if_written(self._logged, f"case {label}", self._stderr)
            return True, f"run again alone in a fresh worker, it crashed again ({died})"
        output = unpack_output(answer)
        if output.fault == "crash":
            self._mark(label, logged)
            self._stop(kill=True, lost=False)
            return True, f"run again alone in a fresh worker, it crashed again ({output.error})"
        self._mark(label, logged)
        self._ran.append(pending.case)
        self._ran_count += 1
        return False, "run again alone in a fresh worker, it did not crash"

    def _last_words(self) -> str:
        """What the stopped worker wrote to stderr since its last answer (or since it loaded the
        runtime, or since it started when it never did), for the verdict; '' when nothing."""
        return written_since(self._stderr, self._logged)

    def _wait_until_loaded(self) -> None:
        """Read the worker's ready frame; _NotLoaded (the worker stopped) when it dies first, or
        when the frame is not there within WORKER_START_SECONDS (a case's timeout starts after it:
        importing a runtime takes ~0.3 s, more on a busy machine)."""
        self._logged = 0
        try:
            loaded = self._arrives_within(WORKER_START_SECONDS)
        except (EOFError, OSError):
            raise _NotLoaded(load_failure(died=self._stop(kill=False)) + self._last_words()) from None
        if not loaded:
            self._stop(kill=True)
            raise _NotLoaded(load_failure(died=None) + self._last_words())
        self._logged = int(self._channel.receive()[len(READY):] or 0)
        self._ready = True

    def _arrives_within(self, seconds: float) -> bool:
        """Whether the worker's next frame is whole within `seconds` (EOFError when it is gone)."""
        deadline = time.monotonic() + seconds
        while not self._channel.has_frame():
            left = deadline - time.monotonic()
            if left <= 0 or not self._readable(left):
                return False
            self._channel.read_some()
        return True

    def _readable(self, seconds: float) -> bool:
        if self._poller is None:
            return self._channel.connection.poll(seconds)
        return bool(self._poller.poll(seconds * 1000))

    def _resend(self, waiting: deque) -> None:
        self.start()
        try:
            self._channel.send([pending.request for pending in waiting])
        except OSError:
            pass  # the fresh worker died at once: the next answer shows it

    def close(self) -> None:
        self._marks.close()
        spare, self._spare = self._spare, None
        if spare is not None:
            _end(spare.process, spare.connection)
        if self._process is not None:
            try:
                self._channel.send([STOP])
            except OSError:
                pass
            self._stop(kill=False, lost=False)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown: nothing left to clean up properly
            pass
