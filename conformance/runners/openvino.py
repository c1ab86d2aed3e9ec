"""The OpenVINO runner: each distinct model read from its bytes, compiled for the CPU device once,
and run through an infer request of its own for each case.

A case's verdict must not depend on the cases run before it. An infer request reused for a case of
other shapes carries state from the last one: a Cast to the input's own type (which the CPU plugin
makes an alias of its input) answers from the freed input of the case before and corrupts the heap,
so an abort lands on whichever case comes next (docs/findings.md, "OpenVINO: an infer request
reused"). A fresh request per case costs nothing measurable (17-28 us either way) and keeps the
compiled model, with its symbolic dims, shared by every case of its shapes' ranks.

Every tensor type OpenVINO's Python API has an element type for goes in as an `ov.Tensor` of that
type holding the exact bytes onnx's `numpy_helper` writes (4-bit types packed two to a byte, low
nibble first, as both ONNX and OpenVINO pack them), strings as a string tensor; outputs come back
as arrays of the element type OpenVINO answered in, whatever the model declared, so a runtime that
answers int32 for int64 is seen doing so. A type the API has no element type for (complex, the
fnuz float8 types, float6, int2) is refused one dtype at a time before OpenVINO is asked.

Compiled with OpenVINO's CPU defaults but one: INFERENCE_PRECISION_HINT is f32. Its default
depends on the machine: bf16 on a CPU with bfloat16 instructions (AVX512_BF16, AMX), f32 elsewhere
(most CI runners). Under bf16 the CPU plugin lowers some of a float32 graph's constants to bfloat16
(Clip-13 float without `max` clips +inf to bfloat16's largest value, 3.3895e38), so the same
conform run would give different verdicts, and an expectations file hold or go stale, by the
machine it lands on. f32 is what every CPU without bfloat16 runs by default, and the precision the
model asks for; describe() names it.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from onnx import numpy_helper

from ..dtypes import dtype, from_elem_type, from_numpy
from ..errors import UnavailableError
from ..model import BuiltModel
from .base import ModelNeeds, RunOutput, SessionCache, Vocabulary, checked_outputs, classified

DEVICE = "CPU"
# See the module's docstring: the one setting that differs from OpenVINO's defaults, and why.
CONFIG = {"INFERENCE_PRECISION_HINT": "f32"}

# ONNX type name -> the name of OpenVINO's element type (an attribute of `openvino.Type`).
# uint2 has one (u2), but OpenVINO's ONNX frontend refuses the type ("Unsupported data type
# UINT2"), so its packing is never exercised.
OV_TYPES = {
    "float": "f32", "double": "f64", "float16": "f16", "bfloat16": "bf16",
    "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "bool": "boolean", "string": "string",
    "float8e4m3fn": "f8e4m3", "float8e5m2": "f8e5m2", "float8e8m0": "f8e8m0", "float4e2m1": "f4e2m1",
    "int4": "i4", "uint4": "u4", "uint2": "u2",
}

# OpenVINO's refusals, as it words them. Each message is headed by "Exception from src/...cpp:NNN:"
# lines (which telling_line skips); the reason is further down.
NO_KERNEL = (
    # The ONNX frontend has no conversion for the op: "No conversion rule found for operations: X-N".
    r"No conversion rule found for operations",
    # A type the ONNX frontend cannot read: "Unsupported data type UINT2 expected: BOOL, ...".
    r"Unsupported data type [A-Z0-9_]+ expected",
    # A CPU node without a kernel for a precision: "unsupported src_prc: string" (Equal-19 and
    # Where on strings), "unsupported src_prc: f8e4m3" (IsNaN-20, IsInf-20 on float8).
    r"unsupported src_prc: \w+",
    # A CPU node without an implementation for the types it is given: "Unsupported operation of
    # type: Convert name: output" (Cast-9+ from or to string).
    r"Unsupported operation of type: \w+ name:",
    # A CPU node without a string kernel: "CPU plugin does not support string for use with oneDNN"
    # (Unique), "NonZero node with name 'Y.0' doesn't support string precision on 0 port".
    r"does not support string for use with oneDNN",
    r"doesn't support string precision on \d+ port",
)
# What the case asks that the CPU plugin does not do: a node whose output rank is known only at run
# time (ConstantOfShape's shape fed as a graph input: "CPU plug-in doesn't support Broadcast
# operation with dynamic rank"); as an initializer or a constant it runs.
UNSUPPORTED = (
    r"doesn't support \w+ operation with dynamic rank",
    # An input its frontend reads while it converts the node, given with symbolic dims: TopK's K as
    # a graph input ("While validating ONNX node '<Node(TopK)...': to_shape was called on a dynamic
    # shape"); as an initializer or a Constant node's output, or with static dims, it converts.
    r"to_shape was called on a dynamic shape",
    # The same for other nodes' converters and CPU kernels: a dim they need to know when the model
    # is compiled, given symbolic (RotaryEmbedding's cos_cache "must have static rank >= 2 and a static
    # last dimension", AffineGrid's size "Cannot get length of dynamic dimension", RoiAlign's rois
    # "has invalid shape on 1st input: [18446744073709551615,18446744073709551615]", the dynamic dim
    # printed as an unsigned -1, as MaxRoiPool's and NonMaxSuppression's kernels print it too).
    r"must have static rank",
    r"dimension of input data must be static",  # GlobalLpPool's batch dim
    r"Cannot get length of dynamic dimension",
    r"(shape on \d\w* input|dimension size): \[?18446744073709551615",
)
# Where it says the input is invalid: shapes that do not broadcast, an axis out of range, a zero
# step, starts/ends/axes of different lengths. (Its frontend's and shape inference's other checks,
# "Check '...' failed" in general, also fire on valid inputs it mishandles, so they are no sign.)
INVALID = (
    r"Eltwise shape infer input shapes dim index: \d+ mismatch",
    r"Check 'is_axis_valid\(axis, r\)' failed",
    r"Check 'step != 0' failed",
    r"Check 'start_shape\.compatible\(stop_shape\)",
)
VOCABULARY = Vocabulary(NO_KERNEL, UNSUPPORTED, INVALID)


class OpenVinoRunner:
    """Runs models with OpenVINO on its CPU device: one compiled model per model, one infer request per case."""

    name = "openvino"
    # OpenVINO compiles models with symbolic dims and index inputs fed at run time, so conform's
    # defaults stand: they test the dynamic paths too. Slice-13 at --seed 0: 1,647 pass, 202 fail,
    # 254 unsupported (complex: its Python API cannot carry it) with symbolic dims and graph
    # inputs; 1,819 pass, 40 fail with static dims and initializers, which constant-fold the node.
    model_needs = ModelNeeds()

    def __init__(self) -> None:
        try:
            import openvino
        except ImportError:
            raise UnavailableError('runner \'openvino\' not available: openvino is not installed; '
                                   'to install it: pip install "conform[openvino]"') from None
        self._ov = openvino
        self._core = openvino.Core()
        self._compiled = SessionCache(self._create, _classified)
        # Strings are fed and run: the Python API carries them exactly. But OpenVINO corrupts its
        # heap with them (a finding, not a type it cannot carry): a second run of an infer request
        # on a string input of another shape aborts ("munmap_chunk(): invalid pointer"), a crash of
        # that case, and releasing a compiled model that ran on a string input aborts too. The
        # latter would crash whichever innocent case evicts the model from the cache, so such
        # models are kept for the worker's life (they are few: one per string type binding).
        self._fed_strings: list[_Compiled] = []

    def describe(self) -> dict:
        return {"name": self.name, "version": self._ov.__version__, "device": DEVICE,
                "inference_precision": CONFIG["INFERENCE_PRECISION_HINT"]}

    def replay_options(self) -> list[str]:
        return ["--runner", self.name]

    def _create(self, built: BuiltModel) -> "_Compiled":
        # read_model takes the model's bytes: no file needed.
        model = self._core.read_model(built.data)
        return _Compiled(self._core.compile_model(model, DEVICE, CONFIG))

    def run(self, built: BuiltModel) -> RunOutput:
        missing = _not_carried(built.elem_types)
        if missing is not None:
            return RunOutput.not_supported(f"openvino's Python API cannot carry {missing}", no_kernel=True)
        compiled, refusal = self._compiled.get(built)
        if refusal is not None:
            return refusal
        try:
            feeds = {name: self._tensor(array) for name, array in built.feeds.items() if name in compiled.inputs}
            if any(array.dtype.kind == "O" for array in built.feeds.values()) and compiled not in self._fed_strings:
                self._fed_strings.append(compiled)
            request = compiled.model.create_infer_request()
            request.infer(feeds)
            outputs = [_array(request.get_output_tensor(index)) for index in range(compiled.outputs)]
        except Exception as error:  # a refusal by the runtime is a result
            self._after_refusal(built, compiled)
            return _classified(error)
        strange = next((f"output {index} is {output}" for index, output in enumerate(outputs) if isinstance(output, str)), None)
        if strange is not None:
            return RunOutput.malformed(f"openvino's {strange}")
        return checked_outputs(outputs, len(built.model.graph.output), "openvino")

    def _after_refusal(self, built: BuiltModel, compiled: "_Compiled") -> None:
        # A compiled model that refused an input keeps refusing valid ones after it (float16 Mul
        # with symbolic dims: [0] x [2] refused, then [1] x [3] refused too, "Eltwise shape infer
        # input shapes dim index: 0 mismatch"), so a case's verdict would depend on the cases run
        # before it. Its next case gets a freshly compiled model; one that ran on strings is kept
        # (releasing it aborts, see __init__).
        if compiled not in self._fed_strings:
            self._compiled.forget(built)

    def _tensor(self, array: np.ndarray):
        """An ov.Tensor of the array's ONNX type holding exactly its values."""
        ov = self._ov
        name = _onnx_name(array.dtype)
        tensor = ov.Tensor(getattr(ov.Type, OV_TYPES[name]), list(array.shape))
        if name == "string":
            if array.size:  # an empty list is refused ("Unknown string kind"); an empty tensor needs none
                tensor.str_data = [str(value) for value in array.flat]
            return tensor
        native = dtype(name).is_numpy_native
        raw = np.ascontiguousarray(array).tobytes() if native else numpy_helper.from_array(array).raw_data
        if raw:
            tensor.data.reshape(-1).view(np.uint8)[: len(raw)] = np.frombuffer(raw, np.uint8)
        return tensor


class _Compiled:
    """A compiled model, its output count and its inputs' names. Its frontend leaves out an input
    the node does not read (Resize's roi unless coordinate_transformation_mode is
    tf_crop_and_resize, as the text says it "only takes effect" then), and asking for it fails
    ("Port for tensor name roi was not found"): such an input is not fed."""

    def __init__(self, compiled) -> None:
        self.model = compiled
        self.outputs = len(compiled.outputs)
        self.inputs = {name for port in compiled.inputs for name in port.get_names()}


def _classified(error: Exception) -> RunOutput:
    return classified(error, VOCABULARY)


def _onnx_name(np_dtype: np.dtype) -> str:
    return from_numpy(np_dtype).name


@cache
def _not_carried(elem_types: frozenset[int]) -> str | None:
    """The first (by name) of these ONNX element types OpenVINO's Python API has no element type for; None if none."""
    names = sorted(from_elem_type(elem_type).name for elem_type in elem_types)
    return next((name for name in names if name not in OV_TYPES), None)


@cache
def _onnx_of(ov_type_name: str) -> str | None:
    """The ONNX type name of an OpenVINO element type (by its `get_type_name()`), None for one ONNX lacks."""
    import openvino

    for onnx_name, attribute in OV_TYPES.items():
        if getattr(openvino.Type, attribute).get_type_name() == ov_type_name:
            return onnx_name
    return None


def _array(tensor) -> np.ndarray | str:
    """An output tensor as an array of the ONNX type of the element type OpenVINO answered in (not
    the one the model declared), in its shape (0-d for rank 0); 4-bit values one an element."""
    type_name = tensor.get_element_type().get_type_name()
    name = _onnx_of(type_name)
    shape = tuple(tensor.get_shape())
    if name is None:
        return f"an output of OpenVINO's element type {type_name}, which is no ONNX tensor type"
    if name == "string":
        return np.array(list(tensor.str_data.reshape(-1)), dtype=object).reshape(shape)
    dt = dtype(name)
    count = int(np.prod(shape, dtype=np.int64))
    raw = np.asarray(tensor.data).reshape(-1).view(np.uint8).tobytes()[: (count * dt.bits + 7) // 8]
    if dt.is_numpy_native:
        return np.frombuffer(raw, dt.np_dtype).reshape(shape).copy()
    proto = numpy_helper.from_array(np.zeros(0, dtype=dt.np_dtype))
    proto.ClearField("dims")
    proto.dims.extend(shape)
    proto.raw_data = raw
    return numpy_helper.to_array(proto)
