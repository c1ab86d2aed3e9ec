"""A correct onnx.backend that is slow to import in a command's own process, which imports it to
check that it is there before any case runs: it leaves the file `backend-importing` in the working
folder, then takes a minute. A test knows the command is busy before its work has begun (its scratch
folder and fork server made, its reports not yet due), and interrupts it there. In a worker
process it loads at once."""

import multiprocessing
import time
from pathlib import Path

from _delegating import DelegatingRep, backend_for

if multiprocessing.parent_process() is None:
    Path("backend-importing").touch()
    time.sleep(60)

prepare = backend_for(DelegatingRep)
