"""Merging the JSON reports of a sharded run into one report."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from ..compare import OUTCOMES
from ..errors import UsageError


def _read(path: Path) -> dict:
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise UsageError(f"{path}: not a readable conform JSON report ({error})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        raise UsageError(f"{path}: not a conform JSON report (no 'results' list)")
    return doc


def merge(paths: list[Path]) -> dict:
    """One report: every result once (by id and variant), the summary recomputed, stale entries kept
    only when no shard used them."""
    docs = [_read(p) for p in paths]
    seen: dict[tuple, dict] = {}
    for doc in docs:
        for record in doc["results"]:
            seen.setdefault((record["id"], record.get("mode"), record.get("optimizations")), record)
    results = list(seen.values())
    counts = Counter(r["outcome"] for r in results)
    stale_sets = [{(e["source"], e["reason"]) for e in doc.get("stale_expectations", [])} for doc in docs]
    stale = set.intersection(*stale_sets) if stale_sets else set()
    return {
        "tool": docs[0].get("tool"),
        "runner": docs[0].get("runner"),
        "seed": docs[0].get("seed"),
        "options": docs[0].get("options"),
        "complete": all(doc.get("complete", True) for doc in docs),
        "shards": [doc.get("shard") for doc in docs],
        "summary": {"total": len(results), **{o: counts.get(o, 0) for o in OUTCOMES}},
        "stale_expectations": [{"source": s, "reason": r} for s, r in sorted(stale)],
        "results": results,
    }
