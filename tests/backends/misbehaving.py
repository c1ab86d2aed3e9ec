"""A deliberately misbehaving onnx.backend: on Slice starts of -3 it does what
CONFORM_TEST_MISBEHAVE says (read at each case), and runs every other case correctly.

- none, none-output, object-output, dict, object-array, one-more: returns None, [None],
  [object()], a dict, an array of Python objects, or one output too many;
- system-exit, keyboard-interrupt, generator-exit: raises SystemExit(0), KeyboardInterrupt or
  GeneratorExit; prepare-system-exit: raises SystemExit(3) from prepare(), for every model;
- exit-when-read, interrupt-when-read, error-when-read: raises an exception whose message, when
  read (str, repr), raises SystemExit(0), KeyboardInterrupt or RuntimeError;
- length-exits, length-fails: returns a list whose len() raises SystemExit(0) or RuntimeError;
- sigint, sigint-swallowed: sends SIGINT to its own process (as a Ctrl-C would) and waits for it,
  then lets the KeyboardInterrupt through, or swallows it and answers;
- flood: writes CONFORM_TEST_FLOOD_BYTES (default 4 MB) to stderr, a numbered line at a time,
  then "misbehaving: flood ends" (at every case, not only starts of -3), and segfaults on -3;
- spawn, spawn-hang: starts `sleep 300`, writes its process id to the file CONFORM_TEST_CHILD
  names, and answers, or hangs;
- leak: allocates (and keeps) CONFORM_TEST_LEAK_MB (default 1024) MiB.
"""

import os
import signal
import subprocess
import sys
import time

import numpy as np

from _delegating import DelegatingRep

_kept = []  # what the leak keeps


def _fault() -> str:
    return os.environ.get("CONFORM_TEST_MISBEHAVE", "")


class _Rep(DelegatingRep):
    def run(self, inputs, **kwargs):
        names = [i.name for i in self.model.graph.input]
        feeds = dict(zip(names, inputs))
        chosen = "starts" in feeds and feeds["starts"].size and int(feeds["starts"].reshape(-1)[0]) == -3
        if _fault() == "flood":
            _flood(int(os.environ.get("CONFORM_TEST_FLOOD_BYTES", 4_000_000)))
            if chosen:
                os.kill(os.getpid(), signal.SIGSEGV)
        outputs = super().run(inputs, **kwargs)
        return _misbehave(outputs) if chosen else outputs


def _misbehave(outputs):
    fault = _fault()
    answers = {"none": None, "none-output": [None], "object-output": [object()], "dict": {"output": outputs[0]},
               "object-array": [np.array([object(), 1], dtype=object)], "one-more": [*outputs, outputs[0]]}
    if fault in answers:
        return answers[fault]
    raised = {"system-exit": SystemExit(0), "keyboard-interrupt": KeyboardInterrupt(), "generator-exit": GeneratorExit()}
    if fault in raised:
        raise raised[fault]
    unreadable = {"exit-when-read": SystemExit(0), "interrupt-when-read": KeyboardInterrupt(), "error-when-read": RuntimeError("read")}
    if fault in unreadable:
        raise _unreadable(unreadable[fault])
    if fault.startswith("length-"):
        return _unmeasurable(SystemExit(0) if fault == "length-exits" else RuntimeError("len"), outputs)
    if fault.startswith("sigint"):
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
        except KeyboardInterrupt:
            if fault == "sigint":
                raise
    if fault.startswith("spawn"):
        child = subprocess.Popen(["sleep", "300"])
        with open(os.environ["CONFORM_TEST_CHILD"], "w") as record:
            record.write(str(child.pid))
        if fault == "spawn-hang":
            time.sleep(300)
    if fault == "leak":
        _kept.append(np.ones(int(os.environ.get("CONFORM_TEST_LEAK_MB", 1024)) << 20, np.uint8))
    return outputs


def _unreadable(raised: BaseException) -> Exception:
    """An exception that raises `raised` when its message is read."""

    class Unreadable(Exception):
        def __str__(self):
            raise raised

        __repr__ = __str__

    return Unreadable("unreadable")


def _unmeasurable(raised: BaseException, outputs: list) -> list:
    """The outputs in a list whose len() raises `raised`."""

    class Unmeasurable(list):
        def __len__(self):
            raise raised

    return Unmeasurable(outputs)


def _flood(size: int) -> None:
    line = 0
    while size > 0:
        text = f"misbehaving floods: line {line} ".ljust(99, ".") + "\n"
        sys.stderr.write(text)
        size -= len(text)
        line += 1
    sys.stderr.write("misbehaving: flood ends\n")
    sys.stderr.flush()


def prepare(model, device="CPU", **kwargs):
    if _fault() == "prepare-system-exit":
        raise SystemExit(3)
    return _Rep(model, device)
