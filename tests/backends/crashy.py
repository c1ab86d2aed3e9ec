"""A deliberately broken onnx.backend: on chosen Slice cases it segfaults, exits or hangs.

Slice starts of -3 -> SIGSEGV; starts of 7 -> hangs; starts of -100 -> os._exit(7). With
CRASHY_HANGS naming a file, each hang first appends a line to it, so a test can count them; with
CRASHY_NO_HANGS set, starts of 7 crash too (SIGSEGV), for a runtime that only crashes.

Like many runtimes it talks on stderr: a warning at every case, and a line saying what it is
about to do before it crashes, exits or hangs (what a verdict should quote).
"""

import os
import signal
import sys
import time

from _delegating import DelegatingRep, backend_for


class _Rep(DelegatingRep):
    def adjust(self, feeds):
        first = int(feeds["starts"].reshape(-1)[0]) if "starts" in feeds and feeds["starts"].size else None
        _say(f"crashy warns: a case with starts {first}")
        if first == -3 or (first == 7 and os.environ.get("CRASHY_NO_HANGS")):
            _say("crashy: about to segfault")
            os.kill(os.getpid(), signal.SIGSEGV)
        if first == 7:
            _say("crashy: about to hang")
            if os.environ.get("CRASHY_HANGS"):
                with open(os.environ["CRASHY_HANGS"], "a") as log:
                    log.write(f"hang in process {os.getpid()}\n")
            time.sleep(600)
        if first == -100:
            _say("crashy: about to exit with code 7")
            os._exit(7)
        return feeds


def _say(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


prepare = backend_for(_Rep)
