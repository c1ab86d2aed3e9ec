"""Logical ops on booleans: And, Or, Xor, Not (declarations of the element-wise family).

Their only dtype is bool, so each is its truth table; version 1's `broadcast`/`axis` attributes
are the family's legacy broadcasting rule (reference/broadcast.py).
"""

from __future__ import annotations

import numpy as np

from .comparison import LEGACY_AXIS_TRAIT, legacy_axis_moves_b
from .elementwise import Elementwise

_TRAITS = {LEGACY_AXIS_TRAIT: legacy_axis_moves_b}

AND = Elementwise(op="And", traits=_TRAITS, boolean=np.logical_and)
OR = Elementwise(op="Or", traits=_TRAITS, boolean=np.logical_or)
XOR = Elementwise(op="Xor", traits=_TRAITS, boolean=np.logical_xor)
NOT = Elementwise(op="Not", boolean=np.logical_not)

DECLARED = (AND, OR, XOR, NOT)
