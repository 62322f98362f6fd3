"""Ops that compute a batch themselves (`Family.FORM`: gather by indices that differ per
block): the op's `Batch.form`, `f(nb, rank, *operands)` over operands with `nb` leading
batch axes, gives the result of all blocks (None when it cannot: the batch gives up),
cast to the op's dtype. Admitted as the ops on trailing axes are (`trailing.admit`).

Partial tiles: none - a tagged operand gives the batch up.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from pypto.ir.nodes import Call
from pypto.ir.types import ShapedType
from pypto.ops.facts import Family
from pypto.ops.registry import OpDef, get
from pypto.sim.batch import masks
from pypto.sim.batch.codegen import Core
from pypto.sim.batch.frame import BatchFrame
from pypto.sim.batch.rules import trailing
from pypto.sim.batch.rules.rule import Analysis, Lowering, Rule, public_operands
from pypto.sim.batch.state import Fallback


def admit(an: Analysis, e: Call, op: OpDef, a: dict, vargs: list | None) -> bool:
    assert vargs is not None
    return trailing.admit(an, e, op, vargs, None)


def core(lo: Lowering, e: Call) -> Core | None:
    opdef = get(e.op)
    batched = opdef.batch.form if opdef.batch is not None else None
    assert batched is not None
    public = public_operands(opdef, e)
    t = e.type
    assert isinstance(t, ShapedType)
    npdt = t.dtype.np
    static = t.static_shape()
    rank = len(t.shape)
    acct = lo.accountant(e, opdef, public) if lo.settings.trace else None

    def core(f: BatchFrame, args: list) -> Any:
        nb = f.batch.nb
        for a in args:
            if isinstance(a, np.ndarray) and type(a) is not np.ndarray:
                raise Fallback("a tagged operand")
        masks.refuse(f.batch, args)
        r = batched(nb, rank, *args)
        if type(r) is not np.ndarray or static is None or r.shape[-rank:] != static:
            raise Fallback("no batched form")
        if r.dtype != npdt:
            r = r.astype(npdt)
        if acct is not None and f.rec is not None:
            z = (0,) * nb
            acct(f.rec, f.costs, [a[z] if isinstance(a, np.ndarray) and a.ndim > rank
                                  else a for a in args], r[z] if r.ndim > rank else r)
        return r

    return Core("args", core, [e.args[i] for i in public])


RULE = Rule(Family.FORM, admit, core)

__all__ = ["RULE"]
