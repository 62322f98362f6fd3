"""What compiled closures exchange: the environment, control signals, the undefined
marker, scalar casters.

A compiled expression is a closure `f(env) -> value`, a compiled statement a closure
`s(env) -> signal` (None, or BREAK / CONTINUE / RETURN). `env` is a plain dict keyed by
variable name (the IR's naming contract), plus three reserved keys: the task frame the
code runs in (`FRAME`), the values a `Yield` hands on (`"$y"`) and those a `Return`
hands back (`"$ret"`).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pypto.ir.dtypes import DType, Kind

Env = dict[str, Any]
Expr = Callable[[Env], Any]  # a compiled expression
Stmt = Callable[[Env], "str | None"]  # a compiled statement: a signal or None

FRAME = "$frame"  # env key: the `TaskFrame` the code runs in

BREAK = "break"
CONTINUE = "continue"
RETURN = "return"


class _Undef:
    def __repr__(self) -> str:
        return "<undefined>"


UNDEF = _Undef()  # an argument left unset (a parameter the call does not bind)


def pad_mode(v: Any) -> str | None:
    """'zero' / 'max' / 'min' of a `pl.PadValue` (or its name), else None."""
    if v is None:
        return None
    name = getattr(v, "name", None) or getattr(v, "value", None) or str(v)
    name = str(name).lower()
    if name in ("zero", "max", "min"):
        return name
    return None


def scalar_caster(dt: DType) -> Callable[[Any], Any] | None:
    """The Python value of a scalar of dtype `dt` (None: task handles pass unchanged)."""
    if dt.kind is Kind.HANDLE:
        return None
    if dt.kind is Kind.BOOL:
        return bool
    if dt.kind in (Kind.SINT, Kind.UINT):
        return int
    if dt.name == "FP32":
        f32 = np.float32
        return lambda v: float(f32(v))
    npdt = dt.np
    return lambda v: float(np.asarray(v, dtype=np.float64).astype(npdt))


def flatten_deps(vals: list) -> list[int]:
    """Task ids among `vals` (nested lists of ids / arrays of ids), without invalid ones."""
    out: list[int] = []
    for v in vals:
        if v is None or v is UNDEF:
            continue
        if isinstance(v, (list, tuple)):
            out.extend(flatten_deps(list(v)))
        else:
            try:
                i = int(v)
            except (TypeError, ValueError):
                continue
            if i >= 0:
                out.append(i)
    return out


__all__ = [
    "BREAK",
    "CONTINUE",
    "FRAME",
    "RETURN",
    "UNDEF",
    "Env",
    "Expr",
    "Stmt",
    "flatten_deps",
    "pad_mode",
    "scalar_caster",
]
