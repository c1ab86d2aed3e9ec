"""What a runtime's refusals say, as the hints read them: the words for a model it cannot compile
for want of static shapes or constant inputs, and `RefusalFold`, which counts a run's refusals one
result at a time so that the run need not keep them."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from ..compare import FAIL, UNSUPPORTED

# A runtime's words for a model it cannot compile for want of static shapes (tract names a
# symbolic dim as it holds it, "Impossible to unify Sym(starts_d0) with Sym(ends_d0)"), and for
# one it cannot compile for want of constant inputs.
SHAPE_WORDS = re.compile(
    r"\b(dynamic|symbolic|unknown|undetermined|undefined|non[- ]?static)[ _-]?(shapes?|dims?|dimensions?|ranks?|sizes?|symbols?)\b"
    r"|\bstatic[ _-]?(shapes?|dims?|dimensions?)\b|\bSym\(\w+\)",
    re.IGNORECASE)
CONSTANT_WORDS = re.compile(
    r"\bis not (static|constant|a constant|const)\b|\bnon[- ]?constant\b|\bmust be (a )?const(ant)?\b|\bonly if \S+ is a const",
    re.IGNORECASE)
STATIC_WORDS = re.compile(f"{SHAPE_WORDS.pattern}|{CONSTANT_WORDS.pattern}", re.IGNORECASE)
# Refusals (a valid case refused, or a runtime without the kernel): outcomes with no outputs.
REFUSING = (FAIL, UNSUPPORTED)

# What a runtime's refusals may ask for, as `unjudged_line` names it.
SHAPES_ASKED, CONSTANT_ASKED = "symbolic dims", "non-constant inputs"


# How many distinct refusal messages a run counts: the most common one is named, and a runtime's
# refusals share a few messages, where a message naming each case's shapes would grow with cases.
DISTINCT_MESSAGES = 1000


@dataclass
class RefusalFold:
    """What the hints read of a run's refusals, folded one result at a time, so that a run keeps
    its refusals' counts rather than the refusals: how many refusals (REFUSING with no outputs)
    and unsupported cases there were, how many of each mention STATIC_WORDS, whether any unsupported one
    mentions shapes or constant inputs, and the unsupported cases' messages, counted."""

    refusals: int = 0
    refusals_asking: int = 0
    unsupported: int = 0
    unsupported_asking: int = 0
    asked: set = field(default_factory=set)  # SHAPES_ASKED, CONSTANT_ASKED: what some unsupported case asks for
    messages: Counter = field(default_factory=Counter)

    def add(self, result) -> None:
        if result.outcome not in REFUSING:
            return
        words = words_of(result)
        asking = bool(STATIC_WORDS.search(words))
        if not result.actual:
            self.refusals += 1
            self.refusals_asking += asking
        if result.outcome != UNSUPPORTED:
            return
        self.unsupported += 1
        self.unsupported_asking += asking
        if asking:
            self.asked.update(kind for kind, pattern in ((SHAPES_ASKED, SHAPE_WORDS), (CONSTANT_ASKED, CONSTANT_WORDS))
                              if pattern.search(words))
        if result.verdict.message in self.messages or len(self.messages) < DISTINCT_MESSAGES:
            self.messages[result.verdict.message] += 1


def words_of(result) -> str:
    """The runtime's words in a result: its verdict's message, and its whole message where kept."""
    detail = result.extra.get("detail")
    return f"{result.verdict.message}\n{detail}" if detail else result.verdict.message
