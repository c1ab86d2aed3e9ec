"""What worker processes write to stderr: out of the console, quoted in the verdict of the case
that crashed or hung, and kept in a log beside the report."""

import pytest

from conformance import runtime_log, scratch
from conftest import CRASHING, PASSING

CRASHY_RUN = ("run", "--op", "Slice", "--opset", "13", "--dtype", "float", "--no-hypothesis", "--backend", "crashy",
              "--case", CRASHING, "--case", PASSING)


def _write(path, text: str) -> int:
    with open(path, "a") as stream:
        stream.write(text)
    return path.stat().st_size


def test_a_verdict_quotes_the_last_lines_written_after_the_offset_without_colours(tmp_path):
    log = tmp_path / "worker.txt"
    before = _write(log, "loading warning\n")
    _write(log, "\x1b[0;93mfirst\x1b[m\n\n  second  \n")
    assert runtime_log.written_since(str(log), before) == "; its stderr, last: first | second"
    assert runtime_log.written_since(str(log), log.stat().st_size) == ""  # nothing since
    assert runtime_log.written_since(None, 0) == "" and runtime_log.written_since(str(tmp_path / "gone"), 0) == ""


def test_a_verdict_quotes_at_most_the_last_lines_and_characters(tmp_path):
    log = tmp_path / "worker.txt"
    _write(log, "".join(f"line {n}\n" for n in range(100)))
    quoted = runtime_log.written_since(str(log), 0)
    assert quoted == "; its stderr, last: " + " | ".join(f"line {n}" for n in range(100 - runtime_log.LAST_LINES, 100))
    log.write_text("x" * 5000 + "end\n")
    quoted = runtime_log.written_since(str(log), 0)
    assert quoted.endswith("xend") and len(quoted) == len("; its stderr, last: ...") + runtime_log.LAST_CHARACTERS


def test_keep_gathers_every_worker_file_in_order_and_removes_them(own_scratch):
    tmp_path = own_scratch
    first, quiet, second = runtime_log.new_file(), runtime_log.new_file(), runtime_log.new_file()
    folder = scratch.existing(runtime_log.KIND)
    assert folder is not None and all(scratch.os.path.dirname(f) == folder for f in (first, quiet, second))
    _write(tmp_path / first, "one\ntwo\n")
    _write(tmp_path / quiet, "")
    _write(tmp_path / second, "\x1b[0;93mthree\x1b[m")
    kept = tmp_path / "report.stderr.log"
    assert runtime_log.keep(kept) == (3, 0)
    assert kept.read_text() == "== worker process 1 ==\none\ntwo\n== worker process 3 ==\nthree\n"
    assert not scratch.os.path.exists(folder) and scratch.existing(runtime_log.KIND) is None
    assert runtime_log.keep(tmp_path / "again.log") == (0, 0) and not (tmp_path / "again.log").exists()
    scratch.discard()
    assert [p.name for p in tmp_path.iterdir()] == ["report.stderr.log"]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_what_a_runtime_writes_to_stderr_is_kept_beside_the_report_and_not_printed(conform, tmp_path, monkeypatch, jobs):
    # The crashy backend warns on stderr at every case, as onnxruntime through its onnx.backend
    # does at every opset-6 session: none of it reaches the console, all of it the log, and the
    # crash's verdict quotes what was written during that case alone.
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setenv("TMPDIR", str(temporary))
    result = conform(*CRASHY_RUN, "--jobs", jobs)
    assert result.code == 1, result.stderr
    assert "crashy" not in result.stderr.replace("--backend crashy", "")
    log = tmp_path / "report.stderr.log"
    kept = log.read_text()
    assert "crashy warns: a case with starts 0\n" in kept and "crashy: about to segfault\n" in kept
    lines = len([line for line in kept.splitlines() if not line.startswith("== worker process")])
    assert f"worker processes wrote {lines} lines to stderr, kept in {log} " in result.stderr
    crash = next(r for r in result.report["results"] if r["id"] == CRASHING)
    assert crash["message"] == ("the runtime's worker process died: killed by signal SIGSEGV; its stderr, last: "
                                "crashy warns: a case with starts -3 | crashy: about to segfault")
    assert [p.name for p in temporary.iterdir() if p.name.startswith("conform-")] == []


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_what_a_runtime_prints_to_stdout_goes_to_the_log_not_amid_the_console_report(conform, tmp_path, jobs):
    # A backend's prints reached the command's stdout, amid the console report, and a crashed
    # case's verdict did not quote them.
    result = conform("run", "--op", "Slice", "--opset", "13", "--dtype", "float", "--no-hypothesis", "--backend", "chatty",
                     "--case", CRASHING, "--case", PASSING, "--jobs", jobs)
    assert result.code == 1, result.stderr
    assert {r["id"]: r["outcome"] for r in result.report["results"]} == {CRASHING: "crash", PASSING: "pass"}
    assert [line for line in result.stdout.splitlines() if line.startswith("chatty")] == []  # the verdict quotes them
    crash = next(r for r in result.report["results"] if r["id"] == CRASHING)
    assert crash["message"].endswith("its stderr, last: chatty prints: a case with starts -3 | chatty writes to fd 1 | "
                                     "chatty: about to abort")
    kept = (tmp_path / "report.stderr.log").read_text()
    # In the order written: a print is not held in a buffer past the case's answer or the worker's end.
    assert "chatty prints: a case with starts 0\nchatty writes to fd 1\n" in kept
    assert "chatty prints: a case with starts -3\nchatty writes to fd 1\nchatty: about to abort\n" in kept


def test_a_command_whose_workers_wrote_nothing_keeps_no_log(conform, tmp_path):
    result = conform("run", "--op", "Clip", "--opset", "13", "--dtype", "float", "--no-hypothesis", "--jobs", "1")
    assert result.code == 0, result.stderr
    assert not list(tmp_path.glob("*.stderr.log")) and "wrote" not in result.stderr


def test_a_runtime_that_wrote_megabytes_during_a_case_has_only_the_end_read(tmp_path, monkeypatch):
    log = tmp_path / "worker.txt"
    _write(log, "early line\n" + "x" * 100 + "\n")
    monkeypatch.setattr(runtime_log, "LAST_BYTES_READ", 50)
    quoted = runtime_log.written_since(str(log), 0)
    assert "early line" not in quoted and quoted.endswith("x" * 49)
