"""A correct onnx.backend whose worker processes die while loading it, as a runtime might whose
import fails only in a fresh process (or a spare worker killed while it waited).

Each worker process that loads it appends a line to the file CONFORM_TEST_DEATHS names; the first
CONFORM_TEST_DIE_TIMES of them (every one when unset) then exit with code 3 before it is loaded.
In the main process it loads at once."""

import multiprocessing
import os

from _delegating import DelegatingRep, backend_for

if multiprocessing.parent_process() is not None:
    with open(os.environ["CONFORM_TEST_DEATHS"], "a") as log:
        log.write(f"worker {os.getpid()} loading\n")
    with open(os.environ["CONFORM_TEST_DEATHS"]) as log:
        loads = len(log.readlines())
    if loads <= int(os.environ.get("CONFORM_TEST_DIE_TIMES", "1000000")):
        os._exit(3)

prepare = backend_for(DelegatingRep)
