"""What a run's failures have in common that points to another way of building its models.

A runtime that needs constant index inputs fails every case in `--mode input` and none in the
other modes; an engine that compiles for static shapes refuses every model whose inputs have
symbolic dims. Such a run is not thousands of findings but one: these lines say so, under the
console's summary, and name the options to try. A run builds its models with one `--shapes`, so
whether its failures are confined to it is told from the runtime's own words: most of its
refusals mention dynamic or symbolic shapes, or inputs that are not constant.
"""

from __future__ import annotations

import re
from collections import Counter

from ..compare import FAIL, UNSUPPORTED
from ..model import DEFAULT_SHAPES
from . import FAILING, plural

# What each mode's confined failures suggest.
MODE_HINTS = {
    "input": "the runtime may need constant inputs (try --mode initializer)",
    "initializer": "the runtime mishandles inputs given as initializers, which many runtimes constant-fold",
    "constant": "the runtime mishandles inputs given as Constant nodes, which many runtimes constant-fold",
}
# A runtime's words for a model it cannot compile for want of static shapes or constant inputs.
STATIC_WORDS = re.compile(
    r"\b(dynamic|symbolic|unknown|undetermined|undefined|non[- ]?static)[ _-]?(shapes?|dims?|dimensions?|ranks?|sizes?|symbols?)\b"
    r"|\bstatic[ _-]?(shapes?|dims?|dimensions?)\b"
    r"|\bis not (static|constant|a constant|const)\b|\bnon[- ]?constant\b|\bmust be (a )?const(ant)?\b|\bonly if \S+ is a const",
    re.IGNORECASE)
# Refusals (a valid case refused, or a runtime without the kernel): outcomes with no outputs.
REFUSING = (FAIL, UNSUPPORTED)


def run_notes(results) -> list[str]:
    """Every note under a run's summary, as the console prints them and the JSON report keeps them:
    `hint_lines`, and a `--backend` run's failures that look like its adapter's loss."""
    from ..check_backend import adapter_loss_hint  # here: it imports the runners, which a report need not

    adapter_hint = adapter_loss_hint(results)
    return hint_lines(results) + ([adapter_hint] if adapter_hint else [])


def hint_lines(results) -> list[str]:
    """Lines saying where a run's failures (and its unsupported cases) are confined to one input
    mode of several, and when most of its refusals ask for static shapes or constant inputs."""
    lines = []
    for kind, outcomes in (("failures", FAILING), ("unsupported cases", (UNSUPPORTED,))):
        line = _confined_to_mode([r for r in results if r.outcome in outcomes], results, kind)
        if line:
            lines.append(line)
    line = _asks_for_static(results)
    if line:
        lines.append(line)
    return lines


def _mode(result) -> str:
    return result.extra.get("mode", "input")


def _confined_to_mode(chosen: list, results, kind: str) -> str | None:
    """Where the run had several modes: 'all 37 failures are in mode input: ...' when every one of
    `chosen` (two at least: one case is in one mode whatever the cause) ran in the same mode; else
    'K of N failures are in mode input alone ...' when most are cases that are among `chosen` in
    that mode only (a runtime's own deviations fail in every mode, beside them)."""
    if len({_mode(r) for r in results}) < 2 or len(chosen) < 2:
        return None
    found = Counter(_mode(r) for r in chosen)
    if len(found) == 1:
        mode = next(iter(found))
        return f"all {len(chosen)} {kind} are in mode {mode}: {MODE_HINTS.get(mode, 'the other modes pass')}"
    modes_of: dict[tuple, set[str]] = {}
    for result in chosen:
        modes_of.setdefault(_case_key(result), set()).add(_mode(result))
    alone = Counter(_mode(r) for r in chosen if len(modes_of[_case_key(r)]) == 1)
    if not alone:
        return None
    mode, count = alone.most_common(1)[0]
    if count * 2 <= len(chosen):
        return None
    return (f"{count} of {len(chosen)} {kind} are in mode {mode} alone (the same cases are not among them in the "
            f"other modes): {MODE_HINTS.get(mode, 'the other modes pass')}")


def _case_key(result) -> tuple:
    """A case as it ran in every mode: its id, and its optimization level where the run had several."""
    return result.example.id, result.extra.get("optimizations")


def _asks_for_static(results) -> str | None:
    """A pointer to `--shapes static` and `--mode initializer` (those the run did not use) when
    more than half of its refusals mention dynamic or symbolic shapes, or inputs that are not constant."""
    refusals = [r for r in results if r.outcome in REFUSING and not r.actual]
    if not refusals:
        return None
    asking = Counter(bool(STATIC_WORDS.search(_words(r))) for r in refusals)[True]
    if asking * 2 <= len(refusals):
        return None
    tries = []
    if all(r.extra.get("shapes", DEFAULT_SHAPES) == DEFAULT_SHAPES for r in results):
        tries.append("--shapes static")
    if "initializer" not in {_mode(r) for r in results}:
        tries.append("--mode initializer")
    if not tries:
        return None
    return (f"{asking} of {len(refusals)} {plural('refusal', len(refusals))} mention dynamic or symbolic shapes or "
            f"non-constant inputs: the runtime may need static shapes and constant inputs (try {' and '.join(tries)})")


def _words(result) -> str:
    """The runtime's words in a result: its verdict's message, and its whole message where kept."""
    detail = result.extra.get("detail")
    return f"{result.verdict.message}\n{detail}" if detail else result.verdict.message
