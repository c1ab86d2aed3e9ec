"""NegativeLogLikelihoodLoss (versions 12, 13, 22) and SoftmaxCrossEntropyLoss (12, 13), from the
schema text in onnx.defs.

Both compute one loss per sample, picked from the class axis (axis 1) by the target (labels):

- NegativeLogLikelihoodLoss: "loss[n][d_1]...[d_k] = -input[n][c][d_1]...[d_k] * weight[c]", the
  weight 1 where none is given;
- SoftmaxCrossEntropyLoss: "l[i][d1]...[dk] = -y[i][c][d1]...[dk] * weights[c]" with "p =
  Softmax(scores), y = Log(p)" along the class axis; its optional second output `log_prob` is y.

"loss is zero for the case when target-value equals ignore_index". Then reduction "none" gives the
per-sample losses, "sum" their sum, and "mean" the sum divided by a denominator the text gives
two ways (see below). Versions differ only in types: NegativeLogLikelihoodLoss-22 and
SoftmaxCrossEntropyLoss-13 add bfloat16 (NegativeLogLikelihoodLoss-13 only reformats the doc).

What the text makes invalid (Invalid rules):

- an input of rank below 2 ("shape (N, C) or (N, C, d1, d2, ..., dk)"), a target whose shape is not
  the input's without its class axis, a weight that is not a 1-D tensor of size C ("If given, it
  has to be a tensor of size C"), a reduction other than none, sum and mean;
- a target value outside [0, C) that is not ignore_index: "Target element value shall be in range
  of [0, C). If ignore_index is specified, it may have a value outside [0, C) and the target values
  should either be in the range [0, C) or have the value ignore_index." An ignore_index outside
  [0, C) is allowed by that sentence.

Readings, where the text is ambiguous:

- the denominator of "mean" when some target equals ignore_index. NegativeLogLikelihoodLoss says
  "'mean': the sum of the output will be divided by the sum of applied weights" (an ignored
  sample's weight is not applied: PyTorch's NLLLoss, and the version's function body, which zeroes
  the ignored weights) but also "mean(loss), if "weight" is not provided, or if weight is provided,
  sum(loss) / sum(weight[target[n][d_1][d_2]...[d_k]]]), for all samples" (every sample counted,
  an ignored one with weight[ignore_index] where that is a class). SoftmaxCrossEntropyLoss says
  "'mean': the sum of the output will be divided by the number of elements in the output" and
  "ReduceMean(L), or if weight is provided: ReduceSum(L) / ReduceSum(W)" with "W[n][d1]...[dk] =
  weights[labels[i][d1]...[dk]]" (every sample), while its body calls NegativeLogLikelihoodLoss,
  which leaves the ignored out. Both readings stand for both ops; the every-sample one only where
  each ignored sample has a weight to count (no weight given, or ignore_index in [0, C)).
- a mean over nothing (every sample ignored, or no samples, or weights summing to exactly 0): the
  text gives 0/0 no value: NaN (IEEE 754 0/0, what the body's Div gives) and 0 are readings.
- SoftmaxCrossEntropyLoss with N or C 0: its function body reshapes the scores to [0, 0, -1], whose
  -1 Reshape cannot infer from no elements: a runtime running the body may reject the case.
- SoftmaxCrossEntropyLoss-13 allows bfloat16, but its body calls NegativeLogLikelihoodLoss-13,
  which does not (bfloat16 came with NegativeLogLikelihoodLoss-22): the body is ill-typed there and
  such a case is judged by the prose alone.

Judging:

- reduction "none" of NegativeLogLikelihoodLoss: exact. The negation is exact and the product of
  two values of a type of at most 24 significant bits is exact in float32 or wider, so any legal
  computation rounds it once to the output: the correctly rounded product.
- "sum": a sum's bound (bounds.sum_tiers: ½ulp(y) + γ(n−1)·Σ|a| per accumulator, float16 in
  float32 or in float16), plus u·|term| per term where a weighted product rounds in the
  accumulator; exactly summable losses (integers, weights of powers of two) judged bitwise.
- "mean": the quotient of that sum and of the weights' sum, each within its bound, evaluated at the
  interval's corners, plus two roundings (a division, or a reciprocal and a product) and the
  output's; no requirement where the weights' sum is not known to be away from 0.
- SoftmaxCrossEntropyLoss's log_prob: LogSoftmax's bound along axis 1 (reference/softmax.py, its
  readings for rows holding +inf or of -inf only); its losses carry |weight| times that bound, the
  product's rounding, and then the sum's or the mean's bound as above.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

import ml_dtypes
import numpy as np

from ..bounds import ElementBound, Tier, accumulators, exact_sums, exactly_summable, gamma, half_ulp, statistical_scale, unit_roundoff
from ..case import Example
from .base import Expected, Invalid, OpReference, Reading, VersionSemantics, readings
from .softmax import answer as softmax_answer

REDUCTIONS = ("none", "sum", "mean")
INPUT_SHAPE = {"NegativeLogLikelihoodLoss": "input: Input tensor of shape (N, C) or (N, C, d1, d2, ..., dk).",
               "SoftmaxCrossEntropyLoss": ("scores: The predicted outputs with shape [batch_size, class_size], or "
                                           "[batch_size, class_size, D1, D2 , ..., Dk], where K is the number of dimensions.")}
TARGET_SHAPE = {"NegativeLogLikelihoodLoss": "target: Target tensor of shape (N) or (N, d1, d2, ..., dk).",
                "SoftmaxCrossEntropyLoss": ("labels: The ground truth output tensor, with shape [batch_size], or "
                                            "[batch_size, D1, D2, ..., Dk], where K is the number of dimensions.")}
WEIGHT_SHAPE = {"NegativeLogLikelihoodLoss": "weight: Optional rescaling weight tensor. If given, it has to be a tensor of size C.",
                "SoftmaxCrossEntropyLoss": ("weights: A manual rescaling weight given to each class. If given, it has to be "
                                            "a 1D Tensor assigning weight to each of the classes.")}
TARGET_RANGE = ("Target element value shall be in range of [0, C). If ignore_index is specified, it may have a value "
                "outside [0, C) and the target values should either be in the range [0, C) or have the value ignore_index.")
REDUCTION = "reduction: Type of reduction to apply to loss: none, sum, mean (default)."
MEAN_OPEN = {
    "NegativeLogLikelihoodLoss": (
        "with an ignored sample, 'mean' is divided by \"the sum of applied weights\" (the ignored left out) or, as "
        "\"mean(loss), if weight is not provided, or if weight is provided, sum(loss) / sum(weight[target[n][d_1]"
        "[d_2]...[d_k]]]), for all samples\", by every sample's"),
    "SoftmaxCrossEntropyLoss": (
        "with an ignored sample, 'mean' is \"ReduceMean(L), or if weight is provided: ReduceSum(L) / ReduceSum(W)\" "
        "over every sample (\"divided by the number of elements in the output\"), or, as the function body's "
        "NegativeLogLikelihoodLoss computes it, divided by the weights of the samples not ignored"),
}
ZERO_OVER_ZERO = "the text gives a mean over no weight (0/0) no value: NaN (IEEE 754 0/0, the body's Div) or 0"
APPLIED = "divided by the sum of the applied weights (ignored samples left out)"
EVERY_SAMPLE = "divided by the weights of every sample, the ignored counted"
SUM_REASON = ("Higham's bound for a sum in any order (γ(n−1)·Σ|a|) in each accumulator a runtime may use, plus each "
              "weighted product's rounding and one rounding of the result; exactly summable losses judged bitwise")
MEAN_REASON = ("the sum of the losses and the sum of the weights each within a sum's bound, their quotient at the "
               "interval's corners, two roundings (division, or reciprocal and product) and the output's")
BODY_RESHAPE = ("the function body reshapes the scores to [0, 0, -1] (Shape3D); with N or C 0 there are no elements and "
                "Reshape cannot infer the -1 ('the value is inferred from the size of the tensor and the remaining "
                "dimensions'), so a runtime running the body may reject the case")
NONE_REASON = "LogSoftmax's bound (reference/softmax.py) times |weight|, the product's rounding and the output's"


@dataclass(frozen=True)
class LossOp:
    """One of the two ops: its input names and whether it takes the log-softmax of its scores."""

    op: str
    scores: str
    target: str
    weight: str
    softmax: bool


@dataclass(frozen=True)
class Problem:
    """A case's inputs, checked: scores or log-probabilities (float64), targets, weights (float64 or
    None), where each sample is ignored, and the reduction."""

    values: np.ndarray
    target: np.ndarray
    weight: np.ndarray | None
    ignored: np.ndarray
    ignore_index: int | None
    reduction: str
    out: np.dtype

    @property
    def classes(self) -> int:
        return self.values.shape[1]

    def picked(self, values: np.ndarray) -> np.ndarray:
        """`values` (the input's shape) at each sample's class, 0 where ignored (target's shape)."""
        safe = np.where(self.ignored, 0, self.target).astype(np.int64)
        if not self.classes:
            return np.zeros(self.target.shape)
        taken = np.take_along_axis(values, np.expand_dims(safe, 1), axis=1)
        return np.where(self.ignored, 0.0, np.squeeze(taken, 1))

    def sample_weights(self) -> np.ndarray:
        """weight[target] per sample (1 without a weight), 0 where ignored: the applied weights."""
        if self.weight is None:
            return np.where(self.ignored, 0.0, 1.0)
        safe = np.clip(np.where(self.ignored, 0, self.target), 0, max(self.classes - 1, 0)).astype(np.int64)
        found = self.weight[safe] if self.classes else np.zeros(self.target.shape)
        return np.where(self.ignored, 0.0, found)

    def every_sample_weights(self) -> np.ndarray | None:
        """weight[target] for every sample, an ignored one counted with weight[ignore_index] (1
        without a weight); None where an ignored sample has no weight to count."""
        if not self.ignored.any():
            return None
        if self.weight is None:
            return np.ones(self.target.shape)
        if not 0 <= int(self.ignore_index) < self.classes:
            return None
        return self.weight[self.target.astype(np.int64)]


class LossSemantics(VersionSemantics):
    """Both ops in every version: the versions differ only in the types their schemas allow."""

    since = 12
    declaration: LossOp

    def expected(self, example: Example) -> Expected:
        with np.errstate(all="ignore"):  # infinities and NaN in the data are answered, not warned about
            return self._answered(example)

    def _answered(self, example: Example) -> Expected:
        found = problem(self.declaration, example)
        if isinstance(found, Invalid):
            return Expected(invalid=found)
        if self.declaration.softmax:
            answered = softmax_cross_entropy(found, self.declaration.op)
            no_rows = found.values.shape[0] * found.values.shape[1] == 0
            return replace(answered, may_reject=BODY_RESHAPE) if no_rows else answered
        return negative_log_likelihood(found, self.declaration.op)


def problem(declaration: LossOp, example: Example) -> Problem | Invalid:
    """The case's inputs, or the rule of the text they break."""
    values = example.inputs[declaration.scores]
    target = example.inputs[declaration.target]
    weight = example.inputs.get(declaration.weight)
    reduction = str(example.attributes.get("reduction", "mean"))
    if isinstance(example.attributes.get("reduction"), bytes):
        reduction = example.attributes["reduction"].decode()
    if reduction not in REDUCTIONS:
        return Invalid("unknown-reduction", REDUCTION)
    if values.ndim < 2:
        return Invalid("input-rank", INPUT_SHAPE[declaration.op])
    if tuple(target.shape) != (values.shape[0], *values.shape[2:]):
        return Invalid("target-shape", TARGET_SHAPE[declaration.op])
    if weight is not None and tuple(weight.shape) != (values.shape[1],):
        return Invalid("weight-shape", WEIGHT_SHAPE[declaration.op])
    ignore_index = example.attributes.get("ignore_index")
    wide_target = target.astype(np.int64)
    ignored = (wide_target == int(ignore_index)) if ignore_index is not None else np.zeros(target.shape, dtype=bool)
    in_range = (wide_target >= 0) & (wide_target < values.shape[1])
    if not (in_range | ignored).all():
        return Invalid("target-out-of-range", TARGET_RANGE)
    return Problem(values.astype(np.float64), wide_target, None if weight is None else weight.astype(np.float64),
                   ignored, None if ignore_index is None else int(ignore_index), reduction, np.dtype(values.dtype))


# --- NegativeLogLikelihoodLoss ---

def negative_log_likelihood(found: Problem, op: str) -> Expected:
    """The losses -input[c]·weight[c], reduced; see the module's docstring."""
    with np.errstate(all="ignore"):
        factor = found.sample_weights() if found.weight is not None else 1.0
        losses = np.where(found.ignored, 0.0, -found.picked(found.values) * factor)
    if found.reduction == "none":
        return Expected(readings=(Reading((losses.astype(found.out),)),))
    errors = {label: _product_error(losses, acc, found) for label, acc in accumulators(found.out)}
    return _reduced(found, op, [("spec", losses, errors)], log_prob=None)


def _product_error(losses: np.ndarray, acc: np.dtype, found: Problem) -> np.ndarray:
    """Per sample, how far a weighted product computed in `acc` may be from the exact one: u·|l|
    where the exact product is not a value of the accumulator, 0 where it is (or no weight)."""
    if found.weight is None:
        return np.zeros(losses.shape)
    with np.errstate(all="ignore"):
        representable = losses.astype(acc).astype(np.float64) == losses
        if np.dtype(acc) == np.float64:
            representable = np.zeros(losses.shape, dtype=bool)  # the reference's own float64 product rounded
    return np.where(representable | ~np.isfinite(losses), 0.0, unit_roundoff(acc) * np.abs(losses))


# --- SoftmaxCrossEntropyLoss ---

def softmax_cross_entropy(found: Problem, op: str) -> Expected:
    """log_prob = LogSoftmax of the scores along axis 1 (with its readings and bound), the losses
    -log_prob[c]·weights[c], reduced."""
    classes = found.classes
    rows = np.moveaxis(found.values, 1, -1).reshape(-1, classes)
    log_softmax = softmax_answer(rows, found.out, log=True, limits=False)
    restore = _restorer(found.values.shape)
    lp_bound = log_softmax.budgets[0]
    lp_tiers = {tier.label: restore(tier.allowed) for tier in lp_bound.tiers}
    shaped_bound = ElementBound(tuple(Tier(t.label, restore(t.allowed), restore(t.ksb)) for t in lp_bound.tiers),
                                lp_bound.formula, lp_bound.reason)
    weights = found.sample_weights()
    options = []
    for reading in log_softmax.readings:
        log_prob = restore(reading.precise[0])
        with np.errstate(all="ignore"):
            losses = np.where(found.ignored, 0.0, -found.picked(log_prob) * (weights if found.weight is not None else 1.0))
            errors = {}
            for label, acc in accumulators(found.out):
                carried = found.picked(lp_tiers[label]) * np.abs(weights if found.weight is not None else 1.0)
                product = 0.0 if found.weight is None else unit_roundoff(acc) * np.abs(np.where(np.isfinite(losses), losses, 0.0))
                errors[label] = np.where(found.ignored, 0.0, carried + product)
        options.append((reading.label, losses, errors, log_prob))
    lp_outputs = {label: log_prob for label, _, _, log_prob in options}
    if found.reduction == "none":
        return _unreduced(found, options, shaped_bound, log_softmax.ambiguity)
    return _reduced(found, op, [(label, losses, errors) for label, losses, errors, _ in options],
                    log_prob=(lp_outputs, shaped_bound), lp_ambiguity=log_softmax.ambiguity)


def _restorer(shape: tuple[int, ...]):
    """From rows (N·D, C) back to the scores' shape (N, C, D...)."""
    moved = (shape[0], *shape[2:], shape[1])

    def restore(values: np.ndarray) -> np.ndarray:
        return np.moveaxis(np.asarray(values).reshape(moved), -1, 1)
    return restore


def _unreduced(found: Problem, options, lp_bound: ElementBound, ambiguity: str | None) -> Expected:
    """reduction 'none': each loss within |weight| times log_prob's bound, the product's rounding and
    the output's own."""
    out = found.out
    first = options[0][1]
    tiers = []
    for label, _ in accumulators(out):
        allowed = np.max([errors[label] for _, _, errors, _ in options], axis=0)
        if found.weight is not None:
            allowed = allowed + half_ulp(first, out)
        tiers.append(Tier(label, allowed, np.ones(first.shape)))
    bound = ElementBound(tuple(tiers), "|w|·(log_prob's bound) + u·|l| + ½ulp(l)", NONE_REASON)
    found_readings = tuple(Reading((losses.astype(out), log_prob.astype(out)), label, precise=(losses, log_prob))
                           for label, losses, _, log_prob in options)
    return Expected(readings=found_readings, ambiguity=ambiguity if len(found_readings) > 1 else None,
                    budgets=(bound, lp_bound))


# --- the reductions both share ---

def _reduced(found: Problem, op: str, options, log_prob=None, lp_ambiguity: str | None = None) -> Expected:
    """'sum' or 'mean' of each option's losses (with their per-sample errors per accumulator), as
    readings of one scalar output (and of log_prob where the op has it)."""
    out = found.out
    candidates = []  # (label, precise scalar, allowed per tier, lp label)
    for label, losses, errors in options:
        total, total_error, magnitude = _sum(losses, errors, out)
        if found.reduction == "sum":
            allowed = {tier: total_error[tier] + half_ulp(total, out) for tier in total_error}
            candidates.append((label, total, allowed, label, magnitude))
            continue
        for divisor_label, sample_weights in _denominators(found):
            weight_errors = {tier: np.zeros(sample_weights.shape) for tier in total_error}
            weight_sum, weight_error, _ = _sum(sample_weights, weight_errors, out)
            for zero_label, y in _quotients(total, weight_sum):
                allowed = {tier: _quotient_error(total, total_error[tier], weight_sum, weight_error[tier], y, acc, out)
                           for tier, acc in accumulators(out)}
                parts = [p for p in (label if label != "spec" else "", divisor_label, zero_label) if p]
                candidates.append(("; ".join(parts) or "spec", y, allowed, label, magnitude))
    bound = _scalar_bound(found, candidates, out)
    made = []
    for label, y, _, lp_label, _ in candidates:
        y = np.asarray(y, dtype=np.float64)  # a 0-d array: compare judges an ndarray's precise value by its budget
        outputs, precise = (y.astype(out),), (y,)
        if log_prob is not None:
            lp = log_prob[0][lp_label]
            outputs, precise = (*outputs, lp.astype(out)), (*precise, lp)
        made.append(Reading(outputs, label, precise=precise))
    chosen = readings(made, "; ".join(a for a in (_ambiguity(found, op, candidates), lp_ambiguity) if a))
    final = tuple(chosen.readings)
    if len(final) == 1:
        final = (Reading(final[0].outputs, precise=final[0].precise),)
    budgets = (bound,) if log_prob is None else (bound, log_prob[1])
    return Expected(readings=final, ambiguity=chosen.ambiguity, budgets=budgets)


def _ambiguity(found: Problem, op: str, candidates) -> str:
    labels = " ".join(label for label, *_ in candidates)
    parts = []
    if EVERY_SAMPLE in labels:
        parts.append(MEAN_OPEN[op])
    if "0/0" in labels:
        parts.append(ZERO_OVER_ZERO)
    return "; ".join(parts)


def _denominators(found: Problem) -> list[tuple[str, np.ndarray]]:
    """The weights a mean divides by: the applied ones, and every sample's where that differs."""
    applied = found.sample_weights()
    every = found.every_sample_weights()
    if every is None:
        return [("", applied)]
    return [(APPLIED, applied), (EVERY_SAMPLE, every)]


def _quotients(total: np.ndarray, weight_sum: np.ndarray) -> list[tuple[str, np.ndarray]]:
    with np.errstate(all="ignore"):
        y = np.asarray(total / weight_sum, dtype=np.float64)
    if weight_sum == 0 and total == 0:
        return [("0/0 is NaN", y), ("0/0 taken as 0", np.zeros(()))]
    return [("", y)]


def _sum(terms: np.ndarray, errors: dict[str, np.ndarray], out: np.dtype):
    """The exact sum of `terms` (float64, any shape), and per accumulator the most a runtime's sum
    in it may be off before the output's rounding (0 where every partial sum is exact)."""
    flat = terms.reshape(1, -1)
    total = exact_sums(flat, out)[0] if flat.shape[1] else np.float64(0.0)
    finite = np.where(np.isfinite(flat), np.abs(flat), 0.0)
    magnitude = finite.sum()
    n = flat.shape[1]
    found = {}
    for label, acc in accumulators(out):
        term_error = float(np.sum(errors[label]))
        exact = term_error == 0 and bool(exactly_summable(flat, acc)[0]) if n else True
        allowed = 0.0 if exact else term_error + gamma(max(n - 1, 0), unit_roundoff(acc)) * (magnitude + term_error)
        if magnitude + term_error > float(ml_dtypes.finfo(acc).max):
            allowed = np.inf  # a partial sum may overflow in some order: no requirement (TOSA)
        found[label] = np.float64(allowed)
    return np.float64(total), found, np.float64(magnitude)


def _quotient_error(total, total_error, weight_sum, weight_error, y, acc, out) -> np.ndarray:
    """How far a runtime's A/B may be from the exact y = A/B, A and B each known within their errors."""
    if not np.isfinite(y) or (weight_sum == 0 and weight_error == 0):
        return np.float64(0.0)  # judged exactly: 0/0 (NaN, or the reading's 0), x/0, the weights' sum known exactly
    if abs(weight_sum) <= weight_error:
        return np.float64(np.inf)  # the weights' sum may be 0 or of either sign: no requirement
    corners = [(total + a) / (weight_sum + b) for a, b in itertools.product((-total_error, total_error), (-weight_error, weight_error))]
    spread = max(abs(c - y) for c in corners)
    return np.float64(spread + 2 * unit_roundoff(acc) * abs(y) * (1 + spread) + half_ulp(np.asarray(y), out))


def _scalar_bound(found: Problem, candidates, out: np.dtype) -> ElementBound:
    """One bound for the scalar output: per accumulator, the loosest over the readings."""
    tiers = []
    for label, acc in accumulators(out):
        allowed = max(float(c[2][label]) for c in candidates)
        tiers.append(Tier(label, np.asarray(allowed), np.ones(())))
    magnitude = max(float(c[4]) for c in candidates)
    formula = "½ulp(y) + γ(n−1)·Σ|l| + Σ u·|w·x|" if found.reduction == "sum" else "corners of (A ± δA)/(B ± δB) + 2u·|y| + ½ulp(y)"
    return ElementBound(tuple(tiers), formula, SUM_REASON if found.reduction == "sum" else MEAN_REASON,
                        statistical_scale(np.asarray(magnitude), out))


# --- traits: the causes a runtime may deviate by ---

def _declaration(example: Example) -> LossOp:
    return REFERENCES_BY_OP[example.op].family


def _checked(example: Example) -> Problem | None:
    found = problem(_declaration(example), example)
    return None if isinstance(found, Invalid) else found


def ignore_index_hit(example: Example) -> bool:
    """Some target equals ignore_index."""
    found = _checked(example)
    return found is not None and bool(found.ignored.any())


def ignore_index_outside(example: Example) -> bool:
    """ignore_index given outside [0, C)."""
    found = _checked(example)
    return found is not None and found.ignore_index is not None and not 0 <= found.ignore_index < found.classes


def all_ignored(example: Example) -> bool:
    """Every sample ignored (or none at all) under a mean: 0/0."""
    found = _checked(example)
    return found is not None and found.reduction == "mean" and not (~found.ignored).any()


def mean_with_ignored(example: Example) -> bool:
    """A mean with some sample ignored: where the text's two denominators part."""
    found = _checked(example)
    return found is not None and found.reduction == "mean" and bool(found.ignored.any())


def nan_or_inf(example: Example) -> bool:
    """A NaN or an infinity among the scores, log-probabilities or weights."""
    declaration = _declaration(example)
    arrays = [example.inputs.get(declaration.scores), example.inputs.get(declaration.weight)]
    return any(a is not None and not np.isfinite(a.astype(np.float64)).all() for a in arrays)


def nan_in_scores(example: Example) -> bool:
    """A NaN among the scores (or log-probabilities): its row's log-softmax is NaN throughout."""
    values = example.inputs.get(_declaration(example).scores)
    return values is not None and bool(np.isnan(values.astype(np.float64)).any())


def empty_samples(example: Example) -> bool:
    """No samples (N or some d is 0), or no classes."""
    declaration = _declaration(example)
    values = example.inputs.get(declaration.scores)
    return values is not None and values.size == 0


def _reference(declaration: LossOp, versions: tuple[int, ...]) -> OpReference:
    semantics = tuple(type(f"{declaration.op}{v}", (LossSemantics,),
                           {"since": v, "declaration": declaration,
                            "__doc__": f"{declaration.op}-{v}: the loss of the text; the versions differ only in types."})
                      for v in versions)
    return OpReference(op=declaration.op, dtype_param="T", semantics=semantics,
                       data_inputs=(declaration.scores, declaration.target, declaration.weight), family=declaration,
                       traits={"ignore-index-hit": ignore_index_hit, "ignore-index-outside": ignore_index_outside,
                               "all-ignored": all_ignored, "mean-with-ignored": mean_with_ignored,
                               "nan-or-inf": nan_or_inf, "nan-in-scores": nan_in_scores, "empty-samples": empty_samples},
                       rules=("unknown-reduction", "input-rank", "target-shape", "weight-shape", "target-out-of-range"))


NLL = LossOp("NegativeLogLikelihoodLoss", "input", "target", "weight", softmax=False)
SCE = LossOp("SoftmaxCrossEntropyLoss", "scores", "labels", "weights", softmax=True)
REFERENCES = (_reference(NLL, (12, 13, 22)), _reference(SCE, (12, 13)))
REFERENCES_BY_OP = {reference.op: reference for reference in REFERENCES}
