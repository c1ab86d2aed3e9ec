"""Where a conform run spends its time. Prints figures; asserts nothing.

    python benchmarks/bench_run.py            # everything (a few minutes)
    python benchmarks/bench_run.py --quick    # skip the full default runs

For a fixed seed and a fixed set of cases it prints, as cases/second and as ratios:
1. generation: YAML cases and hypothesis cases separately (and one 1,000,000-element case);
2. conform's execution on onnxruntime CPU (reference + run + compare, sessions reused);
3. the same cases through one session per case, as onnx's backend runner and onnx_test_runner do;
4. a bare loop of session.run over pre-built sessions and feeds (the runtime's floor);
then `--jobs` scaling, and the wall time and peak RSS of a full default run of each op.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time

import onnxruntime

from conformance import casefile, strategies
from conformance.execute import RunOptions, _output_rank, expected_for, run_examples, select_examples
from conformance.model import build
from conformance.reference import covered_ops, for_op
from conformance.registry import version_in_force, versions
from conformance.runners import make_runner
from conformance.runners.onnxruntime import session_options

SEED = 0


def rate(count: int, seconds: float) -> str:
    return f"{count:6d} cases in {seconds:7.3f} s = {count / seconds:9.0f} cases/s"


def timed(function):
    started = time.perf_counter()
    value = function()
    return value, time.perf_counter() - started


def generation() -> None:
    print("1. generation")
    yaml_examples, seconds = timed(lambda: [e for op in covered_ops() for e in casefile.load_examples(op)])
    print(f"   YAML (every op, load + validate + expand)  {rate(len(yaml_examples), seconds)}")
    small = [(version_in_force("Clip", 13), {"T": "float"}), (version_in_force("Slice", 13), {"T": "float", "Tind": "int64"})]
    drawn, seconds = timed(lambda: [e for v, b in small for e in strategies.draw_group(v, b, 300, SEED)])
    print(f"   hypothesis (tensors <= 64 elements)         {rate(len(drawn), seconds)}")
    everything, seconds = timed(lambda: [e for op in covered_ops() for e in strategies.generate(list(versions(op)), 20, SEED)])
    print(f"   hypothesis (every op, version, dtype x 20)  {rate(len(everything), seconds)}")
    print(f"   a 1,000,000-element case: {_million_element_case():.1f} ms")


def _million_element_case() -> float:
    from hypothesis import given, settings, seed, HealthCheck, Phase
    from conformance.dtypes import dtype
    from conformance.strategies.common import arrays

    timings = []

    @seed(SEED)
    @settings(max_examples=3, phases=[Phase.generate], database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(arrays(dtype("float"), (1000, 1000)))
    def draw(array):
        timings.append(time.perf_counter())

    started = time.perf_counter()
    draw()
    return (time.perf_counter() - started) / max(len(timings), 1) * 1000


def execution() -> None:
    options = RunOptions(op="Slice", opset=13, examples=20, seed=SEED)
    examples = select_examples(options)
    runner = make_runner()
    results, conform_seconds = timed(lambda: run_examples(examples, runner, options))
    print("2. conform execution on onnxruntime CPU (in-process, sessions reused)")
    print(f"   {rate(len(results), conform_seconds)}")
    isolated = make_runner(isolate=True)
    results, isolated_seconds = timed(lambda: run_examples(examples, isolated, options))
    print(f"   isolated worker:  {rate(len(results), isolated_seconds)}")
    isolated.close()

    built = []
    for example in examples:
        expected = expected_for(example)
        built.append(build(example, for_op(example.op).output_dtype(example), _output_rank(example, expected)))
    native = [b for b in built if _runs(b)]

    import onnxruntime.backend as backend

    def one_session_per_case():
        # What onnx's backend test runner does for every test: prepare (a new session, default
        # options), run, compare.
        for b in native:
            rep = backend.prepare(b.model, "CPU")
            rep.run([b.feeds[i.name] for i in b.model.graph.input])

    _, per_case_seconds = timed(one_session_per_case)
    print("3. one session per case (onnx backend runner / onnx_test_runner style), same runnable cases")
    print(f"   {rate(len(native), per_case_seconds)}")
    sessions = {b.data: onnxruntime.InferenceSession(b.data, session_options(onnxruntime, "cpu", "on"),
                                                     providers=["CPUExecutionProvider"]) for b in native}
    _, floor_seconds = timed(lambda: [sessions[b.data].run(None, b.feeds) for b in native])
    print("4. bare session.run over pre-built sessions and feeds (the runtime's floor)")
    print(f"   {rate(len(native), floor_seconds)}")
    conform_rate = len(examples) / conform_seconds
    print(f"   ratios: conform / one-session-per-case = {conform_rate / (len(native) / per_case_seconds):.1f}x;"
          f" conform / floor = {conform_rate / (len(native) / floor_seconds):.2f}x")


def _runs(built) -> bool:
    try:
        onnxruntime.InferenceSession(built.data, session_options(onnxruntime, "cpu", "on"),
                                     providers=["CPUExecutionProvider"]).run(None, built.feeds)
        return True
    except Exception:  # unsupported types and invalid cases are not part of the timing comparison
        return False


def full_runs() -> None:
    print("5. full default runs (conform run --op OP, every version and dtype, isolation on)")
    for op in covered_ops():
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "conformance.cli", "run", "--op", op, "--report-json", f"/tmp/bench-{op}.json"],
                       capture_output=True)
        seconds = time.perf_counter() - started
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        print(f"   {op:16s} {seconds:6.1f} s, peak RSS of the largest process so far {peak / 1024:6.0f} MB"
              f" (user CPU {resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - before.ru_utime:.1f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="skip the full default runs")
    args = parser.parse_args()
    print(f"onnxruntime {onnxruntime.__version__}; seed {SEED}")
    generation()
    execution()
    if not args.quick:
        full_runs()
    print(f"this process's peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
