"""A correct but slow onnx.backend: every run takes 5 ms more, and the 150th leaves the file
`slow-backend-busy` in the working folder, so a test knows when a run is under way and far from done
(and, with --jobs, that a worker has finished units of 64 cases, which a report can hold)."""

import time
from pathlib import Path

from _delegating import DelegatingRep, backend_for

MARK_AFTER = 150
_runs = 0


class _Rep(DelegatingRep):
    def adjust(self, feeds):
        global _runs
        _runs += 1
        if _runs == MARK_AFTER:
            Path("slow-backend-busy").touch()
        time.sleep(0.005)
        return feeds


prepare = backend_for(_Rep)
