"""Reference for Slice (versions 1, 10, 11, 13), from the spec text in shared/spec.

The index arithmetic follows Slice-13's text, the most precise of the four: negative starts/ends
get dims[axis] added, then starts are clamped to [0, dims] for positive steps and [0, dims-1] for
negative ones, ends to [0, dims] and [-1, dims-1]. The earlier texts say it in prose ("a value
larger than n represents n", "negative means from the end", "similar to numpy") and agree on every
case but one: a start still below 0 after adding dims, with a negative step. Slice-13 clamps it to
0 (the first element is kept); the earlier texts leave it undefined and numpy, which they point
to, selects nothing. Before Slice-13 both readings are allowed. All arithmetic is in Python
integers, so INT_MIN + dims never wraps.
"""

from __future__ import annotations

import numpy as np

from ..case import Example
from .base import Expected, Invalid, OpReference, Reading, VersionSemantics, readings, single

STEPS_ZERO = "steps: Negative value means slicing backward. 'steps' cannot be 0. (Slice-11, Slice-13)"
AXES_RANGE = "axes: Negative value means counting dimensions from the back. Accepted range is [-r, r-1] where r = rank(data)."
AXES_NON_NEGATIVE = "axes: the Slice-1 and Slice-10 texts give no meaning to a negative axis (counting from the back starts with Slice-11)"
LENGTHS = "starts/ends (and axes, steps): 1-D tensors of the starting and ending indices of the corresponding axis in `axes`"
REPEATED = "axes: Behavior is undefined if an axis is repeated. (Slice-13)"
ONE_D = "starts/ends/axes/steps: 1-D tensor"
START_BEFORE_ZERO = (
    "a start below -dims with a negative step: Slice-13 clamps it to 0 and keeps the first element; "
    "the Slice-10 and Slice-11 texts leave it undefined ('similar to numpy'), and numpy selects nothing"
)
DEFAULT_AXES = (
    "the Slice-10+ text says omitted axes are [0, ..., ndim-1], which does not match len(starts); "
    "reading them as [0, ..., len(starts)-1] (as Slice-1 says) is allowed, and so is a rejection"
)


def effective_indices(start: int, end: int, step: int, dim: int, numpy_start: bool = False) -> range:
    """The indices one axis keeps, per Slice-13's clamping sentences; with `numpy_start`, a start
    below -dim with a negative step selects nothing, as in numpy."""
    if dim == 0 or (numpy_start and step < 0 and start < -dim):
        return range(0)  # (with dim 0, a negative step's clamping ranges, [0, -1], are empty)
    if start < 0:
        start += dim
    if end < 0:
        end += dim
    # Starts are clamped to [0, high], ends to [low_end, high]; by comparisons rather than min/max
    # calls, as this runs for every axis of every case.
    high, low_end = (dim, 0) if step > 0 else (dim - 1, -1)
    start = high if start > high else start
    end = high if end > high else end
    return range(0 if start < 0 else start, low_end if end < low_end else end, step)


def slice_array(data: np.ndarray, starts: list[int], ends: list[int], axes: list[int], steps: list[int],
                numpy_start: bool = False) -> np.ndarray:
    selection = [slice(None)] * data.ndim
    shape = data.shape
    for start, end, axis, step in zip(starts, ends, axes, steps):
        kept = effective_indices(start, end, step, shape[axis], numpy_start)
        stop = kept.stop
        # -1 as a Python slice end would mean "the last element"; here it means "before index 0".
        selection[axis] = slice(kept.start, stop if stop >= 0 else None, step)
    return data[tuple(selection)].copy()


class Slice1(VersionSemantics):
    """Slice-1: starts, ends and axes are attributes; no steps; omitted axes are [0..len(starts)-1]."""

    since = 1
    negative_axes = False
    omitted_axes_text_is_rank = False
    start_below_zero_is_defined = False  # for a negative step; only Slice-13's text defines it

    def parameters(self, example: Example) -> dict[str, list[int] | None]:
        return {name: example.attributes.get(name) for name in ("starts", "ends", "axes")} | {"steps": None}

    def expected(self, example: Example) -> Expected:
        data = example.inputs["data"]
        params = self.parameters(example)
        if isinstance(params, Invalid):
            return Expected(invalid=params)
        starts, ends = params["starts"], params["ends"]
        steps = params["steps"] if params["steps"] is not None else [1] * len(starts)
        invalid = self.check_lengths(starts, ends, params["axes"], steps) or self.check_steps(steps)
        if invalid:
            return Expected(invalid=invalid)
        axes = params["axes"]
        if axes is None:
            return self.with_default_axes(data, starts, ends, steps)
        invalid = self.check_axes(axes, data.ndim)
        if invalid:
            return Expected(invalid=invalid)
        axes = [a + data.ndim if a < 0 else a for a in axes]
        return self.sliced(data, starts, ends, axes, steps)

    def with_default_axes(self, data: np.ndarray, starts: list[int], ends: list[int], steps: list[int]) -> Expected:
        if len(starts) > data.ndim:
            return Expected(invalid=Invalid("axis-out-of-range", f"{LENGTHS}; more starts than data has axes"))
        found = self.sliced(data, starts, ends, list(range(len(starts))), steps)
        if self.omitted_axes_text_is_rank and len(starts) != data.ndim:
            base = "axes = [0..len(starts)-1]"
            labelled = [Reading(r.outputs, base if r.label == "spec" else f"{base}, {r.label}") for r in found.readings]
            return readings(labelled, "; ".join(filter(None, (DEFAULT_AXES, found.ambiguity))), may_reject=DEFAULT_AXES)
        return found

    def sliced(self, data: np.ndarray, starts: list[int], ends: list[int], axes: list[int], steps: list[int]) -> Expected:
        """The readings of the slice: one, or two where the text leaves a start below 0 undefined."""
        spec = slice_array(data, starts, ends, axes, steps)
        if self.start_below_zero_is_defined or not any(
            step < 0 and start < -data.shape[axis] for start, axis, step in zip(starts, axes, steps)
        ):
            return single(spec)
        numpy_reading = slice_array(data, starts, ends, axes, steps, numpy_start=True)
        return readings([Reading((spec,), "start clamped to 0 (Slice-13)"), Reading((numpy_reading,), "numpy: nothing selected")],
                        START_BEFORE_ZERO)

    def check_lengths(self, starts, ends, axes, steps) -> Invalid | None:
        count = len(starts)
        if len(ends) != count or len(steps) != count or (axes is not None and len(axes) != count):
            return Invalid("length-mismatch", LENGTHS)
        return None

    def check_steps(self, steps: list[int]) -> Invalid | None:
        return Invalid("steps-zero", STEPS_ZERO) if 0 in steps else None

    def check_axes(self, axes: list[int], rank: int) -> Invalid | None:
        if not axes:
            return None
        lowest, highest = min(axes), max(axes)
        if not self.negative_axes and lowest < 0:
            return Invalid("negative-axis", AXES_NON_NEGATIVE)
        if lowest < -rank or highest >= rank:
            return Invalid("axis-out-of-range", AXES_RANGE)
        normalised = [a + rank if a < 0 else a for a in axes]
        if len(set(normalised)) != len(normalised):
            return Invalid("repeated-axes", REPEATED)
        return None


class Slice10(Slice1):
    """Slice-10: starts, ends, axes and steps become inputs of type Tind; axes still non-negative."""

    since = 10
    omitted_axes_text_is_rank = True

    def parameters(self, example: Example) -> dict[str, list[int] | None] | Invalid:
        params: dict[str, list[int] | None] = {}
        for name in ("starts", "ends", "axes", "steps"):
            value = example.inputs.get(name)
            if value is not None and value.ndim != 1:
                return Invalid("index-not-1d", f"{name}: {ONE_D}")
            params[name] = None if value is None else value.tolist()
        return params


class Slice11(Slice10):
    """Slice-11: negative axes count from the back (range [-r, r-1])."""

    since = 11
    negative_axes = True


class Slice13(Slice11):
    """Slice-13: the clamping sentences define every start, a start below -dims included."""

    since = 13
    start_below_zero_is_defined = True


def negative_step_int_max_end(example: Example) -> bool:
    """An axis sliced with a negative step up to an end of INT32_MAX or INT64_MAX."""
    params = REFERENCE.semantics_for(example.version).parameters(example)
    if isinstance(params, Invalid) or not params.get("steps") or not params.get("ends"):
        return False
    return any(step < 0 and end in (2**31 - 1, 2**63 - 1) for end, step in zip(params["ends"], params["steps"]))


def step_beyond_int32(example: Example) -> bool:
    """A step outside int32, or one whose low 32 bits are all 0 (2**32): a runtime that keeps
    steps in 32 bits reads it as another step, or as the step 0 that the text forbids."""
    params = REFERENCE.semantics_for(example.version).parameters(example)
    if isinstance(params, Invalid) or not params.get("steps"):
        return False
    return any(step != 0 and (not -(2**31) <= step < 2**31 or step % 2**32 == 0) for step in params["steps"])


def step_int32_min(example: Example) -> bool:
    """A step of INT32_MIN (-2**31), in either index type: a runtime that negates it in 32 bits
    overflows (its magnitude is INT32_MAX + 1), or divides by it and traps."""
    params = REFERENCE.semantics_for(example.version).parameters(example)
    if isinstance(params, Invalid) or not params.get("steps"):
        return False
    return any(step == -(2**31) for step in params["steps"])


def clamped_or_empty(example: Example) -> bool:
    """On some sliced axis a start or end outside [-dim, dim] (which the text clamps), or a range
    that selects nothing (start at or after end for a positive step, at or before it for a
    negative one, or a dim of 0): what a runtime that neither clamps nor allows an empty range
    refuses or gets wrong."""
    params = REFERENCE.semantics_for(example.version).parameters(example)
    if isinstance(params, Invalid) or params.get("starts") is None or params.get("ends") is None:
        return False
    data = example.inputs.get("data")
    if data is None:
        return False
    starts, ends = params["starts"], params["ends"]
    axes = params.get("axes") if params.get("axes") is not None else list(range(len(starts)))
    steps = params.get("steps") if params.get("steps") is not None else [1] * len(starts)
    if not len(starts) == len(ends) == len(axes) == len(steps):
        return False
    for start, end, axis, step in zip(starts, ends, axes, steps):
        axis = axis + data.ndim if axis < 0 else axis
        if not 0 <= axis < data.ndim or step == 0:
            return False
        dim = data.shape[axis]
        if dim == 0 or not -dim <= start <= dim or not -dim <= end <= dim:
            return True
        start, end = (start + dim if start < 0 else start), (end + dim if end < 0 else end)
        if (step > 0 and start >= end) or (step < 0 and (start <= end or start >= dim)):
            return True
    return False


def default_axes_fewer_starts(example: Example) -> bool:
    """Axes omitted with fewer starts than the data has axes: the texts then slice the first
    len(starts) axes (Slice-10+ say [0, ..., ndim-1], see DEFAULT_AXES)."""
    params = REFERENCE.semantics_for(example.version).parameters(example)
    if isinstance(params, Invalid) or params.get("axes") is not None or params.get("starts") is None:
        return False
    return len(params["starts"]) < example.inputs["data"].ndim


REFERENCE = OpReference(
    op="Slice",
    dtype_param="T",
    data_inputs=("data",),
    semantics=(Slice1, Slice10, Slice11, Slice13),
    traits={"negative-step-int-max-end": negative_step_int_max_end, "step-beyond-int32": step_beyond_int32,
            "step-int32-min": step_int32_min, "default-axes-fewer-starts": default_axes_fewer_starts,
            "clamped-or-empty": clamped_or_empty},
    rules=("axis-out-of-range", "length-mismatch", "steps-zero", "negative-axis", "repeated-axes", "index-not-1d"),
)
