"""A family's full default run, and the cost of a budgeted comparison.

1. `conform run` on every op of a family (the element-wise ops; the Cast family: Cast, CastLike,
   QuantizeLinear, DequantizeLinear; the reductions; the other ops that accumulate), as a user runs it (isolation on, every version and
   dtype, the default case counts), in a child process: wall time, cases, cases/s, and the peak
   resident memory of the command and of its largest worker.
2. `compare.judge` per case: an exact (bitwise) comparison against a budgeted (ULP) one and one
   bounded per element (bounds.py, as a reduction's output is), on the same 8-element float32 outputs.

Run: python benchmarks/bench_family.py [--family elementwise|cast|reduction|accumulating] [--ops Add,Exp]   (prints figures; asserts nothing)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np


CAST_FAMILY = ("Cast", "CastLike", "QuantizeLinear", "DequantizeLinear")
# The ops that accumulate besides the reductions (issue 64), those covered.
ACCUMULATING = ("CumSum", "CumProd", "MatMul", "Gemm", "MatMulInteger", "QLinearMatMul", "Einsum", "Det", "Softmax",
                "LogSoftmax", "LpNormalization", "BatchNormalization", "InstanceNormalization", "LayerNormalization",
                "GroupNormalization", "RMSNormalization", "MeanVarianceNormalization", "LRN", "NegativeLogLikelihoodLoss",
                "SoftmaxCrossEntropyLoss", "Swish", "SwiGLU", "DynamicQuantizeLinear", "Attention", "RotaryEmbedding",
                "LinearAttention")


def family_ops(family: str) -> list[str]:
    from conformance.reference import covered_ops, for_op
    from conformance.reference.elementwise import family_of

    if family == "cast":
        return [op for op in CAST_FAMILY if op in covered_ops()]
    if family == "reduction":
        from conformance.reference.reduction import REFERENCES

        return [reference.op for reference in REFERENCES]
    if family == "accumulating":
        return [op for op in ACCUMULATING if op in covered_ops()]
    return [op for op in covered_ops() if family_of(for_op(op)) is not None]


def full_run(ops: list[str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        report = os.path.join(folder, "family.json")
        command = [sys.executable, "-m", "conformance", "run", *[a for op in ops for a in ("--op", op)], "--report-json", report]
        started = time.perf_counter()
        finished = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        seconds = time.perf_counter() - started
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        with open(report) as file:
            doc = json.load(file)
    total = doc["summary"]["total"]
    named = f" ({', '.join(ops)})" if len(ops) <= 6 else ""
    print(f"full default run, {len(ops)} ops{named}: {total:,} cases in {seconds:.1f} s = {total / seconds:,.0f} cases/s; "
          f"exit {finished.returncode}; peak RSS of the largest process {peak:.0f} MB")
    print("  outcomes: " + ", ".join(f"{k} {v:,}" for k, v in doc["summary"].items() if k != "total" and v))


def comparison_cost() -> None:
    from conformance.bounds import ElementBound, Tier
    from conformance.compare import judge
    from conformance.precision import Budget
    from conformance.reference.base import Expected, Reading
    from conformance.runners.base import RunOutput

    rng = np.random.default_rng(0)
    precise = rng.standard_normal(8)
    rounded = precise.astype(np.float32)
    exact = Expected(readings=(Reading((rounded,)),))
    budgeted = Expected(readings=(Reading((rounded,), precise=(precise,)),), budgets=(Budget(2, "benchmark"),))
    tiers = (Tier("accumulated in float32", np.abs(precise) * 1e-6, np.ones(8)),)
    bounded = Expected(readings=(Reading((rounded,), precise=(precise,)),),
                       budgets=(ElementBound(tiers, "benchmark", "benchmark", np.ones(8)),))
    answered = RunOutput(outputs=(rounded.copy(),))
    for label, expected in (("exact (bitwise)", exact), ("budgeted (ULP)", budgeted), ("bounded (per element)", bounded)):
        rounds = 20000
        started = time.perf_counter()
        for _ in range(rounds):
            judge(expected, answered)
        per_case = (time.perf_counter() - started) / rounds * 1e6
        print(f"compare.judge, {label:21s} {per_case:6.1f} us a case")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", choices=("elementwise", "cast", "reduction", "accumulating"), default="elementwise")
    parser.add_argument("--ops", help="comma-separated ops (default: every op of the family)")
    args = parser.parse_args()
    ops = args.ops.split(",") if args.ops else family_ops(args.family)
    comparison_cost()
    full_run(ops)


if __name__ == "__main__":
    main()
