"""What a run's failures have in common that points to another way of building its models.

A runtime that needs constant index inputs fails every case in `--mode input` and none in the
other modes; an engine that compiles for static shapes refuses every model whose inputs have
symbolic dims. Such a run is not thousands of findings but one: these lines say so, under the
console's summary, and name the options to try. A run builds its models with one `--shapes`, so
whether its failures are confined to it is told from the runtime's own words: most of its
refusals mention dynamic or symbolic shapes, or inputs that are not constant. A run whose cases
are mostly unsupported ends with a line of its own (`unjudged_line`): it judged little of the op.
"""

from __future__ import annotations

from collections import Counter

from ..adapter_loss import adapter_loss_hint
from ..compare import UNSUPPORTED
from ..model import DEFAULT_SHAPES
from . import FAILING, plural
from .refusals import CONSTANT_ASKED, SHAPES_ASKED

# What each mode's confined failures suggest.
MODE_HINTS = {
    "input": "the runtime may need constant inputs (try --mode initializer)",
    "initializer": "the runtime mishandles inputs given as initializers, which many runtimes constant-fold",
    "constant": "the runtime mishandles inputs given as Constant nodes, which many runtimes constant-fold",
}


def run_notes(results) -> list[str]:
    """Every note under a run's summary, as the console prints them and the JSON report keeps them:
    `hint_lines`, and a `--backend` run's failures that look like its adapter's loss. `results`:
    a run's Ledger, or a list of results."""
    ledger = as_ledger(results)
    adapter_hint = adapter_loss_hint(ledger.kept)
    return hint_lines(ledger) + ([adapter_hint] if adapter_hint else [])


def hint_lines(results) -> list[str]:
    """Lines saying where a run's failures (and its unsupported cases) are confined to one input
    mode of several, and when most of its refusals ask for static shapes or constant inputs."""
    ledger = as_ledger(results)
    lines = []
    for kind, outcomes in (("failures", FAILING), ("unsupported cases", (UNSUPPORTED,))):
        line = _confined_to_mode([r for r in ledger.kept if r.outcome in outcomes], ledger.facts.modes, kind)
        if line:
            lines.append(line)
    line = _asks_for_static(ledger)
    if line:
        lines.append(line)
    return lines


def as_ledger(results):
    """A run's Ledger as given, or one made of a list of results."""
    from ..ledger import Ledger

    return results if isinstance(results, Ledger) else Ledger.of(results)


def _mode(result) -> str:
    return result.extra.get("mode", "input")


def _confined_to_mode(chosen: list, modes: set, kind: str) -> str | None:
    """Where the run had several modes: 'all 37 failures are in mode input: ...' when every one of
    `chosen` (two at least: one case is in one mode whatever the cause) ran in the same mode; else
    'K of N failures are in mode input alone ...' when most are cases that are among `chosen` in
    that mode only (a runtime's own deviations fail in every mode, beside them)."""
    if len(modes) < 2 or len(chosen) < 2:
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


def _asks_for_static(ledger) -> str | None:
    """A pointer to `--shapes static` and `--mode initializer` (those the run did not use) when
    more than half of its refusals mention dynamic or symbolic shapes, or inputs that are not constant."""
    fold = ledger.refusals
    if not fold.refusals or fold.refusals_asking * 2 <= fold.refusals:
        return None
    tries = [option for _, option in _untried(ledger.facts, (SHAPES_ASKED, CONSTANT_ASKED))]
    if not tries:
        return None
    return (f"{fold.refusals_asking} of {fold.refusals} {plural('refusal', fold.refusals)} mention dynamic or symbolic "
            f"shapes or non-constant inputs: the runtime may need static shapes and constant inputs (try {' and '.join(tries)})")




def _untried(facts, asked) -> list[tuple[str, str]]:
    """Of what is `asked`, each with the option that answers it (SHAPES_ASKED: --shapes static;
    CONSTANT_ASKED: --mode initializer) where the run did not use that option, in that order.
    `facts`: the ledger's, the shapes and modes the run's results had."""
    tries = []
    if SHAPES_ASKED in asked and all((shapes or DEFAULT_SHAPES) == DEFAULT_SHAPES for shapes in facts.shapes):
        tries.append((SHAPES_ASKED, "--shapes static"))
    if CONSTANT_ASKED in asked and "initializer" not in facts.modes:
        tries.append((CONSTANT_ASKED, "--mode initializer"))
    return tries


def unjudged_line(results, runtime: str = "the runtime") -> str | None:
    """The line that ends a run whose results are mostly (more than half) unsupported, so that a
    run which judged almost nothing does not end as a quiet exit 0: how many were not judged, and
    why: what the refusals ask for with the option that helps (where most of them ask for static
    shapes or constant inputs, as `_asks_for_static` counts them, and the run did not use that
    option), else the most common refusal. None for a run that judged most of its cases."""
    ledger = as_ledger(results)
    fold = ledger.refusals
    if not fold.unsupported or fold.unsupported * 2 <= ledger.total:
        return None
    head = f"{fold.unsupported:,} of {ledger.total:,} cases unsupported: most of the run was not judged"
    if fold.unsupported_asking * 2 > fold.unsupported:
        tries = _untried(ledger.facts, [kind for kind in (SHAPES_ASKED, CONSTANT_ASKED) if kind in fold.asked])
        if tries:
            refused, options = (" and ".join(part) for part in zip(*tries))
            return f"{head} ({runtime} refuses {refused}; try {options})"
    message, count = fold.messages.most_common(1)[0]
    return f"{head} (the most common refusal, {count:,} of them: {message})"
