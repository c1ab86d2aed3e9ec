"""Shared fixtures: a CLI runner that goes through `main` (so exit codes are the real ones)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BACKENDS = Path(__file__).resolve().parent / "backends"


def with_test_backends() -> dict[str, str]:
    """This process's environment, with the deliberately broken backends of tests/backends importable."""
    return {**os.environ, "PYTHONPATH": f"{BACKENDS}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}


class CliResult:
    def __init__(self, completed: subprocess.CompletedProcess, report: Path | None) -> None:
        self.code = completed.returncode
        self.stdout = completed.stdout
        self.stderr = completed.stderr
        self.report_path = report
        # Read now: the next run in the same test may write the same path.
        self._report = json.loads(report.read_text()) if report is not None and report.exists() else None

    @property
    def report(self) -> dict:
        assert self._report is not None, f"no report was written (exit {self.code}): {self.stderr}"
        return self._report


@pytest.fixture
def conform(tmp_path):
    """Run `conform ARGS...` in a subprocess; the JSON report goes to tmp_path unless given."""

    def run(*args: str, report: bool = True) -> CliResult:
        argv = list(args)
        path = None
        if report and argv and argv[0] == "run" and "--report-json" not in argv:
            path = tmp_path / "report.json"
            argv += ["--report-json", str(path)]
        env = {**with_test_backends(), "COLUMNS": "200"}
        completed = subprocess.run(
            [sys.executable, "-m", "conformance", *argv], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600
        )
        return CliResult(completed, path)

    return run
