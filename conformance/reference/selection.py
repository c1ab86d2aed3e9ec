"""Selection: Where (a declaration of the element-wise family).

Where copies elements, so it is computed in the inputs' own dtype (`raw`): every bit of the chosen
element comes back, NaN payloads and -0.0 included, for every dtype (strings and complex too).
"""

from __future__ import annotations

import numpy as np

from .elementwise import Elementwise

# "When True (nonzero), yield X, otherwise yield Y"; the arrays come broadcast to the output's shape.
WHERE = Elementwise(op="Where", raw=lambda condition, x, y: np.where(condition.astype(bool), x, y))

DECLARED = (WHERE,)
