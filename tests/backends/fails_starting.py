"""A correct onnx.backend whose worker processes fail to load it: they die (exit code 3), as a
runtime might whose import fails only in a fresh process (or a spare worker killed while it
waited), or with CONFORM_TEST_START_FAULT=hang they never finish loading it, as a runtime might
that waits forever on a lock a fork left held.

Each worker process that loads it appends a line to the file CONFORM_TEST_STARTS names; the first
CONFORM_TEST_FAIL_TIMES of them (every one when unset) then fail, saying so on stderr first. In
the main process it loads at once."""

import fcntl
import multiprocessing
import os
import sys
import time

from _delegating import DelegatingRep, backend_for

if multiprocessing.parent_process() is not None:
    with open(os.environ["CONFORM_TEST_STARTS"], "a+") as log:
        fcntl.flock(log, fcntl.LOCK_EX)  # two workers loading at once must not both count two loads
        log.write(f"worker {os.getpid()} loading\n")
        log.flush()
        log.seek(0)
        loads = len(log.readlines())
    if loads <= int(os.environ.get("CONFORM_TEST_FAIL_TIMES", "1000000")):
        sys.stderr.write("fails_starting: cannot load here\n")
        sys.stderr.flush()
        if os.environ.get("CONFORM_TEST_START_FAULT") == "hang":
            time.sleep(3600)
        os._exit(3)

prepare = backend_for(DelegatingRep)
