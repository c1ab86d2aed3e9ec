"""Golden data in the ONNX backend-test layout: writing it (`generate`) and checking it (`verify`).

Layout, as onnx's backend tests and onnxruntime's onnx_test_runner read it:

    DIR/test_<name>/model.onnx
    DIR/test_<name>/test_data_set_0/input_<i>.pb, output_<j>.pb     (TensorProto files)
    DIR/manifest.json

Each test directory is written to a temporary sibling and renamed into place, so an interrupted
run never leaves half a test. Tensors are written with onnx's `numpy_helper`, so every dtype
(bfloat16, float8, int4, int2, string...) is stored exactly as onnx stores it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import numpy as np
import onnx
from onnx import numpy_helper

from . import __version__
from .case import Example
from .compare import AMBIGUOUS, PASS, Verdict, judge
from .dtypes import from_numpy
from .errors import ConformError, UsageError
from .execute import DEFAULT_MAX_ELEMENTS, Result, _output_rank, expected_for, too_large
from .model import build
from .reference import covered_ops, for_op
from .reference.base import Expected
from .registry import version_in_force
from .report.json_report import write_atomic
from .runners.base import RunOutput

MANIFEST = "manifest.json"
MAX_FILE_BYTES = 512 * 2**20  # a golden model or tensor file larger than this is refused unread
DATA_SET = "test_data_set_0"
SKIPPED = "skipped"


class GoldenError(ConformError):
    """Unreadable golden data: a missing or corrupt model or .pb, with the path named (exit 2)."""


def test_name(example: Example) -> str:
    """A directory name from the example id: lower-case letters, digits and underscores only."""
    return "test_" + re.sub(r"[^a-z0-9]+", "_", example.id.lower()).strip("_")


def _tensor_bytes(array: np.ndarray, name: str) -> bytes:
    return numpy_helper.from_array(array, name=name).SerializeToString(deterministic=True)


def _test_files(example: Example, expected: Expected) -> dict[str, bytes]:
    built = build(example, for_op(example.op).output_dtype(example), _output_rank(example, expected))
    files = {"model.onnx": built.data}
    for index, value_info in enumerate(built.model.graph.input):
        files[f"{DATA_SET}/input_{index}.pb"] = _tensor_bytes(built.feeds[value_info.name], value_info.name)
    outputs = expected.readings[0].outputs
    for index, (value_info, array) in enumerate(zip(built.model.graph.output, outputs)):
        files[f"{DATA_SET}/output_{index}.pb"] = _tensor_bytes(array, value_info.name)
    return files


def content_hash(files: dict[str, bytes]) -> str:
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + files[name])
    return digest.hexdigest()


def _write_test_dir(out: Path, name: str, files: dict[str, bytes]) -> None:
    """Write into a temporary directory beside the target, then rename it into place."""
    temporary = Path(tempfile.mkdtemp(dir=out, prefix=f".{name}."))
    try:
        for relative, data in files.items():
            path = temporary / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        target = out / name
        if target.exists():
            retired = Path(tempfile.mkdtemp(dir=out, prefix=f".{name}.old."))
            os.replace(target, retired / name)
            os.replace(temporary, target)
            shutil.rmtree(retired)
        else:
            os.replace(temporary, target)
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise


@dataclass(frozen=True)
class GenerateOptions:
    """What `conform generate` writes and where."""

    out: Path
    force: bool = False
    include_ambiguous: bool = False
    seed: int = 0


def generate(examples: Iterable[Example], options: GenerateOptions) -> dict:
    """Write one test directory per valid example and the manifest; return the manifest."""
    examples = list(examples)
    options.out.mkdir(parents=True, exist_ok=True)
    names = [test_name(e) for e in examples]
    if not options.force:
        existing = [n for n in names if (options.out / n).exists()]
        if existing:
            raise UsageError(f"{options.out / existing[0]} already exists ({len(existing)} tests would be replaced); "
                             "use --force to replace them")
    entries = [_generate_one(example, name, options) for example, name in zip(examples, names)]
    manifest = {
        "tool": {"conform": __version__, "onnx": onnx.__version__, "numpy": np.__version__},
        "seed": options.seed,
        "include_ambiguous": options.include_ambiguous,
        "tests": entries,
    }
    write_atomic(options.out / MANIFEST, json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return manifest


def _generate_one(example: Example, name: str, options: GenerateOptions) -> dict:
    refusal = too_large(example, DEFAULT_MAX_ELEMENTS)
    if refusal is not None:
        return {"name": name, "id": example.id, "op": example.op, "version": example.version.since_version,
                "dtype": example.dtype, "source": example.source, "status": refusal}
    expected = expected_for(example)
    entry = {
        "name": name,
        "id": example.id,
        "op": example.op,
        "version": example.version.since_version,
        "dtype": example.dtype,
        "types": example.types,
        "source": example.source,
        "seed": example.origin.get("seed"),
    }
    if not expected.is_valid:
        return entry | {"status": f"{SKIPPED}: invalid input ({expected.invalid.rule}), no output to store"}
    ambiguous = expected.ambiguity or expected.may_reject
    if ambiguous and not options.include_ambiguous:
        return entry | {"status": f"{SKIPPED}: ambiguous spec reading ({ambiguous}); use --include-ambiguous"}
    files = _test_files(example, expected)
    _write_test_dir(options.out, name, files)
    status = "written" + (f" (ambiguous: stores the reading '{expected.readings[0].label}')" if ambiguous else "")
    return entry | {"status": status, "hash": content_hash(files)}


# ---- verify -------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class GoldenTest:
    """One test directory as read from disk."""

    path: Path
    model: onnx.ModelProto
    inputs: list[np.ndarray]
    outputs: list[np.ndarray]


def test_dirs(paths: Iterable[Path]) -> list[Path]:
    """Each path is a test directory (it holds model.onnx) or a folder of them.

    A link inside a given folder that leads out of it is not followed.
    """
    found: list[Path] = []
    for path in paths:
        if (path / "model.onnx").is_file():
            found.append(path)
        elif path.is_dir():
            children = sorted(p for p in path.iterdir()
                              if _inside(p, path) and p.is_dir() and (p / "model.onnx").is_file())
            if not children:
                raise GoldenError(f"{path}: no test directory (no model.onnx) in it")
            found += children
        else:
            raise GoldenError(f"{path}: no such test directory")
    return found


def _inside(path: Path, root: Path) -> bool:
    return path.resolve().is_relative_to(root.resolve())


def _checked_file(path: Path, test: Path) -> Path:
    """The file, if it exists, stays inside its test directory, and is not too large to read."""
    if not path.is_file():
        raise GoldenError(f"{path}: missing")
    if not _inside(path, test):
        raise GoldenError(f"{path}: a link leading out of {test}; not followed")
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise GoldenError(f"{path}: {size:,} bytes, larger than the {MAX_FILE_BYTES:,} conform reads")
    return path


def _load_tensor(path: Path) -> np.ndarray:
    try:
        tensor = onnx.TensorProto()
        tensor.ParseFromString(path.read_bytes())
        return numpy_helper.to_array(tensor)
    except Exception as error:  # any parse or conversion failure is "corrupt", with its path
        raise GoldenError(f"{path}: not a readable TensorProto ({type(error).__name__}: {error})") from None


def read_test(path: Path) -> GoldenTest:
    model_file = _checked_file(path / "model.onnx", path)
    try:
        model = onnx.load_model(str(model_file))
    except Exception as error:  # protobuf errors have no common base worth naming
        raise GoldenError(f"{path / 'model.onnx'}: not a readable model ({type(error).__name__}: {error})") from None
    data = path / DATA_SET
    if not data.is_dir():
        raise GoldenError(f"{data}: missing")
    inputs = [_load_tensor(_checked_file(data / f"input_{i}.pb", path)) for i in range(_count(data, "input"))]
    outputs = [_load_tensor(_checked_file(data / f"output_{i}.pb", path)) for i in range(_count(data, "output"))]
    if len(inputs) != len([i for i in model.graph.input if i.name not in {t.name for t in model.graph.initializer}]):
        raise GoldenError(f"{data}: {len(inputs)} input files for {len(model.graph.input)} graph inputs")
    return GoldenTest(path, model, inputs, outputs)


def _count(folder: Path, kind: str) -> int:
    indices = sorted(int(m.group(1)) for p in folder.iterdir() if (m := re.fullmatch(rf"{kind}_(\d+)\.pb", p.name)))
    if indices != list(range(len(indices))):
        raise GoldenError(f"{folder}: {kind} files are not numbered 0..{len(indices) - 1}")
    return len(indices)


def example_from_test(test: GoldenTest) -> Example | str:
    """The Example a golden test stores, or the reason it is not one conform can check."""
    graph = test.model.graph
    if len(graph.node) != 1 or graph.node[0].domain not in ("", "ai.onnx") or graph.node[0].op_type not in covered_ops():
        return "not a single supported node"
    node = graph.node[0]
    opset = next((o.version for o in test.model.opset_import if o.domain in ("", "ai.onnx")), None)
    if opset is None:
        return "no default-domain opset import"
    version = version_in_force(node.op_type, opset)
    values = {i.name: a for i, a in zip([i for i in graph.input if i.name not in {t.name for t in graph.initializer}], test.inputs)}
    values |= {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    inputs: dict[str, np.ndarray | None] = {}
    for formal, name in zip(version.inputs, node.input):
        if name and name not in values:
            raise GoldenError(f"{test.path}: the node's input '{name}' is neither a graph input nor an initializer")
        inputs[formal.name] = values[name] if name else None
    missing = [f.name for f in version.inputs if not f.optional and inputs.get(f.name) is None]
    if missing:
        raise GoldenError(f"{test.path}: the node lacks its required input(s) {', '.join(missing)}")
    attributes = {a.name: _attribute(a) for a in node.attribute}
    reference = for_op(node.op_type)
    types = _types(version, inputs, attributes, reference.attribute_params)
    return Example(version, test.path.name, types, inputs, attributes, f"golden:{test.path}", reference.dtype_param)


def _attribute(attribute: onnx.AttributeProto):
    value = onnx.helper.get_attribute_value(attribute)
    if isinstance(value, onnx.TensorProto):
        return numpy_helper.to_array(value)
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, (list, tuple)):
        return list(value)
    return value


def _types(version, inputs, attributes, attribute_params) -> dict[str, str]:
    types: dict[str, str] = {}
    for formal in version.inputs:
        array = inputs.get(formal.name)
        if array is not None:
            types.setdefault(formal.type_param, from_numpy(array.dtype).name)
    for name, param in attribute_params.items():
        value = attributes.get(name)
        types.setdefault(param, from_numpy(value.dtype).name if isinstance(value, np.ndarray) else "float")
    return types


def verify_one(path: Path, strict_zero: bool = False) -> Result | tuple[Path, str]:
    """The verdict for one test directory, or (path, reason) when it is skipped."""
    test = read_test(path)
    try:
        example = example_from_test(test)
        if isinstance(example, str):
            return path, example
        expected = expected_for(example)
    except GoldenError:
        raise
    except ConformError as error:
        raise GoldenError(f"{path}: {error.message}") from None
    except Exception as error:  # a parseable model can still be nonsense; the path is what the user needs
        raise GoldenError(f"{path}: cannot be checked: {type(error).__name__}: {error}") from None
    verdict = judge(expected, RunOutput(outputs=tuple(test.outputs)), strict_zero=strict_zero)
    if not expected.is_valid:
        verdict = Verdict(verdict.outcome, f"stores an output for invalid input: {expected.invalid.rule}: {expected.invalid.sentence}")
    return Result(example, expected, verdict, tuple(test.outputs), replay=f"conform verify {path}")


def agreeing(result: Result) -> bool:
    return result.outcome in (PASS, AMBIGUOUS)
