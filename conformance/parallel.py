"""`--jobs N`: a run's work units drawn and run in N worker processes, results in plan order.

A unit is a chunk of YAML cases or one hypothesis group (op version x type binding), which draws
its cases from its own seed (and which `generate` writes as golden tests), or a chunk of stored
test directories, which a worker reads and runs (`run --from`) or checks against the reference
(`verify`), or a unit of a `diff`, which a worker runs on its runner and then on a second one it
makes alike (watched, or isolated when careful), the two counting their runtime calls as one
sequence; so what a unit produces does not depend on which worker runs it or when: the results
are the same, in the same order, for any N. A ConformError raised in a worker (unreadable golden
data, say) is sent back and raised in the main process when its unit's turn comes, as a serial
run would raise it.

The pool is small and explicit (one pipe per worker, two units in flight per worker): on an
interruption every worker is killed at once and nothing is left queued, and a worker that dies
costs only time. A careful worker takes its place: one that keeps the runtime in a process of its
own (an isolated runner), and so attributes a crash to its case as a serial run would. From then
on only careful workers are given units (a runtime that crashed once may crash again): the others
finish what they hold and are replaced in turn. The units the dead worker held go back to the
front of the queue, and from then on each unit of YAML cases is cut into one part per worker,
every Nth case in each, so that cases next to each other, which often crash or hang alike (the
same case in each dtype), are shared out rather than met one after another by one worker; the
parts' results are put back in the unit's order. Only when a careful worker itself dies is what
it was running done here, in this process, on an isolated runner: nothing is handed out a third
time.

Workers run the runtime in-process: with isolation the worker process is itself what a crash or a
hang costs, as a runtime worker of its own would cost a second busy process per job. A watched
worker (with isolation) tells this process, through shared memory, when the runtime call it is in
began and which call of its task that is; one that spends longer than the case timeout in a single
call is stopped, and so treated as dead. Its unit is marked with that call, and the careful workers
that run it again take the call's case as a `timeout`, judged as a serial run judges it, without
running it a second time (see `execute.with_known_hang`); a shrink task or a unit of stored tests,
which runs again whole and so makes the same calls in the same order, has that call answered so
(`_AnsweredHang`). A watched worker also says when it is loading the runtime: one that dies doing
so, or is still at it after isolated.WORKER_START_SECONDS, failed no case, and a worker like it
takes its units; when a second worker of the pool fails so, the runtime cannot be loaded in a
worker, and the run stops with that (UnavailableError), as a serial isolated run does.

The same workers then shrink the run's failing groups, side by side (each group's search is
seeded, so its minimal case does not depend on the worker either); a run that ran its cases in
the main process shrinks them in watched workers of their own (`shrink_side_by_side`).
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import time
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from multiprocessing.connection import Connection, wait
from multiprocessing.reduction import ForkingPickler
from typing import Any, Callable, Iterator

from .execute import (Minimal, Result, RunOptions, ChosenCases, ShrinkTask, WorkUnit, examples_of,
                      merge_parts, minimal_case, run_examples, with_known_hang)
from .errors import ConformError
from .golden import GenerateUnit, GoldenRun, GoldenRuns, GoldenUnit, run_golden, verify_unit, write_unit
from .differential import DiffUnit, diff_unit
from .runners import Runner, RunnerSpec, RunOutput
from .runners import isolated
from .runners.isolated import IsolatedRunner
from .runners.isolated import death as _death
from .lifetime import end_group, kill_worker, serve, start_logged_worker, start_own_server
from .runtime_log import CaseMarks, own_marks, position, written_since

Task = WorkUnit | ShrinkTask | GoldenUnit | GenerateUnit | DiffUnit  # what a worker is given (see also _HangMarked)

# A runner like a given one (watched, isolated, or answering a known hang) for another runner's
# spec: how a worker makes the second runner of a diff.
Sibling = Callable[[RunnerSpec], Runner]

# Units held by each worker: with a second one queued, a worker starts it at once instead of
# waiting for this process to read its answer and send another.
UNITS_IN_FLIGHT = 2
# A unit whose message is larger than this goes only to a worker that holds none: sent to a busy
# worker, it could fill the pipe while the worker writes a large answer that this process, blocked
# writing, never reads (both sides waiting: a hung run). Far below any socket buffer (200 KiB on
# Linux, 64 KiB where pipes are small), so a unit this size or less is written without waiting.
QUIET_UNIT_BYTES = 16 * 1024

# How often, at most, the main process looks at watched workers between their answers: waking
# this often costs nothing measurable, and a hang is caught this soon after the case timeout.
WATCH_INTERVAL = 0.5

# Below this many units a pool costs more to start (each worker imports onnxruntime and makes its sessions)
# than it saves.
AUTO_PARALLEL_UNITS = 8


def worker_count(requested: int | None, units: int, cores: int | None = None) -> int:
    """`--jobs` as given, else one per core when the run has enough units to share out."""
    if requested is not None:
        return requested
    if units < AUTO_PARALLEL_UNITS:
        return 1
    return cores or os.cpu_count() or 1


def shrinks_side_by_side(requested: int | None, cores: int | None = None) -> bool:
    """Whether a run of one job shrinks its failing groups in workers of their own: not with
    `--jobs 1`, which asks for no worker process, nor on one core, which has no side to use."""
    return requested != 1 and (cores or os.cpu_count() or 1) > 1


def run_parallel(units: list[WorkUnit], options: RunOptions, spec: RunnerSpec, jobs: int, isolate: bool,
                 on_result: Callable[[Result], None] = lambda r: None,
                 on_note: Callable[[str], None] = lambda note: None) -> list[Result]:
    """Every unit of the run's plan, in `jobs` worker processes; results in plan order."""
    with WorkerPool.for_units(units, jobs, options, spec, isolate, on_note) as pool:
        return pool.run(units, on_result)


class WorkerPool:
    """`jobs` worker processes for one run: they run its units, then shrink its failures.

    Whatever a worker that died was doing is done again by careful workers, on the runner in a
    process of their own (whatever `isolate` says: a runtime that crashed once may crash again), and
    `on_note` hears of it; what a careful worker that died was doing is done here, the same way.
    With `isolate` the workers are watched: one that spends more than the options' timeout in one
    runtime call is stopped, and so treated. Leaving the `with` block on an exception kills the workers at once.
    """

    def __init__(self, jobs: int, options: RunOptions, spec: RunnerSpec, isolate: bool,
                 on_note: Callable[[str], None] = lambda note: None) -> None:
        self._options, self._spec = options, spec
        self._pool = _Pool(jobs, (spec, options), on_note, options.timeout if isolate else None,
                           share=_parts, merge=lambda answers: _merged(answers, options), mark_hang=_with_hang)
        self._rescuers: dict[RunnerSpec, Runner] = {}  # made only when a careful worker dies (a diff's second too)

    @classmethod
    def for_units(cls, units: list[WorkUnit], jobs: int, options: RunOptions, spec: RunnerSpec, isolate: bool,
                  on_note: Callable[[str], None] = lambda note: None) -> "WorkerPool":
        """A pool of `jobs` workers, or of one per unit when the run has fewer units than that."""
        return cls(min(jobs, len(units)) or 1, options, spec, isolate, on_note)

    def run(self, units: list[WorkUnit], on_result: Callable[[Result], None] = lambda r: None,
            collect: bool = True) -> list[Result]:
        """Every unit's results, in plan order; `on_result` hears each as it is handed out. Unless
        `collect`, none is kept here (a run's Ledger keeps what it needs) and the list is empty."""
        chosen = ChosenCases(self._options)

        def hand_out(found: list[Result]) -> None:
            for result in found:
                chosen.heard(result.example.id)
                on_result(result)

        answers = self._answers(units, hand_out, keep=collect)
        chosen.check()
        return [result for found in answers for result in found]

    def run_golden(self, units: list[GoldenUnit], on_result: Callable[[Result], None] = lambda r: None,
                   on_skipped: Callable[[list], None] = lambda skipped: None) -> GoldenRun:
        """Every unit of stored tests read and run (or verified), joined in plan order; `on_result`
        hears each result, and `on_skipped` each unit's skipped tests, as the unit is handed out.
        The joined GoldenRun keeps of the results what `GoldenRuns` keeps, not every one."""
        runs = GoldenRuns(self._options, on_result)

        def hand_out(run: GoldenRun) -> None:
            on_skipped(run.skipped)
            runs.hear(run)

        self._answers(units, hand_out, keep=False)
        return runs.joined()

    def _answers(self, units: list, hand_out: Callable[[Any], None], keep: bool = True) -> list:
        """Each unit's answer, in plan order, each given to `hand_out` as its turn comes (and
        returned, unless not `keep`).

        Interrupted, it first hands out the units that finished behind one still running (in plan
        order, after the others), so that the report of an interrupted run holds every finished case.
        """
        answers = []
        try:
            for answer in self._pool.in_order(units, self._rescue):
                if keep:
                    answers.append(answer)
                hand_out(answer)
        except KeyboardInterrupt:
            for answer in self._pool.finished_ahead():
                hand_out(answer)
            raise
        return answers

    def write_tests(self, tasks: list[GenerateUnit], hand_out: Callable[[tuple[int, list[dict]]], None]) -> None:
        """Every unit's golden tests written; `hand_out` hears each unit's index and manifest
        entries, in plan order, and when interrupted those of the units finished behind one still
        running as well."""
        self._answers(tasks, hand_out)

    def minimal_cases(self, tasks: list[ShrinkTask]) -> list[Minimal]:
        """Each failing group shrunk in a worker, side by side; in the order given."""
        return list(self._pool.in_order(tasks, self._rescue))

    def _rescue(self, task: Task):
        return _perform(task, self._rescuer(self._spec), self._options, self._rescuer)

    def _rescuer(self, spec: RunnerSpec) -> Runner:
        """The isolated runner of `spec` that does here what careful workers could not."""
        if spec not in self._rescuers:
            self._rescuers[spec] = IsolatedRunner(spec, self._options.timeout)
        return self._rescuers[spec]

    def __enter__(self) -> "WorkerPool":
        return self

    def __exit__(self, kind, error, trace) -> None:
        try:
            # Interrupted or failed: stop now, not after the running units.
            self._pool.close(kill=kind is not None)
        finally:
            for runner in self._rescuers.values():
                runner.close()


def shrink_side_by_side(tasks: list[ShrinkTask], options: RunOptions, spec: RunnerSpec,
                        on_note: Callable[[str], None] = lambda note: None, cores: int | None = None) -> list[Minimal]:
    """A serial run's failing groups shrunk in watched worker processes, one per core, in the order
    given: one that crashes, or spends longer than the options' timeout in one runtime call, has its
    group shrunk again by a careful worker (see WorkerPool)."""
    jobs = min(len(tasks), cores or os.cpu_count() or 1)
    with WorkerPool(jobs, options, spec, True, on_note) as pool:
        return pool.minimal_cases(tasks)


def _parts(task: Task, count: int) -> list[Task]:
    """A unit (of a run or a diff) cut for `count` careful workers to share (see WorkUnit.parts);
    any other task stays whole."""
    return task.parts(count) if isinstance(task, (WorkUnit, DiffUnit)) else [task]


def _perform(task: Task, runner: Runner, options: RunOptions, sibling: Sibling):
    """A unit's results, a diffed unit's paired results (its second runner made by `sibling`), a
    failing group's minimal case, what stored tests gave (run, or verified), or the manifest
    entries of the golden tests written."""
    if isinstance(task, _HangMarked):
        count = _CallCount()  # a diff's two runners make one sequence of calls, as the watch counted them

        def answered(made: Runner) -> Runner:
            return _AnsweredHang(made, task.call, task.seconds, task.last_words, count)

        return _perform(task.task, answered(runner), options, lambda spec: answered(sibling(spec)))
    if isinstance(task, DiffUnit):
        return diff_unit(task, runner, sibling(task.against), options)
    if isinstance(task, ShrinkTask):
        return minimal_case(task, runner, options)
    if isinstance(task, GoldenUnit):
        return verify_unit(task, options) if task.verify else run_golden(task, runner, options)
    if isinstance(task, GenerateUnit):
        return write_unit(task, options)
    return run_examples(examples_of(task, options), runner, with_known_hang(task, options, runner))


def _with_hang(task: Task, call: int, seconds: float, last_words: str) -> Task:
    """The task a watched worker was stopped in, `seconds` into its `call`th runtime call, having
    written `last_words` to stderr in it, marked so that whoever runs it again takes that call's
    case as a timeout: a unit of cases, which may be cut into parts, by finding the case
    (`execute.with_known_hang`); any other task, which runs again whole and so makes the same calls
    in the same order, by its call (`_AnsweredHang`)."""
    if isinstance(task, WorkUnit):
        return dataclasses.replace(task, hang=(call, seconds, last_words))
    return _HangMarked(task, call, seconds, last_words)


@dataclass(frozen=True)
class _HangMarked:
    """A task other than a unit of cases, which a watched worker was stopped in `seconds` into
    its `call`th runtime call, having written `last_words` to stderr in it."""

    task: Task
    call: int
    seconds: float
    last_words: str

    def describe(self) -> str:
        return self.task.describe()


class _CallCount:
    """The runtime calls a task has made, over every runner it uses (a diff's two)."""

    def __init__(self) -> None:
        self.value = 0


class _AnsweredHang:
    """A runner whose `call`th call (counted from 1, in `count`, which a diff's two runners share)
    is answered with the timeout a stopped worker met there, as the runner's own timeout would
    be, without running it; every other call goes to `runner`, as a stream where it takes one."""

    def __init__(self, runner: Runner, call: int, seconds: float, last_words: str, count: _CallCount) -> None:
        self._runner, self._call, self._seconds, self._last_words = runner, call, seconds, last_words
        self._count = count
        self.name = runner.name
        if hasattr(runner, "run_stream"):
            self.run_stream = self._run_stream

    def describe(self) -> dict:
        return self._runner.describe()

    def replay_options(self) -> list[str]:
        return self._runner.replay_options()

    def run(self, built) -> RunOutput:
        return self._timed_out() if self._answered() else self._runner.run(built)

    def _run_stream(self, builts) -> Iterator[RunOutput | None]:
        answered: set[int] = set()  # positions in the stream passed on as None, to be answered here

        def passed_on():
            for position, built in enumerate(builts):
                if built is not None and self._answered():
                    answered.add(position)
                    built = None
                yield built

        for position, output in enumerate(self._runner.run_stream(passed_on())):
            yield self._timed_out() if position in answered else output

    def _timed_out(self) -> RunOutput:
        return RunOutput.timed_out(self._seconds, self._last_words)

    def _answered(self) -> bool:
        """Counts a call; whether it is the one to answer here."""
        self._count.value += 1
        return self._count.value == self._call


@dataclass(frozen=True)
class _Refused:
    """A worker's answer when its task raised a ConformError (unreadable golden data, a worker
    process the system would not start): raised again in the main process when its turn comes."""

    error: ConformError


def _answer(task: Task, runner: Runner, options: RunOptions, sibling: Sibling):
    try:
        return _perform(task, runner, options, sibling)
    except ConformError as error:
        return _Refused(error)


def _merged(answers: list, options: RunOptions):
    """A cut unit's results from its parts' answers; the first refusal among them, if any."""
    return next((a for a in answers if isinstance(a, _Refused)), None) or merge_parts(answers, options)


def _serve(spec: RunnerSpec, options: RunOptions, careful: bool, watch: "_Watch", connection: Connection) -> None:
    if careful:
        with watch.loading():
            # It restarts its runtime worker after every crash or hang: from a server of its own,
            # each restart costs ~0.01 s instead of a spawned interpreter's ~0.5 s.
            start_own_server()
    runner = _made(spec, careful, options, watch)
    siblings: dict[RunnerSpec, Runner] = {}

    def sibling(other: RunnerSpec) -> Runner:
        """A diff's second runner, made as the first (its calls counted by the same watch)."""
        if other not in siblings:
            siblings[other] = _made(other, careful, options, watch)
        return siblings[other]

    def handle(request: tuple[int, Task]) -> tuple[int, Any]:
        watch.calls.value = 0  # counted per task
        try:
            return request[0], _answer(request[1], runner, options, sibling)
        finally:
            own_marks().settle()  # the task's last case, which no case follows (see runtime_log.CaseMarks)

    serve(connection, handle)
    for made in [runner, *siblings.values()]:
        if isinstance(made, IsolatedRunner):
            made.close()
    # Every answer is sent: the interpreter's own tear-down (every module and session freed one by
    # one) would only keep the parent waiting.
    os._exit(0)


def _made(spec: RunnerSpec, careful: bool, options: RunOptions, watch: "_Watch") -> Runner:
    """A worker's runner of `spec`: watched in this process, or, in a careful worker, isolated in a
    process of its own, unless it is Python alone (onnx.reference): that cannot crash this
    process, and the watch stops a call that hangs as well as a process of its own would, for
    one process fewer (two careful workers diffing against onnx.reference: ~70 MB)."""
    if careful and not spec.python_only:
        # Its isolated runner is not watched: its own timeout stops a call that hangs. It keeps
        # no spare worker: beside the other jobs no core is free to load one ahead (Slice-13
        # on a runtime that crashes 133 times, two jobs, five runs each in turn: 11.5-12.5 s
        # without spares, 12.0-13.4 s with them).
        return IsolatedRunner(spec, options.timeout, keep_spare=False, loaded=True)
    return _Watched(spec, watch)  # which loads the runtime, watched, when first asked to run


class _Watch:
    """What a worker tells the pool through shared memory (times are time.monotonic, the same
    clock in every process): when the runtime call it is in began (`call_since`, 0.0 between
    calls), how many calls its task has made, that one included (`calls`, reset for each task),
    and when it began loading the runtime (`loading_since`, 0.0 when it is not loading it). So
    the pool knows which call a worker it stops was in, and tells a worker that fails to load
    the runtime from one that fails a case. `logged` is how far the worker's stderr file had got
    when its last call began: what the runtime wrote in a call that hung is the file's rest."""

    def __init__(self) -> None:
        self.call_since = multiprocessing.RawValue("d", 0.0)
        self.calls = multiprocessing.RawValue("q", 0)
        self.loading_since = multiprocessing.RawValue("d", 0.0)
        self.logged = multiprocessing.RawValue("q", 0)

    @contextmanager
    def loading(self) -> Iterator[None]:
        self.loading_since.value = time.monotonic()
        try:
            yield
        finally:
            self.loading_since.value = 0.0

    def in_one_call_for(self, now: float) -> float:
        """How long the worker has been in its current runtime call (0.0 when in none)."""
        return _seconds_since(self.call_since.value, now)

    def loading_for(self, now: float) -> float:
        """How long the worker has been loading the runtime (0.0 when it is not loading it)."""
        return _seconds_since(self.loading_since.value, now)

    def call(self) -> tuple[int, float]:
        """Which runtime call of its task the worker is in, and when that call began."""
        return self.calls.value, self.call_since.value


def _seconds_since(since: float, now: float) -> float:
    """Seconds from `since` to `now`; 0.0 when `since` is 0.0 (not begun)."""
    return now - since if since else 0.0


class _Watched:
    """A worker's runner, telling the pool when it loads the runtime and when each runtime call
    begins and ends (see _Watch): when the pool stops the worker in a call, it knows which.

    The runner is made when first asked for: a worker that only verifies stored outputs, or writes
    golden tests, never imports the runtime."""

    def __init__(self, spec: RunnerSpec, watch: _Watch) -> None:
        self._spec, self._watch = spec, watch
        self._marks = own_marks()  # made in the worker, whose stderr file it marks

    @cached_property
    def _runner(self) -> Runner:
        with self._watch.loading():
            return self._spec.make()

    @property
    def name(self) -> str:
        return self._runner.name

    def describe(self) -> dict:
        return self._runner.describe()

    def replay_options(self) -> list[str]:
        return self._runner.replay_options()

    def run(self, built):
        runner = self._runner  # made before the call's watch starts: loading a runtime is no call
        watch = self._watch
        watch.calls.value += 1
        watch.logged.value = began = position()
        self._marks.began(began, getattr(built, "case_id", None) or isolated.NO_ID)  # the log says which case wrote what
        watch.call_since.value = time.monotonic()
        try:
            return runner.run(built)
        finally:
            watch.call_since.value = 0.0


class _Worker:
    """One worker process, its end of the pipe, and the positions of the units it holds, oldest
    first. A careful one keeps the runtime in a process of its own (see the module's docstring)."""

    def __init__(self, arguments: tuple, careful: bool = False) -> None:
        self.careful = careful
        self.watch = _Watch()
        # Not a daemon: daemons may not start children, and a backend, or a careful worker, does.
        # It ends with this process all the same (die_with_parent, and `stop`).
        self.process, self.connection, self.stderr = start_logged_worker(_serve, (*arguments, careful, self.watch))
        self.positions: deque[int] = deque()

    def give(self, position: int, unit: Task) -> bool:
        """Send the unit; False, sending nothing, where it is large (QUIET_UNIT_BYTES) and this
        worker already holds one."""
        message = ForkingPickler.dumps((position, unit))
        if self.positions and len(message) > QUIET_UNIT_BYTES:
            return False
        self.positions.append(position)
        try:
            self.connection.send_bytes(message)
        except OSError:
            pass  # it died before taking the unit: `_ready` sees it end, and the unit is rescued
        return True

    def answer(self) -> tuple[int, Any] | None:
        """The oldest unit's answer, or None when the worker died instead of answering."""
        try:
            if self.connection.poll():
                position, results = self.connection.recv()
                self.positions.popleft()
                return position, results
        except (EOFError, OSError):
            pass
        return None

    def stop(self, kill: bool) -> None:
        self.ask_to_stop(kill)
        self.wait()

    def ask_to_stop(self, kill: bool) -> None:
        if kill:
            kill_worker(self.process)
            return
        try:
            self.connection.send(None)
        except OSError:
            pass

    def wait(self) -> None:
        """Wait for the worker to end, then end what is left of its process group (what a runtime
        it ran in-process started)."""
        self.process.join(5)
        end_group(self.process)
        self.connection.close()


class _Queue:
    """The units (or shrink tasks) not yet given to a worker, by position, in plan order; and the
    answer of a unit shared out in parts, put together from theirs (parts take positions after
    the units')."""

    def __init__(self, units: list[Task], merge: Callable[[list], Any]) -> None:
        self.units = list(units)
        self._waiting = deque(range(len(units)))
        self._merge = merge
        self._whole: dict[int, int] = {}  # a part's position: its unit's
        self._parts: dict[int, list[int]] = {}  # a shared unit's position: its parts'
        self._answers: dict[int, Any] = {}  # parts' answers, until their unit's are all in

    def next(self) -> int | None:
        return self._waiting.popleft() if self._waiting else None

    def __bool__(self) -> bool:
        return bool(self._waiting)

    def put_back(self, positions: list[int]) -> None:
        """Units to give out next, in their order: those a dead worker held."""
        self._waiting.extendleft(reversed(positions))

    def is_part(self, position: int) -> bool:
        return position in self._whole

    def share(self, position: int, parts: list[Task]) -> None:
        """Give out `position` next as `parts` instead."""
        self._parts[position] = list(range(len(self.units), len(self.units) + len(parts)))
        self.units += parts
        self._whole.update((part, position) for part in self._parts[position])
        self.put_back(self._parts[position])

    def answered(self, position: int, answer: Any, finished: dict[int, Any]) -> None:
        """Record an answer in `finished` by its unit's position; a part's, once every part is in."""
        whole = self._whole.get(position)
        if whole is None:
            finished[position] = answer
            return
        self._answers[position] = answer
        if all(part in self._answers for part in self._parts[whole]):
            finished[whole] = self._merge([self._answers.pop(part) for part in self._parts[whole]])


class _Pool:
    """Workers that hold up to UNITS_IN_FLIGHT units each (a careful one, one), answering in
    order; results are handed out in the units' order, whoever ran them. A worker that spends more
    than `case_timeout` seconds in one runtime call is treated as dead (one that fails to load the
    runtime is replaced by a like one: see `_load_again`). Once one has died, only careful
    workers are given units: the others finish what they hold and are replaced by careful ones;
    and each unit is first cut by `share(unit, N)` into parts for the N workers (one part: not
    cut), whose answers `merge` puts together."""

    def __init__(self, size: int, arguments: tuple, on_note: Callable[[str], None], case_timeout: float | None = None,
                 share: Callable[[Task, int], list[Task]] = lambda task, count: [task],
                 merge: Callable[[list], Any] = lambda answers: answers[0],
                 mark_hang: Callable[[Task, int, float, str], Task] = lambda task, call, seconds, last_words: task) -> None:
        self._arguments = arguments
        self._on_note = on_note
        self._case_timeout = case_timeout
        self._share, self._merge, self._mark_hang = share, merge, mark_hang
        self._ahead: dict[int, Any] = {}  # see in_order
        self._careful_only = False
        self._failed_loads = 0
        self._workers: list[_Worker] = []
        try:
            for _ in range(size):
                self._workers.append(_Worker(arguments))
        except BaseException:
            # No pool to close comes of it (the system would start no more workers, say): those
            # started end here, not whenever this process or its command does.
            self.close(kill=True)
            raise

    def in_order(self, units: list[Task], rescue: Callable[[Task], Any]) -> Iterator[Any]:
        """What each unit (or shrink task) gives, in their order. What a worker that died held goes
        to careful workers (see the class); what a careful worker that died was running is done
        with `rescue`."""
        queue = _Queue(units, self._merge)
        finished = self._ahead = {}  # by position, until its turn comes
        self._fill_all(queue)
        for position in range(len(units)):
            while position not in finished:
                for index in self._ready():
                    done = self._workers[index].answer()
                    if done is None:
                        done = self._replace(index, queue, rescue)
                    if done is not None:
                        queue.answered(*done, finished)
                self._fill_all(queue)
            answer = finished.pop(position)
            if isinstance(answer, _Refused):
                raise answer.error
            yield answer

    def finished_ahead(self) -> list[Any]:
        """What the units that finished before their turn gave, in their order (and no longer held)."""
        found = [self._ahead[p] for p in sorted(self._ahead)]
        self._ahead.clear()
        return found

    def _fill_all(self, queue: _Queue) -> None:
        for index in range(len(self._workers)):
            self._fill(index, queue)

    def _fill(self, index: int, queue: _Queue) -> None:
        worker = self._workers[index]
        if self._careful_only and not worker.careful:
            if worker.positions or not queue:
                return  # it finishes what it holds; nothing waits for its place
            worker.stop(kill=False)
            worker = self._workers[index] = _Worker(self._arguments, careful=True)
        # A careful worker holds one unit: a part queued behind one that hangs would wait there
        # while another worker idles.
        held = 1 if worker.careful else UNITS_IN_FLIGHT
        while len(worker.positions) < held and (position := queue.next()) is not None:
            if self._careful_only and not queue.is_part(position):
                parts = self._share(queue.units[position], len(self._workers))
                if len(parts) > 1:
                    queue.share(position, parts)
                    continue
            if not worker.give(position, queue.units[position]):
                queue.put_back([position])  # a large unit waits for a worker that holds nothing
                return

    def _ready(self) -> list[int]:
        """Indices of busy workers that answered, died or overran the case timeout."""
        busy = {i: w for i, w in enumerate(self._workers) if w.positions}
        signalled = set(wait([w.connection for w in busy.values()] + [w.process.sentinel for w in busy.values()],
                             self._next_check(busy.values())))
        return [i for i, w in busy.items() if w.connection in signalled or w.process.sentinel in signalled or self._overdue(w)]

    def _next_check(self, busy) -> float | None:
        """Seconds until a busy worker could overrun, at most WATCH_INTERVAL: a call that hangs is
        caught within that of the case timeout, whenever it began."""
        if self._case_timeout is None:
            return None
        now = time.monotonic()
        return max(0.0, min(WATCH_INTERVAL, *(self._time_left(w.watch, now) for w in busy)))

    def _time_left(self, watch: _Watch, now: float) -> float:
        """Seconds until a watched worker overruns: the case timeout in its runtime call, or
        WORKER_START_SECONDS loading the runtime."""
        return min(self._case_timeout - watch.in_one_call_for(now), isolated.WORKER_START_SECONDS - watch.loading_for(now))

    def _overdue(self, worker: _Worker) -> bool:
        return self._case_timeout is not None and self._time_left(worker.watch, time.monotonic()) < 0

    def _replace(self, index: int, queue: _Queue, rescue) -> tuple[int, Any] | None:
        """Stop a dead (or overdue) worker and start a careful one in its place. The units it held
        go back to the front of the queue, or, when the dead worker was careful itself, those it
        had not started do, and the one it was running is done here with `rescue`, whose position
        and answer are returned. One that died or overran loading the runtime failed no case (see
        `_load_again`)."""
        dead = self._workers[index]
        if dead.watch.loading_for(time.monotonic()):
            return self._load_again(index, queue)
        call = dead.watch.call()
        overran = self._overdue(dead)
        dead.stop(kill=True)
        running, *unstarted = dead.positions
        self._workers[index] = _Worker(self._arguments, careful=True)
        self._careful_only = True
        what = (f"spent more than {self._case_timeout:g} s in one runtime call and was stopped" if overran
                else f"died ({_death(dead.process.exitcode)})")
        unit = queue.units[running].describe()
        if dead.careful:
            self._on_note(f"a worker process {what}; its {unit} ran in the main process")
            queue.put_back(unstarted)
            return running, rescue(queue.units[running])
        if call[1]:  # it died (or was stopped) in a runtime call: the log says which wrote what it wrote then
            marks = CaseMarks(dead.stderr)
            marks.mark_if_written(dead.watch.logged.value, f"runtime call {call[0]} of its {unit} (the worker "
                                  f"{'was stopped' if overran else 'died'} in it)", dead.stderr)
            marks.close()
        hung = ""
        if overran and dead.watch.call() == call:  # still in the call it overran when stopped: that call hung
            last_words = written_since(dead.stderr, dead.watch.logged.value)
            queue.units[running] = self._mark_hang(queue.units[running], call[0], self._case_timeout, last_words)
            hung = "; the case that hung is a timeout, not run again"
        self._on_note(f"a worker process {what}; its {unit} runs again, shared among workers that keep the "
                      f"runtime in a process of its own, as every worker does from now on{hung}")
        queue.put_back([running, *unstarted])
        return None

    def _load_again(self, index: int, queue: _Queue) -> None:
        """A worker that died or overran loading the runtime, before running any case: a like one
        takes its place and the units it held; when a worker of the pool failed so before, the
        runtime cannot be loaded in a worker (UnavailableError), as with the isolated runner."""
        dead = self._workers[index]
        overran = self._overdue(dead)
        dead.stop(kill=True)
        how = isolated.load_failure(died=None if overran else _death(dead.process.exitcode)) + written_since(dead.stderr, 0)
        if self._failed_loads:
            raise isolated.not_loadable(how)
        self._failed_loads += 1
        self._workers[index] = _Worker(self._arguments, careful=dead.careful)
        queue.put_back(list(dead.positions))
        self._on_note(f"a worker process failed to load the runtime (it {how}); a fresh one runs its units")

    def close(self, kill: bool) -> None:
        # Every worker is told first, then waited for: they wind down (and close their own
        # runtime workers) at the same time.
        for worker in self._workers:
            worker.ask_to_stop(kill)
        for worker in self._workers:
            worker.wait()
