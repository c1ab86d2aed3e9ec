"""Golden folders from strangers, and writes that lose nothing (issue 55): tensors whose external
data or dims lie, a missing output, a `generate` into a folder it did not write or that another is
writing, and a `generate` killed at any step of replacing a test."""

import dataclasses
import fcntl
import json
import os
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from conformance import golden
from conformance.errors import UsageError
from conformance.execute import RunOptions, plan, select_examples

SECRET = b"TOPSECRET: the CI token is 01234"  # a file beside the folder that no test may read (8 floats)


def examples(op: str = "Slice", opset: int = 13, count: int = 2) -> list:
    return select_examples(RunOptions(op=op, opset=opset, dtypes=("float",), use_hypothesis=False))[:count]


def one_test(out: Path, op: str = "Slice", opset: int = 13) -> Path:
    """A folder `out` holding one test conform wrote; the test's directory."""
    example = next(e for e in examples(op, opset, 10) if golden._planned(e, "", golden.GenerateOptions(out))[1])
    golden.generate([example], golden.GenerateOptions(out))
    return out / golden.test_name(example)


def stored(path: Path) -> np.ndarray:
    return numpy_helper.to_array(onnx.load_tensor(str(path)))


def external(array: np.ndarray, location: str, **info) -> bytes:
    """A .pb file's bytes: the array's tensor, its data in an external file at `location`."""
    tensor = numpy_helper.from_array(array, "output")
    tensor.ClearField("raw_data")
    tensor.data_location = onnx.TensorProto.EXTERNAL
    for key, value in {"location": location, **info}.items():
        entry = tensor.external_data.add()
        entry.key, entry.value = key, str(value)
    return tensor.SerializeToString()


def unreadable(test: Path) -> str | None:
    """Why `verify` lists the test as unreadable (None: it checked it), and that `run --from`
    refuses it for the same reason."""
    run = golden.verify_unit(golden.GoldenUnit((test,), verify=True), RunOptions(op=""))
    found = [s for s in run.skipped if isinstance(s, golden.Unreadable)]
    if not found:
        assert all(r.outcome == "pass" for r in run.results)
        return None
    with pytest.raises(golden.GoldenError) as refused:
        golden.stored_cases([test])
    assert refused.value.message == found[0].why
    return found[0].why


@pytest.fixture
def secret_in_the_working_folder(tmp_path, monkeypatch) -> Path:
    cwd = tmp_path / "checkout"
    cwd.mkdir()
    (cwd / "secret.txt").write_bytes(SECRET)
    monkeypatch.chdir(cwd)
    return cwd / "secret.txt"


@pytest.mark.parametrize("where, said", [
    (lambda data_set, secret: "secret.txt", "missing"),  # onnx resolved it against the working folder
    (lambda data_set, secret: os.path.relpath(secret, data_set), "not a path inside the test directory"),
    (lambda data_set, secret: str(secret), "not a path inside the test directory"),
], ids=["the-working-folder-s", "up-and-out", "absolute"])
def test_external_data_outside_the_test_directory_is_never_read(tmp_path, secret_in_the_working_folder, where, said):
    test = one_test(tmp_path / "golden")
    data_set = test / "test_data_set_0"
    pb = data_set / "output_0.pb"
    location = where(data_set, secret_in_the_working_folder)
    pb.write_bytes(external(np.zeros(len(SECRET) // 4, np.float32), location))
    why = unreadable(test)
    assert why == f"{pb}: external data '{location}': {said}" + (
        "; conform reads external data only from there" if said != "missing" else "")
    assert "TOPSECRET" not in why


def test_a_link_to_external_data_outside_the_test_directory_is_not_followed(tmp_path, secret_in_the_working_folder):
    test = one_test(tmp_path / "golden")
    (test / "test_data_set_0" / "data.bin").symlink_to(secret_in_the_working_folder)
    pb = test / "test_data_set_0" / "output_0.pb"
    pb.write_bytes(external(np.zeros(len(SECRET) // 4, np.float32), "data.bin"))
    assert unreadable(test) == f"{pb}: external data 'data.bin': a link leading out of {test}; not followed"


def test_external_data_inside_the_test_directory_is_read_no_further_than_its_dims_need(tmp_path):
    test = one_test(tmp_path / "golden")
    pb = test / "test_data_set_0" / "output_0.pb"
    array = stored(pb)
    (test / "test_data_set_0" / "output.bin").write_bytes(b"header" + array.tobytes() + b"trailer")
    pb.write_bytes(external(array, "output.bin", offset=6, length=array.nbytes))
    assert unreadable(test) is None
    [case], _ = golden.stored_cases([test])
    assert np.array_equal(case.example.expect_outputs[0], array)
    # A 2 GiB sparse file: the length it claims is not what the dims need, and dims that need
    # that much are refused unread.
    with open(test / "test_data_set_0" / "output.bin", "wb") as big:
        big.truncate(2**31)
    pb.write_bytes(external(array, "output.bin", length=2**31))
    assert unreadable(test) == f"{pb}: external data 'output.bin': 2,147,483,648 bytes from offset 0, where its dims need {array.nbytes}"
    tensor = onnx.TensorProto()
    tensor.ParseFromString(external(np.zeros(1, np.float32), "output.bin"))
    tensor.dims[:] = [2**29]
    pb.write_bytes(tensor.SerializeToString())
    assert unreadable(test) == (f"{pb}: dims [536870912] make 536,870,912 float values (2,147,483,648 bytes), "
                                "more than the 536,870,912 bytes conform reads")
    pb.write_bytes(external(array, "output.bin", offset=2**31 - 2))
    assert unreadable(test) == f"{pb}: external data 'output.bin': 2,147,483,648 bytes, too few for {array.nbytes} from offset 2,147,483,646"
    (test / "test_data_set_0" / "output.bin").unlink()
    os.mkfifo(test / "test_data_set_0" / "output.bin")  # opened, it would wait for a writer
    assert unreadable(test) == f"{pb}: external data 'output.bin': not a regular file"
    (test / "test_data_set_0" / "output.bin").unlink()
    (test / "test_data_set_0" / "output.bin").mkdir()  # a folder opens for reading, and reading it raises
    assert unreadable(test) == f"{pb}: external data 'output.bin': not a regular file"


def test_a_model_tensor_with_external_data_is_read_from_its_test_directory_into_the_model(tmp_path, secret_in_the_working_folder):
    # ConstantOfShape's `value` attribute, and an initializer: their data never read from the
    # working folder, and the model a runtime is given names no file.
    test = one_test(tmp_path / "golden", "ConstantOfShape", 21)
    model = onnx.load(test / "model.onnx")
    [value] = model.graph.node[0].attribute
    array = numpy_helper.to_array(value.t)
    (test / "value.bin").write_bytes(array.tobytes())
    value.t.CopyFrom(onnx.load_tensor_from_string(external(array, "value.bin")))
    onnx.save(model, test / "model.onnx")
    assert unreadable(test) is None
    [case], _ = golden.stored_cases([test])
    given = onnx.load_from_string(case.built.data)
    assert np.array_equal(numpy_helper.to_array(given.graph.node[0].attribute[0].t), array)
    assert not given.graph.node[0].attribute[0].t.external_data
    model.graph.initializer.append(onnx.load_tensor_from_string(external(np.zeros(len(SECRET) // 4, np.float32), "secret.txt")))
    model.graph.initializer[-1].name = "unused"
    onnx.save(model, test / "model.onnx")
    assert unreadable(test) == f"{test / 'model.onnx'}: tensor 'unused': external data 'secret.txt': missing"


def raw(array: np.ndarray, dims: list[int], data: bytes | None = None) -> bytes:
    tensor = numpy_helper.from_array(array, "output")
    tensor.dims[:] = dims
    if data is not None:
        tensor.raw_data = data
    return tensor.SerializeToString()


def typed(values: list[float], dims: list[int]) -> bytes:
    tensor = onnx.TensorProto(name="output", data_type=onnx.TensorProto.FLOAT, dims=dims)
    tensor.float_data.extend(values)
    return tensor.SerializeToString()


@pytest.mark.parametrize("tensor, said", [
    (raw(np.zeros(0, np.float32), [-1]), "malformed: dims [-1] has a negative dimension"),
    (raw(np.zeros(4, np.float32), [2, -2]), "malformed: dims [2, -2] has a negative dimension"),
    (raw(np.zeros(3, np.float32), [2]), "malformed: float dims [2] need 8 raw_data bytes; it holds 12"),
    (raw(np.zeros(1, np.float32), [2**40, 2**40]), "dims [1099511627776, 1099511627776] make "
                                                   "1,208,925,819,614,629,174,706,176 float values"),
    (typed([1.0, 2.0, 3.0], [2]), "malformed: float dims [2] need 2 values in float_data; it holds 3"),
])
def test_a_tensor_whose_dims_its_data_does_not_fill_is_unreadable(tmp_path, tensor, said):
    test = one_test(tmp_path / "golden")
    pb = test / "test_data_set_0" / "output_0.pb"
    pb.write_bytes(tensor)
    assert unreadable(test).startswith(f"{pb}: {said}")


def test_a_test_without_its_output_is_unreadable_in_verify_and_refused_by_run_from(tmp_path, conform):
    test = one_test(tmp_path / "golden")
    (test / "test_data_set_0" / "output_0.pb").unlink()
    said = f"{test / 'test_data_set_0' / 'output_0.pb'}: missing"
    assert unreadable(test) == said
    verified = conform("verify", str(test))
    assert verified.code == 1 and f"unreadable: {said}\n" in verified.stdout, verified.stdout + verified.stderr
    run = conform("run", "--from", str(test))
    assert run.code == 2 and run.stderr.splitlines() == [f"error: {said}"], run.stderr


def test_a_test_with_more_outputs_than_its_model_is_unreadable_in_verify_and_run_from_alike(tmp_path):
    # verify judged it a fail ("expected 1 outputs, got 2") where run --from refused it.
    test = one_test(tmp_path / "golden")
    data = test / "test_data_set_0"
    (data / "output_1.pb").write_bytes((data / "output_0.pb").read_bytes())
    said = f"{data}: 2 output files for 1 graph outputs"
    assert unreadable(test) == said  # and run --from refuses it so


# ---- generate: folders of its own only, merged manifests, a lock ------------------------------

ONLY_OWN = "generate writes only into a new or empty folder or one it wrote, --force or not: give another --out"


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("force", [False, True])
def test_generate_refuses_a_folder_it_did_not_write(tmp_path, force):
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<html>")
    (site / "app.js").write_text("//")
    with pytest.raises(UsageError) as refused:
        golden.generate(examples(), golden.GenerateOptions(site, force=force))
    assert refused.value.message == f"{site}: not a conform golden folder (it holds 'app.js' and 1 more, and no manifest.json); {ONLY_OWN}"
    (site / "manifest.json").write_text('{"name": "a web app", "icons": []}')
    before = snapshot(site)
    with pytest.raises(UsageError) as refused:
        golden.generate(examples(), golden.GenerateOptions(site, force=force))
    assert refused.value.message == f"{site / 'manifest.json'}: not a manifest conform wrote (no conform version under 'tool'); {ONLY_OWN}"
    assert snapshot(site) == before
    with pytest.raises(UsageError, match=f"^/: not a conform golden folder .*; {ONLY_OWN}$"):
        golden.generate(examples(), golden.GenerateOptions(Path("/"), force=force))


def test_a_hidden_folder_named_as_conform_names_its_own_is_the_users(tmp_path):
    # `.test_notes.bak` matched what a killed generate leaves: the folder counted as empty, and
    # the person's folder was removed with what it held.
    notes = tmp_path / "out" / ".test_notes.bak"
    notes.mkdir(parents=True)
    (notes / "file").write_text("important")
    with pytest.raises(UsageError, match="not a conform golden folder .*'.test_notes.bak'"):
        golden.generate(examples(), golden.GenerateOptions(tmp_path / "out"))
    golden.generate([], golden.GenerateOptions(tmp_path / "mine"))  # a conform folder: generate tidies its leftovers
    os.rename(notes, tmp_path / "mine" / ".test_notes.bak")
    golden.generate(examples(), golden.GenerateOptions(tmp_path / "mine"))
    assert (tmp_path / "mine" / ".test_notes.bak" / "file").read_text() == "important"


def test_generate_into_a_folder_it_did_not_write_is_exit_2_with_one_line(tmp_path, conform):
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "manifest.json").write_text('{"name": "a web app"}')
    refused = conform("generate", "--op", "Clip", "--opset", "13", "--no-hypothesis", "--out", str(tmp_path / "site"), "--force")
    assert refused.code == 2 and refused.stderr.splitlines() == [
        f"error: {tmp_path / 'site' / 'manifest.json'}: not a manifest conform wrote (no conform version under 'tool'); {ONLY_OWN}"]
    assert [p.name for p in (tmp_path / "site").iterdir()] == ["manifest.json"]


def test_a_manifest_that_leads_elsewhere_is_not_conform_own(tmp_path):
    out = tmp_path / "golden"
    one_test(out)
    elsewhere = tmp_path / "elsewhere.json"
    (out / "manifest.json").replace(elsewhere)
    (out / "manifest.json").symlink_to(elsewhere)
    with pytest.raises(UsageError, match="manifest.json: not a manifest conform wrote .not a file: a link"):
        golden.generate(examples(count=3), golden.GenerateOptions(out, force=True))


def test_a_second_generate_adds_to_the_manifest_and_replaces_only_its_own_entries(tmp_path):
    out = tmp_path / "golden"
    slice_run = golden.generate(examples(), golden.GenerateOptions(out))
    clip_run = golden.generate(examples("Clip"), golden.GenerateOptions(out))
    assert clip_run["tests"] == slice_run["tests"] + clip_run.this_run and len(clip_run.this_run) == 2
    again = golden.generate(examples()[1:], golden.GenerateOptions(out, force=True))
    assert again["tests"] == clip_run["tests"] and again == json.loads((out / "manifest.json").read_text())
    assert all((out / t["name"] / "model.onnx").is_file() for t in again["tests"])


def test_the_manifest_is_complete_once_every_run_left_unfinished_is_finished(tmp_path, monkeypatch):
    out = tmp_path / "golden"
    slices = golden.GenerateOptions(out, selection='{"op": "Slice"}')
    real = golden._write_planned

    def interrupted(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(golden, "_write_planned", interrupted)
    stopped = golden.generate(examples(), slices)
    monkeypatch.setattr(golden, "_write_planned", real)
    assert not stopped.finished and stopped["unfinished"] == [{"op": "Slice"}] and not stopped["complete"]
    clips = golden.generate(examples("Clip"), golden.GenerateOptions(out, selection='{"op": "Clip"}'))
    assert clips.finished and not clips["complete"] and clips["unfinished"] == [{"op": "Slice"}]
    finished = golden.generate(examples(), dataclasses.replace(slices, force=True))
    assert finished["complete"] and finished["unfinished"] == [] and len(finished["tests"]) == 4


def test_a_manifest_from_before_runs_were_named_stays_incomplete_if_it_was(tmp_path):
    out = tmp_path / "golden"
    one_test(out)
    manifest = json.loads((out / "manifest.json").read_text())
    del manifest["unfinished"]
    (out / "manifest.json").write_text(json.dumps({**manifest, "complete": False}))
    assert golden.generate(examples("Clip"), golden.GenerateOptions(out))["unfinished"] == [golden.UNRECORDED]
    (out / "manifest.json").write_text(json.dumps(manifest))  # complete, and no runs named
    assert golden.generate(examples("Clip"), golden.GenerateOptions(out, force=True))["complete"]


def test_a_folder_is_locked_while_a_generate_writes_into_it(tmp_path):
    out = tmp_path / "golden"
    one_test(out)
    said = f"{out}: another conform generate is writing into it; wait for it to end, or give another --out"
    held = os.open(out, os.O_RDONLY)  # as a generate in another process holds it
    fcntl.flock(held, fcntl.LOCK_EX)
    with pytest.raises(UsageError) as refused:
        golden.generate(examples("Clip"), golden.GenerateOptions(out))
    os.close(held)
    assert refused.value.message == said
    # With --jobs, the main process holds it while the workers write.
    options = RunOptions(op="Clip", opset=13, dtypes=("float",), use_hypothesis=False)

    def meanwhile(tasks, hand_out):
        with pytest.raises(UsageError, match="another conform generate"):
            golden.generate(examples(), golden.GenerateOptions(out))
        for task in tasks:
            hand_out(golden.write_unit(task, options))

    manifest = golden.generate_units(plan(options), options, golden.GenerateOptions(out), meanwhile)
    assert manifest.finished and len(manifest["tests"]) > len(manifest.this_run)


# ---- a killed generate ----------------------------------------------------------------------

def test_hidden_folders_a_killed_generate_left_are_no_tests_but_a_test_moved_aside_is_read_there(tmp_path):
    out = tmp_path / "golden"
    test = one_test(out)
    half = out / f".{test.name}.k2x_9abc"
    half.mkdir()
    (half / "model.onnx").write_bytes(b"half written")
    (out / "loop").symlink_to(out / "loop")  # followed, it leads nowhere
    assert golden.test_dirs([out]) == [test]
    moved_aside = out / f".{test.name}.old.k2x_9abc" / test.name
    moved_aside.parent.mkdir()
    test.replace(moved_aside)
    assert golden.test_dirs([out]) == [moved_aside]


# What replacing a test does, in order; the child is killed right after the step'th of them.
STEPS = ["the manifest says the run is under way", "the new test's temporary folder made", "the folder the old one goes to made",
         "the old one moved aside", "the new one in place", "the old one removed", "the manifest written"]


@pytest.mark.parametrize("step", range(1, len(STEPS) + 1), ids=STEPS)
def test_a_generate_killed_at_any_step_of_replacing_a_test_loses_no_test(tmp_path, step):
    out = tmp_path / "golden"
    old_example, other = examples(count=2)
    test = one_test(out)
    old = snapshot(test)
    new_example = dataclasses.replace(old_example, inputs={**old_example.inputs, "data": old_example.inputs["data"] + 1})
    new = golden._planned(new_example, test.name, golden.GenerateOptions(out))[1]
    child = os.fork()
    if child == 0:  # killed as SIGKILL kills: nothing after the step runs, no handler, no cleanup
        try:
            done = [0]

            def then_killed(step_of):
                def step_done(*args, **kwargs):
                    result = step_of(*args, **kwargs)
                    done[0] += 1
                    if done[0] == step:
                        os._exit(0)
                    return result
                return step_done

            golden.os.replace = then_killed(os.replace)
            golden.tempfile.mkdtemp = then_killed(golden.tempfile.mkdtemp)
            golden.shutil.rmtree = then_killed(golden.shutil.rmtree)
            golden.generate([new_example], golden.GenerateOptions(out, force=True))
        finally:
            os._exit(1)
    assert os.waitpid(child, 0)[1] == 0, "killed before the last step"
    # Whatever the step, what verify and run --from read of the folder is whole.
    run = golden.verify_unit(golden.GoldenUnit(tuple(golden.test_dirs([out])), verify=True), RunOptions(op=""))
    assert run.results and all(r.outcome == "pass" for r in run.results) and not run.skipped
    assert not json.loads((out / "manifest.json").read_text())["complete"] or step == len(STEPS)
    # The next generate in the folder puts back a test moved aside, and tidies the rest away.
    golden.generate([other], golden.GenerateOptions(out))
    assert snapshot(test) in (old, new)
    assert not [p.name for p in out.iterdir() if p.name.startswith(".")]
