"""The sharded CI example (docs/examples/conform-sharded.yml, docs/scaling.md) stays true: every
conform option it uses is one `conform --help` lists, its jobs cover every shard and gate on the
merge, and shards merged give a one-machine run's verdicts. (tests/test_gating.py has the rest of
sharding and merging: disjoint shards whose ids make the whole run, missing, interrupted and
mismatched shards, expectations judged across shards.)"""

import json
import os
import re
import shlex
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / "docs" / "examples" / "conform-sharded.yml"
SHELL_OPERATORS = {"||", "&&", ";", "|", "&", "(", ")"}


def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text())


def run_steps(job: dict) -> list[str]:
    return [step["run"] for step in job.get("steps", []) if "run" in step]


def conform_commands(script: str) -> list[list[str]]:
    """Each `conform ...` command of a step's shell script, as words: a line's first command or one
    after a shell operator (`||`, `&&`, `;`...), up to the operator that ends it."""
    commands = []
    for line in script.splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        command = None
        for word in [";", *lexer]:
            if word in SHELL_OPERATORS:
                command = None
                starts = True
                continue
            if command is not None:
                command.append(word)
            elif starts and word == "conform":
                command = []
                commands.append(command)
            starts = False
    return [command for command in commands if command]


def help_options(subcommand: str) -> set[str]:
    completed = subprocess.run([sys.executable, "-m", "conformance", subcommand, "--help"],
                               capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "200"})
    assert completed.returncode == 0, f"`conform {subcommand} --help` exited {completed.returncode}: {completed.stderr}"
    return set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", completed.stdout))


def test_every_conform_option_the_sharded_workflow_uses_is_in_the_cli_help():
    used = [(job_name, command) for job_name, job in workflow()["jobs"].items()
            for script in run_steps(job) for command in conform_commands(script)]
    subcommands = {command[0] for _, command in used}
    assert {"run", "merge"} <= subcommands, (
        f"{WORKFLOW.relative_to(ROOT)} should run `conform run` and `conform merge`; it runs conform {sorted(subcommands)}")
    known = {subcommand: help_options(subcommand) for subcommand in subcommands}
    unknown = [f"job {job_name}: `conform {command[0]} {option}`"
               for job_name, command in used for option in (word.split("=")[0] for word in command[1:] if word.startswith("--"))
               if option not in known[command[0]]]
    assert not unknown, (f"{WORKFLOW.relative_to(ROOT)} uses options its conform command's --help does not list: "
                         f"{'; '.join(unknown)}. Correct the workflow (and docs/scaling.md) to the options `conform "
                         f"run --help` and `conform merge --help` show.")


def test_the_sharded_workflow_runs_every_shard_and_gates_on_the_merge():
    jobs = workflow()["jobs"]
    [shard_job] = [name for name, job in jobs.items() if "strategy" in job]
    shards = jobs[shard_job]["strategy"]["matrix"]["shard"]
    assert shards == list(range(1, len(shards) + 1)), f"the matrix's shards should be 1..N, each once: {shards}"
    [script] = [s for s in run_steps(jobs[shard_job]) if "conform run" in s]
    assert re.search(r"--shard \$\{\{ *matrix\.shard *\}\}/\$\{\{ *strategy\.job-total *\}\}", script), (
        f"--shard should be K/N with K the matrix's shard and N strategy.job-total (the number of jobs): {script!r}")
    [run] = [c for c in conform_commands(script) if c[0] == "run"]
    assert "--report-json" in run and "--expect" in run, f"each shard should write its JSON report and judge by the expectations file: {script!r}"
    [merge_job] = [name for name, job in jobs.items() if any(c[0] == "merge" for s in run_steps(job) for c in conform_commands(s))]
    merge = jobs[merge_job]
    assert merge.get("needs") == shard_job and "cancelled()" in str(merge.get("if", "")), (
        f"job {merge_job} should run after job {shard_job} (needs: {shard_job}) and also when a shard failed"
        f" (if: ${{{{ !cancelled() }}}}), so that a missing shard fails the merge: needs {merge.get('needs')!r}, if {merge.get('if')!r}")
    [merge_script] = [s for s in run_steps(merge) if "conform merge" in s]
    assert not re.search(r"conform merge[^\n]*(\|\||;|&)", merge_script), (
        f"the merge's exit code must gate the workflow; nothing may follow it in its step: {merge_script!r}")


def verdicts(doc: dict) -> dict:
    """What a run decided: each recorded result's outcome by id and variant, the counted rows
    (`tallies`) summed by everything but their count and ids, the summary, the stale expectations.
    (benchmarks/bench_run_all.py compares the same, on bigger runs.)"""
    records = Counter()
    outcomes = {}
    for record in doc["results"]:
        key = (record["id"], record.get("mode"), record.get("optimizations"))
        records[key] += 1
        outcomes[key] = record["outcome"]
    counted = Counter()
    counted_ids = defaultdict(list)
    for row in doc.get("tallies") or ():
        key = tuple(sorted((name, str(value)) for name, value in row.items() if name not in ("count", "ids")))
        counted[key] += row["count"]
        counted_ids[key] += row.get("ids") or []
    return {"outcome by id and variant": outcomes,
            "records held more than once": sorted(key for key, n in records.items() if n > 1),
            "tallies' counts": dict(counted),
            "tallies' ids": {key: sorted(ids) for key, ids in counted_ids.items() if ids},
            "summary": doc["summary"],
            "stale expectations": sorted((e["source"], e["reason"]) for e in doc.get("stale_expectations") or ())}


def first_differences(one, merged) -> str:
    if isinstance(one, dict) and isinstance(merged, dict):
        keys = [key for key in sorted(set(one) | set(merged), key=str) if one.get(key) != merged.get(key)]
        return "; ".join(f"{key}: one run {one.get(key)!r}, merged {merged.get(key)!r}" for key in keys[:3])
    return f"one run {one!r}, merged {merged!r}"


# Abs in every version (unsupported and ambiguous results) and Slice (fails, lenient cases, and the
# shipped file's xfails) in float: counted rows and whole records both.
SMALL = ("run", "--op", "Abs", "--op", "Slice", "--dtype", "float", "--examples", "3", "--seed", "1",
         "--expect", str(ROOT / "expectations" / "onnxruntime-cpu.yaml"))


def test_two_shards_merged_hold_the_verdicts_of_one_run(conform, tmp_path):
    one = conform(*SMALL, "--report-json", "one.json")
    assert one.code in (0, 1), f"the one-machine run failed to run (exit {one.code}): {one.stderr}"
    for k in (1, 2):
        shard = conform(*SMALL, "--shard", f"{k}/2", "--report-json", f"shard-{k}.json")
        assert shard.code in (0, 1), f"shard {k}/2 failed to run (exit {shard.code}): {shard.stderr}"
    merge = conform("merge", "shard-1.json", "shard-2.json", "--report-json", "merged.json")
    assert merge.code == one.code, (f"conform merge exited {merge.code}, the one run {one.code}: the merge should"
                                    f" judge as the run does. merge said: {merge.stdout[-2000:]}{merge.stderr}")
    whole = json.loads((tmp_path / "one.json").read_text())
    merged = json.loads((tmp_path / "merged.json").read_text())
    assert merged["complete"] and merged["missing_shards"] == [], f"the merge of both shards is incomplete: {merged['missing_shards']}"
    expected, got = verdicts(whole), verdicts(merged)
    assert expected["outcome by id and variant"] or expected["tallies' counts"], "the run recorded and counted nothing: choose cases that run"
    for kind in expected:
        assert got[kind] == expected[kind], (
            f"the merged report's {kind} differ from the one run's ({first_differences(expected[kind], got[kind])}):"
            " conform merge (conformance/report/merge.py) should hold every shard's results once and sum their tallies")
