"""Helpers the memory intrinsics share: their arguments by parameter, constants, the
trace's number of a call site."""
from __future__ import annotations

from typing import Any

from pypto.ir.nodes import Attr, Call, Const
from pypto.ir.nodes import Expr as IRExpr
from pypto.ir.span import Span
from pypto.ops.registry import Unit, get
from pypto.sim.trace.trace import Trace


def args_of(e: Call) -> dict[str, IRExpr]:
    """The arguments of the op call `e` by parameter name."""
    return dict(zip(get(e.op).params, e.args))


def is_none(x: Any) -> bool:
    return x is None or (isinstance(x, (Attr, Const)) and x.value is None)


def falsy_const(x: Any) -> bool:
    """Is `x` an absent or false / empty constant argument?"""
    return x is None or x is False or (isinstance(x, (Attr, Const)) and not x.value)


def fmt_window(off: list[int], ext: list[int]) -> str:
    return "[" + ", ".join(f"{o}:{o + e}" for o, e in zip(off, ext)) + "]"


def is_cube(c: Call) -> bool:
    """Is `c` a call of a cube op (its result lives in L0C)?"""
    try:
        return get(c.op).unit is Unit.CUBE
    except KeyError:
        return False


class SiteId:
    """The trace's number of one op call site, remembered for the trace it came from:
    `Trace.site` hashes the span (a dataclass, ~1 us) on every traced access. (Shared by
    concurrent runs: the pair is replaced at once, never half-updated.)"""

    __slots__ = ("key", "memo")

    def __init__(self, span: Span | None, op: str):
        self.key = (span, op)
        self.memo: tuple[Trace, int] | None = None

    def of(self, trace: Trace) -> int:
        memo = self.memo
        if memo is not None and memo[0] is trace:
            return memo[1]
        sid = trace.site(*self.key)
        self.memo = (trace, sid)
        return sid


__all__ = ["SiteId", "args_of", "falsy_const", "fmt_window", "is_cube", "is_none"]
