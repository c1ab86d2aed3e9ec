"""The onnxruntime runner: one session per distinct model, on a chosen execution provider.

Types numpy cannot hand to onnxruntime (bfloat16, float8, int4, int2, float4) are fed and read as
OrtValues of the ONNX element type, holding the exact bytes onnx's `numpy_helper` writes.
"""

from __future__ import annotations

import ctypes
from functools import cache

import numpy as np
from onnx import numpy_helper

from ..dtypes import canonical_name, dtype, from_elem_type, from_numpy
from ..errors import UnavailableError, UsageError
from ..model import BuiltModel
from .base import RunOutput, SessionCache, Vocabulary, checked_outputs, classified
from .fallback import fallback_message, next_profile_prefix, providers_that_ran, read_and_remove

PROVIDERS = {"cpu": "CPUExecutionProvider", "cuda": "CUDAExecutionProvider", "dml": "DmlExecutionProvider"}
# What brings a provider in: onnxruntime's builds are separate wheels, each in place of the others.
INSTALL = {"cuda": "pip install onnxruntime-gpu, in place of onnxruntime, on a machine with an NVIDIA GPU and CUDA",
           "dml": "pip install onnxruntime-directml, in place of onnxruntime, on Windows"}
# A missing kernel, a type onnxruntime cannot be handed, or an opset newer than the build knows
# (its IR version): nothing about the input's validity.
NO_KERNEL_MARKERS = (
    "Unsupported model IR version",
    # What the CUDA provider's session says where neither it nor the CPU fallback has a kernel
    # (the CPU provider alone says NOT_IMPLEMENTED): "Provider type for Relu node with name '' is not set."
    "is not set.",
    "NOT_IMPLEMENTED",
    "Could not find an implementation",
    "is not currently registered or supported",
    "No corresponding Numpy type",
    # onnxruntime's Python API feeds a string tensor only as numpy, and a type numpy lacks only
    # as an OrtValue: a model with both (Cast from string to bfloat16) cannot be run from Python.
    "only supported from non-string numpy arrays",
)
# Sessions each worker keeps. A GPU session holds a cuBLAS and a cuDNN handle, streams and a device
# memory arena: with 512 of them in each of 8 workers, session creation failed in a cuBLAS call on an
# H200 for 11,469 of 25,286 cases (read as "rejected a valid input"), where 512 CPU sessions take ~40 MB.
SESSIONS_KEPT = {"cuda": 16, "dml": 16}
# A graph onnxruntime refuses: "unsupported" for an input the text allows (onnxruntime's own
# schemas lag the text), a rejection of one it forbids.
UNSUPPORTED_MARKERS = (
    "INVALID_GRAPH",
    "Unsupported value attribute datatype",
)
# What says the graph or the input is invalid: INVALID_GRAPH is both (see Vocabulary).
INVALID_MARKERS = ("INVALID_GRAPH", "INVALID_ARGUMENT")
VOCABULARY = Vocabulary.literal(NO_KERNEL_MARKERS, UNSUPPORTED_MARKERS, INVALID_MARKERS)


def short_provider(text: str) -> str | None:
    """cpu, cuda or dml for that name or onnxruntime's own (CUDAExecutionProvider), in any case; else None."""
    wanted = text.strip().lower()
    return next((short for short, full in PROVIDERS.items() if wanted in (short, full.lower())), None)


def provider_name(provider: str) -> str:
    """onnxruntime's name of the provider `short_provider` knows; a UsageError naming the choices for any other."""
    short = short_provider(provider)
    if short is None:
        raise UsageError(f"unknown provider '{provider}' (choose from: {', '.join(PROVIDERS)}, "
                         f"or onnxruntime's names: {', '.join(PROVIDERS.values())})")
    return PROVIDERS[short]


def session_options(ort, optimizations: str, profile_prefix: str | None = None):
    """The SessionOptions every session of a runner gets; with `profile_prefix`, the session is
    profiled, its profile written there (see fallback.next_profile_prefix)."""
    options = ort.SessionOptions()
    options.log_severity_level = 4
    # Single-node models on small tensors gain nothing from thread pools, and each pool costs
    # ~20 ms to tear down when a session is dropped from the cache.
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    if optimizations == "off":
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    if profile_prefix is not None:
        options.enable_profiling = True
        options.profile_file_prefix = profile_prefix
    return options


class OnnxRuntimeRunner:
    """Runs models with onnxruntime.InferenceSession on one execution provider."""

    name = "onnxruntime"

    def __init__(self, provider: str = "cpu", optimizations: str = "on") -> None:
        import onnxruntime

        self._ort = onnxruntime
        onnxruntime.set_default_logger_severity(4)  # verdicts carry the errors; the log only repeats them
        self.execution_provider = provider_name(provider)
        self.provider = short_provider(provider)
        self.optimizations = optimizations
        available = onnxruntime.get_available_providers()
        if self.execution_provider not in available:
            install = INSTALL.get(self.provider)
            raise UnavailableError(
                f"provider '{provider}' ({self.execution_provider}) not available (available: {', '.join(available)})"
                + (f"; to install it: {install}" if install else "")
            )
        self._sessions = SessionCache(self._create, self._refused, SESSIONS_KEPT.get(self.provider, SessionCache.SIZE))
        self._checked_fallback: dict[bytes, str | None] = {}  # per model: None, or the fallback message

    def describe(self) -> dict:
        return {"name": self.name, "version": self._ort.__version__, "provider": self.execution_provider,
                "optimizations": self.optimizations}

    def replay_options(self) -> list[str]:
        return ["--runner", "onnxruntime", "--provider", self.provider, "--optimizations", self.optimizations]

    def _create(self, built: BuiltModel):
        # On a provider other than CPU, profiling tells which provider ran the node (see _fallback).
        prefix = next_profile_prefix() if self.provider != "cpu" else None
        options = session_options(self._ort, self.optimizations, prefix)
        return _Session(self._ort.InferenceSession(built.data, options, providers=[self.execution_provider]))

    def run(self, built: BuiltModel) -> RunOutput:
        session, refusal = self._sessions.get(built)
        if refusal is not None:
            return refusal
        try:
            if _all_numpy_native(built.elem_types):
                outputs = tuple(session.run(built.feeds))
            else:
                feeds = {name: self._feed(array) for name, array in built.feeds.items()}
                outputs = tuple(_to_numpy(v) for v in session.inference.run_with_ort_values(None, feeds))
        except Exception as error:
            return _classified(error)
        if not all(isinstance(output, np.ndarray) for output in outputs):
            # A sparse tensor (a Constant's sparse_value as the graph's output) is no array: the
            # case's fail, saying what came back, not a crash of the worker that packs it.
            return checked_outputs(outputs, len(outputs), "onnxruntime")
        if self.provider == "cpu":
            return RunOutput(outputs)
        fallback = self._fallback(built, session.inference)
        return RunOutput(outputs, error=fallback, fault="fallback" if fallback else None)

    def _refused(self, error: Exception) -> RunOutput:
        """A refused model's outcome. Each model is asked on its own: a model that is invalid for
        another reason is refused for that one, not for a type onnxruntime has not registered
        (BitCast-26 complex128 to bfloat16: "width-differs", not "MLDataType complex128")."""
        return _classified(error)

    def _fallback(self, built: BuiltModel, session) -> str | None:
        """Why a provider other than CPU handed the node to another one, or None; asked once per model."""
        if built.data not in self._checked_fallback:
            events = read_and_remove(session.end_profiling())
            self._checked_fallback[built.data] = fallback_message(
                self.execution_provider, providers_that_ran(events, built.model.graph.node[-1].op_type)
            )
        return self._checked_fallback[built.data]

    def _feed(self, array: np.ndarray):
        dt = from_numpy(array.dtype)
        if dt.is_numpy_native:
            return self._ort.OrtValue.ortvalue_from_numpy(np.require(array, requirements='C'))  # keeps rank 0
        value = self._ort.OrtValue.ortvalue_from_shape_and_type(list(array.shape), dt.elem_type)
        raw = numpy_helper.from_array(array).raw_data
        if raw:
            ctypes.memmove(value.data_ptr(), raw, len(raw))
        return value


class _Session:
    """An InferenceSession and the call that runs it on numpy feeds.

    That call is the session's own binding (`InferenceSession._sess.run`) with the output names
    looked up once, where onnxruntime has it; else the public `run`. The public wrapper checks
    the feed names (conform feeds exactly the graph's inputs) and, when a provider fails a run,
    prints to stdout and silently retries on CPU: conform would rather see that failure, and the
    wrapper costs ~2 us of a small case's ~8 us."""

    def __init__(self, inference) -> None:
        self.inference = inference
        binding = getattr(inference, "_sess", None)
        names = [output.name for output in inference.get_outputs()]
        if binding is not None and hasattr(binding, "run"):
            self.run = lambda feeds: binding.run(names, feeds, None)
        else:
            self.run = lambda feeds: inference.run(names, feeds)


@cache
def _all_numpy_native(elem_types: frozenset[int]) -> bool:
    """Whether numpy can hand every one of these element types to onnxruntime directly."""
    return all(from_elem_type(t).is_numpy_native for t in elem_types)


def _classified(error: Exception) -> RunOutput:
    return classified(error, VOCABULARY)


def _to_numpy(value) -> np.ndarray:
    if value.is_sparse_tensor():  # judged as what came back (see `run`), not read as a dense tensor
        return value.as_sparse_tensor()
    dt = dtype(canonical_name(value.data_type()))
    if dt.is_numpy_native:
        return value.numpy()
    shape = value.shape()
    count = int(np.prod(shape, dtype=np.int64))
    size = (count * dt.bits + 7) // 8
    raw = ctypes.string_at(value.data_ptr(), size) if size else b""
    proto = numpy_helper.from_array(np.zeros(0, dtype=dt.np_dtype))
    proto.ClearField("dims")
    proto.dims.extend(shape)
    proto.raw_data = raw
    return numpy_helper.to_array(proto)
