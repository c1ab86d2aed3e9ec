"""Report formats, one module each: `console` (rich) and `json_report` (machine-readable)."""

from __future__ import annotations

from collections import Counter

from ..compare import CRASH, ERROR, FAIL, FALLBACK, LENIENT, OUTCOMES, TIMEOUT, UNSUPPORTED


def summary(results) -> dict[str, int]:
    counts = Counter(r.outcome for r in results)
    return {"total": len(results), **{o: counts.get(o, 0) for o in OUTCOMES}}


def exit_code(results, strict_validation: bool = False, fail_on_unsupported: bool = False) -> int:
    """0 when every result is acceptable under the options, 1 otherwise."""
    failing = {FAIL, ERROR, CRASH, TIMEOUT, FALLBACK}
    if strict_validation:
        failing.add(LENIENT)
    if fail_on_unsupported:
        failing.add(UNSUPPORTED)
    return 1 if any(r.outcome in failing for r in results) else 0
