"""Reference for LRN, Local Response Normalization (versions 1 and 13), from the schema text.

"For an element X[n, c, d1, ..., dk] in a tensor of shape (N x C x D1 x D2, ..., Dk), its region
is {X[n, i, d1, ..., dk] | max(0, c - floor((size - 1) / 2)) <= i <= min(C - 1, c + ceil((size -
1) / 2))}", square_sum its squares' sum, and "Y[n, c, d1, ..., dk] = X[n, c, d1, ..., dk] / (bias
+ alpha / size * square_sum[n, c, d1, ..., dk] ) ^ beta". The versions differ only in the types
they allow (bfloat16 from 13), read from the schema.

- Rank: X is "(N x C x H x W)" for images and "(N x C x D1 x D2 ... Dn)" otherwise: any rank from 3
  is valid; rank 2 (N x C, no D) is what the formula reads with k = 0, but the text always writes a
  D1, so a runtime may reject it; below rank 2 there is no channel axis (invalid).
- size: "The number of channels to sum over" (required): a count, at least 1; below it alpha /
  size divides by zero or flips the sign, and the region is empty (invalid). An even size takes
  one channel more after c than before it, as the floor and ceil say; a size beyond C is clipped
  by the region's max and min.
- alpha, beta, bias: any FLOAT. The formula is evaluated as written in IEEE arithmetic: a base of
  0 with beta > 0 divides by 0 (±inf, NaN for x = 0), a negative base with a fractional beta is
  NaN. Neither is a bound's business: such elements are judged exactly.

Judging: y is computed exactly enough in float64 from the attributes as their FLOAT values hold
them; an element is judged by a per-element bound built from the formula's steps: a sum of at most
`size` squares (a relative γ(m)·u error, and what underflows), alpha / size and its product with
the sum, the addition of bias (relative to the base: where bias + alpha/size·S cancels the bound
grows, and where the base's sign is not known it sets no requirement), the power (β times the
base's relative error, and pow's own ULP: glibc powf 1, CUDA powf 4 (PRECISION.md); 1.5 of a
16-bit type), the division (or a product with the power of −β), and the rounding of the result; a
tier per accumulator (float16 computed in float32 or in float16). Exact where the text fixes the
value: beta = 0 (any base^0 is 1, C99 pow) and a base of exactly 1 (alpha = 0 and bias = 1; pow(1,
y) is 1) give y = x bit for bit.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from ..bounds import ElementBound, Tier, accumulators, gamma, half_ulp, least_subnormal, unit_roundoff
from ..case import Example
from .base import Expected, Invalid, OpReference, Reading, VersionSemantics

SIZE_SENTENCE = "size: The number of channels to sum over (a count of channels: at least 1)"
RANK_SENTENCE = ("X: ... dimensions for image case are (N x C x H x W) ... For non image case, the dimensions are in "
                 "the form of (N x C x D1 x D2 ... Dn), where N is the batch size")
RANK_2 = ("X: the text writes the non-image shape as (N x C x D1 x D2 ... Dn): a rank-2 (N x C) input is what the "
          "formula reads with no D, and a runtime may reject it")
REASON = ("the formula's steps in the accumulator a runtime may use: a sum of at most `size` squares (γ(m)), alpha / "
          "size and its product, bias's addition relative to the base, the power (β times the base's relative error, "
          "plus pow's ULP: glibc powf 1, CUDA powf 4, PRECISION.md), the division and the result's rounding")
FORMULA = "½ulp(y) + |y|·((1+ε_pow)·(1+u)² − 1), ε_pow = |(1±ρ_base)^β − 1| + pow's ULP"
# pow's own error, in ULP of the type it is computed in (conform's Pow budgets, math docs/precision.md).
POW_ULPS = {np.dtype(np.float64): 2.5, np.dtype(np.float32): 4.5}
POW_ULPS_16 = 1.5


def attribute(example: Example, name: str, default: float) -> float:
    """A FLOAT attribute as float64 holding its float32 value (the default where it is left out)."""
    value = example.attributes.get(name)
    return float(np.float32(default if value is None else value))


class LRN1(VersionSemantics):
    """LRN-1 (and 13, which adds bfloat16): the text's formula over a clipped window of channels."""

    since = 1

    def expected(self, example: Example) -> Expected:
        x = example.inputs["X"]
        size = int(example.attributes.get("size", 0))
        if x.ndim < 2:
            return Expected(invalid=Invalid("rank-below-2", RANK_SENTENCE))
        if size < 1:
            return Expected(invalid=Invalid("size-not-positive", SIZE_SENTENCE))
        alpha, beta, bias = (attribute(example, name, default) for name, default in
                             (("alpha", 1e-4), ("beta", 0.75), ("bias", 1.0)))
        found = normalized(x, size, alpha, beta, bias)
        return Expected(readings=found.readings, budgets=found.budgets, may_reject=RANK_2 if x.ndim == 2 else None)


class LRN13(LRN1):
    """LRN-13: as 1, with bfloat16 among its types."""

    since = 13


def window(c: int, size: int, channels: int) -> tuple[int, int]:
    """The region's channels for channel c, [low, high] inclusive, as the text writes them."""
    return max(0, c - (size - 1) // 2), min(channels - 1, c + -(-(size - 1) // 2))


def square_sums(x: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Per element, the sum of its region's squares (float64, exact for squares of the 16- and
    32-bit types), and the count of terms in it."""
    wide = x.astype(np.float64)
    squares = wide * wide
    sums = np.zeros_like(squares)
    counts = np.zeros(x.shape, dtype=np.float64)
    for c in range(x.shape[1]):
        low, high = window(c, size, x.shape[1])
        with np.errstate(invalid="ignore", over="ignore"):
            sums[:, c] = squares[:, low:high + 1].sum(axis=1)
        counts[:, c] = high - low + 1
    return sums, counts


def normalized(x: np.ndarray, size: int, alpha: float, beta: float, bias: float) -> Expected:
    """What the text allows for LRN of `x`: the exact value rounded to x's type, by the bound."""
    out = np.dtype(x.dtype)
    if not x.size:
        return Expected(readings=(Reading((x.copy(),)),))
    with np.errstate(all="ignore"):
        wide = x.astype(np.float64)
        total, count = square_sums(x, size)
        term = alpha / size * total
        base = bias + term
        power = np.where(beta == 0, 1.0, np.power(base, beta))
        y = np.where(beta == 0, wide, wide / power)
        tiers = tuple(Tier(label, _allowed(wide, y, total, count, term, base, alpha, beta, bias, acc, out), np.ones(x.shape))
                      for label, acc in accumulators(out))
        rounded = y.astype(out)
    return Expected(readings=(Reading((rounded,), precise=(y,)),), budgets=(ElementBound(tiers, FORMULA, REASON),))


def _allowed(x, y, total, count, term, base, alpha, beta, bias, acc, out) -> np.ndarray:
    """Per element, |ŷ − y| allowed in accumulator `acc` (see the module's docstring)."""
    u = unit_roundoff(acc)
    # The sum of m squares (each rounded, or lost to underflow), alpha / size, the product.
    term_error = np.abs(term) * gamma(count + 2, u) + abs(alpha) * count * least_subnormal(out)
    # bias is a FLOAT: a 16-bit type may hold it rounded, and the sum rounds once.
    bias_error = 0.0 if float(np.asarray(bias).astype(acc)) == bias else u * abs(bias)
    base_error = term_error + bias_error + u * np.abs(base)
    magnitude = np.abs(base)
    rho = base_error / np.where(magnitude > 0, magnitude, 1.0)
    with np.errstate(over="ignore", invalid="ignore"):
        through_pow = np.maximum(np.abs((1 + rho) ** beta - 1), np.abs((1 - np.minimum(rho, 1.0)) ** beta - 1))
    pow_ulps = POW_ULPS.get(np.dtype(acc), POW_ULPS_16)
    relative = (1 + through_pow) * (1 + 2 * pow_ulps * u) * (1 + u) ** 2 - 1
    finite_y = np.abs(np.where(np.isfinite(y), y, 0.0))
    slack = 4 * 2.0 ** -53 * finite_y if out == np.float64 else 0.0  # the float64 reference's own roundings
    allowed = half_ulp(y, out) + relative * finite_y + slack
    unknown = (rho >= 1) | ~np.isfinite(rho)  # the base's sign (or whether it is 0) is not known
    allowed = np.where(unknown & np.isfinite(y) & np.isfinite(base), np.inf, allowed)
    # Squares, their sum or its product with alpha / size past the accumulator's max overflow in
    # some order (TOSA: 'no requirement'); x / inf is then 0.
    largest = float(ml_dtypes.finfo(acc).max)
    allowed = np.where((total > largest) | (np.abs(term) > largest) | (np.abs(base) > largest), np.inf, allowed)
    exact = (beta == 0) | (base == 1) & (term == 0) & (bias == 1)
    # inf / inf, x / inf, 0 / P and a NaN anywhere: IEEE 754 gives the value as written.
    special = ~np.isfinite(y) | ~np.isfinite(x) | (x == 0) | ~np.isfinite(base)
    return np.where(exact | special, 0.0, allowed)


# Traits: the causes a runtime may deviate by.

def _x(example: Example) -> np.ndarray | None:
    return example.inputs.get("X")


def rank_not_4(example: Example) -> bool:
    """An X of rank other than 4: the text's non-image case (N x C x D1 ... Dn)."""
    x = _x(example)
    return x is not None and x.ndim != 4


def even_size(example: Example) -> bool:
    """An even size: the region takes one channel more after c than before it."""
    return int(example.attributes.get("size", 1)) % 2 == 0


def size_beyond_channels(example: Example) -> bool:
    """A window wider than C: the region is clipped at both ends."""
    x = _x(example)
    return x is not None and x.ndim >= 2 and int(example.attributes.get("size", 1)) > x.shape[1]


def nonpositive_base(example: Example) -> bool:
    """An element whose base, bias + alpha / size * square_sum, is 0 or negative (a negative alpha
    or bias): the power is NaN, inf or a division by 0."""
    windowed = _windowed(example)
    if windowed is None:
        return False
    x, size = windowed
    total, _ = square_sums(x, size)
    with np.errstate(all="ignore"):
        base = attribute(example, "bias", 1.0) + attribute(example, "alpha", 1e-4) / size * total
    return bool((base <= 0).any())


def nan_in_data(example: Example) -> bool:
    return _any_float(example, np.isnan)


def infinity_in_data(example: Example) -> bool:
    """A ±inf element: its region's square_sum is inf (inf / inf, or x / inf, as written)."""
    return _any_float(example, np.isinf)


def _any_float(example: Example, test) -> bool:
    """Whether `test` holds for some element of a float X."""
    x = _float_x(example)
    if x is None:
        return False
    with np.errstate(invalid="ignore"):
        return bool(test(x.astype(np.float64)).any())


def _float_x(example: Example) -> np.ndarray | None:
    """X where it is of a float type, else None."""
    x = _x(example)
    return None if x is None or x.dtype.kind not in "f" and x.dtype != ml_dtypes.bfloat16 else x


def _windowed(example: Example) -> tuple[np.ndarray, int] | None:
    """A float X with channels and elements, and a size of 1 or more: the cases whose windows'
    square sums a trait reads; else None."""
    x = _float_x(example)
    size = int(example.attributes.get("size", 1))
    return None if x is None or x.ndim < 2 or not x.size or size < 1 else (x, size)


def alpha_not_positive(example: Example) -> bool:
    """alpha 0 or negative: the text sets no range for it (y = x / bias^beta with alpha 0)."""
    return attribute(example, "alpha", 1e-4) <= 0


def beta_not_positive(example: Example) -> bool:
    """beta 0 or negative: the text sets no range for it (y = x with beta 0)."""
    return attribute(example, "beta", 0.75) <= 0


def running_window_cancels(example: Example) -> bool:
    """An element whose base is less than an eighth of bias + alpha / size times every square up to
    its window's end: a window sum kept running across the channels (adding the square that
    enters, subtracting the one that leaves, as Caffe does) carries the rounding of the larger
    sums into the smaller one, or inf − inf where a square overflowed."""
    windowed = _windowed(example)
    if windowed is None:
        return False
    x, size = windowed
    alpha, bias = attribute(example, "alpha", 1e-4), attribute(example, "bias", 1.0)
    with np.errstate(all="ignore"):
        squares = x.astype(np.float32).astype(np.float64) ** 2
        squares = np.where(squares > float(ml_dtypes.finfo(x.dtype).max), np.inf, squares)
        prefix = np.cumsum(squares, axis=1)
        total, _ = square_sums(x, size)
        base = np.abs(bias + alpha / size * total)
        ends = [window(c, size, x.shape[1])[1] for c in range(x.shape[1])]
        reach = abs(bias) + abs(alpha) / size * np.take(prefix, ends, axis=1)
        return bool((reach > 8 * base).any() | (np.isnan(reach) | np.isinf(reach)).any())


REFERENCE = OpReference(
    op="LRN",
    dtype_param="T",
    data_inputs=("X",),
    semantics=(LRN1, LRN13),
    traits={"rank-not-4": rank_not_4, "even-size": even_size, "size-beyond-channels": size_beyond_channels,
            "nonpositive-base": nonpositive_base, "nan-in-data": nan_in_data, "infinity-in-data": infinity_in_data,
            "alpha-not-positive": alpha_not_positive, "beta-not-positive": beta_not_positive,
            "running-window-cancels": running_window_cancels},
    rules=("rank-below-2", "size-not-positive"),
)
