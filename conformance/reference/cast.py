"""Reference for Cast (1, 6, 9, 13, 19, 21, 23, 24, 25, 28) and CastLike (15, 19, 21, 23, 24, 25).

The output type is the type parameter T2 of the case's type binding: Cast's `to` attribute must
name it (a case file writes both; a drawn case sets `to` from T2), CastLike's `target_type` has it.
Versions differ in their types (from onnx.defs), in `saturate` (19 and later: float8 targets)
and in `round_mode` (24 and later: float8e8m0 targets). Conversions are exact
(`conversion.py`); where the text fixes no result the reference answers with named readings:

- float to integer in range: truncation toward zero (C's), rounding half to even, or half away
  from zero (C's round());
- float to integer beyond range, NaN, inf: "undefined if OOR": the readings are what runtimes
  do (saturate with NaN to 0; C's cast through int32 or int64, x86 giving the lowest value where
  that overflows, then the higher bits discarded), and since the text fixes nothing, a last
  reading leaves those elements free (any value matches: `undefined_elements`); drawn cases keep
  such values out;
- float to a narrower float that is not float8 (float16, bfloat16, float): to nearest even, toward
  zero, or (for float16/bfloat16 from a wider type) through float32, rounded twice;
- 64-bit integers to float: directly or through double;
- NaN into float4e2m1/float6, which have no NaN: +0, -0 (ml_dtypes) or the largest value;
- float8e8m0: the table's `x > E8M0_MAX` compared before or after rounding; a negative value or
  -0 is "Unspecified": any value matches there, and drawn cases keep them out;
- numbers to string: "plain floating-point representation (such as "314.15926")": conform takes
  a conforming string to be one that reads back as the same value: printf `%.<p>g` with any one
  precision p for which every element reads back, the shortest such string per element, or
  numpy's `str` (onnx.reference's); NaN and infinities spelled as the text spells the strings it
  reads ("NaN", "INF", "-INF"), or numpy's "nan"/"inf"; bool as 1/0, true/false or True/False;
- string to number: "+INF", "INF", "-INF", "NaN" in any case, plain and scientific literals,
  rounded once; a string that names no number, or a fraction into an integer type, is undefined
  (any value matches there);
  string to bool (the text converts strings to float types only): the number it names is nonzero,
  or numpy's reading, any non-empty string is True.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from fractions import Fraction

import numpy as np
from onnx import TensorProto

from ..case import Example
from ..dtypes import DType, dtype, from_numpy
from ..registry import OpVersion
from . import conversion as cv
from .base import Expected, Invalid, OpReference, Reading, VersionSemantics, freed, readings

ROUND_MODE_SENTENCE = ("round_mode: `up`: round to nearest value away from zero, `down`: round to nearest value "
                       "towards zero, `nearest`: round to nearest value and ties round up.")
LITERAL = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
INTEGER_LITERAL = re.compile(r"[+-]?\d+")
SPECIAL_STRINGS = {"+inf": math.inf, "inf": math.inf, "-inf": -math.inf, "nan": math.nan}
NARROW_THROUGH_FLOAT = frozenset({"float16", "bfloat16"})
WIDE_SOURCES = frozenset({"double", "int32", "int64", "uint32", "uint64", "string"})
HALF_AWAY = "half-away-from-zero"  # C's round(), std::lround
UNDEFINED_FILLS = ("through int64", "through int32", "saturate")
NO_NAN_FILLS = ("+0", "-0", "largest")
BOOL_SPELLINGS = {"1/0": ("1", "0"), "true/false": ("true", "false"), "True/False": ("True", "False")}


@dataclass(frozen=True)
class Policy:
    """One reading of the text: how each choice it leaves open is made."""

    label: str = "spec"
    float_rounding: str = cv.NEAREST_EVEN
    int_rounding: str = cv.TOWARD_ZERO
    through: str | None = None  # a float type the value passes through first
    undefined: str = UNDEFINED_FILLS[0]
    no_nan: str = NO_NAN_FILLS[0]
    e8m0_before: bool = False
    text: str = "shortest"  # how a number is written: "shortest", "numpy", or "%.<p>g"
    bools: str = "1/0"


# --- reading strings ---

def parse_number(text: str):
    """A string's exact value (Fraction, or float inf/nan), or None where it names no number."""
    special = SPECIAL_STRINGS.get(text.lower())
    if special is not None:
        return special
    if LITERAL.fullmatch(text):
        exact = Fraction(text)
        return -0.0 if exact == 0 and text.startswith("-") else exact  # a Fraction has no -0
    return None


# --- writing strings ---

def shortest_digits(value: float, source: DType) -> int:
    """The fewest significant digits with which `%g` reads back as `value` in `source`."""
    for digits in range(1, 18):
        if _reads_back(value, digits, source):
            return digits
    return 17


def _reads_back(value: float, digits: int, source: DType) -> bool:
    written = float(f"{value:.{digits}g}")
    with np.errstate(all="ignore"):
        return float(np.array(written).astype(source.np_dtype).astype(np.float64)) == value


def _special_text(value: float) -> str | None:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "INF" if value > 0 else "-INF"
    return None


def format_numbers(x: np.ndarray, source: DType, policy: Policy) -> np.ndarray:
    """Numbers as strings, as `policy.text` writes them."""
    flat = x.reshape(-1)
    if source.kind == "bool":
        true, false = BOOL_SPELLINGS[policy.bools]
        texts = [true if v else false for v in flat.tolist()]
    elif source.kind in ("int", "uint"):
        texts = [str(v) for v in cv.exact_values(flat)]
    elif policy.text == "numpy":
        texts = [str(v) for v in (flat.astype(np.str_).tolist() if source.is_numpy_native else flat)]
    else:
        texts = [_float_text(float(v), source, policy.text) for v in flat.astype(np.float64).tolist()]
    out = np.empty(len(texts), dtype=object)
    out[:] = texts
    return out.reshape(x.shape)


def _float_text(value: float, source: DType, how: str) -> str:
    special = _special_text(value)
    if special is not None:
        return special
    digits = shortest_digits(value, source) if how == "shortest" else int(how[2:-1])
    return f"{value:.{digits}g}"


def printf_precisions(x: np.ndarray, source: DType) -> list[str]:
    """The `%.<p>g` formats with which every finite element reads back as itself."""
    finite = [float(v) for v in x.reshape(-1).astype(np.float64).tolist() if math.isfinite(v)]
    needed = max((shortest_digits(v, source) for v in finite), default=1)
    return [f"%.{p}g" for p in range(needed, 18)]


# --- converting ---

def convert(x: np.ndarray, source: DType, target: DType, saturate: bool, round_mode: str, policy: Policy) -> np.ndarray:
    """`x` of `source` cast to `target` under one reading."""
    if target.kind == "string":
        if source.kind == "string":
            return x.copy()
        return format_numbers(x, source, policy)
    if source.kind == "string":
        values = [parse_number(str(v)) for v in x.reshape(-1).tolist()]
        values = [math.nan if v is None else v for v in values]  # undefined: drawn cases keep them out
    elif source.kind == "float" and target.kind == "float" and policy.through is None and target.name != cv.E8M0:
        return _no_nan(cv.float_to_float(x, target, saturate, policy.float_rounding), x, target, policy)
    else:
        values = cv.exact_values(x)
    if target.kind == "bool":
        if source.kind == "string" and policy.text == "numpy":
            return np.array([v != "" for v in x.reshape(-1).tolist()], dtype=bool).reshape(x.shape)
        return np.array([_truth(v) for v in values], dtype=bool).reshape(x.shape)
    if target.kind in ("int", "uint"):
        return cv.pack_integers([_to_integer(v, source, target, policy) for v in values], target).reshape(x.shape)
    return _to_float(values, x, target, saturate, round_mode, policy).reshape(x.shape)


def _truth(value) -> bool:
    return value != 0  # NaN and +-inf are True, -0.0 False


def _to_integer(value, source: DType, target: DType, policy: Policy) -> int:
    if isinstance(value, int):
        return cv.wrap(value, target)
    if isinstance(value, float) and value == 0:  # a string's -0
        return 0
    if isinstance(value, Fraction) and value.denominator == 1 and source.kind == "string":
        whole = int(value)
        return whole if target.lowest <= whole <= target.max else _undefined(float(whole), target, policy)
    if isinstance(value, float) or not target.lowest <= _rounded(value, policy) <= target.max:
        return _undefined(float(value), target, policy)
    return _rounded(value, policy)


def _rounded(value: Fraction, policy: Policy) -> int:
    if policy.int_rounding == HALF_AWAY:
        return int(math.copysign(math.floor(abs(value) + Fraction(1, 2)), value))
    return math.trunc(value) if policy.int_rounding == cv.TOWARD_ZERO else round(value)


def _undefined(value: float, target: DType, policy: Policy) -> int:
    """A float beyond the integer type (or NaN, inf), as one kind of runtime converts it."""
    if policy.undefined == "saturate":
        return 0 if math.isnan(value) else int(min(max(value, target.lowest), target.max))
    width = 32 if policy.undefined == "through int32" else 64
    fits = math.isfinite(value) and -(2 ** (width - 1)) <= math.trunc(value) < 2 ** (width - 1)
    return cv.wrap(math.trunc(value) if fits else -(2 ** (width - 1)), target)


def _to_float(values: list, x: np.ndarray, target: DType, saturate: bool, round_mode: str, policy: Policy) -> np.ndarray:
    if policy.through is not None:
        middle = dtype(policy.through)
        passed = cv.exact_to_float(values, middle, True, policy.float_rounding)
        values = cv.exact_values(passed)
    rounding = policy.float_rounding if target.name not in cv.FLOAT8 else cv.NEAREST_EVEN
    converted = cv.exact_to_float(values, target, saturate, rounding, round_mode, policy.e8m0_before)
    return _no_nan(converted, np.array([math.nan if _is_nan(v) else 0.0 for v in values]), target, policy)


def _is_nan(value) -> bool:
    return isinstance(value, float) and math.isnan(value)


def _no_nan(converted: np.ndarray, x: np.ndarray, target: DType, policy: Policy) -> np.ndarray:
    """NaN into a type without NaN (float4e2m1, float6), as the policy fills it."""
    if target.has_nan:
        return converted
    nan = np.isnan(np.asarray(x).astype(np.float64)).reshape(converted.shape)
    if not nan.any():
        return converted
    fill = {"+0": 0.0, "-0": -0.0, "largest": float(target.max)}[policy.no_nan]
    return np.where(nan, np.array(fill).astype(target.np_dtype), converted).astype(target.np_dtype)


# --- which readings apply ---

def policies(x: np.ndarray, source: DType, target: DType) -> list[Policy]:
    """The readings of the text for this conversion: the first is conform's, each other differs
    from it in one choice the text leaves open."""
    base = Policy()
    found = [base]
    if target.kind == "string" and source.kind not in ("string", "int", "uint"):
        if source.kind == "bool":
            return [replace(base, label=f"bool as {s}", bools=s) for s in BOOL_SPELLINGS]
        found = [replace(base, label="shortest %g that reads back"), replace(base, label="numpy's str", text="numpy")]
        found += [replace(base, label=f"printf {p}", text=p) for p in printf_precisions(x, source)]
        return found
    if source.kind == "string" and target.kind == "bool":  # the text converts strings to float types only
        found.append(replace(base, label="a non-empty string is True (numpy's astype)", text="numpy"))
    if source.kind in ("float", "string") and target.kind in ("int", "uint"):
        found.append(replace(base, label="float to integer rounds half to even", int_rounding=cv.NEAREST_EVEN))
        found.append(replace(base, label="float to integer rounds half away from zero", int_rounding=HALF_AWAY))
        found += [replace(base, label=f"out of range: {fill}", undefined=fill) for fill in UNDEFINED_FILLS[1:]]
    if target.kind == "float" and target.name not in cv.FLOAT8 and target.name != cv.E8M0:
        if target.has_inf:
            found.append(replace(base, label="rounds toward zero", float_rounding=cv.TOWARD_ZERO))
        if target.name in NARROW_THROUGH_FLOAT and source.name in WIDE_SOURCES:
            found.append(replace(base, label="through float32, rounded twice", through="float"))
        if target.name == "float" and source.name in ("int64", "uint64", "string"):
            found.append(replace(base, label="through double, rounded twice", through="double"))
        if not target.has_nan:
            found += [replace(base, label=f"NaN (none in {target.name}) gives {fill}", no_nan=fill) for fill in NO_NAN_FILLS[1:]]
    if target.name == cv.E8M0:
        found.append(replace(base, label="E8M0 range compared before rounding", e8m0_before=True))
    return found


def undefined_elements(x: np.ndarray, source: DType, target: DType) -> np.ndarray | None:
    """The elements whose cast the text leaves undefined, as a mask; None where every one is defined:
    into an integer type, a float (or a string's number) whose integral part the type does not hold,
    NaN or inf ("undefined if OOR"; C's rule, by the integral part), a string that names no number
    or a fraction; into float8e8m0, a negative value or -0 ("Unspecified")."""
    if target.kind in ("int", "uint") and source.kind in ("float", "string"):
        values = cv.exact_values(x) if source.kind == "float" else [parse_number(str(v)) for v in x.reshape(-1).tolist()]
        return np.array([_undefined_integer(v, source, target) for v in values], dtype=bool).reshape(x.shape)
    if source.kind == "string" and target.kind == "float":
        return np.array([parse_number(str(v)) is None for v in x.reshape(-1).tolist()], dtype=bool).reshape(x.shape)
    if target.name == cv.E8M0 and source.kind in ("float", "int"):
        with np.errstate(invalid="ignore"):
            wide = x.astype(np.float64)
        return (wide < 0) | ((wide == 0) & np.signbit(wide))
    return None


def _undefined_integer(value, source: DType, target: DType) -> bool:
    if value is None or isinstance(value, float):  # no number, NaN, inf (a string's -0 is a float 0: defined)
        return not (isinstance(value, float) and value == 0)
    if source.kind == "string" and Fraction(value).denominator != 1:
        return True
    return not target.lowest <= math.trunc(value) <= target.max


def cast_expected(x: np.ndarray, target: DType, saturate: bool, round_mode: str) -> Expected:
    source = from_numpy(x.dtype)
    options = [Reading((convert(x, source, target, saturate, round_mode, p),), p.label) for p in policies(x, source, target)]
    undefined = undefined_elements(x, source, target)
    if undefined is not None and undefined.any():
        options += freed(options, undefined)
    return readings(options, ambiguity=f"readings of {source.name} to {target.name} the text leaves open: "
                                       + "; ".join(o.label for o in options))


# --- versions ---

def to_type_name(to: object) -> str:
    """The dtype a `to` attribute names: an INT (DataType enum) or, in Cast-1, a STRING."""
    if isinstance(to, (bytes, str)):
        name = to.decode() if isinstance(to, bytes) else to
        return dtype(name.lower()).name
    return dtype(TensorProto.DataType.Name(int(np.asarray(to).reshape(-1)[0]))).name


def to_attribute(type_name: str, since: int) -> object:
    """The `to` attribute that names a dtype in a Cast version (a STRING in Cast-1)."""
    name = TensorProto.DataType.Name(dtype(type_name).elem_type)
    return name if since < 6 else dtype(type_name).elem_type


class _CastSemantics(VersionSemantics):
    """Cast-1 and later: the target is T2; `saturate` is 1 and `round_mode` "up" before they exist."""

    since = 1
    target_attribute = True  # Cast: `to` names T2; CastLike: `target_type` has it

    def expected(self, example: Example) -> Expected:
        target = dtype(example.types["T2"])
        problem = to_problem(example) if self.target_attribute else None
        if problem is not None:  # case files and golden folders are checked as they load
            raise ValueError(f"{example.id}: {problem}")
        round_mode = example.attributes.get("round_mode", "up")
        round_mode = round_mode.decode() if isinstance(round_mode, bytes) else round_mode
        if example.version.attribute("round_mode") is not None and round_mode not in cv.ROUND_MODES:
            return Expected(invalid=Invalid("round-mode-unknown", f"{example.version.label}: {ROUND_MODE_SENTENCE}"))
        saturate = bool(example.attributes.get("saturate", 1)) if example.version.attribute("saturate") else True
        return cast_expected(example.inputs["input"], target, saturate, round_mode)


class Cast1(_CastSemantics):
    """Cast-1 to Cast-25 share one semantics; what changes (types, saturate, round_mode) is read
    from the case and onnx.defs."""

    since = 1


class CastLike15(_CastSemantics):
    """CastLike: Cast to the type of `target_type`, whose values are not read."""

    since = 15
    target_attribute = False


# --- named causes, for expectations ---

def _source_target(example: Example) -> tuple[DType, DType]:
    return dtype(example.types["T1"]), dtype(example.types["T2"])


def float_to_fixed_beyond_range(example: Example) -> bool:
    """A float (or string) element beyond the integer target's range, NaN or inf: the text's
    "undefined if OOR"."""
    source, target = _source_target(example)
    if source.kind not in ("float", "string") or target.kind not in ("int", "uint"):
        return False
    undefined = undefined_elements(example.inputs["input"], source, target)
    return undefined is not None and bool(undefined.any())


def _floats(example: Example) -> np.ndarray:
    with np.errstate(all="ignore"):
        return example.inputs["input"].astype(np.float64).reshape(-1)


def _saturate(example: Example) -> bool:
    return bool(example.attributes.get("saturate", 1))


def saturate_beyond_float8(example: Example) -> bool:
    """`saturate` set where the target is no float8 type ("It only applies for float 8 conversion")."""
    _, target = _source_target(example)
    return "saturate" in example.attributes and target.name not in cv.FLOAT8 and target.name != cv.E8M0


def e4m3fn_rounds_to_480(example: Example) -> bool:
    """A number that rounds to +-480 in float8e4m3fn with saturate=0 (beyond FLT_MAX 448: NaN)."""
    source, target = _source_target(example)
    if target.name != "float8e4m3fn" or _saturate(example) or source.kind not in ("float", "int", "uint"):
        return False
    magnitude = np.abs(_floats(example))
    return bool(((magnitude > 464) & (magnitude < 496)).any())


def e5m2_overflow(example: Example) -> bool:
    """A finite number beyond float8e5m2's FLT_MAX after rounding, with saturate=0 (the text: +-Inf)."""
    source, target = _source_target(example)
    if target.name != "float8e5m2" or _saturate(example) or source.kind not in ("float", "int", "uint"):
        return False
    values = _floats(example)
    return bool((np.isfinite(values) & (np.abs(values) >= 61440)).any())


def float8_negative_zero_to_bool(example: Example) -> bool:
    """-0 of a float8 type cast to bool (the text: False)."""
    source, target = _source_target(example)
    if source.name not in cv.FLOAT8 or target.kind != "bool":
        return False
    values = _floats(example)
    return bool(((values == 0) & np.signbit(values)).any())


def float8_inf_to_itself(example: Example) -> bool:
    """+-inf of float8e5m2 cast to float8e5m2 with saturate (the table: +-FLT_MAX)."""
    source, target = _source_target(example)
    return source.name == target.name == "float8e5m2" and _saturate(example) and bool(np.isinf(_floats(example)).any())


def float_needs_nine_digits(example: Example) -> bool:
    """A float cast to string whose value `%.8g` does not write so that it reads back."""
    source, target = _source_target(example)
    if source.kind != "float" or target.kind != "string":
        return False
    return any(not _reads_back(v, 8, source) for v in _floats(example).tolist() if math.isfinite(v))


def string_names_subnormal(example: Example) -> bool:
    """A string naming a nonzero number below the smallest normal double (for a double target) or
    float (any other float target): C's strtod/strtof report it as out of range."""
    source, target = _source_target(example)
    if source.kind != "string" or target.kind != "float":
        return False
    tiny = Fraction(2) ** (-1022 if target.name == "double" else -126)
    values = [parse_number(str(v)) for v in example.inputs["input"].reshape(-1).tolist()]
    return any(isinstance(v, Fraction) and v != 0 and abs(v) < tiny for v in values)


def round_mode_beyond_e8m0(example: Example) -> bool:
    """`round_mode` set where the target is not float8e8m0 ("It only applies to casting to float8e8m0")."""
    _, target = _source_target(example)
    return "round_mode" in example.attributes and target.name != cv.E8M0


def castlike_round_mode(example: Example) -> bool:
    """CastLike to float8e8m0 with a `round_mode` other than the default "up"."""
    _, target = _source_target(example)
    mode = example.attributes.get("round_mode", "up")
    return example.op == "CastLike" and target.name == cv.E8M0 and mode not in ("up", b"up")


def e8m0_smallest_to_bool(example: Example) -> bool:
    """float8e8m0's smallest value, 2**-127 (bits 0), cast to bool (the text: not 0, so True)."""
    source, target = _source_target(example)
    return source.name == cv.E8M0 and target.kind == "bool" and bool((example.inputs["input"].view(np.uint8) == 0).any())


def e8m0_through_float32(example: Example) -> bool:
    """A cast to float8e8m0 whose result changes when the value is first rounded to float32
    (an int32/int64/uint32/uint64 or double beyond float32's precision or range)."""
    source, target = _source_target(example)
    if target.name != cv.E8M0 or source.kind not in ("float", "int", "uint") or source.name == "float":
        return False
    x = example.inputs["input"]
    saturate = bool(example.attributes.get("saturate", 1))
    mode = example.attributes.get("round_mode", "up")
    if mode not in cv.ROUND_MODES:
        return False
    exact = convert(x, source, target, saturate, mode, Policy())
    through = convert(x, source, target, saturate, mode, Policy(through="float"))
    return not np.array_equal(exact.view(np.uint8), through.view(np.uint8))


def to_int64(example: Example) -> bool:
    """A cast to int64: a runtime may give its own index type there (tract's TDim), which its API
    cannot hand back."""
    return example.types.get("T2") == "int64"


def same_type(example: Example) -> bool:
    """A cast to the input's own type, which the text makes a copy: a runtime that drops the
    conversion may hand back a buffer it no longer owns."""
    source, target = _source_target(example)
    return source.name == target.name


def negative_float4_source(example: Example) -> bool:
    """A float4e2m1 input holding a negative value (its sign bit set): a runtime decoding the
    nibble without its sign bit gives the magnitude."""
    source, _ = _source_target(example)
    return source.name == "float4e2m1" and bool(np.signbit(_floats(example)).any())


def to_e8m0(example: Example) -> bool:
    """A cast to float8e8m0, whose `round_mode` and `saturate` the text defines per value."""
    _, target = _source_target(example)
    return target.name == cv.E8M0


def int32_min_to_bool(example: Example) -> bool:
    """An int32 input holding -2**31 cast to bool (or an int64 one, which a runtime keeping int64 in
    32 bits reads so): the text gives true (it is not 0); a runtime testing x != 0 through a
    negation or an absolute value (which overflow there) gives false."""
    source, target = _source_target(example)
    if source.name not in ("int32", "int64") or target.name != "bool":
        return False
    return bool((np.asarray(example.inputs[example.node_inputs[0]]) == np.iinfo(np.int32).min).any())


TRAITS = {
    "same-type": same_type,
    "int32-min-to-bool": int32_min_to_bool,
    "negative-float4-source": negative_float4_source,
    "to-e8m0": to_e8m0,
    "to-int64": to_int64,
    "e8m0-through-float32": e8m0_through_float32,
    "round-mode-beyond-e8m0": round_mode_beyond_e8m0,
    "castlike-round-mode": castlike_round_mode,
    "e8m0-smallest-to-bool": e8m0_smallest_to_bool,
    "float-to-fixed-beyond-range": float_to_fixed_beyond_range,
    "saturate-beyond-float8": saturate_beyond_float8,
    "e4m3fn-rounds-to-480": e4m3fn_rounds_to_480,
    "e5m2-overflow": e5m2_overflow,
    "float8-negative-zero-to-bool": float8_negative_zero_to_bool,
    "float8-inf-to-itself": float8_inf_to_itself,
    "float-needs-nine-digits": float_needs_nine_digits,
    "string-names-subnormal": string_names_subnormal,
}


def to_problem(example: Example) -> str | None:
    """Where Cast's `to` names another type than the binding's T2 (a case file's or a stored
    model's mistake), or None."""
    named, bound = to_type_name(example.attributes["to"]), dtype(example.types["T2"]).name
    return None if named == bound else f"'to' names {named}, but the output's type (T2) is {bound}"


def target_attribute(version: OpVersion, binding: dict[str, str]) -> dict:
    """Cast's `to`, which the type binding's T2 fixes."""
    return {"to": to_attribute(binding["T2"], version.since_version)}


def _reference(op: str, semantics: type, binding_attributes=None, binding_problem=None) -> OpReference:
    """Cast's or CastLike's reference: the same conversions, causes and rules."""
    return OpReference(op=op, dtype_param="T1", data_inputs=("input",), semantics=(semantics,), traits=TRAITS,
                       rules=("round-mode-unknown",), binding_attributes=binding_attributes, binding_problem=binding_problem)


REFERENCE = _reference("Cast", Cast1, target_attribute, to_problem)
LIKE_REFERENCE = _reference("CastLike", CastLike15)
# What the registry (reference/__init__.py) finds here: the two ops of this module, in this order.
REFERENCES = (REFERENCE, LIKE_REFERENCE)
