"""A deliberately broken onnx.backend standing in for heap corruption and for a Rust panic.

Slice starts of -3 "corrupt the heap": nothing goes wrong in that case, but a module-level flag is
set, and the next case the process runs crashes (SIGSEGV), whatever it is: run alone, that case
passes. Starts of -100 panic as a Rust runtime built with panic=abort does: the panic line and its
message on stderr, then a backtrace of more frames than a verdict quotes, then abort (SIGABRT).
With CORRUPTING_ALL_PANIC set, every case panics so. Starts of 1 warn on stderr, and pass.
"""

import os
import signal
import sys

from _delegating import DelegatingRep, backend_for

_corrupted = []  # set by the case that "corrupts the heap"; the next case crashes


class _Rep(DelegatingRep):
    def adjust(self, feeds):
        first = int(feeds["starts"].reshape(-1)[0]) if "starts" in feeds and feeds["starts"].size else None
        if _corrupted:
            _say("corrupting: a later case meets the corrupted heap")
            os.kill(os.getpid(), signal.SIGSEGV)
        if first == -3:
            _corrupted.append(True)
        if first == 1:
            _say("corrupting warns: a case with starts 1")
        if first == -100 or os.environ.get("CORRUPTING_ALL_PANIC"):
            _panic()
        return feeds


def _panic() -> None:
    _say("thread '<unnamed>' panicked at tract-core/src/ops/array/slice.rs:42:17:")
    _say("attempt to divide by zero")
    _say("stack backtrace:")
    for frame in range(30):
        _say(f"  {frame:2d}: 0x7f00deadbe{frame:02x} - tract_core::frame_{frame}")
        _say(f"                at src/frame_{frame}.rs:{frame + 1}:5")
    _say("note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.")
    os.abort()


def _say(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


prepare = backend_for(_Rep)
