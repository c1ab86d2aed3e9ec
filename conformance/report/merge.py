"""Merging the JSON reports of a sharded run into one report."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import UsageError
from ..execute import parse_shard
from ..precision import ProfileFold, profile_of_report
from ..reading import FileRefused, read_bounded
from . import cycle_collection_paused, outcomes_of, plural, tally_counts


# A shard's report conform wrote: every Slice version's 6,637 results take 8 MB. What is larger, or
# not a regular file (a pipe would wait, /dev/zero never ends), is no shard of a run.
MAX_REPORT_BYTES = 1 << 30


def _read(path: Path) -> dict:
    try:
        data = read_bounded(path, MAX_REPORT_BYTES, "JSON report")
        with cycle_collection_paused():
            doc = json.loads(data)
    except FileRefused as refusal:
        raise UsageError(f"{path}: {refusal.message}") from None
    except (OSError, ValueError, RecursionError) as error:  # RecursionError: JSON nested thousands deep
        raise UsageError(f"{path}: not a readable conform JSON report ({type(error).__name__}: {error})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        raise UsageError(f"{path}: not a conform JSON report (no 'results' list)")
    return doc


# What every shard of one run has in common; reports that differ here hold different cases or
# judge them differently, and one merged report would claim a run nobody made. The tool versions
# are among them: the same seed draws the same cases only with the same hypothesis (and conform,
# numpy, ml_dtypes, onnx), and shards installed at different times can get different ones.
SAME_RUN = ("tool", "runner", "seed", "options")
HINTS = {"tool": " (the same seed gives the same cases only with the same versions: install the same ones for every shard)"}


def _check_one_run(docs: list[dict], paths: list[Path]) -> None:
    for doc, path in zip(docs[1:], paths[1:]):
        for key in SAME_RUN:
            if doc.get(key) != docs[0].get(key):
                raise UsageError(f"{paths[0]} and {path} are not shards of one run: "
                                 f"{_difference(key, docs[0].get(key), doc.get(key))}{HINTS.get(key, '')}")


def _difference(key: str, first, other) -> str:
    if isinstance(first, dict) and isinstance(other, dict):
        keys = sorted(k for k in first.keys() | other.keys() if first.get(k) != other.get(k))
        return ", ".join(f"{key} {k} {first.get(k)!r} vs {other.get(k)!r}" for k in keys)
    return f"{key} {first!r} vs {other!r}"


def missing_shards(docs: list[dict], paths: list[Path]) -> list[str]:
    """The shards K/N of the run that no report holds (none when a report holds the whole run)."""
    split = {}
    for doc, path in zip(docs, paths):
        try:
            index, count = parse_shard(str(doc.get("shard") or "1/1"))
        except UsageError:
            raise UsageError(f"{path}: its 'shard' is {doc.get('shard')!r}, not K/N") from None
        split.setdefault(count, set()).add(index)
    if 1 in split:
        return []
    if len(split) > 1:
        raise UsageError(f"the reports split the run different ways ({' and '.join(f'into {n}' for n in sorted(split))}); "
                         "merge the shards of one split")
    [(count, present)] = split.items()
    return [f"{k}/{count}" for k in range(1, count + 1) if k not in present]


def merge(paths: list[Path]) -> dict:
    """One report: every result once (by id and variant), the summary recomputed, stale entries kept
    only when no shard used them. `complete` is false when a shard is missing (`missing_shards`) or
    was interrupted (`interrupted` names its report)."""
    docs = [_read(p) for p in paths]
    _check_one_run(docs, paths)
    missing = missing_shards(docs, paths)
    seen: dict[tuple, dict] = {}
    for doc in docs:
        for record in doc["results"]:
            seen.setdefault((record["id"], record.get("mode"), record.get("optimizations")), record)
    results = list(seen.values())
    tallies = merged_tallies(docs)
    # A shard records the entries that matched none of its cases, stale or not in it alone: those
    # that no shard matched are stale.
    stale_sets = [{(e["source"], e["reason"]) for e in doc.get("unmatched_expectations", doc.get("stale_expectations", []))}
                  for doc in docs]
    stale = set.intersection(*stale_sets) if stale_sets else set()
    merged = {
        "tool": docs[0].get("tool"),
        "runner": docs[0].get("runner"),
        "seed": docs[0].get("seed"),
        "options": docs[0].get("options"),
        "complete": all(doc.get("complete", True) for doc in docs) and not missing,
        "shards": [doc.get("shard") for doc in docs],
        "missing_shards": missing,
        "interrupted": [str(path) for path, doc in zip(paths, docs) if not doc.get("complete", True)],
        "summary": tally_counts(outcomes_of({"results": results, "tallies": tallies})),
        "notes": list(dict.fromkeys(note for doc in docs for note in doc.get("notes", []))),  # each shard's, once
        "stale_expectations": [{"source": s, "reason": r} for s, r in sorted(stale)],
        "tallies": tallies,
        "results": results,
        "precision": [row.record() for row in merged_profile(docs)],
    }
    if docs[0].get("ops_left_out"):  # the ops of several a run leaves out follow from the options every shard shares
        merged["ops_left_out"] = docs[0]["ops_left_out"]
    return merged


def _first_of_each_shard(docs: list[dict]) -> list[dict]:
    """The reports, one for each shard (a shard's report given twice counts once)."""
    return list({str(doc.get("shard") or "1/1"): doc for doc in reversed(docs)}.values())[::-1]


def merged_tallies(docs: list[dict]) -> list[dict]:
    """The shards' counted results (`tallies`) as one run's: rows of the same key summed, their ids joined."""
    rows: dict[tuple, dict] = {}
    for doc in _first_of_each_shard(docs):
        for row in doc.get("tallies") or ():
            key = tuple((name, value) for name, value in row.items() if name not in ("count", "ids"))
            into = rows.setdefault(key, {**dict(key), "count": 0})
            into["count"] += row["count"]
            if row.get("ids"):
                into.setdefault("ids", []).extend(row["ids"])
    return [rows[key] for key in sorted(rows, key=lambda key: tuple((name, str(value)) for name, value in key))]


def merged_profile(docs: list[dict]) -> list:
    """The shards' precision profiles as one run's: each shard's rows folded (a report that holds
    no profile, of a version that wrote none, has it made from its records)."""
    fold = ProfileFold()
    for doc in _first_of_each_shard(docs):
        for row in profile_of_report(doc):
            fold.add_row(row)
    return fold.rows()


def why_incomplete(merged: dict) -> str:
    """What a merged report lacks, in one line."""
    missing = merged["missing_shards"]
    why = [f"{plural('shard', len(missing))} {', '.join(missing)} missing"] if missing else []
    return "; ".join(why + [f"{path} was interrupted (complete: false)" for path in merged["interrupted"]])
