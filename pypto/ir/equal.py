"""Structural equality of IR: same shape, same names, same types, same values, wherever
it was written and whichever `Var` objects it was built from.

Dataclass `==` compares a `Var` by its uid, so two parses of the same text are never
equal. Here a variable is its name and its type, which is what identifies it in our IR:
before ConvertToSSA a name may be bound several times and a use means the binding the
SSA pass resolves by name; after it every name of a function is bound once. Inside a
type a dimension or valid extent is a symbol: a `Var` and a `DynDim` of the same name
and type are the same symbol (the text of a type cannot tell them apart, and both name
an extent). Spans never take part.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any

from pypto.ir.nodes import DynDim, Var
from pypto.ir.types import Type


class _Mismatch(Exception):
    def __init__(self, path: str, left: Any, right: Any):
        super().__init__(path)
        self.path, self.left, self.right = path, left, right


def _same(a: Any, b: Any, path: str, in_type: bool = False) -> None:
    symbols = (Var, DynDim) if in_type else (Var,)
    if isinstance(a, symbols) or isinstance(b, symbols):
        if not (isinstance(a, symbols) and isinstance(b, symbols)) or a.name != b.name:
            raise _Mismatch(path, a, b)
        _same(a.type, b.type, f"{path}.type", True)
        return
    if type(a) is not type(b):
        raise _Mismatch(path, a, b)
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        inner = in_type or isinstance(a, Type)
        for f in dataclasses.fields(a):
            if f.name != "span":
                _same(getattr(a, f.name), getattr(b, f.name), f"{path}.{f.name}", inner)
        return
    if isinstance(a, (tuple, list)):
        if len(a) != len(b):
            raise _Mismatch(f"{path} (length)", len(a), len(b))
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{path}[{i}]", in_type)
        return
    if isinstance(a, dict):
        if list(a) != list(b):
            raise _Mismatch(f"{path} (keys)", list(a), list(b))
        for k in a:
            _same(a[k], b[k], f"{path}[{k!r}]", in_type)
        return
    if isinstance(a, float) and math.isnan(a) and math.isnan(b):
        return
    if a != b:
        raise _Mismatch(path, a, b)


def structural_equal(a: Any, b: Any) -> bool:
    """True when `a` and `b` are the same IR up to spans and the identity of variables."""
    try:
        _same(a, b, "")
    except _Mismatch:
        return False
    return True


def assert_structural_equal(a: Any, b: Any) -> None:
    """Raise `AssertionError` naming the first place where `a` and `b` differ."""
    try:
        _same(a, b, "")
    except _Mismatch as m:
        raise AssertionError(f"IR differs at {m.path or '<root>'}: {m.left!r} != {m.right!r}"
                             ) from None
