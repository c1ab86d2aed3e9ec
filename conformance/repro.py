"""`conform repro`: one case written as a standalone Python script, for a runtime team's bug report.

The script needs numpy, onnx, ml_dtypes and the runtime, never conform. It builds the very model
conform built for the case (conformance/model.py: the same opset, IR version, input mode and dims),
written out call by call with onnx.helper; holds the inputs and every reading of the expected
outputs as literals that make exactly the bytes conform had (float16, bfloat16 and the float8 types,
and any value a decimal would not give back, as bit patterns viewed as the type); runs the model on
the runtime through its own API, as conform's runner does; and judges the answer as conform does
(`compare.judge`: any NaN matches any NaN, +0 matches -0 unless --strict-zero, a budgeted output
within its ULP budget). It prints the expected and the actual outputs and where they differ, and
exits 1 when they differ, 0 when they agree. A runtime that crashes takes the script down with it
(exit status: the signal), which is the reproduction.

The script is written from the same options a replay command takes, so that `conform run ...
--case ID` becomes `conform repro ... --case ID`; nothing is run here.
"""

from __future__ import annotations

import importlib.metadata
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

import ml_dtypes
import numpy as np
import onnx
from onnx import AttributeProto, TensorProto, numpy_helper

from .case import Example, SparseValue, slug
from .errors import UsageError
from .execute import RunOptions, expected_for, model_of, replay_command, select_examples, too_large
from .model import DEFAULT_SHAPES
from .output import write_atomic
from .precision import Budget
from .reference import for_op
from .reference.base import Expected
from .reference.expected import Bounds
from .runners import RunnerSpec
from .runners.refusals import replay_words

DEFAULT_FOLDER = Path("reports") / "repro"
# How a script writes an element of each width as its bit pattern.
UNSIGNED_OF_WIDTH = {1: "np.uint8", 2: "np.uint16", 4: "np.uint32", 8: "np.uint64"}
# Types a script writes as bit patterns whatever their values: a decimal would not say which of
# their few bits are set (the brief of a bug report is the exact input).
ALWAYS_BITS = ("float16",)
SHOWN_IN_COMMENT = 12  # values of a bit-pattern literal shown beside it
LINE = 100


@dataclass(frozen=True)
class ReproRequest:
    """What `conform repro` is asked: the case (chosen as a run chooses it), its input mode, the
    runner, and where the script goes (None: the default place under reports/repro/)."""

    options: RunOptions
    spec: RunnerSpec
    mode: str = "input"
    out: Path | None = None


def options_from_id(case_id: str) -> dict:
    """The op and opset a bare case id names (`Slice-13/name/binding`), and which source of cases
    holds it: hypothesis for `hypothesis-NNNN` names, the case files for any other."""
    match = re.fullmatch(r"([A-Za-z][A-Za-z0-9]*)-(\d+)/([^/]+)/.+", case_id)
    if match is None:
        raise UsageError(f"'{case_id}' is no case id (OP-VERSION/NAME/BINDING, e.g. Slice-13/negative_start/float/int64; "
                         "see a report's 'id' or a replay command's --case)")
    op, version, name = match.group(1), int(match.group(2)), match.group(3)
    hypothesis = name.startswith("hypothesis-")
    return {"op": for_op(op).op, "opset": version, "use_yaml": not hypothesis, "use_hypothesis": hypothesis}


def the_example(options: RunOptions) -> Example:
    """The one case the options choose; a UsageError when they choose none (an unknown id) or several."""
    if len(options.case_ids) != 1:
        raise UsageError("repro writes one case: name it with --case ID (or as the argument), as a replay command does")
    chosen = select_examples(options)
    if len(chosen) != 1:  # one id, chosen twice: the same case from two sources
        raise UsageError(f"{len(chosen)} cases have the id {options.case_ids[0]}: give --no-yaml or --no-hypothesis")
    return chosen[0]


def default_path(request: ReproRequest, example: Example) -> Path:
    """reports/repro/<runner>/<mode>[-static]/<case id as a name>.py: a runner's scripts apart, as its shrunk cases are."""
    mode = request.mode if request.options.shapes == DEFAULT_SHAPES else f"{request.mode}-{request.options.shapes}"
    return DEFAULT_FOLDER / _runner_folder(request.spec) / mode / f"{slug(example.id)}.py"


def write_repro(request: ReproRequest) -> tuple[Path, Example]:
    """Write the script of the case the request names; its path and the case."""
    example = the_example(request.options)
    path = request.out or default_path(request, example)
    write_atomic(path, script(example, request), "the repro script")
    return path, example


def script(example: Example, request: ReproRequest) -> str:
    """The whole script for `example`, as `request` runs it."""
    refused = too_large(example, request.options.max_elements)
    if refused is not None:
        raise UsageError(f"{example.id}: {refused}")
    expected = expected_for(example)
    built = model_of(example, expected, request.mode, request.options.shapes)
    parts = [_header(example, expected, request, built.model), _imports(),
             _model_source(built.model, _embedded_arrays(example)), _feeds_source(built.feeds),
             _expected_source(expected, request.options.strict_zero), _runner_source(request.spec), JUDGING,
             BUDGET_JUDGING if _budgeted(expected) else "", INVALID_MAIN if not expected.is_valid else VALID_MAIN, ENTRY]
    return "\n\n\n".join(part.strip("\n") for part in parts if part) + "\n"


# --- the header -------------------------------------------------------------------------------


def _header(example: Example, expected: Expected, request: ReproRequest, model: onnx.ModelProto) -> str:
    version = example.version
    dims = "static dims" if request.options.shapes == "static" else "symbolic dims"
    lines = [f"Reproduces, without conform, one case of {version.label} on {_runtime_text(request.spec)}.", "",
             f"case:     {example.id} ({_source_text(example)})",
             f"model:    a single {version.op} node, opset {version.since_version}, IR version {model.ir_version}; "
             f"{_mode_text(request.mode)}, {dims}"]
    if expected.is_valid:
        labels = ", ".join(f"'{reading.label}'" for reading in expected.readings)
        several = f" (any one of {len(expected.readings)}: {expected.ambiguity})" if len(expected.readings) > 1 else ""
        lines.append(f"expected: the reading {labels}{several}")
        if expected.may_reject:
            lines.append(f"          a rejection is allowed too: {expected.may_reject}")
        for budget in dict.fromkeys(b for b in expected.budgets if b is not None):
            if isinstance(budget, Budget):
                lines.append(f"judged:   within {budget.ulps:g} ULP of the precise value ({budget.reason})")
            else:
                lines.append(f"judged:   within {budget.text()} of the exact value, per element ({budget.reason})")
    else:
        lines.append(f"expected: a rejection, by the rule '{expected.invalid.rule}'")
    lines.append(f"text:     {_sentence(example, expected)}")
    lines.append(f"in conform: {replay_command(example, _ReplayWords(request.spec), request.options, _mode_words(request.mode))}")
    lines += ["", f"Needs numpy, onnx, ml_dtypes and {_runtime_package(request.spec)}. Prints what the runtime answers "
              "against what the text expects, and where they differ; exits 1 where they differ, 0 where they agree "
              "(judged as conform judges: any NaN matches any NaN"
              + ("" if request.options.strict_zero else ", +0 matches -0") + ", a budgeted output within its ULP budget)."]
    wrapped = [textwrap.fill(line, LINE, subsequent_indent=" " * _indent(line), break_long_words=False,
                             break_on_hyphens=False) if line else "" for line in lines]
    return '"""' + "\n".join(wrapped).replace("\\", "\\\\").replace('"""', '\\"\\"\\"') + '\n"""'


def _indent(line: str) -> int:
    match = re.match(r"[a-z ]+:\s+", line)
    return len(match.group(0)) if match else 0


def _sentence(example: Example, expected: Expected) -> str:
    """The sentence of the text the expected answer comes from: the case's own (a case file quotes
    the text it tests), the invalid rule's, or for a drawn case the opening of the version's doc."""
    if not expected.is_valid and not example.spec:
        return f'"{expected.invalid.sentence}"'
    if example.spec:
        return f'"{example.spec}"'
    return f'"{_doc_excerpt(example)}" ({example.version.label}\'s doc)'


def _doc_excerpt(example: Example) -> str:
    doc = onnx.defs.get_schema(example.op, example.version.since_version, "").doc or ""
    paragraph = " ".join(doc.strip().split("\n\n")[0].split())
    paragraph = re.sub(r"[`*]", "", paragraph)
    sentences = re.split(r"(?<=\.)\s+", paragraph)
    excerpt = sentences[0]
    for sentence in sentences[1:]:
        if len(excerpt) + len(sentence) > 400:
            break
        excerpt += " " + sentence
    return excerpt


def _source_text(example: Example) -> str:
    if example.source == "hypothesis":
        return "drawn by hypothesis"
    return f"case file {example.source.removeprefix('yaml:')}"


def _mode_text(mode: str) -> str:
    return {"input": "every input a graph input", "initializer": "inputs other than the data as initializers",
            "constant": "inputs other than the data as Constant nodes"}[mode]


def _mode_words(mode: str) -> tuple[str, ...]:
    return ("--mode", mode) if mode != "input" else ()


class _ReplayWords:
    """What a replay command needs of a runner (its options), without loading the runtime."""

    def __init__(self, spec: RunnerSpec) -> None:
        self.spec = spec
        self.name = spec.runner

    def replay_options(self) -> list[str]:
        spec = self.spec
        if spec.backend:
            return ["--backend", spec.backend, *replay_words(spec.refusals)]
        words = ["--runner", spec.runner]
        if spec.runner == "onnxruntime":
            words += ["--provider", spec.provider, "--optimizations", spec.optimizations]
        return words + replay_words(spec.refusals)


def _runner_folder(spec: RunnerSpec) -> str:
    from .execute import runner_folder_name

    return runner_folder_name(_ReplayWords(spec))


PACKAGES = {"onnxruntime": ("onnxruntime", "onnxruntime-gpu", "onnxruntime-directml"), "reference": ("onnx",),
            "openvino": ("openvino",), "tract": ("tract",)}


def _runtime_package(spec: RunnerSpec) -> str:
    if spec.backend:
        return f"the backend module {spec.backend.partition(':')[0]}"
    return "onnx (its onnx.reference)" if spec.runner == "reference" else spec.runner


def _installed(spec: RunnerSpec) -> str:
    """The runtime's version installed here ('' where it is not): the script prints the one it runs."""
    for package in PACKAGES.get(spec.runner, ()):
        try:
            return importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            continue
    return ""


def _runtime_text(spec: RunnerSpec) -> str:
    if spec.backend:
        return f"the onnx.backend module {spec.backend}"
    installed = _installed(spec)
    at = f" {installed} (as installed where this was written)" if installed else ""
    if spec.runner == "onnxruntime":
        return f"onnxruntime{at}, {spec.provider.upper()} provider, graph optimizations {spec.optimizations}"
    named = {"reference": "onnx.reference", "openvino": "OpenVINO", "tract": "tract"}[spec.runner]
    return f"{named}{at}" + {"openvino": ", CPU device", "tract": ", CPU"}.get(spec.runner, "")


# --- literals ----------------------------------------------------------------------------------


def dtype_source(np_dtype: np.dtype) -> str:
    """How the script names a dtype: np.float32, ml_dtypes.bfloat16, object."""
    np_dtype = np.dtype(np_dtype)
    if np_dtype.kind == "O":
        return "object"
    if np_dtype == np.bool_:
        return "np.bool_"
    if type(np_dtype.type(0)).__module__.startswith("ml_dtypes") or np_dtype.type.__module__.startswith("ml_dtypes"):
        return f"ml_dtypes.{np_dtype.name}"
    return f"np.{np_dtype.name}"


def array_source(array: np.ndarray, indent: int = 0) -> tuple[str, str]:
    """Python source that makes exactly `array` (dtype, shape and every byte), and a comment to end
    its line with ('' for none): plain values where they say it exactly, else bit patterns viewed as
    the type, with their values in the comment."""
    array = np.asarray(array)
    if array.size == 0:
        return f"np.zeros({tuple(array.shape)!r}, dtype={dtype_source(array.dtype)})", ""
    if array.dtype.name not in ALWAYS_BITS:
        plain = _plain_source(array, indent)
        if plain is not None and _makes(plain, array):
            return plain, ""
    return _bits_source(array, indent)


def array_line(indent: int, before: str, array: np.ndarray | None, after: str = ",") -> str:
    """A line of the script that holds an array: `before`, its source, `after`, then its comment,
    which must end the line."""
    if array is None:
        return f"{' ' * indent}{before}None{after}"
    source, comment = array_source(array, indent)
    return f"{' ' * indent}{before}{source}{after}" + (f"  # {comment}" if comment else "")


def _plain_source(array: np.ndarray, indent: int) -> str | None:
    """The values as numbers (or strings), or None for a type whose values are no plain numbers."""
    kind = array.dtype.kind
    name = array.dtype.name
    if kind == "O":
        tokens = [repr(value) for value in array.reshape(-1)]
    elif kind in "biu" or name in ("int4", "uint4", "int2", "uint2"):
        tokens = [str(int(value)) if kind != "b" else str(bool(value)) for value in array.reshape(-1)]
    elif kind in "fc" and name in ("float32", "float64", "complex64", "complex128"):
        tokens = [_number_token(value) for value in array.reshape(-1)]
    else:
        return None
    return _with_shape(f"np.array({_token_list(tokens, indent)}, dtype={dtype_source(array.dtype)})", array)


def _number_token(value) -> str:
    if isinstance(value, (complex, np.complexfloating)):
        return f"complex({_number_token(value.real)}, {_number_token(value.imag)})"
    number = float(value)
    if number != number:
        return "np.nan"
    if number in (float("inf"), float("-inf")):
        return "np.inf" if number > 0 else "-np.inf"
    return str(value) if isinstance(value, np.floating) else repr(number)  # numpy's shortest digits for its own type


def _bits_source(array: np.ndarray, indent: int) -> tuple[str, str]:
    width = array.dtype.itemsize if array.dtype.itemsize in UNSIGNED_OF_WIDTH else 8
    unsigned = UNSIGNED_OF_WIDTH[width]
    bits = np.ascontiguousarray(array).reshape(-1).view(np.dtype(unsigned.removeprefix("np.")))
    tokens = [f"0x{int(value):0{width * 2}x}" for value in bits]
    shown = ", ".join(_shown(value) for value in array.reshape(-1)[:SHOWN_IN_COMMENT])
    more = ", ..." if array.size > SHOWN_IN_COMMENT else ""
    source = f"np.array({_token_list(tokens, indent)}, dtype={unsigned}).view({dtype_source(array.dtype)})"
    return _with_shape(source, array, always=array.ndim != 1), f"{array.dtype.name} [{shown}{more}]"


def _shown(value) -> str:
    from .values import format_scalar

    return format_scalar(value)


def _with_shape(source: str, array: np.ndarray, always: bool = False) -> str:
    if array.ndim == 1 and not always:
        return source
    if array.ndim == 0 and "view(" not in source:
        return source.replace("np.array([", "np.array(", 1).replace("], dtype=", ", dtype=", 1)
    return f"{source}.reshape({tuple(array.shape)!r})"


def _token_list(tokens: list[str], indent: int) -> str:
    """`[a, b, ...]`, on one line where it fits, else a few tokens a line (never breaking one: a string may hold spaces)."""
    text = "[" + ", ".join(tokens) + "]"
    if len(text) + indent <= LINE - 30:
        return text
    pad, lines, line = " " * (indent + 4), [], ""
    for token in tokens:
        if line and len(pad) + len(line) + len(token) + 2 > LINE:
            lines.append(pad + line.rstrip())
            line = ""
        line += token + ", "
    lines.append(pad + line.rstrip().removesuffix(","))
    return "[\n" + "\n".join(lines) + "\n" + " " * indent + "]"


def _makes(source: str, array: np.ndarray) -> bool:
    """Whether `source` gives back exactly `array`'s dtype, shape and bytes (a decimal may not: a NaN's payload)."""
    try:
        made = eval(source, {"np": np, "ml_dtypes": ml_dtypes})  # noqa: S307 - source conform wrote itself
    except (ValueError, TypeError, OverflowError, SyntaxError):
        return False
    if made.dtype != array.dtype or made.shape != array.shape:
        return False
    if array.dtype.kind == "O":
        return made.tolist() == array.tolist()
    return made.tobytes() == array.tobytes()


# --- the model ---------------------------------------------------------------------------------


def _embedded_arrays(example: Example) -> dict[str, np.ndarray]:
    """The arrays a model may embed (initializers, Constant values, tensor attributes), by name, as the
    case holds them: read back from the model, a string would lose a trailing NUL."""
    found = {name: array for name, array in example.inputs.items() if array is not None}
    found.update({name: np.asarray(value) for name, value in example.attributes.items() if isinstance(value, np.ndarray)})
    found.update({name: value.values for name, value in example.attributes.items() if isinstance(value, SparseValue)})
    return found


def _model_source(model: onnx.ModelProto, arrays: dict[str, np.ndarray]) -> str:
    graph = model.graph
    lines = ["def model() -> onnx.ModelProto:",
             '    """The model conform built for the case: one node, its inputs, its outputs of symbolic dims."""']
    names = []
    for index, node in enumerate(graph.node):
        names.append("node" if node.op_type != "Constant" else f"constant_{index}")
        lines += _node_lines(node, names[-1], arrays)
    lines.append("    graph = helper.make_graph(")
    lines.append(f"        [{', '.join(names)}], {graph.name!r},")
    lines += _list_lines("inputs", [_value_info_source(value) for value in graph.input])
    lines += _list_lines("outputs", [_value_info_source(value) for value in graph.output])
    if graph.initializer:
        lines.append("        initializer=[")
        lines += [array_line(12, "numpy_helper.from_array(", _array_of(tensor, arrays), f", name={tensor.name!r}),")
                  for tensor in graph.initializer]
        lines.append("        ],")
    lines.append("    )")
    opsets = ", ".join(f"helper.make_opsetid({o.domain!r}, {o.version})" for o in model.opset_import)
    lines.append(f"    return helper.make_model(graph, opset_imports=[{opsets}], ir_version={model.ir_version}, "
                 f"producer_name={model.producer_name!r})")
    return "\n".join(lines)


def _list_lines(keyword: str, items: list[str]) -> list[str]:
    if not items:
        return [f"        {keyword}=[],"]
    if len(items) == 1 and len(items[0]) + len(keyword) + 12 <= LINE:
        return [f"        {keyword}=[{items[0]}],"]
    return [f"        {keyword}=[", *(_folded(f"            {item},") for item in items), "        ],"]


def _folded(line: str) -> str:
    """A value info's line, its dims on a line of their own where the whole would be too long."""
    if len(line) <= LINE or ", [" not in line:
        return line
    head, _, dims = line.partition(", [")
    return f"{head},\n{' ' * 16}[{dims}"


def _array_of(tensor: TensorProto, arrays: dict[str, np.ndarray]) -> np.ndarray:
    """The array a model's tensor was made from: the case's own, where it makes the same tensor."""
    array = arrays.get(tensor.name)
    if array is not None and numpy_helper.from_array(array, name=tensor.name) == tensor:
        return array
    return numpy_helper.to_array(tensor)


def _node_lines(node: onnx.NodeProto, name: str, arrays: dict[str, np.ndarray]) -> list[str]:
    """`name = helper.make_node(...)`, after a line for each tensor attribute (its literal's comment ends a line)."""
    lines, arguments = [], [repr(node.op_type), repr(list(node.input)), repr(list(node.output))]
    for attribute in node.attribute:
        if attribute.type == AttributeProto.TENSOR:
            value = re.sub(r"\W", "_", f"{node.output[0]}_{attribute.name}")
            lines.append(array_line(4, f"{value} = numpy_helper.from_array(", _array_of(attribute.t, arrays),
                                    f", name={attribute.t.name!r})"))
        elif attribute.type == AttributeProto.SPARSE_TENSOR:
            value = re.sub(r"\W", "_", f"{node.output[0]}_{attribute.name}")
            lines += _sparse_lines(value, attribute.sparse_tensor, arrays)
        else:
            value = _attribute_source(attribute)
        arguments.append(f"{attribute.name}={value}" if attribute.name.isidentifier() else f"**{{{attribute.name!r}: {value}}}")
    return lines + [f"    {name} = helper.make_node({', '.join(arguments)})"]


def _sparse_lines(value: str, sparse: onnx.SparseTensorProto, arrays: dict[str, np.ndarray]) -> list[str]:
    """`value = helper.make_sparse_tensor(...)` after a line for its values and one for its indices."""
    return [array_line(4, f"{value}_values = numpy_helper.from_array(", _array_of(sparse.values, arrays),
                       f", name={sparse.values.name!r})"),
            array_line(4, f"{value}_indices = numpy_helper.from_array(", numpy_helper.to_array(sparse.indices),
                       f", name={sparse.indices.name!r})"),
            f"    {value} = helper.make_sparse_tensor({value}_values, {value}_indices, {list(sparse.dims)!r})"]


def _attribute_source(attribute: AttributeProto) -> str:
    kind = attribute.type
    if kind == AttributeProto.FLOAT:
        return _float_source(attribute.f)
    if kind == AttributeProto.FLOATS:
        return "[" + ", ".join(_float_source(value) for value in attribute.floats) + "]"
    if kind == AttributeProto.STRING:
        return _string_source(attribute.s)
    if kind == AttributeProto.STRINGS:
        return "[" + ", ".join(_string_source(value) for value in attribute.strings) + "]"
    if kind == AttributeProto.INTS:
        return repr(list(attribute.ints))
    if kind == AttributeProto.INT:
        return repr(attribute.i)
    raise UsageError(f"conform cannot write an attribute of type {AttributeProto.AttributeType.Name(kind)} in a script")


def _float_source(value: float) -> str:
    if value != value or value in (float("inf"), float("-inf")):
        return f"float({str(value)!r})"
    return repr(value)


def _string_source(value: bytes) -> str:
    try:
        return repr(value.decode("utf-8"))
    except UnicodeDecodeError:
        return repr(value)


def _value_info_source(value: onnx.ValueInfoProto) -> str:
    tensor = value.type.tensor_type
    dims = [dim.dim_param if dim.HasField("dim_param") else dim.dim_value for dim in tensor.shape.dim]
    return f"helper.make_tensor_value_info({value.name!r}, TensorProto.{TensorProto.DataType.Name(tensor.elem_type)}, {dims!r})"


# --- inputs and expected outputs ----------------------------------------------------------------


def _feeds_source(feeds: dict[str, np.ndarray]) -> str:
    lines = ["def inputs() -> dict:", '    """What conform fed the graph inputs, exactly."""']
    if not feeds:  # every input embedded in the model
        return "\n".join(lines + ["    return {}"])
    lines += ["    return {", *(array_line(8, f"{name!r}: ", array) for name, array in feeds.items()), "    }"]
    return "\n".join(lines)


def _expected_source(expected: Expected, strict_zero: bool) -> str:
    lines = [f"STRICT_ZERO = {strict_zero}  # whether -0.0 and +0.0 differ (conform's --strict-zero)"]
    if not expected.is_valid:
        lines += [f"RULE = {expected.invalid.rule!r}", f"RULE_SENTENCE = {expected.invalid.sentence!r}"]
        return "\n".join(lines)
    lines.append(f"MAY_REJECT = {expected.may_reject!r}  # why the text also allows rejecting the input, if it does")
    if expected.order_note:
        lines.append(f"# The text leaves the outputs' order free ({expected.order_note}): conform compares a runtime's")
        lines.append("# outputs put in the readings' order; this script compares them as they come.")
    dtypes = [output.dtype for output in expected.readings[0].outputs] if expected.readings else []
    lines.append("# Per output: (ULP budget, its reason, a flushed subnormal allowed, the wrong-answer line), or None: exact.")
    lines.append(f"BUDGETS = {_budgets_source(expected, dtypes)}")
    lines.append("# What the text expects: each reading it allows (a runtime that matches any one keeps to the text);")
    lines.append("# a function body's readings come after the prose's, each output within per-element bounds.")
    lines.append("READINGS = [")
    bodies, outside = body_readings(expected)
    for reading in (*expected.readings, *bodies):
        lines.append(f"    {{\"label\": {reading.label!r},")
        if reading in bodies and outside:
            lines.append(f"     \"disagrees\": {outside!r},  # where the prose's own value lies outside the body's bounds")
        lines += _arrays_lines("outputs", reading.outputs)
        if any(p is not None for p in reading.precise):
            lines += _arrays_lines("precise", reading.precise)
        bounds = _with_element_bounds(expected, reading)
        if any(b is not None for b in bounds):
            lines.append("     # every value from low to high is allowed (and a NaN where nan is True)")
            lines.append("     \"bounds\": [")
            for b in bounds:
                lines += ["        None,"] if b is None else _bounds_lines(b)
            lines.append("     ],")
        if any(mask is not None and mask.any() for mask in reading.free):
            lines.append("     # any value matches where `free` is True: the text leaves the element undefined")
            lines += _arrays_lines("free", reading.free)
        if any(c is not None for c in getattr(reading, "choices", ())):
            lines.append("     # each element may also equal that element of any layer of `choices`: the text leaves the choice open")
            lines += _arrays_lines("choices", reading.choices)
        lines.append("    },")
    return "\n".join(lines + ["]"])


def _with_element_bounds(expected: Expected, reading) -> tuple:
    """A reading's bounds per output, with an output an accumulating op bounds per element
    (bounds.ElementBound) written as the interval its loosest tier allows around the exact value:
    the script judges it by `within_bounds` (its statistical test and overflow values left to conform)."""
    found = list(getattr(reading, "bounds", ()) or ())
    for index, budget in enumerate(expected.budgets):
        precise = reading.precise[index] if index < len(reading.precise) else None
        if budget is None or isinstance(budget, Budget) or precise is None or not hasattr(budget, "widened"):
            continue
        found += [None] * (index + 1 - len(found))
        if found[index] is None:
            low, high = budget.widened(reading.outputs[index])
            found[index] = Bounds(low, high, np.isnan(precise))
    return tuple(found)


def _bounds_lines(bounds) -> list[str]:
    """One output's bounds as a dict of three arrays: the lowest and highest values allowed, and where a NaN is."""
    return ["        {", array_line(12, '"low": ', bounds.low), array_line(12, '"high": ', bounds.high),
            array_line(12, '"nan": ', bounds.nan), "        },"]


def body_readings(expected: Expected) -> tuple[tuple, str]:
    """The readings of the version's function body that differ from the prose's (none where it has
    no body), which conform tries where the prose's readings all miss (compare.judge), and where the
    prose's value lies outside the body's bounds ('': nowhere)."""
    found = getattr(expected, "body_readings", None)
    bodies, outside = found() if callable(found) else ((), "")
    return tuple(bodies), outside


def _arrays_lines(key: str, arrays) -> list[str]:
    return [f"     \"{key}\": [", *(array_line(8, "", array) for array in arrays), "     ],"]


def _budgets_source(expected: Expected, dtypes: list[np.dtype]) -> str:
    """Per output: (ULP budget, its reason, whether a flushed subnormal passes, the wrong-answer line), or None."""
    shown = [f"({b.ulps!r}, {b.reason!r}, {b.flush_subnormals!r}, {_line(b, dt)!r})" if isinstance(b, Budget) else "None"
             for b, dt in zip(expected.budgets, dtypes)]
    return "[" + ", ".join(shown) + "]"


def _line(budget: Budget, np_dtype: np.dtype) -> float:
    """The budget's wrong-answer line in the output's dtype (the budget itself where precision.py has no line)."""
    line = getattr(budget, "wrong_answer_line", None)
    return float(line(np_dtype)) if line is not None else float(budget.ulps)


def _budgeted(expected: Expected) -> bool:
    return expected.is_valid and any(isinstance(b, Budget) for b in expected.budgets)


# --- imports and the runtime --------------------------------------------------------------------


def _imports() -> str:
    lines = ["import sys", "", "import ml_dtypes", "import numpy as np", "import onnx",
             "from onnx import TensorProto, helper, numpy_helper"]
    return "\n".join(lines)


def _runner_source(spec: RunnerSpec) -> str:
    if spec.backend:
        return BACKEND_RUN.replace("BACKEND_SPEC", repr(spec.backend))
    if spec.runner == "onnxruntime":
        from .runners.onnxruntime import PROVIDERS

        off = "    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL\n" \
            if spec.optimizations == "off" else ""
        return (ONNXRUNTIME_RUN.replace("    # OPTIMIZATIONS_OFF\n", off).replace("PROVIDER", repr(PROVIDERS[spec.provider]))
                .replace("OPTIMIZATIONS", spec.optimizations))
    return {"reference": REFERENCE_RUN, "openvino": OPENVINO_RUN, "tract": TRACT_RUN}[spec.runner]


# The runtimes as conform's runners run them (conformance/runners/), in their own words.
ONNXRUNTIME_RUN = '''
RUNTIME = "onnxruntime"


def run(model, feeds):
    """onnxruntime.InferenceSession, graph optimizations OPTIMIZATIONS, one thread (as conform runs it).
    A type numpy lacks (bfloat16, float8, 4-bit) goes in and comes out as an OrtValue of its ONNX type."""
    import ctypes

    import onnxruntime as ort

    print(f"runtime: onnxruntime {ort.__version__}", flush=True)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    # OPTIMIZATIONS_OFF
    session = ort.InferenceSession(model.SerializeToString(), options, providers=[PROVIDER])
    elem_types = [value.type.tensor_type.elem_type for value in [*model.graph.input, *model.graph.output]]
    if all(helper.tensor_dtype_to_np_dtype(elem_type).type.__module__ == "numpy" for elem_type in elem_types):
        return session.run(None, feeds)
    values = {}
    for name, array in feeds.items():
        value = ort.OrtValue.ortvalue_from_shape_and_type(list(array.shape), helper.np_dtype_to_tensor_dtype(array.dtype))
        raw = numpy_helper.from_array(array).raw_data
        ctypes.memmove(value.data_ptr(), raw, len(raw))
        values[name] = value
    answers = session.run_with_ort_values(None, values)
    return [_from_bytes(ctypes.string_at(v.data_ptr(), _size(v)), v.data_type(), v.shape()) for v in answers]


def _size(value):
    count = int(np.prod(value.shape(), dtype=np.int64))
    bits = {"int4": 4, "uint4": 4, "float4e2m1": 4, "int2": 2, "uint2": 2}.get(value.data_type()[7:-1])
    elem_type = getattr(TensorProto, value.data_type()[7:-1].upper())
    return (count * (bits or helper.tensor_dtype_to_np_dtype(elem_type).itemsize * 8) + 7) // 8


def _from_bytes(raw, type_name, shape):
    """An array of an ONNX element type from its packed bytes, as onnx reads a tensor's raw_data."""
    proto = TensorProto(data_type=getattr(TensorProto, type_name[7:-1].upper()), dims=shape, raw_data=raw)
    return numpy_helper.to_array(proto)
'''

REFERENCE_RUN = '''
RUNTIME = "onnx.reference"


def run(model, feeds):
    """onnx.reference.ReferenceEvaluator, numpy's warnings silenced (as conform runs it)."""
    from onnx.reference import ReferenceEvaluator

    print(f"runtime: onnx.reference {onnx.__version__}", flush=True)
    with np.errstate(all="ignore"):
        return ReferenceEvaluator(model).run(None, feeds)
'''

OPENVINO_RUN = '''
RUNTIME = "openvino"
# ONNX element types by OpenVINO's name for them (as conform's runner maps them).
ONNX_OF = {"f32": "FLOAT", "f64": "DOUBLE", "f16": "FLOAT16", "bf16": "BFLOAT16", "i8": "INT8", "i16": "INT16",
           "i32": "INT32", "i64": "INT64", "u8": "UINT8", "u16": "UINT16", "u32": "UINT32", "u64": "UINT64",
           "boolean": "BOOL", "string": "STRING", "f8e4m3": "FLOAT8E4M3FN", "f8e5m2": "FLOAT8E5M2",
           "f8e8m0": "FLOAT8E8M0", "f4e2m1": "FLOAT4E2M1", "i4": "INT4", "u4": "UINT4", "u2": "UINT2"}


def run(model, feeds):
    """OpenVINO's CPU device, INFERENCE_PRECISION_HINT f32 (its default is bf16 on CPUs with bfloat16
    instructions), one infer request; each input an ov.Tensor of its ONNX type holding numpy_helper's bytes,
    each output read in the element type OpenVINO answers in (as conform runs it)."""
    import openvino as ov

    print(f"runtime: openvino {ov.__version__}", flush=True)
    core = ov.Core()
    compiled = core.compile_model(core.read_model(model.SerializeToString()), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    request = compiled.create_infer_request()
    request.infer({name: _tensor(ov, array) for name, array in feeds.items()})
    return [_array(request.get_output_tensor(index)) for index in range(len(compiled.outputs))]


def _tensor(ov, array):
    name = TensorProto.DataType.Name(helper.np_dtype_to_tensor_dtype(array.dtype))
    tensor = ov.Tensor(getattr(ov.Type, {v: k for k, v in ONNX_OF.items()}[name]), list(array.shape))
    if name == "STRING":
        if array.size:
            tensor.str_data = [str(value) for value in array.flat]
        return tensor
    native = array.dtype.type.__module__ == "numpy"
    raw = np.ascontiguousarray(array).tobytes() if native else numpy_helper.from_array(array).raw_data
    if raw:
        tensor.data.reshape(-1).view(np.uint8)[: len(raw)] = np.frombuffer(raw, np.uint8)
    return tensor


def _array(tensor):
    name = ONNX_OF[tensor.get_element_type().get_type_name()]
    shape = tuple(tensor.get_shape())
    if name == "STRING":
        return np.array(list(tensor.str_data.reshape(-1)), dtype=object).reshape(shape)
    count = int(np.prod(shape, dtype=np.int64))
    bits = {"INT4": 4, "UINT4": 4, "FLOAT4E2M1": 4, "UINT2": 2}.get(name)
    elem_type = getattr(TensorProto, name)
    size = (count * (bits or helper.tensor_dtype_to_np_dtype(elem_type).itemsize * 8) + 7) // 8
    raw = np.asarray(tensor.data).reshape(-1).view(np.uint8).tobytes()[:size]
    return numpy_helper.to_array(TensorProto(data_type=elem_type, dims=shape, raw_data=raw))
'''

TRACT_RUN = '''
RUNTIME = "tract"


def run(model, feeds):
    """tract, as its users run a model: loaded, typed and decluttered (into_model), optimized for the
    CPU (into_runnable), then run on the inputs in the model's order (as conform runs it)."""
    import os
    import tempfile

    import tract

    print(f"runtime: tract {tract.version()}", flush=True)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model.onnx")
        onnx.save(model, path)
        inference = tract.onnx().load(path)
    names = [inference.input_name(index) for index in range(inference.input_count())]
    runnable = inference.into_model().into_runnable()
    return [tensor.to_numpy() for tensor in runnable.run([feeds[name] for name in names])]
'''

BACKEND_RUN = '''
RUNTIME = BACKEND_SPEC


def run(model, feeds):
    """The onnx.backend module: prepare(model, "CPU"), then rep.run on the graph's inputs in order (as conform runs it)."""
    import importlib

    module, _, attribute = RUNTIME.partition(":")
    backend = importlib.import_module(module)
    backend = getattr(backend, attribute) if attribute else backend
    print(f"runtime: {RUNTIME} {getattr(backend, '__version__', '')}", flush=True)
    rep = backend.prepare(model, "CPU")
    return list(rep.run([feeds[value.name] for value in model.graph.input]))
'''

# --- judging, in the script ----------------------------------------------------------------------

JUDGING = '''
def show(array):
    """dtype[shape] and the values (the first 20), as conform prints them."""
    array = np.asarray(array)
    values = [_scalar(value) for value in array.reshape(-1)[:20]]
    more = f", ... ({array.size} values)" if array.size > 20 else ""
    return f"{array.dtype.name}{list(array.shape)} [{', '.join(values)}{more}]"


def _scalar(value):
    if isinstance(value, (str, bytes)):
        return repr(value)
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (complex, np.complexfloating)):
        return str(complex(value))
    if isinstance(value, (int, np.integer)) or "int" in type(value).__name__:
        return str(int(value))
    number = float(value)
    return "nan" if number != number else "-0.0" if number == 0 and np.signbit(number) else repr(number)


def what_it_said(error):
    """The runtime's message: its lines (a cause chain's too), up to a backtrace, at most 12."""
    lines = [line.rstrip() for line in str(error).strip().splitlines() if line.strip()]
    lines = lines[:next((i for i, line in enumerate(lines) if "backtrace" in line.lower()), len(lines))][:12]
    return "\\n    ".join(lines) if lines else type(error).__name__


def is_no_tensor(value):
    """Whether an output is something numpy makes no tensor of (onnxruntime's SparseTensor)."""
    array = np.asarray(value)
    return array.dtype == object and array.ndim == 0 and not isinstance(array.item(), (str, bytes))


def as_output(value):
    """An output as conform reads one: numpy's own strings as a string tensor's objects, in this machine's byte order."""
    array = np.asarray(value)
    if array.dtype.kind in "US":
        return array.astype(object)
    return array if array.dtype.isnative else array.astype(array.dtype.newbyteorder("="))


def is_float(dtype):
    try:
        ml_dtypes.finfo(dtype)
        return True
    except (ValueError, TypeError):
        return dtype.kind == "c"


def agree(expected, actual):
    """Per element, whether the runtime's value is the expected one: the same bits, except that any NaN
    matches any NaN and +0 matches -0 (unless STRICT_ZERO)."""
    if expected.dtype.kind == "O":
        return np.array([e == a for e, a in zip(expected.flat, actual.flat)], dtype=bool).reshape(expected.shape)
    size = expected.dtype.itemsize
    same = (np.ascontiguousarray(expected).view(np.uint8).reshape(*expected.shape, size)
            == np.ascontiguousarray(actual).view(np.uint8).reshape(*actual.shape, size)).all(axis=-1)
    if is_float(expected.dtype):
        with np.errstate(invalid="ignore"):
            wide_e, wide_a = (a if a.dtype.kind == "c" else a.astype(np.float64) for a in (expected, actual))
        same |= np.isnan(wide_e) & np.isnan(wide_a)
        if not STRICT_ZERO:
            same |= (wide_e == 0) & (wide_a == 0)
    return same


def within_bounds(bounds, got):
    """Per element, whether the value lies from `low` to `high` (a NaN: where `nan` allows it)."""
    low, high = bounds["low"], bounds["high"]
    if got.dtype.kind in "iub":
        return (got >= low) & (got <= high)
    with np.errstate(invalid="ignore"):
        wide, low, high = (a.astype(np.float64) for a in (got, low, high))
        return np.where(np.isnan(wide), bounds["nan"] | np.isnan(low), (wide >= low) & (wide <= high))


def differences(reading, actual):
    """How many values differ from `reading`, the lines that say where (none: the runtime matches it),
    and whether any is wrong: not only beyond its output's ULP budget but beyond the wrong-answer line."""
    expected = reading["outputs"]
    if len(expected) != len(actual):
        return float("inf"), [f"expected {len(expected)} outputs, got {len(actual)}"], True
    count, lines, wrong = 0, [], False
    for index, (want, got) in enumerate(zip(expected, actual)):
        got = np.asarray(got)
        if want.dtype != got.dtype or want.shape != got.shape:
            count, wrong = float("inf"), True
            lines.append(f"output {index}: expected {want.dtype.name}{list(want.shape)}, got {got.dtype.name}{list(got.shape)}")
            continue
        budget = BUDGETS[index] if index < len(BUDGETS) else None
        precise = reading.get("precise", [None] * len(expected))[index]
        if budget is not None and precise is not None:
            ok, errors = within_budget(precise, want, got, *budget[:3])
        else:
            ok, errors = agree(want, got), None
        bounds = reading.get("bounds", [None] * len(expected))[index]
        if bounds is not None:
            ok, errors = within_bounds(bounds, got), None
        free = reading.get("free", [None] * len(expected))[index]
        if free is not None:
            ok = ok | free
        for layer in reading.get("choices", [None] * len(expected))[index] or ():
            ok = ok | agree(layer, got)
        if ok.all():
            continue
        count += int((~ok).sum())
        if errors is None:
            wrong, beyond = True, " differ"
        else:  # beyond the budget; wrong beyond the line (a double's precise value is itself rounded: half a ULP more)
            line = budget[3] + (0.5 if got.dtype == np.float64 else 0.0)
            past_line = int((~ok & (errors > line)).sum())
            wrong = wrong or past_line > 0
            beyond = (f" beyond {budget[0]:g} ULP (worst {np.max(errors[~ok]):.3g} ULP), "
                      + (f"{past_line} beyond the wrong-answer line {budget[3]:g} ULP" if past_line
                         else f"within the wrong-answer line {budget[3]:g} ULP: imprecise"))
        lines.append(f"output {index}: {int((~ok).sum())} of {ok.size} values{beyond}")
        for where in np.argwhere(~ok)[:10]:
            at = tuple(int(i) for i in where)
            note = f" ({errors[at]:.3g} ULP from {float(precise[at])!r})" if errors is not None else ""
            if bounds is not None:
                nan = " or NaN" if bounds["nan"][at] else ""
                note = f" (allowed: {_scalar(bounds['low'][at])} to {_scalar(bounds['high'][at])}{nan})"
            lines.append(f"  at {list(at)}: expected {_scalar(want[at])}, got {_scalar(got[at])}{note}")
    return count, lines, wrong
'''

BUDGET_JUDGING = '''
def within_budget(precise, rounded, actual, ulps, reason, flush_subnormals):
    """Per element, whether the runtime's value is within `ulps` ULP of the precise value (float64), and
    each error in ULP, by conform's rules: NaN wants a NaN, an infinity the same one, an exact 0 a zero;
    beyond the type's max, its overflow value is right; a double may be half a ULP further (its
    precise value is itself rounded); with flush_subnormals, a zero for a subnormal is allowed."""
    info = ml_dtypes.finfo(actual.dtype)
    top, nmant = float(info.max), int(info.nmant)
    has_inf = bool(np.isinf(np.array(np.inf).astype(actual.dtype)))
    allowed = ulps + (0.5 if actual.dtype == np.float64 else 0.0)
    with np.errstate(all="ignore"):
        wide, want = actual.astype(np.float64), rounded.astype(np.float64)
        errors = np.abs(wide - precise) / _spacing(precise, info)
        overflow = np.isfinite(precise) & (np.abs(precise) > top)
        if overflow.any():  # past the max: both sides counted as at most max + one ULP of max
            ulp_of_max = float(_spacing(np.float64(top), info))
            sign = np.sign(precise)
            overflowed = (wide == sign * np.inf) if has_inf else np.isnan(wide)
            measured = np.where(overflowed, sign * (top + ulp_of_max), np.where(np.isinf(wide), np.nan, wide))
            capped = sign * np.minimum(np.abs(precise), top + ulp_of_max)
            errors = np.where(overflow, np.abs(measured - capped) / ulp_of_max, errors)
        errors = np.where(np.isnan(errors), np.inf, errors)
        ok = errors <= allowed
        ok |= overflow & ((np.isinf(want) & (wide == want)) | (np.isnan(want) & np.isnan(wide)))
        nan, inf, zero = np.isnan(precise), np.isinf(precise), precise == 0
        matched_zero = zero & (wide == 0) & ((np.signbit(wide) == np.signbit(want)) if STRICT_ZERO else True)
        matched = (nan & np.isnan(wide)) | (inf & (wide == precise)) | matched_zero
        special = nan | inf | zero
        errors = np.where(special & matched, 0.0, np.where((nan | inf) & ~matched, np.inf, errors))
        ok = np.where(special, matched, ok)
        if flush_subnormals:
            subnormal = (precise != 0) & (np.abs(precise) < float(info.smallest_normal))
            ok |= subnormal & (wide == 0)
    return ok, errors


def _spacing(magnitude, info):
    """The type's spacing at each |value|: that of the binade holding it (the subnormal spacing below the smallest normal)."""
    magnitude = np.abs(np.asarray(magnitude, dtype=np.float64))
    _, exponent = np.frexp(magnitude)
    binade = np.where(magnitude < float(info.smallest_normal), int(info.minexp), exponent - 1)
    return np.ldexp(1.0, (binade - int(info.nmant)).astype(np.int32))
'''

VALID_MAIN = '''
def main():
    feeds = inputs()
    for name, array in feeds.items():
        print(f"input {name}: {show(array)}")
    try:
        answer = run(model(), feeds)
    except ImportError as error:
        print(f"cannot run: {error} (install {RUNTIME})")
        return 2
    except Exception as error:  # the runtime refused the model or the inputs
        said = what_it_said(error)
        if MAY_REJECT:
            print(f"rejected, which the text allows ({MAY_REJECT}): {said}")
            return 0
        print(f"DIFFERS: the runtime rejected an input the text allows: {said}")
        return 1
    odd = [type(output).__name__ for output in answer if is_no_tensor(output)]
    if odd:  # a sparse tensor (Constant's sparse_value) is no dense output, as the text gives
        print(f"DIFFERS: the runtime returned {', '.join(odd)} where the text gives a dense tensor")
        return 1
    actual = [as_output(output) for output in answer]
    judged = [(reading, *differences(reading, actual)) for reading in READINGS]
    for reading, *_ in judged:
        print(f"expected ({reading['label']}): " + "; ".join(show(output) for output in reading["outputs"]))
    print("actual: " + "; ".join(show(output) for output in actual))
    matching = [reading for reading, count, *_ in judged if count == 0]
    if matching:
        disagrees = matching[0].get("disagrees")
        also = f" (ambiguous: the function body and the prose disagree, {disagrees})" if disagrees else ""
        print(f"AGREES: the runtime's answer matches the reading '{matching[0]['label']}'{also}")
        return 0
    reading, _, lines, wrong = min(judged, key=lambda found: found[1])
    nearest = f" (nearest of {len(READINGS)} readings: '{reading['label']}')" if len(READINGS) > 1 else ""
    # Beyond a budget but nowhere beyond its wrong-answer line, conform's outcome is `imprecise`, not `fail`.
    print(f"{'DIFFERS' if wrong else 'IMPRECISE'}: the runtime's answer departs from the text{nearest}:")
    for line in lines:
        print(f"  {line}")
    return 1
'''

INVALID_MAIN = '''
def main():
    feeds = inputs()
    for name, array in feeds.items():
        print(f"input {name}: {show(array)}")
    print(f"expected: a rejection ({RULE}: {RULE_SENTENCE})")
    try:
        actual = run(model(), feeds)
    except ImportError as error:
        print(f"cannot run: {error} (install {RUNTIME})")
        return 2
    except Exception as error:
        said = what_it_said(error)
        print(f"AGREES: the runtime rejected it: {said}")
        return 0
    print("actual: " + "; ".join(show(as_output(output)) for output in actual))
    print(f"DIFFERS: the runtime accepted an input the text forbids ({RULE})")
    return 1
'''

ENTRY = '''
if __name__ == "__main__":
    sys.exit(main())
'''
