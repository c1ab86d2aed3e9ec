"""`run --write-expect`: one entry a cause, matched by a trait or rule so it holds for other seeds,
and a person's file brought up to date with its comments and layout kept (issue 52)."""

import textwrap

import pytest
import yaml
from typer.testing import CliRunner

from conformance.cli import app
from conformance.reference import for_op

SEEDS = ("1", "3")


@pytest.mark.parametrize("args", [
    ("--op", "Slice", "--examples", "10"),  # every version: it wrote 233 entries, one a case and type binding
    ("--op", "Pow", "--opset", "13", "--examples", "10"),  # hypothesis cases failing for two causes
], ids=["Slice", "Pow-13"])
def test_a_file_written_at_one_seed_holds_at_others(conform, tmp_path, args):
    written = tmp_path / "expect.yaml"
    first = conform("run", *args, "--write-expect", str(written))
    entries = yaml.safe_load(written.read_text())["expectations"]
    assert first.code == 1 and 0 < len(entries) <= 10, entries
    assert all("when" in entry and "case" not in entry for entry in entries), entries  # by cause, no seed's ids
    assert len({entry["when"] for entry in entries}) == len(entries)  # one entry a cause
    for seed in SEEDS:
        later = conform("run", *args, "--seed", seed, "--expect", str(written))
        assert later.code == 0, later.stdout[-3000:]
        assert later.report["summary"]["xfail"] > 0


def test_a_file_written_makes_the_same_run_pass_under_strict(conform, tmp_path):
    # A trait entry is matched by cause: the passing cases that have the trait stay pass, not xpass.
    written = tmp_path / "expect.yaml"
    args = ("run", "--op", "Slice", "--opset", "13", "--examples", "10")
    conform(*args, "--write-expect", str(written))
    again = conform(*args, "--expect", str(written), "--strict")
    assert again.code == 0 and again.report["summary"]["xpass"] == 0 and not again.report["stale_expectations"]


def test_updating_a_file_keeps_its_comments_flow_style_and_key_order(conform, tmp_path):
    path = tmp_path / "expect.yaml"
    text = textwrap.dedent("""\
        # Reviewed each release.
        expectations:
          # Slice: onnxruntime's INT_MAX end
          - reason: reads INT_MAX with a negative step as 'to the start'   # why, first
            when: negative-step-int-max-end
            op: Slice
            versions: [13]
            dtypes: [float]
          # gone since 1.30
          - {op: Slice, match: no_such_case, dtypes: [float], reason: fixed}
          # Clip, by hand
          - {op: Clip, versions: [6], when: nan-bound, reason: rejects a NaN bound}
        """)
    path.write_text(text)
    args = ("run", "--op", "Slice", "--opset", "13", "--no-hypothesis", "--dtype", "float", "--dtype", "uint8")
    first = conform(*args, "--expect", str(path), "--write-expect", str(path))
    written = path.read_text()
    # The first entry as written, its comments and its key order; the stale one gone, the comment
    # before it kept (it may head a group); the other op's entry untouched, in flow style.
    assert written.startswith(text[:text.index("  - {op: Slice, match")])
    assert "no_such_case" not in written
    assert "  # gone since 1.30\n  # Clip, by hand\n  - {op: Clip, versions: [6], when: nan-bound, reason: rejects a NaN bound}\n" in written
    added = written[written.index("  # added by --write-expect"):]
    [entry] = yaml.safe_load(written)["expectations"][2:]
    assert "dtypes" not in entry and entry["when"] == "negative-step-int-max-end" and "  - op: Slice\n" in added
    assert "1 stale" in first.stdout and "written afresh" not in first.stdout
    assert conform(*args, "--expect", str(path), "--strict").code == 0


def test_a_family_no_trait_explains_is_named_in_its_comment_and_the_last_line(tmp_path, monkeypatch):
    # Sign without its traits (int64 values beyond int32 give -1 on onnxruntime's CPU provider): what
    # fails is explained by nothing the reference defines.
    traits = for_op("Sign").traits
    for name in list(traits):
        monkeypatch.delitem(traits, name)
    written = tmp_path / "expect.yaml"
    args = ["run", "--op", "Sign", "--opset", "13", "--dtype", "int64", "--no-yaml", "--examples", "10", "--jobs", "1",
            "--report-json", str(tmp_path / "report.json"), "--write-expect", str(written)]
    result = CliRunner().invoke(app, args)
    last = result.output.rstrip().splitlines()[-1]
    assert last.startswith("1 deviation written to") and "no trait explains 1 family" in last, result.output[-2000:]
    assert "Sign-13 hypothesis cases (fail)" in last
    text = written.read_text()
    assert "no trait of Sign explains them" in text and "minimal case: " in text
    [entry] = yaml.safe_load(text)["expectations"]
    # Held for other seeds by its scope, never by hypothesis ids.
    assert entry["match"] == "hypothesis-*" and entry["versions"] == [13] and entry["dtypes"] == ["int64"] and "case" not in entry
