"""Shrunk cases are kept per runner and input mode: two runtimes' minimal cases never share a folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.execute import runner_folder_name, shrunk_folder
from conformance.runners import RunnerSpec


class _Options:
    """A runner as shrunk_folder sees it: only the options that select it again."""

    name = "backend"

    def __init__(self, *words: str) -> None:
        self.words = list(words)

    def replay_options(self) -> list[str]:
        return self.words


@pytest.mark.parametrize("words, folder", [
    (("--runner", "onnxruntime", "--provider", "cpu", "--optimizations", "on"), "onnxruntime-cpu"),
    (("--runner", "onnxruntime", "--provider", "cuda", "--optimizations", "off"), "onnxruntime-cuda-optimizations-off"),
    (("--runner", "tract"), "tract"),
    (("--backend", "my_runtime.backend", "--refusal", "unsupported=a/b"), "backend-my_runtime.backend"),
    (("--backend", "pkg.mod:Backend"), "backend-pkg.mod_Backend"),
])
def test_each_runner_has_a_folder_of_its_own(words, folder):
    assert runner_folder_name(_Options(*words)) == folder


def test_a_runner_name_never_leaves_its_folder():
    for spec in ("../../etc", "..", "/abs/path", "a/../../b"):
        name = runner_folder_name(_Options("--backend", spec))
        assert "/" not in name and name not in (".", "..") and not name.startswith(".")
        assert Path("root", name).parent == Path("root")


def test_the_folder_is_runner_then_mode_and_shape_option():
    runner = _Options("--runner", "reference")
    assert shrunk_folder(Path("reports/minimal"), runner, "initializer") == Path("reports/minimal/reference/initializer")
    assert shrunk_folder(Path("m"), runner, "input", "static") == Path("m/reference/input-static")


def test_two_runners_and_two_levels_get_different_folders():
    built = [RunnerSpec("reference").make(), RunnerSpec("onnxruntime").make(), RunnerSpec(optimizations="off").make(),
             RunnerSpec(backend="onnxruntime.backend").make()]
    names = [runner_folder_name(runner) for runner in built]
    assert names == ["reference", "onnxruntime-cpu", "onnxruntime-cpu-optimizations-off", "backend-onnxruntime.backend"]
