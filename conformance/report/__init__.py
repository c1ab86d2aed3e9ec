"""Report formats, one module each: `console` (rich), `json_report`, `junit` (XML) and `html`."""

from __future__ import annotations

from collections import Counter

from ..compare import CRASH, ERROR, FAIL, FALLBACK, LENIENT, OUTCOMES, TIMEOUT, UNSUPPORTED, XPASS


def summary(results) -> dict[str, int]:
    counts = Counter(r.outcome for r in results)
    return {"total": len(results), **{o: counts.get(o, 0) for o in OUTCOMES}}


FAILING = (FAIL, ERROR, CRASH, TIMEOUT, FALLBACK)


def exit_code(results, strict_validation: bool = False, fail_on_unsupported: bool = False, strict: bool = False,
              stale: int = 0) -> int:
    """0 when every result is acceptable under the options, 1 otherwise."""
    if strict and (stale or any(r.outcome == XPASS for r in results)):
        return 1
    failing = set(FAILING)
    if strict_validation:
        failing.add(LENIENT)
    if fail_on_unsupported:
        failing.add(UNSUPPORTED)
    return 1 if any(r.outcome in failing for r in results) else 0
