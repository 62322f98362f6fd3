"""Integer scalar arithmetic on block-varying values: `Aff` stays `Aff` under + - * with
uniform integers; anything else materialises one value per block (an array with the
batch axes), or needs a batch to do so (`NeedArray`). (The batching rule of index
arithmetic is `rules.index_scalar`; `index_symbol` is its operator, for the affine forms.)"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pypto.ir.nodes import Call, Const, ListExpr
from pypto.ir.types import ScalarType
from pypto.ops.facts import Family
from pypto.ops.registry import OpDef
from pypto.sim.batch.state import Aff, BatchState, Fallback

# Integer scalar ops on block-varying values: affine ones keep an `Aff` (base + steps),
# floor division and modulo by a constant materialise one value per block. (By the
# Python operator the op implements: its registry `symbol`.)
AFFINE_SYMBOLS = frozenset(("+", "-", "*"))
DIV_SYMBOLS = frozenset(("//", "%"))


def index_symbol(op: OpDef) -> str | None:
    """The operator of a binary scalar op the batch engine computes on varying integers
    (`+ - *` affine, `// %` per block), else None."""
    if op.batch is None or op.batch.family is not Family.INDEX_SCALAR or op.role is not None:
        return None
    return op.symbol


def int_scalar(x: Any) -> bool:
    t = getattr(x, "type", None)
    if isinstance(t, ScalarType):
        return t.dtype.is_int()
    return isinstance(x, int) or (isinstance(x, Const) and isinstance(x.value, int))


def int_result(e: Call) -> bool:
    t = e.type
    return isinstance(t, ScalarType) and t.dtype.is_int()


class NeedArray(Exception):
    """The result differs per block in a way an `Aff` cannot hold, and there is no batch
    to materialise it in."""


def _mat(v: Any, st: BatchState | None) -> Any:
    if st is None:
        raise NeedArray()
    return st.materialize(v)


def is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _sadd(args: list, st: BatchState | None) -> Any:
    a, b = args
    if type(a) is Aff and type(b) is Aff:
        return Aff(a.base + b.base, tuple(x + y for x, y in zip(a.d, b.d)))
    if type(a) is Aff and is_int(b):
        return Aff(a.base + int(b), a.d)
    if type(b) is Aff and is_int(a):
        return Aff(int(a) + b.base, b.d)
    return _mat(a, st) + _mat(b, st)


def _ssub(args: list, st: BatchState | None) -> Any:
    a, b = args
    if type(b) is Aff:
        return _sadd([a, Aff(-b.base, tuple(-x for x in b.d))], st)
    if is_int(b) and type(a) is Aff:
        return Aff(a.base - int(b), a.d)
    return _mat(a, st) - _mat(b, st)


def _smul(args: list, st: BatchState | None) -> Any:
    a, b = args
    if type(a) is Aff and is_int(b):
        return Aff(a.base * int(b), tuple(x * int(b) for x in a.d))
    if type(b) is Aff and is_int(a):
        return Aff(int(a) * b.base, tuple(x * int(a) for x in b.d))
    return _mat(a, st) * _mat(b, st)


def _divisor(b: Any) -> Any:
    # a division by zero has its defined result (pypto.ops.intdiv) and may be reported
    # (the div check): both are the block-by-block path's
    if np.any(np.asarray(b) == 0):
        raise Fallback("a scalar division by zero")
    return b


# by the operator of the scalar op (`index_symbol`)
SCALAR: dict[str, Callable[[list, BatchState | None], Any]] = {
    "+": _sadd, "-": _ssub, "*": _smul,
    "//": lambda args, st: np.floor_divide(_mat(args[0], st), _divisor(args[1])),
    "%": lambda args, st: np.mod(_mat(args[0], st), _divisor(args[1])),
}


def int_const(e: Any) -> int | None:
    """`e` as a Python int when it is an integer literal, else None."""
    if isinstance(e, Const) and type(e.value) is int:
        return e.value
    if type(e) is int:
        return e
    return None


def const_ints(e: Any) -> tuple | None:
    """`e` as a tuple of ints when it is a list of integer literals, else None."""
    items = e.items if isinstance(e, ListExpr) else e if isinstance(e, (list, tuple)) else None
    if items is None:
        return None
    out = []
    for i in items:
        if isinstance(i, Const) and isinstance(i.value, int):
            out.append(i.value)
        elif isinstance(i, int):
            out.append(i)
        else:
            return None
    return tuple(out)


__all__ = [
    "AFFINE_SYMBOLS",
    "DIV_SYMBOLS",
    "SCALAR",
    "NeedArray",
    "const_ints",
    "index_symbol",
    "int_const",
    "int_result",
    "int_scalar",
    "is_int",
]
