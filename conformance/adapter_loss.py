"""The signs of an adapter's loss: in a round trip of `conform check-backend`, and in a `--backend`
run's failures, where `adapter_loss_hint` says, under the summary, that they look like the
adapter's loss rather than the runtime's and names the command that checks it.

A leaf (numpy, onnx and dtypes.py): the report's notes (report/hints.py) read a run with it without
importing check_backend, which imports the runners and the console report that imports the notes.
"""

from __future__ import annotations

import shlex
from collections import Counter

import numpy as np
from onnx import numpy_helper

from .dtypes import dtype, from_numpy


def dtype_name(array: np.ndarray) -> str:
    """An array's dtype as ONNX names it; 'string' for text, numpy's name for a dtype ONNX lacks."""
    if array.dtype.kind == "O":
        return "string"
    try:
        return from_numpy(array.dtype).name
    except (KeyError, ValueError, TypeError):
        return f"numpy {array.dtype}"


def packed_note(sent: np.ndarray, got: np.ndarray) -> str | None:
    """'a 4-bit output left packed: ...' where a sub-byte type came back as the bytes that pack it."""
    bits = dtype(dtype_name(sent)).bits if sent.dtype.kind != "O" else 8
    if bits >= 8 or got.dtype not in (np.dtype(np.uint8), np.dtype(np.int8)) or sent.size == 0:
        return None
    if got.size != (sent.size * bits + 7) // 8:
        return None
    raw = numpy_helper.from_array(sent).raw_data
    same = "the packed bytes themselves" if got.tobytes() == raw else "bytes that are not its packed values"
    return (f"a {bits}-bit output left packed: {dtype_name(sent)}{list(sent.shape)} came back as "
            f"{dtype_name(got)}{list(got.shape)}, {same}")


def _backend_of(result) -> str | None:
    """The --backend a result's replay command names, or None."""
    if "--backend" not in (result.replay or ""):  # most runs: no command line to split (40 us each)
        return None
    try:
        words = shlex.split(result.replay or "")
    except ValueError:  # not a command line conform wrote
        return None
    return next((words[i + 1] for i, word in enumerate(words[:-1]) if word == "--backend"), None)


def adapter_loss_hint(results) -> str | None:
    """For a `--backend` run whose failures look like an adapter's loss rather than the runtime's
    (a 0-d output that came back as [1], an output one width narrower or wider than its type, a
    4-bit output that came back as packed bytes, or valid inputs rejected only where one is 0-d),
    one line saying so and naming the command that checks the adapter; else None. Pure: it reads
    the results' outcomes, arrays and replay commands."""
    backend = next((found for found in map(_backend_of, results) if found), None)
    if backend is None:
        return None
    signs = Counter(sign for result in results if result.outcome == "fail" for sign in _loss_signs(result))
    signs.update(_zero_d_rejections(results))
    if not signs:
        return None
    told = "; ".join(f"{sign} ({count})" for sign, count in signs.most_common())
    return (f"some failures look like the adapter's loss, not the runtime's: {told}. "
            f"Check the adapter: conform check-backend --backend {shlex.quote(backend)}")


def _loss_signs(result) -> list[str]:
    """The signs of an adapter's loss in one failing result: per output, expected against got."""
    expected = result.expected.readings[0].outputs if result.expected.is_valid and result.expected.readings else ()
    signs = []
    for want, got in zip(expected, result.actual):
        if want.ndim == 0 and got.shape == (1,):
            signs.append("0-d outputs came back as shape [1]")
        elif packed_note(want, got) is not None:
            signs.append("sub-byte outputs came back packed")
        elif want.shape == got.shape and _one_width_apart(want, got):
            signs.append(f"{dtype_name(want)} outputs came back as {dtype_name(got)}")
    return signs


def _one_width_apart(want: np.ndarray, got: np.ndarray) -> bool:
    """Two numeric dtypes of one kind whose widths differ by a factor of two (int64 and int32,
    double and float)."""
    if want.dtype == got.dtype or want.dtype.kind == "O" or got.dtype.kind == "O":
        return False
    try:
        a, b = dtype(dtype_name(want)), dtype(dtype_name(got))
    except Exception:  # a dtype numpy has and ONNX lacks: not this sign
        return False
    return a.kind == b.kind and a.kind in ("int", "uint", "float") and {a.bits, b.bits} in ({32, 64}, {16, 32}, {8, 16})


def _zero_d_rejections(results) -> Counter:
    """Valid inputs rejected where an input is 0-d, in op versions that reject none without one:
    what an adapter that cannot hand over a 0-d array does."""
    rejected = [r for r in results if r.outcome == "fail" and r.verdict.message.startswith("runtime rejected a valid input")]
    with_zero_d = [r for r in rejected if _has_zero_d_input(r)]
    if not with_zero_d:
        return Counter()
    versions = {r.example.version.label for r in with_zero_d}
    if any(r.example.version.label in versions and not _has_zero_d_input(r) for r in rejected):
        return Counter()
    return Counter({"valid inputs rejected only where one is 0-d": len(with_zero_d)})


def _has_zero_d_input(result) -> bool:
    return any(isinstance(a, np.ndarray) and a.ndim == 0 for a in result.example.inputs.values())
