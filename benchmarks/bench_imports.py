"""What importing conform costs: each import timed in a fresh interpreter, the median of five.

Run: python benchmarks/bench_imports.py [--runs N]   (prints figures; asserts nothing)

Each line is one statement run in a new `python` process, timed around it alone (the interpreter's
own start-up is left out): its wall time (time.perf_counter) and, steadier on a shared machine whose
other processes take the cores in turn, its CPU time (time.process_time); and how many of conform's
modules it imported:
`conformance.compare` (what a report or a comparison needs), one op's reference
(`for_op('Slice')`: a registry that imports an op's module when it is asked for imports only that
one), `conformance.cli` (every command's start-up), and what the fork server readies before its
first worker: every op (`--all`, `--from`) or the ops a command names (`--op Slice`). A fresh process each time, as a command
starts: a module imported once stays imported, so timing a second import in one process measures
nothing.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys

STATEMENTS = {
    "import conformance.compare": "import conformance.compare",
    "for_op('Slice')": "from conformance.reference import for_op; for_op('Slice')",
    "import conformance.cli": "import conformance.cli",
    # What the fork server imports before its first worker (lifetime.SERVER_PRELOAD's last module):
    # every op's reference, strategy and schemas, or only those of the ops a command names.
    "fork server, every op": "import conformance.preload",
    "fork server, --op Slice": "import os; os.environ['CONFORM_PRELOAD_OPS'] = 'Slice'; import conformance.preload",
}
# Run in the child: the statement timed alone, then how many conformance modules are loaded.
_TIMED = """
import sys, time
started, cpu = time.perf_counter(), time.process_time()
{statement}
seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
print(seconds, cpu, sum(name == "conformance" or name.startswith("conformance.") for name in sys.modules))
"""


def timed_once(statement: str) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, conformance modules loaded) of `statement` in a fresh interpreter."""
    done = subprocess.run([sys.executable, "-c", _TIMED.format(statement=statement)],
                          capture_output=True, text=True, check=True)
    seconds, cpu, modules = done.stdout.split()
    return float(seconds), float(cpu), int(modules)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh interpreters per statement (the median is printed)")
    runs = parser.parse_args().runs
    for label, statement in STATEMENTS.items():
        timings = [timed_once(statement) for _ in range(runs)]
        wall, cpu = sorted(t[0] for t in timings), sorted(t[1] for t in timings)
        print(f"{label:28s} median {statistics.median(wall) * 1000:4.0f} ms wall "
              f"({wall[0] * 1000:.0f}-{wall[-1] * 1000:.0f}), {statistics.median(cpu) * 1000:4.0f} ms CPU "
              f"({cpu[0] * 1000:.0f}-{cpu[-1] * 1000:.0f}), {runs} runs; {timings[0][2]} conformance modules")


if __name__ == "__main__":
    main()
