"""What the fork server holds before it forks a worker (see `lifetime.SERVER_PRELOAD`): the
reference and strategy of every op the command names (of every covered op where it names none), and
onnx's schemas of those ops read. Importing this module does that work,
once, in the server; nothing else imports it.

The registry (`conformance.reference`) imports an op's module when the op is first asked for, so
that a command's own start-up imports only what it uses; a worker forked from the server has every
op ready instead of importing its modules and reading onnx's schemas itself (~50 ms a worker).
"""

from __future__ import annotations

import os

from .lifetime import PRELOAD_OPS_VARIABLE
from .reference import covered_ops, for_op
from .registry import versions
from .strategies import strategy_of


def _ops_to_ready() -> list[str]:
    """The ops the command named with --op (see conformance.__main__), else every covered op: a
    worker meets another op only inside a function body, and imports its modules itself."""
    named = os.environ.get(PRELOAD_OPS_VARIABLE, "")
    return [op for op in named.split(",") if op] or covered_ops()


def _ready_every_op() -> None:
    for op in _ops_to_ready():
        try:
            versions(op)
            for_op(op)
            strategy_of(op)
        except Exception:  # noqa: BLE001 - an op that cannot load fails its own cases, in its worker, not every op's
            continue


_ready_every_op()
