"""Integer scalar arithmetic on block-varying values: `Aff` stays `Aff` under + - * with
uniform integers; anything else materialises one value per block (an array with the
batch axes), or needs a batch to do so (`NeedArray`)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pypto.sim.batch.state import Aff, BatchState, Fallback


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


# by the operator of the scalar op (`pypto.sim.batch.plan.index_symbol`)
SCALAR: dict[str, Callable[[list, BatchState | None], Any]] = {
    "+": _sadd, "-": _ssub, "*": _smul,
    "//": lambda args, st: np.floor_divide(_mat(args[0], st), _divisor(args[1])),
    "%": lambda args, st: np.mod(_mat(args[0], st), _divisor(args[1])),
}

__all__ = ["SCALAR", "NeedArray", "is_int"]
