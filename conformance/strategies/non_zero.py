"""Random NonZero cases: data of any shape (size-0 dims and rank 0 among them) whose values come
half the time from a pool holding the dtype's zero beside a few drawn values (-0.0, NaN, "" and
False among them), so zeros and non-zeros mix. The text forbids no input (but a dtype)."""

from __future__ import annotations

from ..dtypes import dtype
from ..registry import OpVersion
from .common import Choices, shape
from .movement import made
from .top_k import tied_array


def example(choices: Choices, version: OpVersion, binding: dict[str, str]):
    data = tied_array(choices, dtype(binding["T"]), shape(choices), zero=True)
    return made(version, binding, {"X": data})


STRATEGIES = {"NonZero": example}
