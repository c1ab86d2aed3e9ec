"""Files conform writes: whole or not at all, and an OutputError naming the file when they cannot be."""

import errno
import os
import stat
import threading

import pytest

from conformance.errors import OutputError
from conformance.output import check_writable, write_atomic


def test_a_failed_write_leaves_the_old_file_and_no_temporary_file(tmp_path, monkeypatch):
    target = tmp_path / "report.json"
    target.write_text("old")

    def disk_full(source, destination):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "replace", disk_full)
    with pytest.raises(OutputError, match=r"cannot write the JSON report .*report\.json: No space left on device"):
        write_atomic(target, "new", "the JSON report")
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]


def test_a_write_creates_missing_folders_and_replaces_the_file_whole(tmp_path):
    target = tmp_path / "a" / "b" / "report.json"
    write_atomic(target, "first")
    write_atomic(target, "second")
    assert target.read_text() == "second"
    assert sorted(p.name for p in target.parent.iterdir()) == ["report.json"]


def test_check_writable_makes_the_folder_and_leaves_nothing_else(tmp_path):
    target = tmp_path / "new" / "report.json"
    check_writable(target, "the JSON report")
    assert target.parent.is_dir() and list(target.parent.iterdir()) == []


def a_folder(tmp):
    return tmp


def under_a_file(tmp):
    (tmp / "file").write_text("")
    return tmp / "file" / "report.json"


@pytest.mark.parametrize("blocked", [a_folder, under_a_file])
def test_check_writable_refuses_what_write_atomic_could_not_write(tmp_path, blocked):
    target = blocked(tmp_path)
    with pytest.raises(OutputError, match="cannot write the HTML report"):
        check_writable(target, "the HTML report")
    with pytest.raises(OutputError):
        write_atomic(target, "x")


def test_a_pipe_is_written_as_it_is_not_replaced_by_a_file(tmp_path):
    # Renamed over, a FIFO (or /dev/null, /dev/stdout) became a regular file holding the report.
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()), daemon=True)
    reader.start()
    check_writable(fifo, "the JSON report")
    write_atomic(fifo, '{"complete": true}', "the JSON report")
    reader.join(10)
    assert received == ['{"complete": true}']
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.fifo"]


def test_a_symbolic_link_keeps_pointing_at_the_file_it_names_which_gets_the_text(tmp_path):
    (tmp_path / "runs").mkdir()
    real = tmp_path / "runs" / "2026-11-23.json"
    real.write_text("old")
    link = tmp_path / "latest.json"
    link.symlink_to(real)
    check_writable(link, "the JSON report")
    write_atomic(link, "new", "the JSON report")
    assert link.is_symlink() and link.resolve() == real.resolve()
    assert real.read_text() == "new"
    assert sorted(p.name for p in real.parent.iterdir()) == ["2026-11-23.json"]


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_a_new_file_is_readable_as_the_users_umask_allows(tmp_path, mask):
    previous = os.umask(mask)
    try:
        write_atomic(tmp_path / "report.json", "{}")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "report.json").stat().st_mode) == 0o666 & ~mask, "a team reads the report as open() would let it"


def test_a_replaced_file_keeps_the_permissions_it_had(tmp_path):
    target = tmp_path / "expectations.yaml"
    target.write_text("old")
    target.chmod(0o640)
    write_atomic(target, "new")
    assert stat.S_IMODE(target.stat().st_mode) == 0o640, "the person's chosen permissions are kept when conform rewrites the file"
