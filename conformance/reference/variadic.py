"""Variadic element-wise ops: Sum, Mean, Max, Min (declarations of the element-wise family).

Each takes one or more inputs (the same shape in versions 1 and 6, multidirectional broadcasting
from 8). The texts say "element-wise sum / mean / max / min of each of the input tensors", and
nothing about the order of the additions or the precision they are carried in, nor about NaN or
the sign of zero in max and min. So:
- Sum and Mean: the spec reading is the exact sum (and mean) rounded once to the output type; the
  additions carried out left to right, each rounded to the output type (as a loop over the inputs
  does), is a named reading beside it, and so, for float16 and bfloat16, is the loop carried out
  in float32 and rounded at the end. With two inputs they coincide for Sum.
- Max and Min: NaN propagates (the spec reading) or is ignored (IEEE 754 maxNum, C fmax); +0 is
  above -0 (IEEE 754-2019 maximum), or the two zeros compare equal and either comes back.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..dtypes import DType, dtype
from .elementwise import Context, Elementwise, round_to


def _columns(arrays: tuple[np.ndarray, ...]) -> tuple[tuple[int, ...], np.ndarray]:
    """The inputs broadcast together, one row per input, one column per output element."""
    shaped = np.broadcast_arrays(*arrays)
    shape = shaped[0].shape if shaped else ()
    return shape, np.stack([a.reshape(-1) for a in shaped]) if shaped else np.zeros((0, 0))


def _exact_sum(column: np.ndarray) -> Fraction | float:
    """The exact sum of float64 values (a Fraction), or the IEEE result where one is not finite."""
    if not np.isfinite(column).all():
        with np.errstate(all="ignore"):
            return float(np.sum(column))
    return sum((Fraction(float(v)) for v in column), Fraction(0))


def _to_float(value: Fraction | float) -> float:
    """A Fraction rounded once to float64 (Python rounds Fraction -> float correctly); inf beyond it."""
    if isinstance(value, float):
        return value
    try:
        return float(value)
    except OverflowError:
        return float("inf") if value > 0 else float("-inf")


def _sum(*arrays: np.ndarray) -> np.ndarray:
    shape, columns = _columns(arrays)
    return np.array([_to_float(_exact_sum(columns[:, k])) for k in range(columns.shape[1])],
                    dtype=np.float64).reshape(shape)


def _mean(*arrays: np.ndarray) -> np.ndarray:
    shape, columns = _columns(arrays)
    count = len(arrays)
    values = []
    for k in range(columns.shape[1]):
        total = _exact_sum(columns[:, k])
        values.append(total / count if isinstance(total, float) else _to_float(total / count))
    return np.array(values, dtype=np.float64).reshape(shape)


LEFT_TO_RIGHT = "the additions run left to right, each rounded to the output type"
IN_FLOAT32 = "the additions run left to right in float32, the result rounded to the output type"
ORDER_AMBIGUITY = ("the text does not say in which order or at which precision the inputs are added: the exact sum "
                   "rounded once, or a loop over the inputs rounding each addition")


def _running_sum(context: Context, accumulator: DType | None = None) -> np.ndarray:
    """Left to right, each addition rounded to `accumulator` (the output type by default; float64
    holds the sum of two values of a narrower type closely enough that rounding it once more is
    innocuous)."""
    into = accumulator or context.out
    wide = [a.astype(np.float64) for a in context.arrays]
    total = wide[0]
    with np.errstate(all="ignore"):
        for value in wide[1:]:
            total = round_to(total + value, into).astype(np.float64)
    return total


def _narrow(context: Context) -> bool:
    """An output narrower than float32, which a runtime may accumulate in float32."""
    return context.out.name in ("float16", "bfloat16")


def _sum_alternatives(context: Context, first: np.ndarray) -> list[tuple[str, np.ndarray]]:
    if len(context.arrays) < 3 or context.out.kind != "float":
        return []
    found = [(LEFT_TO_RIGHT, round_to(_running_sum(context), context.out))]
    if _narrow(context):
        found.append((IN_FLOAT32, round_to(_running_sum(context, dtype("float")), context.out)))
    return found


def _mean_alternatives(context: Context, first: np.ndarray) -> list[tuple[str, np.ndarray]]:
    if len(context.arrays) < 2 or context.out.kind != "float":
        return []
    count = len(context.arrays)
    with np.errstate(all="ignore"):
        found = [(LEFT_TO_RIGHT + ", then the division by the count",
                  round_to(_running_sum(context) / count, context.out))]
        if _narrow(context):
            in_float32 = round_to(_running_sum(context, dtype("float")) / count, dtype("float")).astype(np.float64)
            found.append((IN_FLOAT32 + ", then the division by the count", round_to(in_float32, context.out)))
    return found


def _exact_total(*values: Fraction) -> Fraction:
    return sum(values, Fraction(0))


def _exact_mean(*values: Fraction) -> Fraction:
    return _exact_total(*values) / len(values)


SUM = Elementwise(
    op="Sum",
    real=_sum,
    exact=_exact_total,  # float64 holds the exact sum of three or more values only sometimes: rounded once from it
    alternatives=_sum_alternatives,
    ambiguity=ORDER_AMBIGUITY,
    label="the exact sum, rounded once",
    traits={"consumed-inputs": lambda e: "consumed_inputs" in e.attributes},
)

MEAN = Elementwise(
    op="Mean",
    real=_mean,
    exact=_exact_mean,
    alternatives=_mean_alternatives,
    ambiguity=ORDER_AMBIGUITY,
    label="the exact mean, rounded once",
    traits={"mean-count-not-power-of-two": lambda e: _count_not_power_of_two(e),
            "first-input-not-output-shape": lambda e: _first_input_smaller(e),
            "consumed-inputs": lambda e: "consumed_inputs" in e.attributes},
)


def _first_input_smaller(example) -> bool:
    """A first input whose shape is not the broadcast output's (an implementation accumulating
    into the first input's buffer cannot hold the result)."""
    arrays = [example.inputs[n] for n in example.node_inputs if n]
    try:
        shape = np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:
        return False
    return arrays[0].shape != shape


def _count_not_power_of_two(example) -> bool:
    """A Mean of N inputs where 1/N is not exact in binary: a runtime multiplying the sum by a
    rounded 1/N is off by up to one ULP there."""
    count = len([n for n in example.node_inputs if n])
    return count & (count - 1) != 0

# --- Max and Min ---

NAN_IGNORED = "NaN is ignored (IEEE 754 maxNum/minNum, C fmax/fmin; a signalling one too, as 754-2019 maximumNumber)"
EITHER_ZERO = "-0.0 and +0.0 compare equal: either zero comes back"
MAX_MIN_AMBIGUITY = "the text does not say what NaN gives in max/min, nor whether +0 is above -0"


def _extreme(pick_max: bool):
    """max (or min) over the inputs, NaN propagating and +0 above -0 (IEEE 754-2019 maximum/minimum)."""
    def extreme(*arrays: np.ndarray) -> np.ndarray:
        shape, columns = _columns(arrays)
        with np.errstate(all="ignore"):
            found = (np.max if pick_max else np.min)(columns, axis=0)
            zeros = columns == 0
            # Among zeros, max prefers +0 and min prefers -0.
            preferred = zeros & (np.signbit(columns) != pick_max)
            zero_result = np.where(preferred.any(axis=0), 0.0 if pick_max else -0.0, -0.0 if pick_max else 0.0)
            found = np.where(found == 0, zero_result, found)
        return found.reshape(shape)

    return extreme


def _integer_extreme(pick_max: bool):
    def extreme(*arrays: np.ndarray) -> np.ndarray:
        shaped = np.broadcast_arrays(*arrays)
        chosen = [(max if pick_max else min)(values) for values in zip(*(a.reshape(-1) for a in shaped))]
        return np.array(chosen, dtype=object).reshape(shaped[0].shape)

    return extreme


def _max_min_alternatives(pick_max: bool):
    def alternatives(context: Context, first: np.ndarray) -> list[tuple[str, np.ndarray]]:
        if context.dt.kind != "float":
            return []
        _, columns = _columns(tuple(a.astype(np.float64) for a in context.arrays))
        shape = first.shape
        found = []
        nan = np.isnan(columns)
        if nan.any():
            # Every NaN quieted first: fmin/fmax (IEEE 754-2008 minNum) give NaN for a signalling
            # one, where 754-2019's minimumNumber ignores it too; quieted, both readings are here.
            with np.errstate(all="ignore"):
                ignored = (np.fmax if pick_max else np.fmin).reduce(np.where(nan, np.nan, columns), axis=0)
            found.append((NAN_IGNORED, round_to(ignored, context.out).reshape(shape)))
        zeros = columns == 0
        mixed = (zeros & np.signbit(columns)).any(axis=0) & (zeros & ~np.signbit(columns)).any(axis=0)
        mixed = mixed.reshape(shape) & (first.astype(np.float64) == 0)
        if mixed.any():
            for label, base in [("", first)] + [(f"{lbl}; ", out) for lbl, out in found]:
                flipped = base.copy()
                flipped[mixed] = -base[mixed]
                found.append((f"{label}{EITHER_ZERO}", flipped))
        return found

    return alternatives


def _extreme_op(op: str, largest: bool, label: str) -> Elementwise:
    """Max or Min: the same declaration, the comparison turned around."""
    return Elementwise(
        op=op,
        real=_extreme(largest),
        integer=_integer_extreme(largest),
        alternatives=_max_min_alternatives(largest),
        ambiguity=MAX_MIN_AMBIGUITY,
        label=label,
        traits={"int64-beyond-int32": lambda e: _int64_beyond_int32(e)},  # defined below
    )


MAX = _extreme_op("Max", True, "NaN propagates; +0 is above -0")
MIN = _extreme_op("Min", False, "NaN propagates; -0 is below +0")



def _int64_beyond_int32(example) -> bool:
    """An int64 case with a value outside int32's range (a vectorised int64 max/min that compares
    32-bit lanes gets those wrong)."""
    if example.types.get(example.dtype_param) != "int64":
        return False
    return any(((a < -2 ** 31) | (a >= 2 ** 31)).any() for a in example.inputs.values() if a is not None)


DECLARED = (SUM, MEAN, MAX, MIN)
