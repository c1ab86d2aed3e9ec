"""Targets for worker processes under test: each reports what the worker saw when it started."""

import gc
import os
import sys
import threading
import time


def _threads(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        return int(next(line.split()[1] for line in status if line.startswith("Threads:")))


def what_it_found(connection) -> None:
    from conformance.lifetime import start_method

    linux = sys.platform.startswith("linux")
    connection.send({
        "onnxruntime loaded": "onnxruntime" in sys.modules,
        "objects left out of cycle collections": gc.get_freeze_count(),
        "preloaded": all(name in sys.modules for name in ("conformance.parallel", "hypothesis", "onnx")),
        "mark": os.environ.get("CONFORM_TEST_MARK"),
        "start method of its own workers": start_method(),
        "threads of the process it was forked from": _threads(os.getppid()) if linux else None,
        "its threads, native vs python": (_threads(os.getpid()) if linux else None, threading.active_count()),
    })


def stay(connection) -> None:
    connection.send(os.getpid())
    time.sleep(120)


def with_a_server_of_its_own(connection) -> None:
    """What a worker started by a worker with a fork server of its own found."""
    from conformance.lifetime import start_own_server, start_worker

    start_own_server()
    process, inner = start_worker(what_it_found, ())
    connection.send(inner.recv())
    process.join(10)


def with_a_server_of_its_own_then_stay(connection) -> None:
    from conformance.lifetime import start_own_server, start_worker

    start_own_server()
    process, inner = start_worker(stay, ())
    connection.send(inner.recv())
    time.sleep(120)
