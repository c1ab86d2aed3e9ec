"""The whole run, on one machine and sharded: time, memory, report sizes, and whether the shards
merge into the one run's verdicts. Prints figures; asserts nothing.

    python benchmarks/bench_run_all.py                                   # conform run --all (long)
    python benchmarks/bench_run_all.py --ops Abs Slice --examples 5      # a subset
    python benchmarks/bench_run_all.py --ops Clip --html --shards 3 --keep /tmp/bench-all
    python benchmarks/bench_run_all.py --shards 0 --also="--expect $PWD/expectations/onnxruntime-cpu.yaml --write-expect w.yaml"
    python benchmarks/bench_run_all.py --ops Cast CastLike QuantizeLinear --against reference

On onnxruntime CPU, at the given --examples and --seed, in child processes run as a user runs them:
1. `conform run --all` (or `--op` for each of --ops): cases, seconds, exit code; the peak memory
   of the command and every process under it together (PSS, so shared pages count once), with
   the process count then, and the largest single process; the JSON report's size (and the HTML
   report's, with --html).
   `--also` adds options to this run (`--write-expect`, `--expect`: paths absolute, or relative to
   the reports' folder); its `--expect` goes to each shard too, so that they judge alike.
   `--against RUNNER` measures `conform diff --against RUNNER` instead (no shards): onnxruntime
   and RUNNER side by side, every disagreement recorded.
2. the same run as N shards (none with --shards 0) (`--shard K/N`, one after another on this machine) and `conform merge`
   of them: each command's seconds and peak memory, the merged report's size.
3. whether the merged report holds the one run's verdicts: each recorded result's outcome by id and
   variant (mode, optimizations), the counted rows (`tallies`, summed by everything but their count
   and ids), the summary and the stale expectations; and how many records are equal whole, but for
   their timings (a shard shrinks its own first --shrink failing groups, so a record's shrinking
   notes may differ where its outcome does not).

Memory is sampled every --sample seconds (default 0.2): each sample reads every process's parent
from /proc, takes the command's process and all its descendants, and sums their Pss from
/proc/PID/smaps_rollup (Linux; a process too short-lived for any sample is missed).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import NamedTuple


class Measured(NamedTuple):
    """One command: exit code, wall seconds, and its peak memory in MB: every process of it
    together (and how many there were then), and the largest single process (and which)."""

    code: int
    seconds: float
    peak_total: float
    processes_at_peak: int
    peak_single: float
    single_is: str


def measured(args: list[str], folder: Path, log: str, every: float) -> Measured:
    """Run `conform ARGS` in `folder` (its console output to `log` there), sampling its process tree."""
    started = time.perf_counter()
    with open(folder / log, "w") as out:
        process = subprocess.Popen([sys.executable, "-m", "conformance", *args], cwd=folder,
                                   stdout=out, stderr=subprocess.STDOUT)
        total, count, single, single_is = 0, 0, 0, ""
        while process.poll() is None:
            parents = descendants(process.pid)
            sizes = {pid: pss_kib(pid) for pid in parents}
            if sum(sizes.values()) > total:
                total, count = sum(sizes.values()), sum(1 for size in sizes.values() if size)
            pid, size = max(sizes.items(), key=lambda item: item[1])
            if size > single:
                single, single_is = size, role(pid, process.pid, parents)
            time.sleep(every)
    return Measured(process.returncode, time.perf_counter() - started, total / 1024, count, single / 1024, single_is)


def descendants(root: int) -> dict[int, int]:
    """`root` and every process under it, each with its parent, from each process's parent as /proc
    shows it now (a process forked from any of root's threads is found too)."""
    children = defaultdict(list)
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat") as stream:
                    parent = int(stream.read().rsplit(")", 1)[1].split()[1])  # the name, in parentheses, may hold spaces
            except (OSError, IndexError, ValueError):
                continue
            children[parent].append(int(entry.name))
    found, waiting = {}, [(root, 0)]
    while waiting:
        pid, parent = waiting.pop()
        found[pid] = parent
        waiting += [(child, pid) for child in children.get(pid, [])]
    return found


def role(pid: int, root: int, parents: dict[int, int]) -> str:
    """What a process of the command is: conform itself, its fork server, a worker (forked from the
    fork server, whose command line it keeps), or another child, by its command line."""
    if pid == root:
        return "conform itself"
    name = command_name(pid)
    if "multiprocessing.forkserver" in name:
        return "the fork server" if parents.get(pid) == root else "a worker process"
    if "multiprocessing.resource_tracker" in name:
        return "the resource tracker"
    return f"a child: {name if len(name) <= 60 else name[:57] + '...'}"


def pss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as stream:
            return next((int(line.split()[1]) for line in stream if line.startswith("Pss:")), 0)
    except OSError:  # gone, or no smaps_rollup here
        return 0


def command_name(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as stream:
            words = stream.read().decode("utf-8", "replace").split("\0")
    except OSError:
        return "?"
    return " ".join(w for w in words if w)


def verdicts(doc: dict) -> dict:
    """What a run decided, as a merged report must hold it: each recorded result's outcome by id
    and variant, the counted rows summed by their key (and their ids, where recorded), the summary,
    the stale expectations."""
    records: dict[tuple, str] = {}
    repeated = []
    for record in doc["results"]:
        key = (record["id"], record.get("mode"), record.get("optimizations"))
        if key in records:
            repeated.append(key)
        records[key] = record["outcome"]
    counted: Counter = Counter()
    counted_ids: dict[tuple, list] = defaultdict(list)
    for row in doc.get("tallies") or ():
        key = tuple(sorted((name, str(value)) for name, value in row.items() if name not in ("count", "ids")))
        counted[key] += row["count"]
        counted_ids[key] += row.get("ids") or []
    return {"results (outcome by id and variant)": records,
            "results recorded twice": repeated,
            "tallies (count by row)": dict(counted),
            "tallies' ids": {key: sorted(ids) for key, ids in counted_ids.items() if ids},
            "summary": doc["summary"],
            "stale expectations": sorted((e["source"], e["reason"]) for e in doc.get("stale_expectations") or ())}


def differences(one: dict, merged: dict) -> list[str]:
    """Each way the merged report's verdicts differ from the one run's, a line each (at most a few per kind)."""
    lines = []
    a, b = verdicts(one), verdicts(merged)
    for kind in a:
        if a[kind] == b[kind]:
            continue
        if isinstance(a[kind], dict):
            keys = sorted(set(a[kind]) | set(b[kind]), key=str)
            wrong = [key for key in keys if a[kind].get(key) != b[kind].get(key)]
            lines.append(f"{kind}: {len(wrong)} differ, e.g. " + "; ".join(
                f"{key}: one run {a[kind].get(key)!r}, merged {b[kind].get(key)!r}" for key in wrong[:3]))
        else:
            lines.append(f"{kind}: one run {a[kind]!r}, merged {b[kind]!r}")
    return lines


def equal_whole(one: dict, merged: dict) -> tuple[int, int]:
    """How many of the one run's records the merged report holds equal in every field but `seconds`."""
    def key(record: dict) -> tuple:
        return record["id"], record.get("mode"), record.get("optimizations")

    def timeless(record: dict) -> dict:
        return {name: value for name, value in record.items() if name != "seconds"}

    theirs = {key(r): timeless(r) for r in merged["results"]}
    return sum(theirs.get(key(r)) == timeless(r) for r in one["results"]), len(one["results"])


def runtimes(described: dict) -> str:
    """The runtime a run's report names, or a diff's two."""
    sides = [described[side] for side in ("first", "second") if side in described] or [described]
    return " against ".join(f"{side.get('name')} {side.get('version')}" for side in sides)


def megabytes(path: Path) -> str:
    return f"{path.stat().st_size / 1e6:.2f} MB" if path.exists() else "not written"


def memory(m: Measured) -> str:
    return (f"peak memory, every process together (PSS) {m.peak_total:6.0f} MB ({m.processes_at_peak} process{'es' if m.processes_at_peak != 1 else ''});"
            f" largest single process {m.peak_single:5.0f} MB ({m.single_is})")


def browser_load(page: Path) -> str:
    """How long headless chromium takes to load the HTML page and run its script (--dump-dom
    returns once the page has loaded), or why it was not measured."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        return "HTML page not loaded: no chromium installed"
    started = time.perf_counter()
    done = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", page.as_uri()],
                          capture_output=True, text=True, timeout=120)
    seconds = time.perf_counter() - started
    return f"HTML page loaded in headless chromium in {seconds:.2f} s (exit {done.returncode}; browser start-up included)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", nargs="+", help="these ops (default: --all)")
    parser.add_argument("--examples", type=int, default=20, help="hypothesis examples per op version x dtype (default 20)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, help="conform's --jobs (default: conform's own)")
    parser.add_argument("--shards", type=int, default=2, help="N of --shard K/N (default 2; 0: no sharded run)")
    parser.add_argument("--also", default="", help="more options of the one run, as one string (e.g. --write-expect w.yaml); its --expect goes to the shards too")
    parser.add_argument("--against", help="measure `conform diff --against RUNNER` instead of `run` (no shards)")
    parser.add_argument("--html", action="store_true", help="also write (and size) the HTML reports")
    parser.add_argument("--sample", type=float, default=0.2, help="seconds between memory samples (default 0.2)")
    parser.add_argument("--keep", type=Path, help="write the reports and console logs here, and keep them")
    options = parser.parse_args()

    folder = options.keep or Path(tempfile.mkdtemp(prefix="bench-run-all-"))
    folder.mkdir(parents=True, exist_ok=True)
    chosen = [word for op in options.ops for word in ("--op", op)] if options.ops else ["--all"]
    command = ["diff", "--against", options.against] if options.against else ["run"]
    common = [*command, *chosen, "--examples", str(options.examples), "--seed", str(options.seed),
              *(["--jobs", str(options.jobs)] if options.jobs else [])]
    html = ["--html", "one.html"] if options.html else []
    print(f"conform {' '.join(common)}  (onnxruntime CPU; {os.cpu_count()} cores; reports in {folder})")

    also = shlex.split(options.also)
    one = measured([*common, *also, "--report-json", "one.json", *html], folder, "one.log", options.sample)
    if not (folder / "one.json").exists():
        print(f"1. one run: exit {one.code}, no JSON report written; see {folder / 'one.log'}")
        return
    doc = json.loads((folder / "one.json").read_text())
    cases = doc["summary"]["total"]
    print(f"1. one run{' ' + ' '.join(also) if also else ''}: {cases} cases in {one.seconds:.1f} s = {cases / one.seconds:.0f} cases/s, exit {one.code}"
          f" ({runtimes(doc['runner'])})")
    print(f"   {memory(one)}")
    print(f"   JSON report {megabytes(folder / 'one.json')} ({len(doc['results'])} records,"
          f" {len(doc.get('tallies') or ())} tally rows)" + (f"; HTML report {megabytes(folder / 'one.html')}" if html else ""))
    if html:
        print(f"   {browser_load(folder / 'one.html')}")

    n = 0 if options.against else options.shards
    if not n:
        if not options.keep:
            shutil.rmtree(folder, ignore_errors=True)
        return
    print(f"2. the same run as {n} shards, one after another, and conform merge")
    shard_seconds = 0.0
    for k in range(1, n + 1):
        shard = measured([*common, *expect_options(also), "--shard", f"{k}/{n}", "--report-json", f"shard-{k}.json"],
                         folder, f"shard-{k}.log", options.sample)
        shard_seconds += shard.seconds
        total = json.loads((folder / f"shard-{k}.json").read_text())["summary"]["total"] if (folder / f"shard-{k}.json").exists() else "no"
        print(f"   shard {k}/{n}: {total} cases in {shard.seconds:.1f} s, exit {shard.code}; JSON {megabytes(folder / f'shard-{k}.json')}")
        print(f"      {memory(shard)}")
    merge = measured(["merge", *(f"shard-{k}.json" for k in range(1, n + 1)), "--report-json", "merged.json",
                      *(["--html", "merged.html"] if html else [])], folder, "merge.log", options.sample)
    print(f"   merge: {merge.seconds:.1f} s, exit {merge.code}; JSON {megabytes(folder / 'merged.json')}"
          + (f", HTML {megabytes(folder / 'merged.html')}" if html else ""))
    print(f"      {memory(merge)}")
    print(f"   shards and merge together {shard_seconds + merge.seconds:.1f} s (one run {one.seconds:.1f} s; on N machines,"
          f" the slowest shard plus the merge)")

    if not (folder / "merged.json").exists():
        print(f"3. no merged report; see {folder / 'merge.log'}")
        return
    merged = json.loads((folder / "merged.json").read_text())
    found = differences(doc, merged)
    same, records = equal_whole(doc, merged)
    seen = verdicts(doc)
    print(f"3. merged verdicts equal the one run's: {'yes' if not found else 'NO'}"
          f" ({len(seen['results (outcome by id and variant)'])} records by id and variant,"
          f" {len(seen['tallies (count by row)'])} tally rows, the summary, {len(seen['stale expectations'])} stale expectations);"
          f" exit codes: one run {one.code}, merge {merge.code}")
    for line in found:
        print(f"   {line}")
    print(f"   records equal whole but for their timings: {same} of {records}")
    if not options.keep:
        shutil.rmtree(folder, ignore_errors=True)


def expect_options(also: list[str]) -> list[str]:
    """The `--expect PATH` options among `also` (a shard judges by the same expectations; it writes none)."""
    return [word for k, word in enumerate(also) if word == "--expect" or (k and also[k - 1] == "--expect")]


if __name__ == "__main__":
    main()
