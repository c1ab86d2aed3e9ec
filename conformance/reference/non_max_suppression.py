"""NonMaxSuppression (10, 11), from the schema text: per batch and class, boxes whose score is less
than score_threshold are removed; the rest, highest score first, are selected unless their IoU with
a box selected before is strictly greater than iou_threshold, up to max_output_boxes_per_class
(absent: 0, "which means no output"). Boxes are [y1, x1, y2, x2] of "any diagonal pair of box
corners" (center_point_box 0) or [x_center, y_center, width, height] (1).

The output is exact integers, but the text leaves some choices open, each a reading:
- "The selected_indices output is a set of integers": the order of its rows is free; readings and
  runtime outputs are compared sorted by (batch, class, box);
- the order among equal scores, which decides which of two overlapping boxes survives;
- an IoU within a runtime's rounding of iou_threshold (or exactly at it): kept or suppressed, as
  the runtime's float32 IoU lands.
Every combination is followed (a search over those choice points), up to MAX_READINGS sets.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..case import Example
from .base import Expected, Invalid, OpReference, Reading, VersionSemantics
from .expected import OutputSpec

MAX_READINGS = 64
# A runtime's float32 IoU may lie this far (relative, with the boxes' extent over their size) from
# the exact one: a few roundings of the corners, the areas, the intersection and the quotient.
IOU_SLACK = 2.0 ** -18
BOXES = "boxes: An input tensor with shape [num_batches, spatial_dimension, 4]."
SCORES = "scores: An input tensor with shape [num_batches, num_classes, spatial_dimension]"
CENTER = "center_point_box: Integer indicate the format of the box data. The default is 0. 0 - ... 1 - ..."
IOU_RANGE = "iou_threshold: ... Value range [0, 1]."
SCALAR = "max_output_boxes_per_class, iou_threshold, score_threshold: ... It is a scalar."
SET = "The selected_indices output is a set of integers"
OPEN = ("the order among equal scores, and an IoU within rounding of iou_threshold, decide which boxes are "
        "selected: every choice is a reading")
NEGATIVE_MAX = "max_output_boxes_per_class: the text gives a negative maximum no meaning"
NAN = "the text does not say where a NaN score or coordinate ranks or overlaps"


def _scalar(example: Example, name: str):
    value = example.inputs.get(name)
    if value is None:
        return None
    if value.size != 1:
        return Invalid("not-scalar", SCALAR)
    return value.reshape(()).item()


class NonMaxSuppression10(VersionSemantics):
    """NonMaxSuppression-10 and -11 (which only adds a sentence on the IoU threshold)."""

    since = 10

    def expected(self, example: Example) -> Expected:
        boxes, scores = example.inputs["boxes"], example.inputs["scores"]
        if boxes.ndim != 3 or boxes.shape[2] != 4:
            return Expected(invalid=Invalid("boxes-shape", BOXES))
        if scores.ndim != 3 or scores.shape[0] != boxes.shape[0] or scores.shape[2] != boxes.shape[1]:
            return Expected(invalid=Invalid("scores-shape", SCORES))
        center = int(example.attributes.get("center_point_box", 0))
        if center not in (0, 1):
            return Expected(invalid=Invalid("center-point-box", CENTER))
        given = [_scalar(example, name) for name in ("max_output_boxes_per_class", "iou_threshold", "score_threshold")]
        for value in given:
            if isinstance(value, Invalid):
                return Expected(invalid=value)
        most, iou, score = given
        iou = 0.0 if iou is None else float(iou)
        if not (0.0 <= iou <= 1.0):
            return Expected(invalid=Invalid("iou-threshold-range", IOU_RANGE))
        most = 0 if most is None else int(most)
        if np.isnan(boxes).any() or np.isnan(scores).any() or (score is not None and np.isnan(score)):
            return Expected(specs=(OutputSpec(np.dtype(np.int64)),), may_reject=NAN)
        found = selections(boxes.astype(np.float64), scores.astype(np.float64), center, max(most, 0), iou, score)
        readings = [Reading((np.array(sorted(rows), dtype=np.int64).reshape(-1, 3),), f"selection {k + 1}")
                    for k, rows in enumerate(found)]
        if len(readings) == 1:
            readings = [Reading(readings[0].outputs)]
        return Expected(readings=tuple(readings), ambiguity=OPEN if len(readings) > 1 else None,
                        may_reject=NEGATIVE_MAX if most < 0 else None, order=sorted_rows, order_note=SET)


def sorted_rows(outputs: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
    """The selected rows in (batch, class, box) order: the text makes them a set."""
    rows = outputs[0]
    if rows.ndim != 2 or rows.shape[1] != 3:
        raise ValueError("not rows of three")
    return (np.array(sorted(map(tuple, rows.tolist())), dtype=rows.dtype).reshape(-1, 3),) + tuple(outputs[1:])


def corners(box: np.ndarray, center: int) -> tuple[Fraction, Fraction, Fraction, Fraction]:
    """(y_min, x_min, y_max, x_max) exactly."""
    a, b, c, d = (Fraction(float(v)) for v in box)
    if center:
        return b - d / 2, a - c / 2, b + d / 2, a + c / 2
    return min(a, c), min(b, d), max(a, c), max(b, d)


def iou_of(first, second) -> Fraction | None:
    """The exact IoU; None where the union is empty (no overlap to compare)."""
    area = [(b[2] - b[0]) * (b[3] - b[1]) for b in (first, second)]
    height = min(first[2], second[2]) - max(first[0], second[0])
    width = min(first[3], second[3]) - max(first[1], second[1])
    inter = max(height, 0) * max(width, 0)
    union = area[0] + area[1] - inter
    if union <= 0 or area[0] <= 0 or area[1] <= 0:
        return None
    return inter / union


def _suppresses(first, second, threshold: float) -> tuple[bool, ...]:
    """The outcomes the text allows for 'is second suppressed by first': one, or both near the line."""
    iou = iou_of(first, second)
    if iou is None or iou == 0:
        # No overlap is an exact 0 in any rounding (the intersection clamps at 0): never above the line.
        return (False,)
    line = Fraction(threshold)
    extent = max(abs(v) for v in (*first, *second))
    size = min(first[2] - first[0], first[3] - first[1], second[2] - second[0], second[3] - second[1])
    slack = IOU_SLACK * (1 + float(extent / size)) if size > 0 else 1.0
    if abs(float(iou - line)) <= slack:
        return (True, False)
    return (iou > line,)


def selections(boxes, scores, center: int, most: int, iou: float, score) -> list[list[tuple[int, int, int]]]:
    """Every set of rows the text allows, each as a list, at most MAX_READINGS."""
    per_group = []
    for b in range(boxes.shape[0]):
        shaped = [corners(box, center) for box in boxes[b]]
        for c in range(scores.shape[1]):
            options = _group(shaped, scores[b, c], most, iou, score)
            per_group.append([[(b, c, k) for k in chosen] for chosen in options])
    found: list[list[tuple[int, int, int]]] = [[]]
    for options in per_group:
        found = [done + more for done in found for more in options][:MAX_READINGS]
    unique = []
    for rows in found:
        key = sorted(rows)
        if key not in unique:
            unique.append(key)
    return unique


def _group(shaped, scores, most: int, iou: float, score) -> list[tuple[int, ...]]:
    """The selections of one batch and class: a search over tie orders and IoUs at the line."""
    if most <= 0:
        return [()]
    candidates = [k for k in range(len(scores)) if score is None or not scores[k] < score]
    results: set[tuple[int, ...]] = set()
    # What follows depends on the boxes left and the set chosen, not the order they were met in:
    # each state is searched once (ten identical boxes are 10! orders, and 10 * 2**9 states).
    seen: set[tuple[frozenset, frozenset]] = set()

    def search(remaining: list[int], chosen: tuple[int, ...]) -> None:
        state = (frozenset(remaining), frozenset(chosen))
        if len(results) >= MAX_READINGS or state in seen:
            return
        seen.add(state)
        if not remaining or len(chosen) >= most:
            results.add(tuple(sorted(chosen)))
            return
        top = max(scores[k] for k in remaining)
        for k in [k for k in remaining if scores[k] == top]:
            rest = [j for j in remaining if j != k]
            outcomes = [()]
            for j in chosen:
                outcomes = [o + (s,) for o in outcomes for s in _suppresses(shaped[j], shaped[k], iou)]
            kept = {not any(o) for o in outcomes}
            for keep in kept:
                search(rest, chosen + ((k,) if keep else ()))

    search(candidates, ())
    return sorted(results)


# --- traits ---

def score_at_threshold(example: Example) -> bool:
    """A score exactly equal to score_threshold (the text removes only those less than it)."""
    threshold = example.inputs.get("score_threshold")
    scores = example.inputs.get("scores")
    return threshold is not None and scores is not None and threshold.size == 1 and bool(
        np.any(scores == threshold.reshape(())))


def negative_max_output(example: Example) -> bool:
    most = example.inputs.get("max_output_boxes_per_class")
    return most is not None and most.size == 1 and int(most.reshape(())) < 0


def max_output_zero(example: Example) -> bool:
    """max_output_boxes_per_class 0 or left out: "Default to 0, which means no output"."""
    most = example.inputs.get("max_output_boxes_per_class")
    return most is None or (most.size == 1 and int(most.reshape(())) == 0)


def no_boxes(example: Example) -> bool:
    """Boxes of spatial_dimension 0 (or no batch or class): nothing to select."""
    boxes, scores = example.inputs.get("boxes"), example.inputs.get("scores")
    return any(value is not None and value.size == 0 for value in (boxes, scores))


def degenerate_box(example: Example) -> bool:
    """A box of zero width or height."""
    boxes = example.inputs.get("boxes")
    if boxes is None or boxes.ndim != 3 or boxes.shape[-1] != 4:
        return False
    center = int(example.attributes.get("center_point_box", 0))
    wide = boxes.astype(np.float64)
    if center:
        return bool(np.any((wide[..., 2] == 0) | (wide[..., 3] == 0)))
    return bool(np.any((wide[..., 0] == wide[..., 2]) | (wide[..., 1] == wide[..., 3])))


REFERENCES = (
    OpReference(op="NonMaxSuppression", dtype_param="boxes", semantics=(NonMaxSuppression10,),
                data_inputs=("boxes", "scores"),
                traits={"score-at-threshold": score_at_threshold, "negative-max-output": negative_max_output,
                        "degenerate-box": degenerate_box, "max-output-zero": max_output_zero, "no-boxes": no_boxes},
                rules=("boxes-shape", "scores-shape", "center-point-box", "not-scalar", "iou-threshold-range")),
)

