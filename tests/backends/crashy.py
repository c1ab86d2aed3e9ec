"""A deliberately broken onnx.backend: on chosen Slice cases it segfaults, exits or hangs.

Slice starts of -3 -> SIGSEGV; starts of 7 -> hangs; starts of -100 -> os._exit(7). With
CRASHY_HANGS naming a file, each hang first appends a line to it, so a test can count them; with
CRASHY_NO_HANGS set, starts of 7 crash too (SIGSEGV), for a runtime that only crashes.
"""

import os
import signal
import time

from _delegating import DelegatingRep, backend_for


class _Rep(DelegatingRep):
    def adjust(self, feeds):
        first = int(feeds["starts"].reshape(-1)[0]) if "starts" in feeds and feeds["starts"].size else None
        if first == -3 or (first == 7 and os.environ.get("CRASHY_NO_HANGS")):
            os.kill(os.getpid(), signal.SIGSEGV)
        if first == 7:
            if os.environ.get("CRASHY_HANGS"):
                with open(os.environ["CRASHY_HANGS"], "a") as log:
                    log.write(f"hang in process {os.getpid()}\n")
            time.sleep(600)
        if first == -100:
            os._exit(7)
        return feeds


prepare = backend_for(_Rep)
