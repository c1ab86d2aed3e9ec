"""`--jobs`: the same results in the same order for any number of workers, and a worker that dies
costs its unit nothing but time."""

import json
import os
import time

import pytest

from conformance.execute import RunOptions, plan, select_examples
from conftest import CRASHING, EXITING, PASSING, one_and_two_jobs_meeting_hangs, without_timings
from conformance.parallel import AUTO_PARALLEL_UNITS, worker_count

def NO_DIFF(spec):
    raise AssertionError("a task that is not a diff asked for a second runner")


SHARED_OUT = "runs again, shared among workers that keep the runtime in a process of its own, as every worker does from now on"


def test_jobs_do_not_change_results(conform, tmp_path):
    args = ("run", "--op", "Clip", "--opset", "13", "--examples", "6", "--seed", "11", "--shrink", "0")
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    serial = conform(*args, "--jobs", "1", "--report-json", str(one))
    parallel = conform(*args, "--jobs", "2", "--report-json", str(two))
    assert without_timings(one) == without_timings(two)
    assert json.loads(one.read_text())["summary"]["total"] > 100
    assert serial.code == parallel.code
    # No worker died on the way: a dead worker's unit would be rescued serially, and say so.
    assert "note:" not in parallel.stderr


def test_a_dead_worker_costs_its_unit_nothing_but_time(conform):
    # Without isolation the runtime crashes the pool worker itself; its unit runs again in a
    # worker process of its own, so each crash is still pinned on its case.
    result = conform("run", "--op", "Slice", "--opset", "13", "--dtype", "float", "--no-hypothesis", "--backend", "crashy",
                     "--no-isolation", "--jobs", "2", "--case", CRASHING, "--case", PASSING, "--case", EXITING)
    outcomes = {r["id"]: (r["outcome"], r["message"]) for r in result.report["results"]}
    assert outcomes[CRASHING][0] == "crash" and "SIGSEGV" in outcomes[CRASHING][1]
    assert outcomes[EXITING][0] == "crash" and "code 7" in outcomes[EXITING][1]
    assert outcomes[PASSING][0] == "pass"
    assert result.code == 1
    assert "note: a worker process died (killed by signal SIGSEGV)" in result.stderr


def test_isolated_jobs_report_crashes_and_hangs_as_a_serial_isolated_run_does(conform, tmp_path):
    # With isolation the pool's workers run the runtime in-process and are themselves what a crash
    # or a hang costs: each case still gets the verdict, message and all, that a serial run gives.
    hanging = "Slice-13/start_beyond_dim/float/int64"  # the crashy backend sleeps 600 s on it
    args = ("run", "--op", "Slice", "--opset", "13", "--dtype", "float", "--no-hypothesis", "--backend", "crashy",
            "--timeout", "1", "--case", CRASHING, "--case", PASSING, "--case", EXITING, "--case", hanging)
    serial = conform(*args, "--jobs", "1", "--report-json", str(tmp_path / "one.json"))
    parallel = conform(*args, "--jobs", "2", "--report-json", str(tmp_path / "two.json"))
    assert without_timings(tmp_path / "one.json") == without_timings(tmp_path / "two.json")
    outcomes = {r["id"]: r["outcome"] for r in json.loads((tmp_path / "two.json").read_text())["results"]}
    assert outcomes == {CRASHING: "crash", EXITING: "crash", hanging: "timeout", PASSING: "pass"}
    assert serial.code == parallel.code == 1
    # The first crash hands the unit to careful workers, which take the crashes and the hang
    # after it in their stride (the hang alone: see the pool test below).
    notes = [line for line in parallel.stderr.splitlines() if line.startswith("note: a worker process")]
    assert notes and all(n.endswith(SHARED_OUT) for n in notes)


def test_isolated_jobs_meet_each_hang_once_when_a_watched_worker_meets_it_first(conform, tmp_path, monkeypatch):
    # Nothing crashes first: a watched worker meets the first hang and is stopped, and its unit runs
    # again in a careful worker, which takes that case as the timeout it was and meets only the
    # second hang itself: two hangs met, as in a serial run, and the serial run's report.
    cases = [f"--case=Slice-13/{name}/float/{tind}" for name in ("start_beyond_dim", "negative_end") for tind in ("int32", "int64")]
    hangs = tmp_path / "hangs.txt"
    monkeypatch.setenv("CRASHY_HANGS", str(hangs))  # the crashy backend hangs on both start_beyond_dim cases
    args = ("run", "--op", "Slice", "--opset", "13", "--no-hypothesis", "--backend", "crashy", "--timeout", "1", *cases)
    serial, parallel = one_and_two_jobs_meeting_hangs(conform, args, hangs, tmp_path)
    results = json.loads((tmp_path / "two.json").read_text())["results"]
    assert sorted(r["outcome"] for r in results) == ["pass", "pass", "timeout", "timeout"] and serial.code == parallel.code == 1
    # Each timeout quotes what the runtime wrote during the call that hung, the one the watched
    # worker was stopped in included (the reports agree, so the serial run's quote it too).
    assert [r["message"] for r in results if r["outcome"] == "timeout"] == [
        "no answer within 1 s; worker killed; its stderr, last: crashy warns: a case with starts 7 | crashy: about to hang"] * 2
    assert "note: a worker process spent more than 1 s in one runtime call and was stopped" in parallel.stderr
    assert "the case that hung is a timeout, not run again" in parallel.stderr


def test_a_watched_runner_shows_when_it_loads_the_runtime_when_its_call_began_and_which_call_it_is():
    from conformance.parallel import _Watch, _Watched

    class Runner:
        name = "fake"
        seen = []
        counted = []

        def run(self, built):
            self.seen.append(watch.call_since.value)
            self.counted.append(watch.calls.value)
            if built == "raise":
                raise RuntimeError("boom")
            return "output"

    class Spec:
        made = 0

        def make(self):
            Spec.made += 1
            Spec.call_while_made = watch.call_since.value
            Spec.loading_while_made = watch.loading_for(time.monotonic())
            return Runner()

    watch = _Watch()
    watched = _Watched(Spec(), watch)
    assert Spec.made == 0  # made when first asked for: a worker that only verifies never imports the runtime
    before = time.monotonic()
    assert watched.run("model") == "output"
    assert watch.call_since.value == 0.0 and before <= Runner.seen[0] <= time.monotonic()
    with pytest.raises(RuntimeError):
        watched.run("raise")
    assert watch.call_since.value == 0.0 and Runner.seen[1] >= Runner.seen[0] and Spec.made == 1 and watched.name == "fake"
    assert Runner.counted == [1, 2] and watch.calls.value == 2  # the call a stopped worker was in stays readable
    assert Spec.call_while_made == 0.0  # a runtime's import is not a call that can time out ...
    assert Spec.loading_while_made > 0.0 and watch.loading_for(time.monotonic()) == 0.0  # ... it is watched as loading


def test_jobs_default_to_the_cores_only_for_runs_with_enough_units():
    assert worker_count(3, 1) == 3
    assert worker_count(None, AUTO_PARALLEL_UNITS - 1) == 1
    assert worker_count(None, AUTO_PARALLEL_UNITS) == (os.cpu_count() or 1)
    assert [worker_count(None, AUTO_PARALLEL_UNITS, cores) for cores in (1, 2, 8)] == [1, 2, 8]
    units = plan(RunOptions(op="Slice", opset=13))
    assert len(units) >= AUTO_PARALLEL_UNITS  # the main job is big enough to share out


def test_a_plan_sends_workers_only_the_case_file_cases_the_run_chose():
    # Each unit is pickled to a worker and its results back: cases of other versions, dtypes or
    # ids are left out of the plan, not sent and dropped there.
    from conformance.execute import examples_of

    options = RunOptions(op="Slice", opset=13, dtypes=("float", "int8"))
    units = [u for u in plan(options) if u.yaml_examples]
    sent = [e for u in units for e in u.yaml_examples]
    assert sent and all(e.version.since_version == 13 and e.dtype in ("float", "int8") for e in sent)
    assert [e.id for e in sent] == [e.id for u in units for e in examples_of(u, options)]
    one = plan(RunOptions(op="Slice", opset=13, case_ids=(PASSING,), use_hypothesis=False))
    assert [[e.id for e in u.yaml_examples] for u in one] == [[PASSING]]


@pytest.mark.parametrize("options", [
    RunOptions(op="Clip"),
    RunOptions(op="ConstantOfShape", dtypes=("bool", "int4"), modes=("input", "constant")),
    RunOptions(op="Slice", opset=13, use_hypothesis=False, shard=(2, 3)),
    RunOptions(op="Slice", opset=10, use_yaml=False, examples=3),
])
def test_a_plan_counts_its_results_before_any_group_is_drawn(options):
    # The progress bar of a --jobs run: the workers draw the hypothesis groups.
    from conformance.execute import planned_count

    assert planned_count(plan(options), options) == len(select_examples(options)) * len(options.modes)


def test_a_plan_does_not_guess_how_many_drawn_cases_a_shard_or_id_keeps():
    from conformance.execute import planned_count

    for options in (RunOptions(op="Clip", shard=(1, 2)), RunOptions(op="Clip", case_ids=("Clip-13/hypothesis-0001/float",))):
        assert planned_count(plan(options), options) is None
    yaml_only = RunOptions(op="Clip", shard=(1, 2), use_hypothesis=False)  # the plan holds the chosen cases
    assert planned_count(plan(yaml_only), yaml_only) == len(select_examples(yaml_only))


def test_a_serial_run_shrinks_side_by_side_unless_told_to_use_no_worker_or_on_one_core():
    from conformance.parallel import shrinks_side_by_side

    assert shrinks_side_by_side(None, cores=2) and shrinks_side_by_side(None, cores=8)
    assert not shrinks_side_by_side(1, cores=8)  # --jobs 1
    assert not shrinks_side_by_side(None, cores=1)


def test_a_worker_that_dies_before_taking_its_unit_hands_it_to_the_rescue():
    # A fresh worker can die at once (the runtime fails to load, the machine is out of memory);
    # handing it a unit must not end the run with a broken pipe.
    from conformance.parallel import _Worker
    from conformance.runners import RunnerSpec

    options = RunOptions(op="Slice", opset=13, dtypes=("float",), use_hypothesis=False)
    worker = _Worker((RunnerSpec(), options))
    worker.process.kill()
    worker.process.join(10)
    worker.give(0, plan(options)[0])
    assert list(worker.positions) == [0] and worker.answer() is None
    worker.wait()


def test_a_dead_workers_running_unit_goes_to_a_careful_worker_and_the_rest_back_to_the_queue():
    # A worker holds two units; when it dies, the one it was running goes to the careful worker
    # that replaces it (noted), not to this process; the other goes back to the queue, and every
    # unit's results still come back in plan order.
    from conformance.execute import examples_of, run_examples
    from conformance.parallel import _Pool
    from conformance.runners import RunnerSpec, make_runner

    options = RunOptions(op="Slice", opset=13, dtypes=("float",), use_hypothesis=False)
    units = plan(options)[:3]
    notes = []
    pool = _Pool(1, (RunnerSpec(), options), notes.append)
    first = pool._workers[0]
    first.process.kill()
    first.process.join(10)
    rescued = []

    def rescue(unit):
        rescued.append(unit)
        return run_examples(examples_of(unit, options), make_runner(), options)

    found = list(pool.in_order(units, rescue))
    pool.close(kill=False)
    serial = [run_examples(examples_of(u, options), make_runner(), options) for u in units]
    assert [[r.example.id for r in f] for f in found] == [[r.example.id for r in s] for s in serial]
    assert [[r.verdict.outcome for r in f] for f in found] == [[r.verdict.outcome for r in s] for s in serial]
    assert rescued == [] and len(notes) == 1 and "died" in notes[0]
    assert notes[0].endswith(SHARED_OUT)
    assert pool._workers[0] is not first and pool._workers[0].careful and not pool._workers[0].positions


def test_a_unit_cut_in_parts_gives_the_units_results_once_they_are_put_back_together():
    # Every Nth case in each part, each case in every mode: put back, the unit's own order.
    from conformance.execute import examples_of, merge_parts, run_examples
    from conformance.runners import make_runner

    options = RunOptions(op="Slice", opset=13, dtypes=("float",), use_hypothesis=False, modes=("input", "constant"))
    unit, runner = plan(options)[0], make_runner()
    whole = [(r.example.id, r.extra.get("mode"), r.outcome) for r in run_examples(examples_of(unit, options), runner, options)]
    for count in (2, 3):
        parts = unit.parts(count)
        assert [len(examples_of(p, options)) for p in parts] == [len(range(k, len(whole) // 2, count)) for k in range(count)]
        merged = merge_parts([run_examples(examples_of(p, options), runner, options) for p in parts], options)
        assert [(r.example.id, r.extra.get("mode"), r.outcome) for r in merged] == whole
    assert parts[1].describe().startswith("part 2 of 3 of the ")
    group = plan(RunOptions(op="Slice", opset=13, dtypes=("float",), use_yaml=False))[0]
    assert group.parts(3) == [group]  # each part would draw the whole group again


def test_after_a_death_the_dead_workers_unit_is_shared_out_and_every_worker_turns_careful():
    from conformance.execute import examples_of, merge_parts, run_examples
    from multiprocessing.reduction import ForkingPickler

    from conformance.parallel import QUIET_UNIT_BYTES, _parts, _Pool
    from conformance.runners import RunnerSpec, make_runner

    options = RunOptions(op="Slice", opset=13, dtypes=("float", "int32"), use_hypothesis=False)
    units = plan(options)[:3]
    notes, shared = [], []

    def share(unit, count):
        shared.append(_parts(unit, count))
        return shared[-1]

    pool = _Pool(2, (RunnerSpec(), options), notes.append, share=share, merge=lambda a: merge_parts(a, options))
    first, second = pool._workers
    first.process.kill()
    first.process.join(10)
    found = list(pool.in_order(units, lambda unit: pytest.fail("rescued in this process")))
    serial = [run_examples(examples_of(u, options), make_runner(), options) for u in units]
    assert [[(r.example.id, r.outcome) for r in f] for f in found] == [[(r.example.id, r.outcome) for r in s] for s in serial]
    assert len(notes) == 1 and notes[0].endswith(SHARED_OUT)
    # These units are larger than a busy worker is sent, so each worker held one: the dead worker's
    # went out again as one part per worker, the living worker finished its own whole, and every
    # unit after them went out in parts.
    assert all(len(ForkingPickler.dumps(u)) > QUIET_UNIT_BYTES for u in units)
    assert [[(p.packed_cases, p.part) for p in parts] for parts in shared] == [
        [(u.packed_cases, (0, 2)), (u.packed_cases, (1, 2))] for u in (units[0], units[2])]
    assert all(w.careful for w in pool._workers) and second not in pool._workers
    pool.close(kill=False)


def test_a_careful_worker_is_given_one_part_at_a_time_so_the_next_goes_to_the_next_worker():
    # Two parts in flight in one worker would meet their hangs one after another, as the uncut
    # unit would have, while the other worker idles.
    from collections import deque

    from conformance.execute import merge_parts
    from conformance.parallel import _parts, _Pool, _Queue

    class Careful:
        careful = True

        def __init__(self):
            self.positions = deque()

        def give(self, position, unit):
            self.positions.append(position)
            return True

    options = RunOptions(op="Slice", opset=13, dtypes=("float",), use_hypothesis=False)
    units = plan(options)[:2]
    pool = _Pool(0, (), lambda note: None, share=_parts, merge=lambda a: merge_parts(a, options))
    pool._workers = [Careful(), Careful()]
    pool._careful_only = True
    queue = _Queue(units, pool._merge)
    pool._fill_all(queue)
    assert [list(w.positions) for w in pool._workers] == [[2], [3]]  # parts 1 and 2 of unit 0
    assert [queue.units[p].part for p in (2, 3)] == [(0, 2), (1, 2)] and queue.next() == 1


def test_a_system_that_will_not_start_worker_processes_is_an_unavailable_error(monkeypatch):
    # Out of processes or memory, starting a worker raises OSError (EAGAIN, ENOMEM); the run must
    # end with one clear message (exit 3), the isolated runner left closable.
    import errno
    import multiprocessing.process

    import pytest

    from conformance.errors import UnavailableError
    from conformance.execute import run_examples, select_examples
    from conformance.parallel import run_parallel
    from conformance.runners import RunnerSpec, make_runner

    def refused(process):
        raise OSError(errno.EAGAIN, os.strerror(errno.EAGAIN))

    monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", refused)
    options = RunOptions(op="Slice", opset=13, dtypes=("float",), use_hypothesis=False)
    runner = make_runner(isolate=True)
    with pytest.raises(UnavailableError, match="could not start a worker process .*Resource temporarily unavailable"):
        run_examples(select_examples(options)[:2], runner, options)
    runner.close()
    with pytest.raises(UnavailableError, match="could not start a worker process"):
        run_parallel(plan(options), options, RunnerSpec(), 2, False)


def test_the_workers_shrink_a_runs_failures_as_a_serial_run_would(conform, tmp_path):
    # The shrinking that follows a run is shared out to the --jobs workers, or by default to
    # workers of its own; every failing group still gets the minimal case that `--jobs 1` finds
    # one group after another in the main process, and the report does not change.
    args = ("run", "--op", "Slice", "--opset", "13", "--no-yaml", "--dtype", "float", "--dtype", "int32",
            "--backend", "wrong_slice", "--no-isolation")
    one, two, default = tmp_path / "one.json", tmp_path / "two.json", tmp_path / "default.json"
    serial = conform(*args, "--jobs", "1", "--report-json", str(one))
    parallel = conform(*args, "--jobs", "2", "--report-json", str(two))
    assert conform(*args, "--report-json", str(default)).code == 1
    assert without_timings(one) == without_timings(two) == without_timings(default)
    minimal = [r["minimal"] for r in json.loads(two.read_text())["results"] if "yaml" in r.get("minimal", {})]
    assert len(minimal) >= 2  # enough groups for both workers to shrink one
    assert serial.code == parallel.code == 1 and "note:" not in parallel.stderr


SHRINKING = RunOptions(op="Slice", opset=13, dtypes=("float", "int32"), use_yaml=False)


@pytest.fixture
def failing_groups(monkeypatch):
    """The wrong_slice backend's failing groups as shrink tasks, and each one's minimal case found
    in this process; the backend importable by workers too (they take this process's sys.path)."""
    from conftest import BACKENDS

    from conformance.execute import FAILING, ShrinkTask, minimal_case, run_examples, select_examples
    from conformance.runners import make_runner

    monkeypatch.syspath_prepend(str(BACKENDS))
    runner = make_runner(backend="wrong_slice")
    failing = {}
    for result in run_examples(select_examples(SHRINKING), runner, SHRINKING):
        if result.outcome in FAILING:
            failing.setdefault(result.example.types["T"] + result.example.types["Tind"], result.example)
    tasks = [ShrinkTask(example, "input") for example in failing.values()]
    assert len(tasks) >= 3
    return tasks, [minimal_case(task, runner, SHRINKING) for task in tasks]


def not_here(*args):
    raise AssertionError("done in the main process, not in a worker")


def not_in_this_process(monkeypatch):
    # Workers come from the fork server, which imported conform before this patch.
    monkeypatch.setattr("conformance.parallel.minimal_case", not_here)


def test_a_pool_shrinks_each_task_in_its_workers_in_the_order_given(monkeypatch, failing_groups):
    from conformance.parallel import WorkerPool
    from conformance.runners import RunnerSpec

    tasks, serial = failing_groups
    not_in_this_process(monkeypatch)
    with WorkerPool(2, SHRINKING, RunnerSpec(backend="wrong_slice"), False) as pool:
        assert shrunk(pool.minimal_cases(tasks)) == shrunk(serial)


def test_a_serial_runs_failures_are_shrunk_side_by_side_in_workers(monkeypatch, failing_groups):
    from conformance.parallel import shrink_side_by_side
    from conformance.runners import RunnerSpec

    tasks, serial = failing_groups
    not_in_this_process(monkeypatch)
    assert shrunk(shrink_side_by_side(tasks, SHRINKING, RunnerSpec(backend="wrong_slice"), cores=2)) == shrunk(serial)


def test_a_worker_that_dies_while_shrinking_has_its_group_shrunk_by_the_careful_worker_in_its_place(
        monkeypatch, failing_groups):
    from conformance.parallel import WorkerPool
    from conformance.runners import RunnerSpec

    tasks, serial = failing_groups
    not_in_this_process(monkeypatch)
    notes = []
    with WorkerPool(1, SHRINKING, RunnerSpec(backend="wrong_slice"), False, notes.append) as pool:
        pool._pool._workers[0].process.kill()
        assert shrunk(pool.minimal_cases(tasks[:2])) == shrunk(serial[:2])
        assert pool._pool._workers[0].careful
    assert len(notes) == 1 and "died" in notes[0] and "its shrinking of hypothesis group Slice-13" in notes[0]


def test_a_careful_worker_that_dies_has_its_unit_done_here_and_is_replaced_by_another():
    # The last resort: a unit is handed to a worker at most twice; the careful worker's unit runs
    # in this process, on an isolated runner (the rescue).
    from conformance.execute import examples_of, run_examples
    from conformance.parallel import _Pool, _Worker
    from conformance.runners import RunnerSpec, make_runner

    options = RunOptions(op="Slice", opset=13, dtypes=("float",), use_hypothesis=False)
    units = plan(options)[:2]
    arguments = (RunnerSpec(), options)
    notes, rescued = [], []
    pool = _Pool(0, arguments, notes.append)
    careful = _Worker(arguments, careful=True)
    pool._workers.append(careful)
    careful.process.kill()
    careful.process.join(10)

    def rescue(unit):
        rescued.append(unit)
        return run_examples(examples_of(unit, options), make_runner(), options)

    found = list(pool.in_order(units, rescue))
    pool.close(kill=False)
    assert rescued == [units[0]]
    assert [[r.example.id for r in f] for f in found] == [[e.id for e in examples_of(u, options)] for u in units]
    assert notes == [f"a worker process died (killed by signal SIGKILL); its {units[0].describe()} ran in the main process"]
    assert pool._workers[0] is not careful and pool._workers[0].careful


def test_a_watched_worker_that_hangs_in_a_call_is_stopped_and_its_unit_done_by_a_careful_worker(monkeypatch, tmp_path):
    # Workers run the runtime in-process: with isolation a case that hangs there is caught by the
    # pool watching the call, and the unit runs again in the careful worker that takes the stopped
    # one's place, not in this process (which would leave the other workers waiting). The pool
    # knows which runtime call of the unit hung, so there that call's case is a timeout, judged as
    # an isolated runner's timeout is, without meeting the hang (and its timeout) a second time.
    from conftest import BACKENDS

    from conformance.execute import select_examples
    from conformance.parallel import WorkerPool
    from conformance.runners import RunnerSpec, make_runner
    from conformance.execute import run_examples as serially

    monkeypatch.syspath_prepend(str(BACKENDS))
    hangs = tmp_path / "hangs.txt"
    monkeypatch.setenv("CRASHY_HANGS", str(hangs))
    hanging = "Slice-13/start_beyond_dim/float/int64"  # the crashy backend sleeps 600 s on it
    options = RunOptions(op="Slice", opset=13, dtypes=("float",), use_hypothesis=False, case_ids=(hanging, PASSING), timeout=1.0)
    units = [u for u in plan(options) if any(e.id == hanging for e in u.yaml_examples)]
    runner = make_runner(backend="crashy", isolate=True, timeout=options.timeout)
    try:
        expected = {r.example.id: (r.outcome, r.verdict.message) for r in serially(select_examples(options, units), runner, options)}
    finally:
        runner.close()
    assert len(hangs.read_text().splitlines()) == 1 and expected[hanging][0] == "timeout"
    hangs.unlink()
    monkeypatch.setattr("conformance.parallel.run_examples", not_here)
    notes = []
    started = time.monotonic()
    with WorkerPool(1, options, RunnerSpec(backend="crashy"), True, notes.append) as pool:
        found = {r.example.id: (r.outcome, r.verdict.message) for r in pool.run(units)}
    assert found == expected
    assert len(hangs.read_text().splitlines()) == 1  # met by the watched worker, not again by the careful one
    assert notes == [f"a worker process spent more than 1 s in one runtime call and was stopped; its {units[0].describe()}"
                     f" {SHARED_OUT}; the case that hung is a timeout, not run again"]
    assert time.monotonic() - started < 30


def shrunk(found):
    return [(m[0].id, m[1], {k: v.tobytes() for k, v in m[0].inputs.items()}) for m in found]


def test_the_pool_looks_at_watched_workers_by_the_time_one_could_overrun(monkeypatch):
    from conformance.parallel import WATCH_INTERVAL, _Pool
    from conformance.runners import isolated

    monkeypatch.setattr(isolated, "WORKER_START_SECONDS", 60.0)

    class Watch:
        def __init__(self, in_call, loading):
            self.in_call, self.loading = in_call, loading

        def in_one_call_for(self, now):
            return self.in_call

        def loading_for(self, now):
            return self.loading

    class Worker:
        def __init__(self, in_call, loading=0.0):
            self.watch = Watch(in_call, loading)

    pool = _Pool(0, (), lambda note: None, case_timeout=10.0)
    # Between calls: looked at again soon, so a call beginning right after is not missed for long.
    assert pool._next_check([Worker(0.0)]) == WATCH_INTERVAL
    # 9.8 s into a call: looked at when it reaches the timeout; overdue: at once.
    assert pool._next_check([Worker(0.0), Worker(9.8)]) == pytest.approx(0.2)
    assert pool._next_check([Worker(12.0)]) == 0.0
    # Loading the runtime is held to the start-up limit, not the case timeout.
    assert pool._next_check([Worker(0.0, loading=59.9)]) == pytest.approx(0.1)
    assert pool._overdue(Worker(0.0, loading=60.5)) and not pool._overdue(Worker(0.0, loading=30.0))
    assert _Pool(0, (), lambda note: None, case_timeout=0.1)._next_check([Worker(0.0)]) == pytest.approx(0.1)
    assert _Pool(0, (), lambda note: None)._next_check([Worker(100.0)]) is None  # unwatched: wait for answers


def test_an_interrupted_pool_hands_out_the_units_that_finished_behind_a_running_one(monkeypatch):
    # Worker 1 holds units 0 (which hangs) and 1; worker 2 finishes unit 2. Interrupted then, the
    # run still hands out unit 2's results, so an interrupted run's report holds every finished case.
    import signal
    import threading

    from conftest import BACKENDS

    from conformance.execute import WorkUnit, select_examples
    from conformance.parallel import WorkerPool
    from conformance.runners import RunnerSpec

    monkeypatch.syspath_prepend(str(BACKENDS))
    hanging = "Slice-13/start_beyond_dim/float/int64"  # the crashy backend sleeps 600 s on it
    options = RunOptions(op="Slice", opset=13, dtypes=("float",), use_hypothesis=False, case_ids=(hanging, PASSING))
    by_id = {e.id: e for e in select_examples(options)}
    units = [WorkUnit.of_cases((by_id[hanging],)), WorkUnit.of_cases((by_id[PASSING],)), WorkUnit.of_cases((by_id[PASSING],))]
    heard = []
    with pytest.raises(KeyboardInterrupt):
        with WorkerPool(2, options, RunnerSpec(backend="crashy"), False) as pool:

            def interrupt_once_unit_2_is_done():
                waiting_until = time.monotonic() + 60  # then interrupt all the same: fail, not hang
                while 2 not in pool._pool._ahead and time.monotonic() < waiting_until:
                    time.sleep(0.01)
                os.kill(os.getpid(), signal.SIGINT)

            threading.Thread(target=interrupt_once_unit_2_is_done, daemon=True).start()
            pool.run(units, heard.append)
    assert [(r.example.id, r.outcome) for r in heard] == [(PASSING, "pass")]


def test_a_conform_error_raised_in_a_worker_reaches_the_main_process_whole():
    # A worker sends its task's ConformError back pickled; the main process raises it again,
    # with its class (and so its exit code) and message.
    import pickle

    from conformance.errors import CaseFileError, UnavailableError
    from conformance.golden import GoldenError

    for error in (GoldenError("d/output_0.pb: not a readable TensorProto"), UnavailableError("no worker"),
                  CaseFileError([("cases/a.yaml", 3, "unknown key 'x'"), ("cases/b.yaml", None, "empty")])):
        again = pickle.loads(pickle.dumps(error))
        assert type(again) is type(error) and str(again) == str(error) and again.exit_code == error.exit_code
    assert again.problems == error.problems


def test_a_task_run_again_whole_has_the_call_that_hung_answered_as_a_timeout_and_the_others_run():
    from conformance.parallel import _AnsweredHang, _CallCount
    from conformance.runners.base import RunOutput, timeout_message

    class Runner:
        name = "fake"

        def __init__(self):
            self.ran = []

        def describe(self):
            return {"name": self.name}

        def replay_options(self):
            return ["--runner", "fake"]

        def run(self, built):
            self.ran.append(built)
            return RunOutput((built,))

    class Streaming(Runner):
        def run_stream(self, builts):
            for built in builts:
                yield None if built is None else self.run(built)

    # The answer quotes what the stopped worker's runtime wrote to stderr in that call.
    one = _AnsweredHang(Runner(), 2, 1.5, "; its stderr, last: stuck", _CallCount())
    answers = [one.run(b) for b in ("a", "b", "c")]
    assert one._runner.ran == ["a", "c"] and not hasattr(one, "run_stream")
    assert [(a.outputs, a.fault, a.error) for a in answers] == [
        (("a",), None, None), ((), "timeout", timeout_message(1.5) + "; its stderr, last: stuck"), (("c",), None, None)]
    assert one.replay_options() == ["--runner", "fake"] and one.name == "fake"
    # A stream counts only what reaches the runtime: None (a case with nothing to run) is no call.
    stream = _AnsweredHang(Streaming(), 2, 1.5, "", _CallCount())
    answers = list(stream.run_stream(iter(["a", None, "b", "c"])))
    assert stream._runner.ran == ["a", "c"]
    assert [a if a is None else (a.outputs, a.fault) for a in answers] == [(("a",), None), None, ((), "timeout"), (("c",), None)]


def test_a_shrink_task_marked_with_the_call_that_hung_is_shrunk_again_without_that_call():
    # Shrinking is seeded: run again whole, a group's search makes the same calls in the same
    # order, so the call the stopped worker hung in is answered as the timeout a serial run's
    # isolated runner gives, without being made again, and the search goes on as there.
    from conformance.execute import ShrinkTask
    from conformance.parallel import _HangMarked, _perform
    from conformance.runners import make_runner
    from conformance.runners.base import RunOutput

    class Wrong:
        """Fails (no outputs) on inputs of 3 elements or more, so hypothesis searches and then
        shrinks; it remembers its calls, and answers the `hangs_at`th as a timed-out call."""

        name = "wrong"

        def __init__(self, hangs_at=0):
            self.calls, self._hangs_at = [], hangs_at
            self._real = make_runner()

        def describe(self):
            return {"name": self.name}

        def replay_options(self):
            return []

        def run(self, built):
            self.calls.append(built.data + b"".join(a.tobytes() for a in built.feeds.values()))
            if len(self.calls) == self._hangs_at:
                return RunOutput.timed_out(1.0)
            return RunOutput(()) if built.feeds["input"].size >= 3 else self._real.run(built)

    options = RunOptions(op="Clip", opset=13, dtypes=("float",), use_yaml=False, examples=5)
    task = ShrinkTask(select_examples(options)[0], "input")
    serially = Wrong(hangs_at=3)
    expected = _perform(task, serially, options, NO_DIFF)
    assert len(serially.calls) > 3 and expected is not None
    again = Wrong()
    found = _perform(_HangMarked(task, 3, 1.0, ""), again, options, NO_DIFF)
    assert again.calls == serially.calls[:2] + serially.calls[3:]
    assert (found[0].id, found[1], {k: v.tobytes() for k, v in found[0].inputs.items()}) == \
        (expected[0].id, expected[1], {k: v.tobytes() for k, v in expected[0].inputs.items()})


POOL_OF_TWO = '''
import json
from conformance.errors import ConformError
from conformance.execute import RunOptions, plan
from conformance.parallel import run_parallel
from conformance.runners import RunnerSpec, isolated

if __name__ == "__main__":
    isolated.WORKER_START_SECONDS = 1.0
    options = RunOptions(op="Slice", opset=13, dtypes=("float",), use_hypothesis=False, timeout=5.0)
    notes = []
    try:
        results = run_parallel(plan(options), options, RunnerSpec(backend="fails_starting"), 2, True, on_note=notes.append)
        print(json.dumps({"results": [[r.example.id, r.outcome] for r in results], "notes": notes}))
    except ConformError as error:
        print(json.dumps({"error": error.message, "code": error.exit_code, "notes": notes}))
'''


def pool_of_two_failing_to_load(tmp_path, fault: str, times: int | None = None) -> tuple[dict, int]:
    """What a pool of two watched workers gives on Slice-13's float cases when the workers of the
    fails_starting backend fail to load it (`fault`, the first `times` of them; a hang counts after
    1 s), and how many workers loaded it; in a process of its own, so a pool that waits forever fails
    the test instead of stopping the suite."""
    import subprocess
    import sys

    from conftest import failing_starts, with_test_backends

    script, loads = tmp_path / "pool.py", tmp_path / "loads"
    script.write_text(POOL_OF_TWO)
    env = {**with_test_backends(), **failing_starts(loads, fault, times)}
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), len(loads.read_text().splitlines())


@pytest.mark.parametrize("fault", ["exit", "hang"])
def test_a_pool_worker_that_fails_to_load_the_runtime_costs_no_case(tmp_path, monkeypatch, fault):
    # Before, a watched worker that hung loading the runtime kept the run waiting for ever (only a
    # runtime call was timed), and one that died loading it made its units run again on careful workers.
    from conftest import BACKENDS

    from conformance.execute import run_examples
    from conformance.runners import make_runner

    monkeypatch.syspath_prepend(str(BACKENDS))
    answer, loads = pool_of_two_failing_to_load(tmp_path, fault, times=1)
    options = RunOptions(op="Slice", opset=13, dtypes=("float",), use_hypothesis=False)
    runner = make_runner(backend="fails_starting", isolate=False)  # in this process it loads at once
    expected = [[r.example.id, r.outcome] for r in run_examples(select_examples(options), runner, options)]
    assert answer["results"] == expected and loads >= 2
    how = "had not loaded it after 1 s, and was stopped" if fault == "hang" else "died while loading it: exited with code 3"
    said = "its stderr, last: fails_starting: cannot load here"  # what the worker wrote before it failed
    assert answer["notes"] == [f"a worker process failed to load the runtime (it {how}; {said}); a fresh one runs its units"]


@pytest.mark.parametrize("fault", ["exit", "hang"])
def test_a_pool_whose_workers_cannot_load_the_runtime_stops_with_one_error(tmp_path, fault):
    answer, loads = pool_of_two_failing_to_load(tmp_path, fault)
    assert answer["code"] == 3 and loads in (2, 3), answer
    assert "the runtime could not be loaded in a worker process: two workers in a row failed to load it" in answer["error"]
    assert "; its stderr, last: fails_starting: cannot load here)" in answer["error"]


def test_diff_jobs_give_the_serial_diffs_report(conform, tmp_path):
    # diff had no --jobs: a diff of every Slice version took 3.0 s on two cores, 2.2 s with two jobs.
    args = ("diff", "--op", "Slice", "--opset", "13", "--dtype", "float", "--dtype", "int8", "--examples", "5", "--against", "reference")
    serial = conform(*args, "--jobs", "1", "--report-json", str(tmp_path / "one.json"))
    parallel = conform(*args, "--jobs", "2", "--report-json", str(tmp_path / "two.json"))
    default = conform(*args, "--report-json", str(tmp_path / "default.json"))
    assert without_timings(tmp_path / "one.json") == without_timings(tmp_path / "two.json") == without_timings(tmp_path / "default.json")
    results = json.loads((tmp_path / "two.json").read_text())["results"]
    assert serial.code == parallel.code == default.code == 1 and any(r["disagreement"] for r in results)
    assert len(plan(RunOptions(op="Slice", opset=13, dtypes=("float", "int8"), examples=5))) >= AUTO_PARALLEL_UNITS


def test_a_diff_pool_pairs_each_unit_in_its_workers_as_a_serial_diff_does(monkeypatch):
    from conformance import parallel
    from conformance.differential import DiffUnit, diff, spec_from_name
    from conformance.parallel import WorkerPool
    from conformance.runners import RunnerSpec, make_runner

    options = RunOptions(op="Slice", opset=13, dtypes=("float",), examples=5)
    units = plan(options)
    serial = diff(select_examples(options, units), make_runner(), make_runner("reference"), options)
    monkeypatch.setattr(parallel, "diff_unit", NO_DIFF)  # what a worker does is not done here
    diffed = [DiffUnit(unit, spec_from_name("reference")) for unit in units]
    with WorkerPool.for_units(diffed, 2, options, RunnerSpec(), True) as pool:
        pooled = pool.run(diffed)
    assert len(units) >= 2 and len(pooled) == len(serial) > 0
    assert [(r.example.id, r.outcome, r.extra["against"], r.extra["disagreement"], r.replay) for r in pooled] == \
        [(r.example.id, r.outcome, r.extra["against"], r.extra["disagreement"], r.replay) for r in serial]


@pytest.mark.parametrize("side", ["first", "second"])
def test_diff_jobs_meet_each_hang_of_either_runner_once_as_a_serial_diff_does(conform, tmp_path, monkeypatch, side):
    # A diff's two runners make one sequence of runtime calls in a worker: a watched worker stopped
    # in a call of the second runner has that call answered as a timeout when its unit runs again
    # in a careful worker, and the first runner's calls before it are made again, not taken for it.
    hangs = tmp_path / "hangs.txt"
    monkeypatch.setenv("CRASHY_HANGS", str(hangs))  # the crashy backend hangs on both start_beyond_dim cases
    cases = [f"--case=Slice-13/{name}/float/{tind}" for name in ("start_beyond_dim", "negative_end") for tind in ("int32", "int64")]
    runners = ("--backend", "crashy", "--against", "cpu") if side == "first" else ("--against", "backend:crashy")
    args = ("diff", "--op", "Slice", "--opset", "13", "--no-hypothesis", "--timeout", "1", *runners, *cases)
    serial, parallel = one_and_two_jobs_meeting_hangs(conform, args, hangs, tmp_path)
    results = json.loads((tmp_path / "two.json").read_text())["results"]
    crashy = [r["outcome"] if side == "first" else r["against"]["outcome"] for r in results]
    assert sorted(crashy) == ["pass", "pass", "timeout", "timeout"] and serial.code == parallel.code == 1
    assert "the case that hung is a timeout, not run again" in parallel.stderr


def test_diff_jobs_report_the_second_runners_crashes_as_a_serial_diff_does(conform, tmp_path):
    # A worker that dies in the second runner's call hands its unit to a careful worker, whose
    # second runner is isolated as its first is: each crash is its case's, as in a serial diff.
    args = ("diff", "--op", "Slice", "--opset", "13", "--dtype", "float", "--no-hypothesis", "--against", "backend:crashy",
            "--timeout", "1", "--case", CRASHING, "--case", PASSING, "--case", EXITING)
    serial = conform(*args, "--jobs", "1", "--report-json", str(tmp_path / "one.json"))
    parallel = conform(*args, "--jobs", "2", "--report-json", str(tmp_path / "two.json"))
    assert without_timings(tmp_path / "one.json") == without_timings(tmp_path / "two.json")
    against = {r["id"]: r["against"]["outcome"] for r in json.loads((tmp_path / "two.json").read_text())["results"]}
    assert against == {CRASHING: "crash", EXITING: "crash", PASSING: "pass"} and serial.code == parallel.code == 1
    assert "note: a worker process died (killed by signal SIGSEGV)" in parallel.stderr


def test_a_diff_unit_cut_in_parts_gives_the_units_paired_results_once_put_back_together():
    # After a worker dies, a diff's units are shared out among the careful workers as a run's are.
    from conformance.differential import DiffUnit, diff_unit, spec_from_name
    from conformance.execute import merge_parts
    from conformance.runners import make_runner

    options = RunOptions(op="Slice", opset=13, dtypes=("float",), use_hypothesis=False, modes=("input", "constant"))
    [unit] = [u for u in plan(options) if u.yaml_examples][:1]
    task = DiffUnit(unit, spec_from_name("reference"))
    first, second = make_runner(), make_runner("reference")
    whole = diff_unit(task, first, second, options)
    parts = task.parts(3)
    merged = merge_parts([diff_unit(part, first, second, options) for part in parts], options)
    assert len(parts) == 3 and all(p.against == task.against for p in parts)
    assert [(r.example.id, r.extra["mode"], r.outcome, r.extra["against"]) for r in merged] == \
        [(r.example.id, r.extra["mode"], r.outcome, r.extra["against"]) for r in whole]


def test_a_large_unit_goes_only_to_a_worker_that_holds_none():
    # Sent to a busy worker, a unit larger than the pipe takes at once could block this process while
    # the worker blocks writing a large answer: a run that hangs (seen with MatMul cases in --mode all).
    from collections import deque

    from conformance.parallel import QUIET_UNIT_BYTES, _Worker

    class Recorded:
        def __init__(self):
            self.sent = []

        def send_bytes(self, message):
            self.sent.append(message)

    worker = object.__new__(_Worker)
    worker.positions, worker.connection = deque(), Recorded()
    large, small = b"x" * (2 * QUIET_UNIT_BYTES), b"x"
    assert worker.give(0, large) is True, "an idle worker takes a large unit"
    assert worker.give(1, large) is False and list(worker.positions) == [0], "a busy one is not sent another large unit"
    assert len(worker.connection.sent) == 1
    assert worker.give(1, small) is True and list(worker.positions) == [0, 1], "a small unit still goes to a busy worker"
