"""Random cases of Einsum (reference/einsum.py): equations drawn from the forms the text names —
matrix and batch products, transposes, traces and diagonals (a label repeated in one term), outer
products, sums over everything, ellipsis broadcasting (an operand's ellipsis dims of size 1),
implicit outputs, upper-case labels, spaces, scalar operands, three operands, the readings where
the text is silent (ellipsis dims summed away, an output ellipsis with none on the left) — and
equations drawn at random over a few labels. Label sizes 1 to 4, a 0 now and then (an empty sum or
an empty output); for float16 and bfloat16 now and then a 4096-term sum. Values by the dot-product
draws (strategies/matmul.py): exactly summable values for a large share, random, cancelling and
boundary values. A small share of equations the text forbids: operands miscounted, a label's dims
differing, a character outside the alphabet, two ellipses in a term, an output label no operand
has or repeated, a term longer than its operand's rank.
"""

from __future__ import annotations

from ..dtypes import DType, dtype
from ..registry import OpVersion
from .common import WIDE, Choices, invalid_share, one_in, pick
from .matmul import RECIPES, values
from .movement import made

FORMS = ("ij,jk->ik", "bij,bjk->bik", "ij->ji", "ii", "ii->i", "bii->bi", "i,j->ij", "ij->", "...ij,...jk->...ik",
         "ij,jk", "i,i", "i,i->", "Ij,jK->IK", " ij , jk -> ik ", "ij,jk,kl->il", "ij,ij->ij", "ijk,jl->il",
         "...ii->...i", "...ij", ",ij->ij", "ij,ij,ij->", "abc->cba", "aBc,cD->aBD", "i->", "->", "...->...",
         "ij...->...", "ab,ab->", "ij,j->i", "i,ij->j", "iij->j", "bij,bkj->bik", "...ij->ij", "ij->...ij",
         "a...,...b->ab...", "zA,Az")
LABELS = "abcijkAB"
LONG = 4096


def _random_equation(choices: Choices) -> str:
    """An equation over a few labels: 1 to 3 terms of 0 to 3 labels, explicit or implicit."""
    terms = []
    for _ in range(choices.integer(1, 3)):
        terms.append("".join(pick(choices, LABELS) for _ in range(choices.integer(0, 3))))
    left = ",".join(terms)
    if one_in(choices, 3):
        return left
    present = sorted(set(left))
    output = [label for label in present if choices.integer(0, 1)]
    if len(output) > 1 and choices.integer(0, 1):
        output.reverse()
    return f"{left}->{''.join(output)}"


def _terms(equation: str) -> list[str]:
    return equation.replace(" ", "").split("->")[0].split(",")


def _shapes(choices: Choices, equation: str, dt: DType) -> list[tuple[int, ...]]:
    """Each operand's shape: a size per label, the ellipsis dims (0 to 2, each operand's dim 1 now
    and then, which broadcasts); a 4096-term sum for a 16-bit float now and then."""
    terms = _terms(equation)
    letters = sorted({c for t in terms for c in t if c.isalpha()})
    sizes = {label: choices.integer(1, 4) for label in letters}
    if letters and one_in(choices, 10):
        sizes[pick(choices, letters)] = 0
    single = [label for label in letters if all(t.count(label) <= 1 for t in terms)]
    if dt.kind == "float" and dt.bits == 16 and single and one_in(choices, 8):
        sizes = {label: 1 for label in letters}
        sizes[single[-1]] = LONG  # a label no term repeats: 4096 terms, not a 4096 x 4096 diagonal
    ellipsis = tuple(choices.integer(1, 3) for _ in range(choices.integer(0, 2)))
    if LONG in sizes.values():
        ellipsis = ()
    shapes = []
    for term in terms:
        before, _, after = term.partition("...")
        covered = tuple(1 if one_in(choices, 4) else d for d in ellipsis) if "..." in term else ()
        shapes.append(tuple(sizes[c] for c in before) + covered + tuple(sizes[c] for c in after))
    return shapes


def _broken(choices: Choices, equation: str, shapes: list[tuple[int, ...]]) -> tuple[str, list[tuple[int, ...]]]:
    """An equation (or shapes) the text forbids."""
    form = choices.integer(0, 6)
    if form == 0:
        return equation, shapes[:-1] if len(shapes) > 1 else shapes + [(2,)]
    if form == 1:
        for k, dims in enumerate(shapes):
            if dims:
                return equation, shapes[:k] + [dims[:-1] + (dims[-1] + 1,)] + shapes[k + 1:]
        return equation + ",i", shapes
    if form == 2:
        return equation.replace(",", "1,", 1) if "," in equation else equation + "1", shapes
    if form == 3:
        return "......" + equation, shapes
    if form == 4:
        return equation.split("->")[0] + "->Z", shapes
    if form == 5:
        left = equation.split("->")[0]
        label = next((c for c in left if c.isalpha()), None)
        return (f"{left}->{label}{label}" if label else "->..,", shapes)
    return equation, [dims + (1,) for dims in shapes]


def example(choices: Choices, version: OpVersion, binding: dict[str, str]):
    dt = dtype(binding["T"])
    equation = _random_equation(choices) if one_in(choices, 4) else pick(choices, FORMS)
    shapes = _shapes(choices, equation, dt)
    if invalid_share(choices):
        equation, shapes = _broken(choices, equation, shapes)
    recipe = pick(choices, RECIPES)
    seed = choices.integer(0, WIDE - 1)
    operands = [values(choices, dt, dims, recipe if k == 0 or recipe != "boundary" else "random", seed + k)
                for k, dims in enumerate(shapes)]
    names = [version.inputs[0].instance(k) for k in range(len(operands))]
    return made(version, binding, dict(zip(names, operands)), {"equation": equation})

