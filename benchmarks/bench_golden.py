"""Golden data at scale: `generate --all`, then `verify` and `run --from` of what it wrote. Prints
figures; asserts nothing.

    python benchmarks/bench_golden.py                          # --all at --examples 1
    python benchmarks/bench_golden.py --examples 5 --jobs 2    # the scale at which verify once found 93 tests unreadable
    python benchmarks/bench_golden.py --ops QuantizeLinear Slice --runner reference --keep /tmp/golden

Each command runs as a user runs it, in a child process (`python -m conformance ...`), and for each
it prints: how many tests (generate: written and listed as skipped; verify: data sets checked and
tests unreadable; run --from: cases run), wall seconds, exit code, and peak memory. Generate also
prints the folder's size: the files' bytes and what they take on disk (whole blocks: many small
files).

Peak memory is measured as benchmarks/bench_run_all.py measures it: the command's process tree
sampled every --sample seconds, its processes' PSS summed (shared pages counted once), the peak of
that sum, and the largest single process.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import tempfile
from pathlib import Path

from bench_run_all import Measured, measured, memory  # the process tree sampled, its PSS summed


def folder_size(folder: Path) -> tuple[int, int, int]:
    """The folder's files: how many, their bytes, and the bytes their blocks take on disk."""
    files = apparent = on_disk = 0
    for root, _, names in os.walk(folder):
        for name in names:
            status = os.lstat(os.path.join(root, name))
            files += 1
            apparent += status.st_size
            on_disk += status.st_blocks * 512
    return files, apparent, on_disk


def report_summary(path: Path) -> dict:
    """A JSON report's summary, and how many tests it lists as unreadable and skipped ({} when none was written)."""
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return {**doc.get("summary", {}), "unreadable": len(doc.get("unreadable", [])), "skipped": len(doc.get("skipped", []))}


def written_and_skipped(log: Path) -> tuple[int, int]:
    """What `generate` said it did: tests written, and listed as skipped (0, 0 when it said neither)."""
    found = re.search(r"([\d,]+) tests written to .*?; ([\d,]+) listed as skipped", log.read_text())
    return (int(found[1].replace(",", "")), int(found[2].replace(",", ""))) if found else (0, 0)


def line(label: str, count: str, m: Measured) -> str:
    return f"{label:<13} {count:<44} {m.seconds:7.1f} s  exit {m.code}  {memory(m)}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=int, default=1, help="hypothesis examples per op version x binding (default 1)")
    parser.add_argument("--ops", nargs="*", help="these ops instead of --all")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, help="passed to each command (default: conform's own choice)")
    parser.add_argument("--runner", default="onnxruntime", help="the runtime of `run --from` (default onnxruntime)")
    parser.add_argument("--sample", type=float, default=0.1, help="seconds between looks at the process tree")
    parser.add_argument("--keep", type=Path, help="write here (an empty or new folder) and keep it; default: a temporary folder")
    arguments = parser.parse_args()

    home = arguments.keep or Path(tempfile.mkdtemp(prefix="bench-golden-"))
    home.mkdir(parents=True, exist_ok=True)
    out = home / "golden"
    chosen = ["--all"] if not arguments.ops else [word for op in arguments.ops for word in ("--op", op)]
    jobs = ["--jobs", str(arguments.jobs)] if arguments.jobs else []
    print(f"golden data of {' '.join(chosen)} at --examples {arguments.examples} --seed {arguments.seed}"
          f"{' ' + ' '.join(jobs) if jobs else ''}; run --from on {arguments.runner}; in {home}")
    try:
        generated = measured(["generate", *chosen, "--examples", str(arguments.examples), "--seed", str(arguments.seed),
                              "--out", str(out), *jobs], home, "generate.log", arguments.sample)
        written, skipped = written_and_skipped(home / "generate.log")
        print(line("generate", f"{written:,} tests written, {skipped:,} listed as skipped", generated))
        files, apparent, on_disk = folder_size(out) if out.is_dir() else (0, 0, 0)
        print(f"{'':<13} {files:,} files, {apparent / 2**20:,.1f} MB of data, {on_disk / 2**20:,.1f} MB on disk")
        verified = measured(["verify", str(out), "--report-json", str(home / "verify.json"), *jobs], home, "verify.log",
                            arguments.sample)
        found = report_summary(home / "verify.json")
        print(line("verify", f"{found.get('total', 0):,} data sets, {found.get('unreadable', 0):,} unreadable", verified))
        ran = measured(["run", "--from", str(out), "--runner", arguments.runner, "--report-json", str(home / "run.json"), *jobs],
                       home, "run.log", arguments.sample)
        found = report_summary(home / "run.json")
        print(line("run --from", f"{found.get('total', 0):,} cases ({found.get('pass', 0):,} pass), "
                                 f"{found.get('skipped', 0):,} skipped", ran))
    finally:
        if arguments.keep is None:
            shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
