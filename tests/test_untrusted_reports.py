"""Shard reports given to `conform merge` come from anyone's CI job: a file that is no report is one
clear refusal (exit 2) in bounded time and memory, never a hang, a traceback or a whole device read."""

import os
import signal

import pytest

from conformance.errors import UsageError
from conformance.report.merge import merge


@pytest.fixture
def within_seconds():
    """A hang fails the test rather than the suite."""
    signal.signal(signal.SIGALRM, lambda *_: pytest.fail("merge did not answer within 10 s"))
    signal.alarm(10)
    yield
    signal.alarm(0)


def test_json_nested_beyond_recursion_is_a_refusal_not_a_traceback(tmp_path, within_seconds):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(UsageError, match=r"deep\.json: not a readable conform JSON report \(RecursionError"):
        merge([deep, deep])


@pytest.mark.parametrize("make, said", [
    (lambda path: os.mkfifo(path), "JSON reports must be regular files, and this is a named pipe (FIFO)"),
    (lambda path: path.symlink_to("/dev/zero"), "JSON reports must be regular files, and this is a character device"),
])
def test_a_pipe_or_device_is_refused_unread(tmp_path, within_seconds, make, said):
    shard = tmp_path / "shard.json"
    make(shard)
    with pytest.raises(UsageError) as refused:
        merge([shard, shard])
    assert refused.value.message == f"{shard}: {said}"
