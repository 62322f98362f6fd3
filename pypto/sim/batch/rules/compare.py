"""Comparisons (`Family.COMPARE`): `< <= > >= == !=` and `and / or / not` of integer or
bool scalars that differ per block - one bool per block, the condition of an `if` that
runs predicated (`pypto.sim.batch.predicate`). numpy's operators on the per-block
values (`int` / `Aff` operands materialised as int64, as every offset is) are exactly
the Python operators' results on integers; other operands give the batch up.

A call whose operands are not integer / bool scalars is not this rule's (`claims`).
No partial tiles: these are scalars.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pypto.ir.nodes import Call
from pypto.ir.types import ScalarType
from pypto.ops.facts import Family
from pypto.ops.registry import OpDef, get
from pypto.sim.batch.codegen import Core
from pypto.sim.batch.rules.index_scalar import bscalar
from pypto.sim.batch.rules.rule import Analysis, Lowering, Rule
from pypto.sim.batch.scalars import int_scalar
from pypto.sim.batch.state import BatchState, Fallback

COMPARES: dict[str, Callable] = {
    "<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
    "==": np.equal, "!=": np.not_equal, "and": np.logical_and, "or": np.logical_or,
}


def _flag(x: Any) -> bool:
    t = getattr(x, "type", None)
    return int_scalar(x) or (isinstance(t, ScalarType) and t.dtype.name == "BOOL")


def claims(op: OpDef, e: Call) -> bool:
    """Is `e` a comparison or logical op of integer / bool scalars?"""
    if not isinstance(e.type, ScalarType):
        return False
    if op.symbol == "not":
        return len(e.args) == 1 and _flag(e.args[0])
    return op.symbol in COMPARES and len(e.args) == 2 and all(_flag(x) for x in e.args)


def admit(an: Analysis, e: Call, op: OpDef, a: dict, vargs: list | None) -> bool:
    return True  # (one bool per block: a condition, `predicate`)


def compare(op: OpDef) -> Callable[[list, BatchState], Any]:
    """The comparison / logical op `op` on per-block values: a bool array over the batch
    axes."""
    fn = np.logical_not if op.symbol == "not" else COMPARES[op.symbol or ""]

    def run(args: list, st: BatchState) -> Any:
        vals = [np.asarray(st.materialize(a)) for a in args]
        for v in vals:
            if v.dtype.kind not in "iub":
                raise Fallback("a comparison of non-integers")
        return fn(*vals)

    return run


def core(lo: Lowering, e: Call) -> Core | None:
    return bscalar(lo, e, compare(get(e.op)))


RULE = Rule(Family.COMPARE, admit, core)

__all__ = ["COMPARES", "RULE", "claims", "compare"]
