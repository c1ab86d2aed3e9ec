"""Random cases of NonMaxSuppression (reference/non_max_suppression.py): one or two batches and
classes of up to six boxes on a small integer lattice (so IoUs meet the threshold exactly and boxes
coincide), corners given in any order, center_point_box both ways; scores from a pool of a few
values (ties), score_threshold at one of them or absent; iou_threshold at 0, 0.5, 1 or between;
max_output_boxes_per_class absent, 0, 1 or large. A small share is what the text forbids.
"""

from __future__ import annotations

import numpy as np

from ..registry import OpVersion
from .common import WIDE, Choices, invalid_share, one_in, pick
from .movement import made


def example(choices: Choices, version: OpVersion, binding: dict[str, str]):
    rng = np.random.default_rng(choices.integer(0, WIDE - 1))
    batches, classes, count = choices.integer(1, 2), choices.integer(1, 2), choices.integer(0, 6)
    center = choices.integer(0, 1)
    if center:
        boxes = np.concatenate([rng.integers(0, 6, size=(batches, count, 2)),
                                rng.integers(1, 5, size=(batches, count, 2))], axis=2).astype(np.float32)
    else:
        boxes = rng.integers(0, 6, size=(batches, count, 4)).astype(np.float32)
    if one_in(choices, 4):
        boxes = boxes / np.float32(8)  # normalized coordinates
    pool = rng.choice(np.array([0.1, 0.5, 0.9, 0.7], dtype=np.float32), size=choices.integer(1, 4), replace=False)
    scores = pool[rng.integers(0, len(pool), size=(batches, classes, count))].astype(np.float32)
    inputs = {"boxes": boxes, "scores": scores}
    most = pick(choices, (None, 0, 1, 2, 10))
    if most is not None or one_in(choices, 2):
        inputs["max_output_boxes_per_class"] = np.array([most if most is not None else 3], dtype=np.int64)
        iou = pick(choices, (None, 0.0, 0.5, 1.0, 0.25, 1 / 3))
        if iou is not None or one_in(choices, 2):
            inputs["iou_threshold"] = np.array([iou if iou is not None else 0.5], dtype=np.float32)
            if one_in(choices, 2):
                inputs["score_threshold"] = np.array([pick(choices, (0.5, 0.0, 0.9, 0.6))], dtype=np.float32)
    attributes = {"center_point_box": center} if center or one_in(choices, 2) else {}
    if invalid_share(choices):
        kind = pick(choices, ("iou", "boxes"))
        if kind == "iou":
            inputs.setdefault("max_output_boxes_per_class", np.array([3], dtype=np.int64))
            inputs["iou_threshold"] = np.array([pick(choices, (1.5, -0.5))], dtype=np.float32)
        else:
            inputs["boxes"] = np.zeros((batches, count, 3), dtype=np.float32)
    return made(version, binding, inputs, attributes)


STRATEGIES = {"NonMaxSuppression": example}
