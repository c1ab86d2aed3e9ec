"""Built-in references, found by scanning this package: one module per op, or a family's module.

A module says which ops it references by the names it defines, read when it is imported:
`REFERENCE` (one `OpReference`) or `REFERENCES` (several), and `DECLARED` (the element-wise
family's `Elementwise` declarations, see elementwise.py). Nothing here lists modules or ops:
adding an op is adding `reference/<op>.py` ending in `REFERENCE = OpReference(...)`, or an
`Elementwise` to the `DECLARED` of its family's module; `conform list` then shows it.

The registry imports a module when it needs it, so that importing this package, or asking for one
op, does not import and build every op: `for_op` looks in the module named after the op first
(`ConstantOfShape` -> constant_of_shape.py), then in the others one at a time, in the order of
their names, until one declares it; a family op's `OpReference` is built when first asked for.
`covered_ops`, and an op no module declares, import them all. The order of the ops is fixed
(the modules sorted by name, then each module's own order), so the same seed gives the same bytes.
"""

from __future__ import annotations

import pkgutil
import re
from functools import cache
from importlib import import_module
from typing import TYPE_CHECKING

from ..errors import UsageError

if TYPE_CHECKING:
    from .base import OpReference

_ops_of: dict[str, tuple[str, ...]] = {}  # module name -> the ops it declares, in its order (once imported)
_declared: dict[str, tuple[str, object]] = {}  # op -> (its module's name, its OpReference or Elementwise)
_by_lower_name: dict[str, str] = {}  # op.lower() -> op
_built: dict[str, OpReference] = {}  # by op name as asked: a case's op is asked for several times per case


@cache
def module_names() -> tuple[str, ...]:
    """This package's modules, sorted by name (a private one, `_name`, left out)."""
    return tuple(sorted(found.name for found in pkgutil.iter_modules(__path__) if not found.name.startswith("_")))


def module_named_after(op: str) -> str:
    """The module an op of its own lives in: its name in snake case (ConstantOfShape -> constant_of_shape)."""
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", op)).lower()


def covered_ops() -> list[str]:
    """Every op some module declares, in the registry's fixed order (imports every module)."""
    for name in module_names():
        _scan(name)
    return [op for name in module_names() for op in _ops_of[name]]


def for_op(op: str) -> OpReference:
    """The reference for an op name (case-insensitive); UsageError listing the covered ops."""
    found = _built.get(op)
    if found is not None:
        return found
    declared = _find(op)
    if declared is None:
        raise UsageError(f"unknown op '{op}' (covered: {', '.join(covered_ops())})")
    found = _built[op] = _built.get(declared) or _reference_of(_declared[declared][1])
    _built[declared] = found
    return found


def declaring_module(op: str) -> str:
    """The name of the module that declares `op` (a covered op, as it is spelt)."""
    return _declared[for_op(op).op][0]


def _find(op: str) -> str | None:
    """The covered op `op` names, importing modules until one declares it; None when none does."""
    for name in dict.fromkeys([module_named_after(op), *module_names()]):
        if name in module_names():
            _scan(name)
            if op in _declared or op.lower() in _by_lower_name:
                return op if op in _declared else _by_lower_name[op.lower()]
    return None


def _scan(name: str) -> None:
    """Import module `name` (once) and note the ops it declares."""
    if name in _ops_of:
        return
    declarations = _declarations(import_module(f"{__name__}.{name}"))
    for declaration in declarations:
        op = declaration.op
        if op in _declared:
            raise ValueError(f"{op} is declared twice: in reference/{_declared[op][0]}.py and in reference/{name}.py")
        _declared[op] = (name, declaration)
        _by_lower_name.setdefault(op.lower(), op)
    _ops_of[name] = tuple(d.op for d in declarations)


def _declarations(module) -> tuple:
    """What a module declares: its REFERENCES (or its one REFERENCE), then its DECLARED."""
    own = getattr(module, "REFERENCES", None)
    if own is None:
        own = (module.REFERENCE,) if hasattr(module, "REFERENCE") else ()
    return (*own, *getattr(module, "DECLARED", ()))


def _reference_of(declaration) -> OpReference:
    """An OpReference as declared, or built from a family declaration (an `Elementwise`)."""
    from .base import OpReference

    if isinstance(declaration, OpReference):
        return declaration
    from .elementwise import reference  # only for a family op: an op of its own needs none of it

    return reference(declaration)


__all__ = ["covered_ops", "declaring_module", "for_op", "module_named_after", "module_names"]
