"""Where the time of `conform run --all` goes: per op, and per stage of a case.

1. Per op, its cases drawn and run as `conform run --jobs 1` runs them (`select_examples`, then
   `run_examples` with the runner `make_runner` makes: isolated, the runtime in a worker process;
   `--no-isolation` puts it in this process, where a runtime crash, as QuantizeLinear's, ends the
   benchmark): CPU seconds of drawing, of staging and judging (the reference, the models, judging,
   this end of the pipe), and of the runtime worker (sessions, runtime calls, its end of the pipe;
   sampled from /proc, from its first answer on, so without its start-up), wall seconds, and cases
   per CPU second. CPU seconds, because the machine is shared: wall seconds there measure the
   other jobs too. Then the whole run extrapolated: every covered op's case count is known from the
   plan without drawing (`planned_count`), and an op not timed is given its family's measured rate
   (element-wise, the Cast family, or the rest).
2. For the ops of --profile, `conform run --op OP --jobs 1 --no-isolation --shrink 0` in a child
   process under cProfile, split by stage: the cumulative time of each stage's function (drawing,
   the reference, the model, sessions made, `session.run`, judging, the ledger and the reports), in
   seconds and as a share of the command. cProfile's cost falls on Python code far more than on
   onnxruntime's C++, so Python stages read larger than they are: set each figure beside section
   1's CPU seconds for the op. Shrinking is left out: a run shrinks at most --shrink (4) groups in
   all, whatever its ops. A runtime that crashes the profiled process has its op profiled isolated
   instead (`--jobs 1`), its runtime's stages then in the worker, unprofiled (its CPU is printed).
3. With --commands, the ops in one command as a user runs it, in a child process: the default (a
   job per core, isolation on) and `--jobs 1`: wall seconds, and the CPU
   seconds of every process of the command (sampled from /proc every 0.1 s; what a process spends
   after its last sample is missed) against section 1's: what the start-up, the plan, the workers,
   the pipe and the reports add.

Run:
    python benchmarks/bench_time_by_family.py                                  # the default subset
    python benchmarks/bench_time_by_family.py --ops Cast,Slice --examples 5 --profile Slice
    python benchmarks/bench_time_by_family.py --all --no-profile               # every covered op (long)
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import os
import pstats
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections import defaultdict

DEFAULT_OPS = "Cast,CastLike,QuantizeLinear,DequantizeLinear,Slice,Add,Gelu,Clip,Pow"
DEFAULT_PROFILE = "Cast,QuantizeLinear,Slice"
CAST_FAMILY = ("Cast", "CastLike", "QuantizeLinear", "DequantizeLinear")

# (label, file ending, function name, minus): the stages of a case, and of the command around them,
# each the cumulative time of its function, less that of the row `minus` names (a stage nested in
# it), so that no time counts twice.
STAGES = (
    ("draw cases (hypothesis, strategies)", "conformance/strategies/__init__.py", "draw_group", None),
    ("reference (execute.expected_for)", "conformance/execute.py", "expected_for", None),
    ("size check (execute.too_large)", "conformance/execute.py", "too_large", None),
    ("replay command", "conformance/execute.py", "replay_command", None),
    ("model build (model.build)", "conformance/model.py", "build", None),
    ("onnx.checker (model.checker_problem)", "conformance/model.py", "checker_problem", None),
    ("session made or refused (SessionCache._make)", "conformance/runners/base.py", "_make", None),
    ("session lookup + evicted sessions freed", "conformance/runners/base.py", "get",
     "session made or refused (SessionCache._make)"),
    ("session.run (runner.run less the cache)", "conformance/runners/onnxruntime.py", "run",
     "session lookup + evicted sessions freed"),
    ("judging (compare.judge + Result)", "conformance/execute.py", "judged", None),
    ("ledger (tallies, kept records)", "conformance/ledger.py", "add", None),
    ("JSON report (document + write)", "conformance/report/json_report.py", "ledger_document", None),
    ("JSON report write", "conformance/report/json_report.py", "write", None),
    ("console report", "conformance/report/console.py", "render", None),
)


def family(op: str) -> str:
    from conformance.reference import for_op
    from conformance.reference.elementwise import family_of

    if op in CAST_FAMILY:
        return "cast"
    return "elementwise" if family_of(for_op(op)) is not None else "other"


def planned_cases(op: str, examples: int, seed: int) -> int:
    from conformance.execute import RunOptions, plan, planned_count

    options = RunOptions(op=op, examples=examples, seed=seed)
    return planned_count(plan(options), options) or 0


def timed_op(op: str, isolate: bool, examples: int, seed: int) -> dict:
    """One op's cases drawn and run, as `--jobs 1` runs them: CPU and wall seconds of each part."""
    from conformance.execute import RunOptions, run_examples, select_examples
    from conformance.runners import make_runner

    options = RunOptions(op=op, examples=examples, seed=seed)
    runner = make_runner(isolate=isolate)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    drawn = select_examples(options)
    cpu1 = time.process_time()
    counted = [0]
    worker = WorkerClock(runner)

    def count(_result) -> None:
        counted[0] += 1
        if counted[0] % 128 == 1:
            worker.sample()

    run_examples(drawn, runner, options, count, collect=False)
    worker.sample()
    cpu2, wall2 = time.process_time(), time.perf_counter()
    if isolate:
        runner.close()
    return {"op": op, "family": family(op), "cases": counted[0], "draw_cpu": cpu1 - cpu0, "run_cpu": cpu2 - cpu1,
            "worker_cpu": worker.seconds(), "cpu": cpu2 - cpu0 + worker.seconds(), "wall": wall2 - wall0}


class WorkerClock:
    """The CPU seconds an isolated runner's worker processes spent, sampled from /proc (Linux):
    each worker's from its first sample (its first case answered, so not its start-up) to its last
    (a worker that crashes loses what it spent since its last sample). Zero for a runner in-process."""

    def __init__(self, runner) -> None:
        self.runner = runner
        self.spans: dict[int, list[float]] = {}

    def sample(self) -> None:
        process = getattr(self.runner, "_process", None)  # IsolatedRunner's current worker
        if process is None or process.pid is None:
            return
        seconds = own_cpu(process.pid)
        if seconds is not None:
            self.spans.setdefault(process.pid, [seconds, seconds])[1] = seconds

    def seconds(self) -> float:
        return sum(last - first for first, last in self.spans.values())


def per_op(ops: list[str], examples: int, seed: int, isolate: bool) -> list[dict]:
    import hypothesis  # noqa: F401  (imported, as a worker forked from the fork server has it)

    import conformance.preload  # noqa: F401  (every op's reference and strategy readied, as in a worker)

    how = ("isolated: the runtime in a worker process, as `--jobs 1` runs it" if isolate
           else "in-process: the runtime in this process, as `--jobs 1 --no-isolation` runs it")
    print(f"1. per op, {how}; --examples {examples}, seed {seed}. CPU seconds: drawing and 'stage+judge' "
          f"(the reference, models, judging{', the pipe' if isolate else ', sessions and runtime calls'}) are this "
          f"process's{'; worker: the runtime worker process (sessions, runtime calls, its end of the pipe)' if isolate else ''}")
    print(f"   {'op':18s} {'family':11s} {'cases':>7s} {'draw':>7s} {'st+judge':>8s} {'worker':>7s} {'CPU s':>7s} "
          f"{'wall s':>7s} {'cases/CPU s':>11s} {'us/case':>8s}")
    rows = []
    for op in ops:
        row = timed_op(op, isolate, examples, seed)
        rows.append(row)
        print_row(op, row["family"], [row])
    print_row("together", "", rows)
    return rows


def print_row(label: str, family_name: str, rows: list[dict]) -> None:
    cases, cpu = sum(r["cases"] for r in rows), sum(r["cpu"] for r in rows)
    print(f"   {label:18s} {family_name:11s} {cases:7,d} {sum(r['draw_cpu'] for r in rows):7.1f} "
          f"{sum(r['run_cpu'] for r in rows):8.1f} {sum(r['worker_cpu'] for r in rows):7.1f} {cpu:7.1f} "
          f"{sum(r['wall'] for r in rows):7.1f} {cases / max(cpu, 1e-9):11,.0f} {cpu / max(cases, 1) * 1e6:8.0f}",
          flush=True)


def extrapolated(rows: list[dict], examples: int, seed: int) -> None:
    """Every covered op's planned cases, each at its own measured rate, or its family's."""
    from conformance.reference import covered_ops

    rate = {r["op"]: r["cpu"] / max(r["cases"], 1) for r in rows}
    by_family: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])
    for r in rows:
        by_family[r["family"]][0] += r["cpu"]
        by_family[r["family"]][1] += r["cases"]
    fallback = sum(r["cpu"] for r in rows) / max(sum(r["cases"] for r in rows), 1)
    totals: dict[str, list[float]] = defaultdict(lambda: [0.0, 0, 0])
    guessed = 0
    for op in covered_ops():
        cases = planned_cases(op, examples, seed)
        name = family(op)
        if op in rate:
            per_case = rate[op]
        else:
            guessed += 1
            cpu, count = by_family.get(name, (0.0, 0))
            per_case = cpu / count if count else fallback
        totals[name][0] += cases * per_case
        totals[name][1] += cases
        totals[name][2] += 1
    whole = sum(t[0] for t in totals.values())
    print(f"\n   whole run extrapolated (--all, --examples {examples}; {guessed} ops at their family's measured rate):")
    for name, (cpu, cases, ops) in sorted(totals.items(), key=lambda item: -item[1][0]):
        print(f"   {name:12s} {ops:3d} ops {int(cases):8,d} cases {cpu:7.0f} CPU s  {cpu / whole:6.1%}")
    cases = sum(t[1] for t in totals.values())
    print(f"   {'all':12s} {sum(t[2] for t in totals.values()):3d} ops {int(cases):8,d} cases {whole:7.0f} CPU s "
          f"(two jobs on two cores: >= {whole / 2:.0f} s of wall)")


def profiled_command(op: str, examples: int, seed: int, top: int) -> None:
    """`conform run --op OP --jobs 1 --no-isolation`, profiled in a child process (a runtime that
    crashes ends only that child; the op is then profiled isolated, its runtime's stages unseen)."""
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "profile.out")
        how = "--no-isolation"
        for isolation in ("--no-isolation", "--isolation"):
            how = isolation
            child = subprocess.run([sys.executable, os.path.abspath(__file__), "--profile-child", op, isolation,
                                    "--examples", str(examples), "--seed", str(seed), "--out", out],
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            if child.returncode == 0:
                break
            print(f"\n   ({op}: the runtime crashed in the profiled process (exit {child.returncode}); profiled isolated)")
        else:
            print(f"\n2. {op}: could not be profiled")
            return
        cpu, wall, worker = (float(word) for word in child.stdout.split())
        stats = pstats.Stats(out).stats
    total = max(value[3] for value in stats.values())
    cumulative: dict[str, float] = {}
    calls: dict[str, int] = {}
    for label, ending, name, _ in STAGES:
        found = [(value[3], value[1]) for (file, _, function), value in stats.items()
                 if function == name and file.replace(os.sep, "/").endswith(ending)]
        cumulative[label] = sum(ct for ct, _ in found)
        calls[label] = sum(n for _, n in found)
    own = {label: cumulative[label] - (cumulative[minus] if minus else 0.0) for label, _, _, minus in STAGES}
    flag = " --no-isolation" if how == "--no-isolation" else ""
    print(f"\n2. {op}: `conform run --op {op} --jobs 1{flag} --examples {examples} --seed {seed} --shrink 0`, one "
          f"process under cProfile: {total:.1f} s profiled ({cpu:.1f} CPU s)"
          + (f"; its runtime worker, unprofiled: {worker:.1f} CPU s" if how == "--isolation" else ""))
    print(f"   {'stage':48s} {'calls':>8s} {'seconds':>8s} {'share':>6s}")
    shown = sorted(own.items(), key=lambda item: -item[1])
    for label, seconds in shown[:top]:
        print(f"   {label:48s} {calls[label]:8,d} {seconds:8.2f} {seconds / total:6.1%}")
    rest = total - sum(seconds for label, seconds in own.items() if label != "JSON report write")
    print(f"   {'the rest (start-up, plan, run loop, records...)':48s} {'':8s} {rest:8.2f} {rest / total:6.1%}")
    print("   ('JSON report write' is inside 'JSON report')")


def profile_child(op: str, isolation: str, examples: int, seed: int, out: str) -> None:
    """The child of `profiled_command`: the command in this process under cProfile, its stats to
    `out`; prints this process's CPU and wall seconds, and its runtime workers' CPU seconds."""
    from conformance import cli

    with tempfile.TemporaryDirectory() as folder:
        sys.argv = ["conform", "run", "--op", op, "--jobs", "1", *(["--no-isolation"] if isolation == "--no-isolation" else []),
                    "--examples", str(examples), "--seed", str(seed), "--shrink", "0",
                    "--report-json", os.path.join(folder, "report.json")]
        os.chdir(folder)
        profile = cProfile.Profile()  # its own clock: a CPU clock (a system call per event) would inflate Python code ~10x
        spent: dict[int, float] = {}  # the command's runtime workers (isolated): each one's CPU at its last sample
        done = threading.Event()

        def sample() -> None:
            while not done.wait(0.2):
                for pid in tree(os.getpid())[1:]:
                    spent[pid] = own_cpu(pid) or spent.get(pid, 0.0)

        sampler = threading.Thread(target=sample, daemon=True)  # not profiled: cProfile watches its own thread
        sampler.start()
        cpu0, wall0 = time.process_time(), time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            profile.enable()
            try:
                cli.main()
            except SystemExit:
                pass
            finally:
                profile.disable()
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        done.set()
        sampler.join()
    profile.dump_stats(out)
    print(cpu, wall, sum(spent.values()))


def commands(ops: list[str], examples: int, seed: int, in_process_cpu: float | None) -> None:
    """The ops in one command each way, in child processes: wall seconds and the children's CPU."""
    print(f"\n3. as a user runs it, {'+'.join(ops) if len(ops) <= 6 else f'{len(ops)} ops'}, --examples {examples}:")
    # Not --no-isolation: a runtime crash (Div's, Mod's, QuantizeLinear's) ends such a command.
    for label, extra in (("default (isolation, --jobs per core)", []), ("--jobs 1 (isolated)", ["--jobs", "1"])):
        with tempfile.TemporaryDirectory() as folder:
            command = [sys.executable, "-m", "conformance", "run", *[a for op in ops for a in ("--op", op)],
                       "--examples", str(examples), "--seed", str(seed), *extra,
                       "--report-json", os.path.join(folder, "report.json")]
            started = time.perf_counter()
            process = subprocess.Popen(command, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            spent: dict[int, float] = {}  # every process of the command's tree: its CPU at its last sample
            while process.poll() is None:
                for pid in tree(process.pid):
                    spent[pid] = own_cpu(pid) or spent.get(pid, 0.0)
                time.sleep(0.1)
            wall = time.perf_counter() - started
        cpu, main_cpu = sum(spent.values()), spent.get(process.pid, 0.0)
        compared = f" ({cpu / in_process_cpu:.2f}x section 1's)" if in_process_cpu else ""
        print(f"   {label:38s} {wall:7.1f} s wall, >= {cpu:6.1f} CPU s of its {len(spent)} processes{compared}, "
              f"the main process's >= {main_cpu:.1f} (exit {process.returncode})", flush=True)


def tree(root: int) -> list[int]:
    """`root` and every process under it, from each process's parent as /proc shows it now (the
    workers a fork server forks are under it, not under the command that asked for them)."""
    children = defaultdict(list)
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat") as stream:
                    children[int(stream.read().rsplit(")", 1)[1].split()[1])].append(int(entry.name))
            except (OSError, IndexError, ValueError):
                continue
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, [])
    return found


def own_cpu(pid: int) -> float | None:
    """A process's own CPU seconds so far, from /proc (Linux), or None."""
    try:
        with open(f"/proc/{pid}/stat") as stream:
            fields = stream.read().rsplit(")", 1)[1].split()  # the name, in parentheses, may hold spaces
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", default=DEFAULT_OPS, help=f"comma-separated ops (default: {DEFAULT_OPS})")
    parser.add_argument("--all", action="store_true", help="every covered op in section 1")
    parser.add_argument("--examples", type=int, default=20, help="hypothesis cases per group (conform's default: 20)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-isolation", action="store_true",
                        help="section 1 with the runtime in this process (an op whose runtime crashes ends the benchmark)")
    parser.add_argument("--profile", default=DEFAULT_PROFILE, help=f"ops to profile by stage (default: {DEFAULT_PROFILE})")
    parser.add_argument("--no-profile", action="store_true", help="skip section 2")
    parser.add_argument("--no-per-op", action="store_true", help="skip section 1")
    parser.add_argument("--top", type=int, default=len(STAGES), help="stages shown per profiled op")
    parser.add_argument("--commands", action="store_true", help="section 3: the ops as child-process commands")
    parser.add_argument("--profile-child", help=argparse.SUPPRESS)
    parser.add_argument("--isolation", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # the reference's numpy warnings on NaN casts, once per op
    if args.profile_child:
        profile_child(args.profile_child, "--isolation" if args.isolation else "--no-isolation", args.examples,
                      args.seed, args.out)
        return
    from conformance.reference import covered_ops

    ops = list(covered_ops()) if args.all else [op for op in args.ops.split(",") if op]
    rows = []
    if not args.no_per_op:
        rows = per_op(ops, args.examples, args.seed, not args.no_isolation)
        extrapolated(rows, args.examples, args.seed)
    if not args.no_profile:
        for op in [op for op in args.profile.split(",") if op]:
            profiled_command(op, args.examples, args.seed, args.top)
    if args.commands:
        commands(ops, args.examples, args.seed, sum(r["cpu"] for r in rows) if rows else None)


if __name__ == "__main__":
    main()
