"""Cost of isolation: cases/second of a ~2,000-case Clip run in a worker process vs in-process.

Run: python benchmarks/bench_isolation.py   (prints figures; asserts nothing)
"""

from __future__ import annotations

import time

from conformance.execute import RunOptions, run_examples, select_examples
from conformance.runners import make_runner


def main() -> None:
    # Clip has 32 version x dtype groups: 63 hypothesis examples each gives ~2,000 cases.
    options = RunOptions(op="Clip", use_yaml=False, examples=63, seed=0)
    examples = select_examples(options)
    for label, isolate in (("in-process (--no-isolation)", False), ("isolated worker (default)", True)):
        runner = make_runner(isolate=isolate)
        started = time.perf_counter()
        results = run_examples(examples, runner, options)
        seconds = time.perf_counter() - started
        print(f"{label:30s} {len(results):5d} cases in {seconds:6.2f} s = {len(results) / seconds:8.0f} cases/s")


if __name__ == "__main__":
    main()
