"""Random ConstantOfShape cases: shapes with zero dims and the empty shape, and a `value` of the
dtype (its extremes and specials weighted in), or no `value` for float32; a few negative dims."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from ..case import Example
from ..dtypes import dtype
from ..registry import OpVersion
from ..values import pack
from .common import MAX_SIDE, invalid_share, scalars
from .common import dims as dim


@st.composite
def examples(draw, version: OpVersion, binding: dict[str, str]) -> Example:
    dt = dtype(binding["T2"])
    rank = draw(st.integers(0, 6))
    dims = [draw(dim(MAX_SIDE[rank])) for _ in range(rank)]
    if rank and draw(invalid_share()):
        dims[draw(st.integers(0, rank - 1))] = draw(st.integers(-(2**62), -1))
    attributes: dict = {}
    if not (dt.name == "float" and draw(st.booleans())):
        attributes["value"] = pack([draw(scalars(dt))], dt).reshape(1)
    inputs = {"input": np.array(dims, dtype=np.int64)}
    return Example(version, "hypothesis", dict(binding), inputs, attributes, "hypothesis", "T2")
