"""Values shared by the interpreter modules: control signals, the undefined marker, the
execution context impls receive, scalar casters."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from pypto.ir.dtypes import Kind
from pypto.ir.nodes import FunctionKind

BREAK = "break"
CONTINUE = "continue"
RETURN = "return"


class _Undef:
    def __repr__(self) -> str:
        return "<undefined>"


UNDEF = _Undef()

_REGION_KINDS = (FunctionKind.INCORE, FunctionKind.AIC, FunctionKind.AIV, FunctionKind.GROUP)


class ExecContext:
    """What impls with `wants_ctx=True` receive as `ctx=`."""

    __slots__ = ("machine", "in_region", "block_idx", "block_num", "subblock_idx", "platform",
                 "task_id", "span")

    def __init__(self, machine: Any):
        self.machine = machine
        self.in_region = False
        self.block_idx = 0
        self.block_num = 1
        self.subblock_idx = 0
        self.platform = machine.platform
        self.task_id = -1
        self.span = None

    def new_task_id(self) -> int:
        return self.machine.dummy_task((), self.span)

    def barrier(self) -> None:
        self.machine.barrier(self.span)


def _pyint(v: Any) -> int:
    return int(v)


def _ints(vals: Any) -> list:
    return [int(v) for v in vals]


def _pad_mode(v: Any) -> str | None:
    if v is None:
        return None
    name = getattr(v, "name", None) or getattr(v, "value", None) or str(v)
    name = str(name).lower()
    if name in ("zero", "max", "min"):
        return name
    return None


def _scalar_caster(dt: Any) -> Callable | None:
    if dt.kind is Kind.HANDLE:
        return None
    if dt.kind is Kind.BOOL:
        return bool
    if dt.kind in (Kind.SINT, Kind.UINT):
        return _pyint
    if dt.name == "FP32":
        f32 = np.float32
        return lambda v: float(f32(v))
    npdt = dt.np
    return lambda v: float(np.asarray(v, dtype=np.float64).astype(npdt))


def _flatten_deps(vals: list) -> list:
    out = []
    for v in vals:
        if v is None or v is UNDEF:
            continue
        if isinstance(v, (list, tuple)):
            out.extend(_flatten_deps(list(v)))
        else:
            try:
                i = int(v)
            except (TypeError, ValueError):
                continue
            if i >= 0:
                out.append(i)
    return out
