"""Reshapes (`Family.RESHAPE`: pl.reshape) of values that differ per block: the trailing
axes take the new shape, the batch axes stay.

Partial tiles: block by block numpy's reshape keeps a `ValidArray`'s class but its tag
only when the shape does not change (`reshaped`: the tag kept, else a tag without a
valid shape in every tagged block). The new shape must be static and the result's type
declare no valid shape.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from pypto.ir.nodes import Call
from pypto.ir.types import ShapedType
from pypto.ops.facts import Family
from pypto.ops.registry import OpDef, get
from pypto.sim.batch.codegen import Core
from pypto.sim.batch.frame import BatchFrame
from pypto.sim.batch.masks import BY_BLOCK, Masked, as_masked, tagged, uniform
from pypto.sim.batch.rules.rule import Analysis, Lowering, Rule
from pypto.sim.batch.state import BatchState, Fallback, NotBatchable


def admit(an: Analysis, e: Call, op: OpDef, a: dict, vargs: list | None) -> bool:
    # (a tagged operand: its tag is kept or dropped, `reshaped`)
    assert vargs is not None
    t = e.type
    if any(vargs[1:]) or not isinstance(t, ShapedType) or t.static_shape() is None or \
            t.valid_shape is not None:
        raise NotBatchable("a varying reshape to a dynamic or partially valid shape")
    return True


def core(lo: Lowering, e: Call) -> Core | None:
    opdef = get(e.op)
    x_t = e.args[0].type
    assert isinstance(x_t, ShapedType) and isinstance(e.type, ShapedType)
    in_rank = len(x_t.shape)
    static = e.type.static_shape()
    assert static is not None
    acct = lo.accountant(e, opdef, [0]) if lo.settings.trace else None

    def core(f: BatchFrame, args: list) -> Any:
        x = args[0]
        nb = f.batch.nb
        d = as_masked(x).data if tagged(x) else x
        if type(d) is not np.ndarray:
            raise Fallback("a non-array operand")
        if d.ndim == in_rank + nb:
            r = d.reshape(d.shape[:nb] + static)
        elif d.ndim == in_rank:
            r = d.reshape(static)
        else:
            raise Fallback("unexpected operand rank")
        if acct is not None and f.rec is not None:
            z = (0,) * nb
            acct(f.rec, f.costs, [d[z] if d.ndim > in_rank else d],
                 r[z] if r.ndim > len(static) else r)
        return reshaped(f.batch, x, r, len(static)) if tagged(x) else r

    return Core("args", core, [e.args[0]])


def reshaped(st: BatchState, x: Any, r: np.ndarray, rank: int) -> Any:
    """The tags of `r`, the reshape of the tagged `x` (data reshaped): kept when the tile
    shape is the same, else a tag without a valid shape in every tagged block."""
    m = as_masked(x)
    if m.data.shape[-rank:] == r.shape[-rank:] and m.data.ndim == r.ndim:
        return Masked(r, m.tags, m.every)
    if m.every is not BY_BLOCK:
        return uniform(r, None)
    return Masked(r, dict.fromkeys(m.tags))


RULE = Rule(Family.RESHAPE, admit, core)

__all__ = ["RULE", "reshaped"]
