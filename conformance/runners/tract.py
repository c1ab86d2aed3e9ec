"""The tract runner (`--runner tract`): Sonos's Rust inference engine through its Python package.

A model goes the way tract's users run it: loaded from its bytes, typed and decluttered
(`into_model`), optimized for the CPU (`into_runnable`, which prepares it on tract's default
runtime, `into_optimized`), then run on the feeds. One runnable per distinct model is kept.

tract's Python API carries bool, the signed and unsigned integers of 8 to 64 bits, float16,
float and double; any other tensor type (bfloat16, the float8s, 4- and 2-bit types, strings,
complex) it cannot hand over or read back, and a case of one is refused as such before tract is asked.
tract's errors are anyhow chains ("Caused by: 0: ... 1: ..."); a Rust panic is no error but
an abort of the process (tract's C API lets no panic unwind into Python), a `crash` of the case.
"""

from __future__ import annotations

import ctypes
import os
import re
from dataclasses import dataclass
from typing import Any


from ..dtypes import from_elem_type
from ..errors import UnavailableError
from ..model import BuiltModel
from .base import ModelNeeds, RunOutput, SessionCache, Vocabulary, classified, read_safely

NAME = "tract"
# The ONNX types tract's Python API hands over and reads back exactly: what its DatumType has a
# ctypes type for (tract.tensor.DatumType.ctype). Its DatumType names complex types too, but
# neither way of its API carries them (no ctypes type; numpy's complex maps to no DatumType).
# Strings: tract has a string type in Rust, but its Python API has none (no DatumType; an object
# array makes no Tensor), so refusing them is what the API forces, not a guard against a crash
# (OpenVINO's string tensors are said to corrupt its heap; tract's are never made).
CARRIED = frozenset({"bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
                     "float16", "float", "double"})

# tract's refusals, from what it said in `conform run --all --runner tract` (modes input and
# initializer), by what each means. Anything else it says is an error: a valid case's `fail`.
VOCABULARY = Vocabulary(
    no_kernel=(
        # An op version it has no translation for: "Unsupported operator set for Clip operator" (Clip-1).
        r"Unsupported operator set for \w+ operator",
        # A type an op has no implementation for: "Erf does not support I8", "Sigmoid does not
        # support F64", "Add does not support Bool (eval in a)".
        r"\b\w+ does not support (Bool|[FIU]\d+|TDim|String|Blob)\b",
        # A type tract has no DatumType for, in an initializer (the Python API is never asked to
        # carry it): "Unknown DatumType Bfloat16", "Unknown DatumType Float8e4m3fnuz".
        r"Unknown DatumType \w+",
        # A type newer than its ONNX reader ("unknown ONNX TensorProto.DataType (24)": float8e8m0),
        # or one an op has no kernel for ("Unsupported type I16": DequantizeLinear of int16).
        r"unknown ONNX TensorProto\.DataType \(\d+\)",
        r"\bUnsupported type [FIU]\d+\b",
        # Equal on bool: its comparison takes numbers only.
        r"Bool is not a number",
        # Cast-1, whose `to` is a string: tract reads Cast-6's integer form only.
        r"Node +\(Cast\), attribute 'to': expected int",
        # An op version whose form it does not read: TopK-1, whose k is an attribute, where tract
        # reads TopK-10's input K ("Wrong input number. Rules expect 2, node has 1").
        r"Wrong input number\. Rules expect \d+, node has \d+",
        # An op it translates in part: Unique, evaluated with its first output only ("Wrong number
        # of outputs. Op says 1, node says 4") and never typed ("Operator can not be made a TypedOp").
        r"Wrong number of outputs\. Op says \d+, node says \d+",
        r"Operator can not be made a TypedOp",
    ),
    unsupported=(
        # An input it needs constant (a graph input, not an initializer): StridedSlice is Slice's
        # translation ("StridedSlice is typable only if stride is a const"), and ConstantOfShape's shape.
        r"is typable only if \w+ is a const",
        r"shape input is variable",
        # QuantizeLinear/DequantizeLinear's scale and zero point: "y_scale must be a const".
        r"\b[xy]_(scale|zero_point) must be a const\b",
        # A granularity it does not implement: "QuantizeLinear: blocked quantization is not supported".
        r"\b(Quantize|Dequantize)Linear: blocked quantization is not supported\b",
        # Symbolic dims it cannot reason about: two different symbols that the text lets be
        # equal at run time (Slice's starts and ends; an output of the input's shape where tract
        # broadcasts input and slope, PRelu), or a slice bound against a symbolic dim. Only a
        # mismatch of shapes, the element type the same on both sides: a wrong output type
        # (Pow-12's float16 base with a float exponent made float) stays an error.
        r"Impossible to unify Sym\(\w+\) with Sym\(\w+\)",
        r"Output mismatch after rewiring expansion for output #\d+: expected [^\n]*?,?(?P<tract_type>[A-Z]+\d*) "
        r"got [^\n]*broadcast\(\([^\n]*,(?P=tract_type)[ \t]*(?:\n|$)",
        r"Can't translate slice: axis=\d+ dim=[A-Za-z_]",
        r"Streaming dimensions with strides are not supported",
    ),
    invalid=(
        # Facts of the model that contradict each other, in numbers: "Impossible to unify 2 with
        # 1." (a shape of rank 2 where tract's rule wants rank 1); an attribute out of its range.
        r"Impossible to unify \d+ with \d+\.",
        r"attribute '\w+': expected list of non-negative ints",
    ),
)

# RUST_BACKTRACE=1 in the environment (common on machines that build Rust) makes every tract error
# capture a backtrace, and its message (anyhow's `{:?}`) resolve it: ~0.6 s an error instead of
# ~0.1 ms, for each refused model and each failed run. RUST_LIB_BACKTRACE=0, unless set, stops
# that for errors only (a panic's report still follows RUST_BACKTRACE: its frames go to stderr,
# where a crash's last words are read). Rust reads the variable once, at the first error.
LIB_BACKTRACE = "RUST_LIB_BACKTRACE"
# An error with a backtrace all the same (RUST_LIB_BACKTRACE=1 given) ends in "Stack backtrace:"
# and frames of tract's and Python's internals: they say where, not why, they would fill each
# result's detail, and a frame's function name (tract_onnx::ops::array::StridedSlice...) could
# match a vocabulary pattern the message itself does not hold. They are cut.
_BACKTRACE = re.compile(r"\n\s*Stack backtrace:\n.*", re.DOTALL)


class TractError(Exception):
    """A tract error, its message without the backtrace RUST_BACKTRACE appends."""


class TractRunner:
    """Runs models with tract, optimized as `into_runnable` prepares them for the CPU."""

    name = NAME
    # tract types and optimizes a model once, at load time: two symbolic dims it cannot prove
    # equal (Slice's starts_d0 and ends_d0) are refused ("Impossible to unify Sym(starts_d0) with
    # Sym(ends_d0)"), and Slice's starts/ends/axes/steps and ConstantOfShape's shape must be
    # constants. Slice-13 at --seed 0: 4 pass and 2,114 unsupported with symbolic dims and graph
    # inputs; with static dims and initializers 1,281 pass, 271 fail, 53 crash and 508 unsupported
    # (types its Python API cannot carry).
    model_needs = ModelNeeds(shapes="static", mode="initializer",
                             reason="its runtime resolves shapes and index inputs at load time")

    def __init__(self) -> None:
        os.environ.setdefault(LIB_BACKTRACE, "0")
        try:
            import tract
        except ImportError as error:
            raise UnavailableError(f"runner '{NAME}' not available: tract is not installed; "
                                   f"to install it: pip install \"conform[{NAME}]\"") from error
        self._tract = tract
        self._onnx = tract.onnx()
        self._runnables = SessionCache(self._create, _classified)

    def describe(self) -> dict:
        return {"name": NAME, "version": self._tract.version(), "device": "CPU",
                "optimization": "into_optimized (into_model, then into_runnable)"}

    def replay_options(self) -> list[str]:
        return ["--runner", NAME]

    def run(self, built: BuiltModel) -> RunOutput:
        refusal = cannot_carry(built.elem_types)
        if refusal is not None:
            return refusal
        compiled, refusal = self._runnables.get(built)
        if refusal is not None:
            return refusal
        try:
            # tract's Tensor.from_numpy makes each array contiguous and keeps a 0-d one 0-d
            # (numpy's ascontiguousarray alone would make it shape (1,)).
            answer = compiled.runnable.run([built.feeds[name] for name in compiled.inputs])
        except Exception as error:  # tract's errors, and its Python wrapper's own (a type it cannot map)
            return _classified(error)
        return _read(answer, compiled.outputs)

    def _create(self, built: BuiltModel) -> "_Compiled":
        """The runnable of a model, and the names of the inputs it takes, in its order."""
        try:
            model = self._load(built.data)
            inputs = tuple(model.input_name(index) for index in range(model.input_count()))
            typed = model.into_model()
            outputs = typed.output_count()
            return _Compiled(typed.into_runnable(), inputs, outputs)
        except self._tract.TractError as error:
            raise TractError(_without_backtrace(read_safely(str, error))) from None

    def _load(self, data: bytes):
        """tract's InferenceModel of the model's bytes. The Python package loads only from a path;
        its library's C API (tract_onnx_load_buffer, in every 0.23 release) takes the bytes, so no
        file is written for each model."""
        tract = self._tract
        buffer = ctypes.create_string_buffer(data, len(data))
        model = ctypes.c_void_p()
        tract.bindings.check(tract.bindings.lib.tract_onnx_load_buffer(
            self._onnx.ptr, buffer, ctypes.c_size_t(len(data)), ctypes.byref(model)))
        return tract.InferenceModel(model)


@dataclass(frozen=True)
class _Compiled:
    runnable: Any
    inputs: tuple[str, ...]
    outputs: int


def cannot_carry(elem_types: frozenset[int]) -> RunOutput | None:
    """The refusal of a model with a type tract's Python API cannot carry (its first, by name), or None."""
    names = sorted(from_elem_type(elem_type).name for elem_type in elem_types)
    missing = next((name for name in names if name not in CARRIED), None)
    if missing is None:
        return None
    return RunOutput.not_supported(f"tract's Python API cannot carry {missing}", no_kernel=True)


def _read(answer: list, count: int) -> RunOutput:
    """tract's outputs as arrays of the types tract gave them: a type other than the model's
    output type is tract's answer, left for the comparison to see."""
    if len(answer) != count:
        return RunOutput.malformed(f"tract returned {len(answer)} outputs; the model has {count}")
    outputs = []
    for index, tensor in enumerate(answer):
        try:
            outputs.append(tensor.to_numpy())
        except Exception as error:  # a tract type the Python API has no numpy type for (TDim, String...)
            # An answer, not a refusal: tract ran the model and gave a tensor of its own type where
            # the model declares an ONNX one (Cast to int64 gives TDim), which no caller can read.
            reason = _without_backtrace(read_safely(str, error)).strip()[:200]
            return RunOutput.malformed(f"tract's output {index} is of a type its Python API cannot read ({reason})")
    return RunOutput(tuple(outputs))


def _without_backtrace(text: str) -> str:
    return _BACKTRACE.sub("", text)


def _classified(error: Exception) -> RunOutput:
    if not isinstance(error, TractError):
        error = TractError(_without_backtrace(read_safely(str, error)))
    return classified(error, VOCABULARY)
