"""A correct onnx.backend that is slow to load in a worker process: importing it there takes
CONFORM_TEST_START_SECONDS (default 1) seconds, as a heavy runtime on a busy machine might. In the
main process it loads at once."""

import multiprocessing
import os
import time

from _delegating import DelegatingRep, backend_for

if multiprocessing.parent_process() is not None:
    time.sleep(float(os.environ.get("CONFORM_TEST_START_SECONDS", "1")))

prepare = backend_for(DelegatingRep)
