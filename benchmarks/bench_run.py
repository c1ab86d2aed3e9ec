"""Where a conform run spends its time. Prints figures; asserts nothing.

    python benchmarks/bench_run.py            # everything but --crashes (a minute or two)
    python benchmarks/bench_run.py --quick    # skip --jobs scaling and the full default runs
    python benchmarks/bench_run.py --crashes  # also a runtime that crashes and hangs (3 more minutes)

For a fixed seed and a fixed set of cases it prints, as cases/second and as ratios:
1. generation: YAML cases and hypothesis cases separately (and one 1,000,000-element case);
2. conform's execution on onnxruntime CPU (reference + run + compare, sessions reused);
3. the same cases through one session per case, as onnx's backend runner and onnx_test_runner do;
4. a bare loop of session.run over pre-built sessions and feeds (the runtime's floor), and beside it a bare
   checker (the binding, the reference's slicing, a byte comparison) to show what conform's bookkeeping costs;
then `--jobs` scaling (beside what two processes get from this machine just then, and the CPU every
process of each command spent), and the wall
time and peak memory (every process, as PSS) of a full default run of each op, a run of stored
golden tests (`run --from`) and a `verify` of them with one job and two, and `conform diff` of
Slice against two runners with one job and two; with --crashes, `--jobs` on a runtime that crashes and hangs
(tests/backends/crashy.py). Rates are cases/second; "first pass" includes creating the sessions,
as a real run does.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np
import onnxruntime

from conformance import casefile, strategies
from conformance.execute import RunOptions, Staged, plan, run_examples, select_examples, stage
from conformance.lifetime import settle_imports
from conformance.reference import covered_ops
from conformance.registry import version_in_force, versions
from conformance.runners import make_runner
from conformance.runners.onnxruntime import session_options

SEED = 0
# Passes of a sub-second timing, the best kept: on this shared 2-core machine a single pass of
# 0.2 s varies by 20% from one run of the benchmark to the next, the best of seven by a few percent.
REPEATS = 7
SLOW_REPEATS = 3  # for the one-session-per-case loop, 1.4 s a pass


def rate(count: int, seconds: float) -> str:
    return f"{count:6d} cases in {seconds:7.3f} s = {count / seconds:9.0f} cases/s"


def timed(function):
    started = time.perf_counter()
    value = function()
    return value, time.perf_counter() - started


def generation() -> None:
    print("1. generation")
    loaded, seconds = timed(lambda: casefile.load_files(casefile.case_files([casefile.BUILTIN_CASES])))
    every = sum(len(examples) for case_file in loaded for examples in case_file.examples.values())
    print(f"   YAML (every op, load + validate + expand)  {rate(every, seconds)}")
    units, seconds = timed(lambda: plan(RunOptions(op="Slice", opset=13, use_hypothesis=False)))
    print(f"   YAML as the main job plans them (Slice-13's cases)  {rate(sum(len(u.yaml_examples) for u in units), seconds)}")
    small = [(version_in_force("Clip", 13), {"T": "float"}), (version_in_force("Slice", 13), {"T": "float", "Tind": "int64"})]
    for version, binding in small:  # hypothesis builds and caches its strategies on first use
        strategies.draw_group(version, binding, 20, SEED + 1)
    trials = sorted((timed(lambda: [e for v, b in small for e in strategies.draw_group(v, b, 300, SEED + k)])
                     for k in range(3)), key=lambda found: found[1])
    drawn, seconds = trials[1]
    print(f"   hypothesis (tensors <= 64 elements, median of 3) {rate(len(drawn), seconds)}")
    everything, seconds = timed(lambda: [e for op in covered_ops() for e in strategies.generate(list(versions(op)), 20, SEED)])
    print(f"   hypothesis (every op, version, dtype x 20)  {rate(len(everything), seconds)}")
    print(f"   a 1,000,000-element case: {_million_element_case():.1f} ms")


def _million_element_case() -> float:
    from hypothesis import HealthCheck, Phase, given, seed, settings
    from hypothesis import strategies as st

    from conformance.dtypes import dtype
    from conformance.strategies.common import CASE_BYTES, Choices, array

    timings = []
    case_bytes = st.binary(min_size=CASE_BYTES, max_size=CASE_BYTES)
    million = case_bytes.map(lambda data: array(Choices(data), dtype("float"), (1000, 1000)))

    @seed(SEED)
    @settings(max_examples=5, phases=[Phase.generate], database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(million)
    def draw(values):
        timings.append(time.perf_counter())

    started = time.perf_counter()
    draw()
    return (time.perf_counter() - started) / max(len(timings), 1) * 1000


def execution() -> None:
    options = RunOptions(op="Slice", opset=13, examples=20, seed=SEED)
    examples = select_examples(options)
    in_process = make_runner()  # stage asks it only for the replay command
    staged = [s for s in (stage(example, in_process, options) for example in examples) if isinstance(s, Staged)]
    native = [s for s in staged if _runs(s.built)]
    same_cases = [s.example for s in native]
    print("2. conform execution on onnxruntime CPU, Slice-13 (reference + build + run + compare)")
    print(f"   all {len(examples)} cases; then the {len(same_cases)} that the loops of 3 and 4 can run (the rest are types"
          " numpy cannot hand over, or invalid cases the runtime rejects)")
    conform_loops = {(isolate, which): _ConformLoop(cases, isolate, options)
                     for isolate in (False, True) for which, cases in (("all", examples), ("same", same_cases))}
    first = {key: timed(loop)[1] for key, loop in conform_loops.items()}  # creates the sessions
    sessions = {b.data: onnxruntime.InferenceSession(b.data, session_options(onnxruntime, "on"),
                                                     providers=["CPUExecutionProvider"]) for b in (s.built for s in native)}
    bare = _bare_checker(native, sessions)
    loops = {**conform_loops, "per case": lambda: _one_session_per_case(native),
             "floor": lambda: [sessions[s.built.data].run(None, s.built.feeds) for s in native],
             "bare checker": bare}
    best = _best_of_interleaved(loops)
    for label, isolate in (("in-process (each --jobs worker)", False), ("isolated worker (--jobs 1)", True)):
        for pass_label, seconds in (("first pass (creates sessions)", first), (f"sessions reused (best of {REPEATS})", best)):
            for which, cases in (("all", examples), ("same", same_cases)):
                heading = f"{label if seconds is first and which == 'all' else '':32s} {pass_label if which == 'all' else '':30s}"
                print(f"   {heading} {which:4s} {rate(len(cases), seconds[isolate, which])}")
    print("3. one session per case (onnx backend runner / onnx_test_runner style: prepare, run, compare),"
          f" best of {SLOW_REPEATS}")
    print(f"   {rate(len(native), best['per case'])}")
    print(f"4. bare session.run over pre-built sessions and feeds (the runtime's floor), best of {REPEATS}")
    print(f"   {rate(len(native), best['floor'])}")
    print("   ratios on the same cases (timed in the same rounds, so a busy spell of the machine slows all alike):")
    for which, isolate in (("in-process", False), ("isolated", True)):
        reused, cold = best[isolate, "same"], first[isolate, "same"]
        print(f"     {which:10s} conform / one-session-per-case: sessions reused {best['per case'] / reused:5.1f}x,"
              f" first pass {best['per case'] / cold:5.1f}x;  conform (sessions reused) / floor {best['floor'] / reused:.2f}x")
    print(f"   a bare checker, the least a Python one does (the session's binding, the reference's slice_array, a byte"
          f" comparison; none of conform's records, checks, caches or clocks), {len(bare.cases)} valid cases:"
          f" {best['bare checker'] / len(bare.cases) * 1e6:.1f} us a case; the floor's {best['floor'] / len(native) * 1e6:.1f},"
          f" conform's in-process {best[False, 'same'] / len(native) * 1e6:.1f} and isolated {best[True, 'same'] / len(native) * 1e6:.1f}")
    for loop in conform_loops.values():
        loop.close()
    _per_case_parts(native, in_process, options)


class _BareChecker:
    """The valid cases of `native` as a bare loop: the session's own binding, the reference's
    slicing (slice_array, Slice-13's clamping) and a byte comparison per case, nothing else: how
    fast a checker in Python can be, against which conform's bookkeeping shows."""

    def __init__(self, cases: list) -> None:
        self.cases = cases

    def __call__(self) -> list[bool]:
        from conformance.reference.slice import slice_array

        agree = []
        for data, starts, ends, axes, steps, binding, names, feeds in self.cases:
            expected = slice_array(data, starts, ends, axes, steps)
            actual = binding.run(names, feeds, None)[0]
            agree.append(expected.shape == actual.shape and expected.tobytes() == actual.tobytes())
        return agree


def _bare_checker(native: list[Staged], sessions: dict) -> _BareChecker:
    cases = []
    for s in native:
        if not s.expected.is_valid:
            continue
        e, session = s.example, sessions[s.built.data]
        starts, ends = e.inputs["starts"].tolist(), e.inputs["ends"].tolist()
        rank = e.inputs["data"].ndim
        axes = [a + rank if a < 0 else a for a in e.inputs["axes"].tolist()] if e.inputs.get("axes") is not None else list(range(len(starts)))
        steps = e.inputs["steps"].tolist() if e.inputs.get("steps") is not None else [1] * len(starts)
        cases.append((e.inputs["data"], starts, ends, axes, steps, session._sess, [o.name for o in session.get_outputs()], s.built.feeds))
    return _BareChecker(cases)


def _per_case_parts(native: list[Staged], runner, options: RunOptions) -> None:
    """Each step of a case on its own, over the same cases, sessions reused: where the time goes.
    The steps add up to less than the whole loop: run back to back, Python and onnxruntime take
    each other's caches."""
    from conformance.execute import _output_rank, expected_for, judged, replay_command, too_large
    from conformance.model import build
    from conformance.reference import for_op
    from conformance.runners.wire import dump_case, pack_output, unpack_output

    examples = [s.example for s in native]
    runs = [runner.run(s.built) for s in native]
    answers = [pickle.dumps((pack_output(r), 0), pickle.HIGHEST_PROTOCOL) for r in runs]  # as the worker sends them, its stderr's position beside
    steps = {
        "reference (expected_for)": lambda: [expected_for(e) for e in examples],
        "model lookup (build)": lambda: [build(e, for_op(e.op).output_dtype(e), _output_rank(e, s.expected), "input",
                                               for_op(e.op).data_inputs) for e, s in zip(examples, native)],
        "replay command and size check": lambda: [(replay_command(e, runner, options), too_large(e, options.max_elements))
                                                  for e in examples],
        "staging whole (the three above and the record)": lambda: [stage(e, runner, options) for e in examples],
        "the runner's call (conform's)": lambda: [runner.run(s.built) for s in native],
        "judging and the result record": lambda: [judged(s, r, runner, options, 0.0) for s, r in zip(native, runs)],
        "isolated only: packing the request": lambda: [dump_case(s.built.data, s.built.feeds, s.built.elem_types)
                                                       for s in native],
        "isolated only: unpacking the answer": lambda: [unpack_output(pickle.loads(a)[0]) for a in answers],
    }
    print(f"   each step alone, the same {len(native)} cases, sessions reused (best of {REPEATS}), microseconds a case:")
    for label, step in steps.items():
        step()
        seconds = min(timed(step)[1] for _ in range(REPEATS))
        print(f"     {label:48s} {seconds / len(native) * 1e6:6.2f}")


class _ConformLoop:
    """run_examples over fixed cases on its own runner, callable for timing, closed when done."""

    def __init__(self, cases, isolate: bool, options: RunOptions) -> None:
        self.cases, self.options = cases, options
        self.runner = make_runner(isolate=isolate)

    def __call__(self):
        return run_examples(self.cases, self.runner, self.options)

    def close(self) -> None:
        getattr(self.runner, "close", lambda: None)()


def _best_of_interleaved(loops: dict) -> dict:
    """The best time of each loop over REPEATS rounds (SLOW_REPEATS for the one-session-per-case
    loop), every loop timed once per round."""
    times: dict = {key: [] for key in loops}
    for round_index in range(REPEATS):
        for key, loop in loops.items():
            if key != "per case" or round_index < SLOW_REPEATS:
                times[key].append(timed(loop)[1])
    return {key: min(found) for key, found in times.items()}


def _one_session_per_case(native: list[Staged]) -> None:
    """What onnx's backend test runner does for every test: prepare (a new session, default
    options), run, and compare each output the way its assert_similar_outputs does. (It also
    reads the model and tensors from disk first; this loop starts from memory.)"""
    import onnxruntime.backend as backend

    for s in native:
        rep = backend.prepare(s.built.model, "CPU")
        outputs = rep.run([s.built.feeds[i.name] for i in s.built.model.graph.input])
        _similar(s.expected.readings[0].outputs, outputs)


def _similar(expected, actual) -> None:
    """onnx's backend-test comparison: same dtype, then exact for strings and booleans, else
    assert_allclose with its default tolerances. Only its cost matters here, not its verdict."""
    try:
        for reference, output in zip(expected, actual):
            np.testing.assert_equal(reference.dtype, output.dtype)
            if reference.dtype.kind in "OUSb":
                np.testing.assert_array_equal(reference, output)
            else:
                np.testing.assert_allclose(reference, output, rtol=1e-3, atol=1e-7)
    except AssertionError:
        pass


def _runs(built) -> bool:
    try:
        onnxruntime.InferenceSession(built.data, session_options(onnxruntime, "on"),
                                     providers=["CPUExecutionProvider"]).run(None, built.feeds)
        return True
    except Exception:  # unsupported types and invalid cases are not part of the timing comparison
        return False


class Measured(NamedTuple):
    """One `conform` command: wall seconds, the peak memory (MB) of it and all its worker
    processes together, and the CPU seconds they spent together."""

    seconds: float
    peak: float
    cpu: float

    @property
    def cores(self) -> float:
        """How many cores the command kept busy on average."""
        return self.cpu / self.seconds


def _measured(*args: str) -> Measured:
    """Run one `conform` command and measure it. Memory is summed as PSS, so shared library pages
    count once (Linux; 0 where /proc has no smaps_rollup). CPU is the command's own (exact, from the
    kernel's account of a waited-for child) plus what /proc last showed for each of its workers,
    read every SAMPLE seconds (a worker's last moments before it ends may be missed: at least)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "conformance", *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak, ticks, sample = 0, {}, 0
    while process.poll() is None:
        tree = _tree(process.pid)
        for pid in tree[1:]:  # the command's own CPU comes from the kernel once it has ended
            ticks[pid] = max(ticks.get(pid, 0), _cpu_ticks(pid))
        if sample % PSS_EVERY == 0:
            peak = max(peak, sum(_pss(pid) for pid in tree))
        sample += 1
        time.sleep(SAMPLE)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    own = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return Measured(seconds, peak / 1024, own + sum(ticks.values()) / os.sysconf("SC_CLK_TCK"))


# How often a command's processes are looked at, and how many looks apart their memory is summed:
# reading /proc/PID/stat is cheap, smaps_rollup (memory) costs enough to be read half as often.
SAMPLE = 0.025
PSS_EVERY = 2


def _cpu_ticks(pid: int) -> int:
    """User + system CPU of a process so far, in clock ticks (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stream:
            fields = stream.read().rsplit(")", 1)[1].split()  # the name, in parentheses, may hold spaces
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])  # utime, stime: fields 14 and 15 of proc(5)


def _tree(root: int) -> list[int]:
    found, waiting = [], [root]
    while waiting:
        pid = waiting.pop()
        found.append(pid)
        try:
            waiting += [int(c) for c in open(f"/proc/{pid}/task/{pid}/children").read().split()]
        except OSError:
            pass
    return found


def _pss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as stream:
            return next((int(line.split()[1]) for line in stream if line.startswith("Pss:")), 0)
    except OSError:
        return 0


def jobs_scaling() -> None:
    print("5. --jobs on 5,120 Clip cases (hypothesis only, no shrinking)")
    ceiling = _two_core_ceiling()
    print(f"   this machine before: {_ceiling_text(ceiling)}")
    common = ("run", "--op", "Clip", "--no-yaml", "--examples", "160", "--shrink", "0", "--report-json", "/tmp/bench-jobs.json")
    # CPU seconds already hold whatever two busy cores slow each other by, so the bound they set is
    # at the cores' count, not at the ceiling (which would count that slowing twice).
    cores = os.cpu_count() or 1
    for isolation in ((), ("--no-isolation",)):
        one_job, two_jobs = _measured(*common, "--jobs", "1", *isolation), _measured(*common, "--jobs", "2", *isolation)
        one, two = one_job.seconds, two_jobs.seconds
        label = "in-process" if isolation else "isolated (default)"
        print(f"   {label:19s} whole command: --jobs 1 {one:5.2f} s, --jobs 2 {two:5.2f} s = {one / two:.2f}x")
        print(f"   {'':19s} CPU of all its processes: --jobs 1 {one_job.cpu:4.2f} s ({one_job.cores:.2f} cores busy),"
              f" --jobs 2 {two_jobs.cpu:4.2f} s ({two_jobs.cores:.2f}); with that much work, --jobs 2 can gain at most"
              f" {one / (two_jobs.cpu / cores):.2f}x, with all {cores} cores busy the whole time")
        inside_one, inside_two = _inside_the_run(1, not isolation), _inside_the_run(2, not isolation)
        print(f"   {'':19s} inside the run (draw, run, judge; no start-up or reports): {inside_one:5.2f} s vs {inside_two:5.2f} s"
              f" = {inside_one / inside_two:.2f}x")
        serial = _measured("run", "--op", "Clip", "--opset", "13", "--no-hypothesis", "--case", ONE_CASE, "--jobs", "1",
                           *isolation, "--report-json", "/tmp/bench-jobs.json").seconds
        if json.loads(Path("/tmp/bench-jobs.json").read_text())["summary"]["total"] != 1:
            print(f"   (the one-case command did not run {ONE_CASE}: name a case that exists in ONE_CASE)")
        print(f"   {'':19s} what no worker shares: a one-case command takes {serial:4.2f} s (start-up, plan, reports, exit),"
              f" so on this run --jobs 2 can gain at most {one / (serial + (one - serial) / ceiling):.2f}x"
              f" at the machine's {ceiling:.2f}x")
    print(f"   this machine after:  {_ceiling_text(_two_core_ceiling())}")


ONE_CASE = "Clip-13/min_and_max/uint8"


# Pure-Python work of ~0.3 s: long enough to time, short enough to repeat.
_SPIN = 4_000_000


def _spin(count: int) -> float:
    started = time.perf_counter()
    total = 0
    for value in range(count):
        total += value & 7
    return time.perf_counter() - started


def _two_core_ceiling() -> float:
    """What two processes get from this machine now: the same pure-Python work done by two
    processes side by side against one process doing both halves in turn (median of three). On a
    shared host this moves from one minute to the next (1.3x-2.0x seen), and no `--jobs 2` ratio
    can beat it."""
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(2) as pool:
        pool.map(_spin, [1000, 1000])  # both workers started before anything is timed
        ratios = []
        for _ in range(3):
            serial = _spin(_SPIN) + _spin(_SPIN)
            started = time.perf_counter()
            pool.map(_spin, [_SPIN, _SPIN], chunksize=1)
            ratios.append(serial / (time.perf_counter() - started))
    return sorted(ratios)[1]


def _ceiling_text(ceiling: float) -> str:
    return f"the same pure-Python work in two processes side by side {ceiling:.2f}x faster than in one (the most --jobs 2 can gain)"


def _inside_the_run(jobs: int, isolate: bool) -> float:
    from conformance.parallel import run_parallel
    from conformance.runners import RunnerSpec

    options = RunOptions(op="Clip", use_yaml=False, examples=160, shrink=0, seed=SEED)
    started = time.perf_counter()
    units = plan(options)
    if jobs > 1:
        run_parallel(units, options, RunnerSpec(), jobs, isolate)
    else:
        runner = make_runner(isolate=isolate)
        run_examples(select_examples(options, units), runner, options)
        if isolate:
            runner.close()
    return time.perf_counter() - started


def full_runs() -> None:
    print("6. full default runs (conform run --op OP: every version and dtype, isolation on, --jobs default)")
    total = 0.0
    for op in covered_ops():
        seconds, peak, _ = _measured("run", "--op", op, "--report-json", f"/tmp/bench-{op}.json")
        total += seconds
        print(f"   {op:16s} {seconds:6.1f} s, peak memory of all its processes together (PSS) {peak:5.0f} MB")
    print(f"   all three        {total:6.1f} s")


def golden_runs() -> None:
    print("7. golden data: conform generate (every Slice version), conform run --from (read and run every stored test"
          " of Slice-13, isolation on), and conform verify")
    # In memory where the system has a tmpfs, so that the disk's own speed (which varies several
    # fold on a shared host) is left out; on the disk as well, as users write it.
    for where, root in (("on disk", None), ("in memory", "/dev/shm")):
        if root is None or Path(root).is_dir():
            one, two = _generate_timings(root)
            print(f"   generate   {where:9s}    --jobs 1 {one:5.2f} s, --jobs 2 {two:5.2f} s = {one / two:.2f}x"
                  " (best of two each, in turn)")
    with tempfile.TemporaryDirectory() as folder:
        subprocess.run([sys.executable, "-m", "conformance", "generate", "--op", "Slice", "--opset", "13", "--out", folder],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        tests = sum(1 for _ in Path(folder).glob("*/model.onnx"))
        for command in (("run", "--from"), ("verify",)):
            one, two = _one_and_two_jobs(*command, folder, "--report-json", "/tmp/bench-golden.json")
            print(f"   {' '.join(command):10s} {tests} stored tests: --jobs 1 {one:5.2f} s, --jobs 2 {two:5.2f} s = {one / two:.2f}x")


def _generate_timings(root: str | None) -> tuple[float, float]:
    """The best of two `generate` runs with one job and with two, in turn, each into a folder of
    its own under `root`. The folders are deleted only once all are timed: a disk that frees
    6,000 directories' blocks stays slow for seconds, and would slow whichever run came next."""
    times: dict[str, list[float]] = {"1": [], "2": []}
    with tempfile.TemporaryDirectory(dir=root) as folder:
        for round_index, jobs in enumerate(("1", "2", "2", "1")):
            os.sync()  # what ran before wrote, and is not this command's to wait for
            seconds = _measured("generate", "--op", "Slice", "--out", f"{folder}/{round_index}", "--jobs", jobs).seconds
            times[jobs].append(seconds)
    return min(times["1"]), min(times["2"])


def diffs() -> None:
    print("8. conform diff --op Slice (every version and dtype, both runners isolated; two jobs: each worker runs both)")
    for against in ("reference", "cpu"):
        seconds = {jobs: _measured("diff", "--op", "Slice", "--against", against, "--jobs", jobs,
                                   "--report-json", "/tmp/bench-diff.json").seconds for jobs in ("1", "2")}
        print(f"   onnxruntime CPU against {against:9s} --jobs 1 {seconds['1']:5.2f} s, --jobs 2 {seconds['2']:5.2f} s "
              f"= {seconds['1'] / seconds['2']:.2f}x")


def crashes() -> None:
    print("9. a runtime that crashes on 95 and hangs on 38 of Slice-13's cases (tests/backends/crashy.py, --timeout 2)")
    backends = Path(__file__).resolve().parent.parent / "tests" / "backends"
    os.environ["PYTHONPATH"] = f"{backends}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"
    common = ("run", "--op", "Slice", "--opset", "13", "--backend", "crashy", "--timeout", "2", "--report-json", "/tmp/bench-crashy.json")
    one, two = _one_and_two_jobs(*common)
    print(f"   whole command: --jobs 1 {one:5.1f} s, --jobs 2 {two:5.1f} s = {one / two:.2f}x")
    # When a hang is the first thing to go wrong, a watched --jobs worker meets it: each hanging case
    # should cost one timeout there too, as in a serial run.
    cases = [f"--case=Slice-13/{name}/float/{tind}" for name in ("start_beyond_dim", "negative_end") for tind in ("int32", "int64")]
    hang_first = ("run", "--op", "Slice", "--opset", "13", "--no-hypothesis", "--backend", "crashy", "--timeout", "2",
                  *cases, "--report-json", "/tmp/bench-crashy.json")
    one, two = _one_and_two_jobs(*hang_first)
    print(f"   4 cases, 2 of which hang and nothing crashes: --jobs 1 {one:5.1f} s, --jobs 2 {two:5.1f} s"
          " (two timeouts of 2 s each are the least either can take)")
    # Without the hangs' timeouts, what each crash costs shows: the worker that replaces the dead one.
    os.environ["CRASHY_NO_HANGS"] = "1"
    try:
        one, two = _one_and_two_jobs(*common)
    finally:
        del os.environ["CRASHY_NO_HANGS"]
    print(f"   the same runtime with its hangs made crashes (133 crashes, no timeout): --jobs 1 {one:5.1f} s, --jobs 2 {two:5.1f} s")


def _one_and_two_jobs(*args: str) -> tuple[float, float]:
    """Wall seconds of a `conform` command with `--jobs 1`, then with `--jobs 2`."""
    return _measured(*args, "--jobs", "1").seconds, _measured(*args, "--jobs", "2").seconds


def _bytecode_text() -> str:
    """Whether the `conform` commands timed below find conform's modules compiled: without the
    bytecode (an editable install where PYTHONDONTWRITEBYTECODE is set) each one compiles them, ~50 ms."""
    import importlib.util

    import conformance.cli

    compiled = Path(importlib.util.cache_from_source(conformance.cli.__file__)).exists()
    return "conform's modules compiled" if compiled else "conform's modules not compiled: every command compiles them (python -m compileall conformance)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="skip the full default runs")
    parser.add_argument("--crashes", action="store_true", help="also time --jobs on a runtime that crashes and hangs")
    args = parser.parse_args()
    settle_imports()  # as every conform process does first (the command, and each of its workers)
    print(f"onnxruntime {onnxruntime.__version__}; seed {SEED}; {_bytecode_text()}")
    generation()
    execution()
    if not args.quick:
        jobs_scaling()
        full_runs()
        golden_runs()
        diffs()
    if args.crashes:
        crashes()
    print(f"this process's peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
