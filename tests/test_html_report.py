"""The HTML report as a person triages a run from it: read with html.parser (self-contained, one
heading per family, lenient cases apart from the failures, xfail reasons, the grid's counts) and
loaded in a real browser (chromium --headless --dump-dom), skipped where no chromium is installed."""

from __future__ import annotations

import html
import json
import math
import shutil
import subprocess
import sys
import textwrap
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conformance.report import html as html_report

from conftest import with_test_backends

# A passing case an entry lists (xpass), a version's deviation listed (xfail), and an entry that
# matches nothing (stale); Slice-11's and -13's deviations stay failures, -1's and -10's negative
# axes lenient.
EXPECTATIONS = """\
    expectations:
      - op: Slice
        versions: [10]
        match: "negative_step_int_max_end"
        reason: onnxruntime reads INT_MAX as 'to the start' (a test entry)
      - op: Slice
        versions: [13]
        match: "no_such_case_*"
        reason: an entry that matches nothing
      - op: Slice
        case: Slice-13/negative_end/float/int64
        reason: listed though it passes
    """
XFAIL_REASON = "onnxruntime reads INT_MAX as 'to the start' (a test entry)"


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> tuple[dict, str, Path]:
    """One real run of Slice's case-file cases, every version: its JSON report, its HTML page, the page's path."""
    folder = tmp_path_factory.mktemp("html")
    (folder / "expect.yaml").write_text(textwrap.dedent(EXPECTATIONS))
    completed = subprocess.run(
        [sys.executable, "-m", "conformance", "run", "--op", "Slice", "--no-hypothesis", "--expect", "expect.yaml",
         "--report-json", "r.json", "--html", "r.html"],
        capture_output=True, text=True, cwd=folder, env=with_test_backends(), timeout=600)
    assert completed.returncode == 1, completed.stderr  # Slice-11's and -13's deviations are not listed
    return json.loads((folder / "r.json").read_text()), (folder / "r.html").read_text(), folder / "r.html"


class Page(HTMLParser):
    """What a page is made of: its elements' attributes, each heading's text by section, each grid
    cell's text, and the text of each section (by its id)."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.attributes: list[tuple[str, dict]] = []
        self.headings: dict[str, list[str]] = {}
        self.cells: list[str] = []
        self.sections: dict[str, list[str]] = {}
        self.scripts: list[str] = []
        self._section: str | None = None
        self._heading: list[str] | None = None
        self._cell: list[str] | None = None
        self._in_script = False
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list) -> None:
        attributes = dict(attrs)
        self.attributes.append((tag, attributes))
        if tag == "section":
            self._section = attributes.get("id")
            self.sections[self._section] = []
        elif tag == "h3" and self._section:
            self._heading = []
        elif tag == "td" and "cell" in (attributes.get("class") or "").split():
            self._cell = []
        elif tag == "br" and self._cell is not None:
            self._cell.append("\n")
        elif tag == "script":
            self._in_script = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "section":
            self._section = None
        elif tag == "h3" and self._heading is not None:
            self.headings.setdefault(self._section, []).append("".join(self._heading))
            self._heading = None
        elif tag == "td" and self._cell is not None:
            self.cells.append("".join(self._cell))
            self._cell = None
        elif tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts.append(data)
            return
        for part in (self._heading, self._cell, self.sections.get(self._section) if self._section else None):
            if part is not None:
                part.append(data)

    def text(self, section: str) -> str:
        return "".join(self.sections[section])


def test_the_page_needs_no_network_and_no_other_file(run):
    _, page, _ = run
    parsed = Page(page)
    linked = [(tag, value) for tag, attributes in parsed.attributes for key, value in attributes.items()
              if key in ("src", "href") and value and not value.startswith("#")]
    assert linked == [], "every link stays on the page"
    assert not any(tag == "link" for tag, _ in parsed.attributes)
    assert parsed.scripts and "http" not in "".join(parsed.scripts)


def test_the_grid_counts_every_result_once(run):
    doc, page, _ = run
    counted: Counter = Counter()
    for cell in Page(page).cells:
        for line in cell.split("\n"):
            count, outcome = line.split(" ")
            counted[outcome] += int(count)
    assert counted == Counter({o: n for o, n in doc["summary"].items() if o != "total" and n})


def test_failures_are_one_heading_per_family_and_lenient_cases_are_apart(run):
    doc, page, _ = run
    parsed = Page(page)
    failing = [r for r in doc["results"] if r["outcome"] == "fail"]
    # Without hypothesis cases or unsupported ones, a family is one case-file case of a version.
    cases = {(r["opset"], r["case"]) for r in failing}
    headings = parsed.headings["failures"]
    assert len(headings) == len(set(headings)) == len(cases) == 5
    assert {(int(h.split("/")[0].split("-")[1]), h.split("/")[1]) for h in headings} == cases
    failures = parsed.text("failures")
    assert f"Failures ({len(failing)} cases in {len(cases)} families)" in failures
    lenient = [r["id"] for r in doc["results"] if r["outcome"] == "lenient"]
    assert lenient and not any(case in failures for case in lenient)
    assert all(case in parsed.text("lenient") for case in lenient)
    assert all(r["id"] in failures for r in failing), "each member of a family is named in it"


def test_a_family_shows_its_inputs_expected_actual_and_replay_and_each_message_once(run):
    doc, page, _ = run
    first = next(r for r in doc["results"] if r["outcome"] == "fail")
    failures = Page(page).text("failures")
    data = first["inputs"]["data"]
    size = math.prod(data["shape"])
    assert size > 12, "the input is abbreviated"
    shown = ", ".join(str(v) for v in data["data"][:12])
    assert f"{data['dtype']}{data['shape']} [{shown}, ... ({size} values)]" in failures
    assert "expected (spec)" in failures and "actual" in failures
    family = _family_html(page, first["id"])
    assert family.count(html.escape(first["replay"])) == 1
    assert family.count(html.escape(first["message"])) == 1
    headline = first["mismatches"][0][0]
    assert headline in first["message"] and family.count(html.escape(headline)) == 1, "the message is not said twice"


def _family_html(page: str, case: str) -> str:
    """The page's text of the family whose heading names `case`."""
    start = page.index(f"{html.escape(case)}</h3>")
    end = page.find('<details class="family', start)
    return page[start:end if end > 0 else len(page)]


def test_xfail_and_xpass_give_the_expectations_reason_and_line_and_stale_entries_are_listed(run):
    doc, page, _ = run
    parsed = Page(page)
    xfail = parsed.text("xfail")
    assert f"reason: {XFAIL_REASON} (expect.yaml:2)" in " ".join(xfail.split())
    assert "expected deviation:" not in xfail, "the reason is said once, apart from the message"
    assert "Slice-10/" in xfail, "the counted xfail cases are named by op version and dtype"
    xpass = parsed.text("xpass")
    assert "listed though it passes" in xpass and "expect.yaml:10" in xpass
    stale = parsed.text("stale")
    assert "expect.yaml:6" in stale and "an entry that matches nothing" in stale
    assert [e["source"] for e in doc["stale_expectations"]] == ["expect.yaml:6"]


def test_the_environment_is_tables_and_coverage_comes_last(run):
    doc, page, _ = run
    parsed = Page(page)
    environment = parsed.text("environment")
    assert doc["runner"]["version"] in environment and doc["tool"]["onnx"] in environment
    assert "{'" not in page and "{&#x27;" not in page, "no Python dict printed"
    assert list(parsed.sections)[-1] == "coverage"
    assert "Precision profile" not in page  # Slice's outputs are judged bitwise


def test_the_controls_wait_for_the_script_and_each_op_is_collapsed(run):
    _, page, _ = run
    parsed = Page(page)
    controls = next(attributes for tag, attributes in parsed.attributes if attributes.get("id") == "controls")
    assert "hidden" in controls, "without the script the controls would do nothing"
    ops = [attributes for tag, attributes in parsed.attributes if tag == "details" and "op" in attributes.get("class", "")]
    assert len(ops) == 1 and "open" not in ops[0]


def test_a_report_without_runner_or_profile_renders(run):
    doc, _, _ = run
    merged = {key: value for key, value in doc.items() if key not in ("runner", "tool", "options", "precision")}
    page = html_report.render(merged)
    assert "not recorded" in Page(page).text("environment")


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(_chromium() is None, reason="no chromium installed (.ci/run installs Debian's chromium where apt-get can)")
def test_a_browser_shows_the_grid_the_families_the_reasons_and_the_filters(run):
    doc, _, path = run
    dumped = subprocess.run([_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", path.as_uri()],
                            capture_output=True, text=True, timeout=120)
    assert dumped.returncode == 0, dumped.stderr[-2000:]
    seen = Page(dumped.stdout)
    controls = next(attributes for tag, attributes in seen.attributes if attributes.get("id") == "controls")
    assert "hidden" not in controls, "the script ran and showed the filters"
    boxes = {attributes["value"] for tag, attributes in seen.attributes if tag == "input" and attributes.get("type") == "checkbox"}
    assert boxes == {o for o, n in doc["summary"].items() if o != "total" and n}
    assert any(tag == "input" and attributes.get("id") == "search" for tag, attributes in seen.attributes)
    assert sum(int(line.split(" ")[0]) for cell in seen.cells for line in cell.split("\n")) == doc["summary"]["total"]
    assert any(h.startswith("fail: Slice-13/negative_step_int_max_end/") for h in seen.headings["failures"])
    assert XFAIL_REASON in seen.text("xfail")
    assert "ops and families shown" in dumped.stdout
