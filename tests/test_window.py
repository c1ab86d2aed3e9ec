"""The sliding windows the convolution and pooling texts place (reference/window.py), checked
against the texts' formulas written out as plain loops."""

import math
from types import SimpleNamespace

import numpy as np
import pytest

from conformance.reference.base import Invalid
from conformance.reference.window import windows_of


def example(**attributes):
    return SimpleNamespace(attributes=attributes)


def naive_windows(x, kernel, strides, dilations, begin, end, ceil_mode=False):
    """Each output position's taps, from the texts' sentences alone: the output size by the floor
    (or ceil) formula, a window dropped where it would start in the right padding."""
    sizes = []
    for n, k, s, d, b, e in zip(x.shape[2:], kernel, strides, dilations, begin, end):
        exact = (n + b + e - d * (k - 1) - 1) / s + 1
        count = math.ceil(exact) if ceil_mode else math.floor(exact)
        while ceil_mode and (count - 1) * s >= n + b:
            count -= 1
        sizes.append(count)
    out = np.zeros(x.shape[:2] + tuple(sizes) + tuple(kernel), dtype=x.dtype)
    inside = np.zeros(tuple(sizes) + tuple(kernel), dtype=bool)
    for position in np.ndindex(*sizes):
        for tap in np.ndindex(*kernel):
            where = [o * s + t * d - b for o, t, s, d, b in zip(position, tap, strides, dilations, begin)]
            if all(0 <= w < n for w, n in zip(where, x.shape[2:])):
                out[(slice(None), slice(None), *position, *tap)] = x[(slice(None), slice(None), *where)]
                inside[position + tap] = True
    return out, inside


@pytest.mark.parametrize("spatial, kernel, strides, dilations, pads, ceil_mode", [
    ((7,), (3,), (2,), (1,), (1, 0), False),
    ((7,), (3,), (2,), (1,), (0, 1), True),
    ((4,), (2,), (2,), (1,), (0, 1), True),  # the ceil's last window would start in the right padding
    ((5, 6), (2, 3), (1, 2), (2, 1), (0, 1, 1, 0), False),
    ((3, 4, 2), (2, 2, 1), (1, 3, 1), (1, 1, 1), (1, 0, 0, 0, 2, 1), True),
    ((2,), (4,), (1,), (1,), (1, 1), False),  # a kernel longer than the input, reaching it through pads
])
def test_explicit_pads_place_the_windows_the_texts_formulas_do(spatial, kernel, strides, dilations, pads, ceil_mode):
    rank = len(spatial)
    x = np.arange(1, 2 * math.prod(spatial) + 1, dtype=np.float32).reshape((1, 2) + spatial)
    windows = windows_of(example(strides=list(strides), dilations=list(dilations), pads=list(pads)), spatial, kernel, ceil_mode)
    values, inside = windows.gather(x, fill=-1)
    expected, expected_inside = naive_windows(x, kernel, strides, dilations, pads[:rank], pads[rank:], ceil_mode)
    assert values.shape == expected.shape, f"output {windows.output}, the formula's {expected.shape[2:2 + rank]}"
    assert np.array_equal(inside, expected_inside)
    assert np.array_equal(np.where(inside, values, 0), expected), "a tap reads another element than the text's"
    assert np.all(values[..., ~inside] == -1) if (~inside).any() else True


@pytest.mark.parametrize("auto_pad, size, kernel, stride, begin, end", [
    # "the extra padding is added at the end for SAME_UPPER and at the beginning for SAME_LOWER"
    ("SAME_UPPER", 10, 4, 2, 1, 1),   # out 5: total (5-1)*2 + 4 - 10 = 2
    ("SAME_UPPER", 5, 4, 1, 1, 2),    # out 5: total 3, the odd one at the end
    ("SAME_LOWER", 5, 4, 1, 2, 1),    # the odd one at the beginning
    ("SAME_UPPER", 5, 1, 3, 0, 0),    # out 2: total (2-1)*3 + 1 - 5 < 0 pads nothing
    ("VALID", 7, 3, 2, 0, 0),
])
def test_auto_pad_gives_the_output_size_and_split_the_text_states(auto_pad, size, kernel, stride, begin, end):
    windows = windows_of(example(auto_pad=auto_pad, strides=[stride]), (size,), (kernel,))
    expected_out = math.ceil(size / stride) if auto_pad != "VALID" else (size - kernel) // stride + 1
    assert windows.output == (expected_out,)
    assert (windows.pads_begin, windows.pads_end) == ((begin,), (end,))


@pytest.mark.parametrize("attributes, rule", [
    ({"strides": [0]}, "strides"),
    ({"strides": [1, 1]}, "strides"),
    ({"dilations": [0]}, "dilations"),
    ({"pads": [-1, 0]}, "pads"),
    ({"pads": [1]}, "pads"),
    ({"auto_pad": "SAME"}, "auto-pad"),
    ({"auto_pad": "SAME_UPPER", "pads": [1, 0]}, "pads-with-auto-pad"),
    ({"pads": [0, 0]}, "no-window"),  # an input of 2 under a kernel of 3 and no padding
])
def test_attributes_the_texts_forbid_name_their_rule(attributes, rule):
    found = windows_of(example(**attributes), (2,), (3,) if rule == "no-window" else (1,))
    assert isinstance(found, Invalid) and found.rule == rule, found
