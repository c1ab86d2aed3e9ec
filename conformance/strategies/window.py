"""What the strategies of the windowed ops (the convolutions and the pools) share: where their
windows go. An auto_pad, or explicit pads with the input widened so that every axis holds at least
one window, and strides or dilations written out where they are not all 1 (and now and then where
they are). Each op draws its own kernel, strides, dilations and pad values; the choices are made
in the same order whatever the op, so a seed gives the same cases it gave before these were shared.
"""

from __future__ import annotations

from typing import Callable

from .common import Choices, one_in, pick

AUTO_PADS = ("SAME_UPPER", "SAME_LOWER", "VALID")


def placed_padding(choices: Choices, attributes: dict, padding: int, kernel: tuple[int, ...], spatial,
                   dilations: tuple[int, ...], draw_pads: Callable[[], list[int]]) -> tuple[int, ...]:
    """The spatial shape, widened where the padding leaves an axis without a window, after writing
    the padding into `attributes`: with `padding` 3 an auto_pad (VALID widening the input to the
    dilated kernel), else the pads `draw_pads` gives (written where any is given, or one time in 4)."""
    if padding == 3:
        attributes["auto_pad"] = pick(choices, AUTO_PADS)
        if attributes["auto_pad"] == "VALID":
            return tuple(max(d, (k - 1) * dl + 1) for d, k, dl in zip(spatial, kernel, dilations))
        return tuple(spatial)
    pads = draw_pads()
    rank = len(kernel)
    widened = tuple(max(d, (k - 1) * dl + 1 - pads[a] - pads[a + rank])
                    for a, (d, k, dl) in enumerate(zip(spatial, kernel, dilations)))
    if padding or one_in(choices, 4):
        attributes["pads"] = pads
    return widened


def written_when_not_ones(choices: Choices, attributes: dict, name: str, values: tuple[int, ...]) -> None:
    """`values` as the attribute `name` where any is above 1, and one time in 4 where all are 1."""
    if any(v > 1 for v in values) or one_in(choices, 4):
        attributes[name] = list(values)
