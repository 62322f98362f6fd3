"""Integer scalar arithmetic computed per block (`Family.PER_BLOCK`: `pl.min` of a tile
size and the rows left, `pl.max`; and any op's call on integer scalars to an integer
scalar - a cast of a gathered index, a shift - that no scalar family claims first).

The op's impl and cast run on each block's operands, as block-by-block execution
computes them; the value is an integer array over the batch axes - or one call over
integer arrays for all blocks where the op's `Batch.int_array` gives one (min / max,
integer casts). It may reach window offsets (not affine: those windows are gathered
block by block, and a written tensor's footprints are then not provably disjoint).
No side effects, no division (a divisor of zero is the block-by-block path's to
report). No partial tiles: these are scalars.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from pypto.ir.nodes import Attr, Call, Const
from pypto.ops.facts import Family
from pypto.ops.registry import OpDef, get
from pypto.sim.batch.codegen import Core
from pypto.sim.batch.frame import BatchFrame
from pypto.sim.batch.rules.rule import Analysis, Lowering, Rule, public_operands
from pypto.sim.batch.scalars import int_result, int_scalar
from pypto.sim.batch.state import scalar_at


def claims(op: OpDef, e: Call) -> bool:
    """Is `e` integer scalar arithmetic a batch computes block by block: integer scalar
    operands (and constants: a cast takes its dtype as one) and result, an op with no
    role, side effect or divisor?"""
    if op.role is not None or op.impl is None or op.wants_ctx or op.divisor is not None or \
            op.writes is not None or not int_result(e):
        return False
    return all(int_scalar(x) or isinstance(x, Attr) or
               (isinstance(x, Const) and not isinstance(x.value, int)) for x in e.args)


def admit(an: Analysis, e: Call, op: OpDef, a: dict, vargs: list | None) -> bool:
    return True


def core(lo: Lowering, e: Call) -> Core | None:
    opdef = get(e.op)
    impl = opdef.impl
    assert impl is not None
    public = public_operands(opdef, e)
    cast = lo.caster(e.type, f"pl op '{e.op}'")
    acct = lo.accountant(e, opdef, public) if lo.settings.trace else None
    whole = opdef.batch.int_array if opdef.batch is not None else None

    def core(f: BatchFrame, args: list) -> Any:
        st = f.batch
        r = whole(*[st.materialize(a) for a in args]) if whole is not None else None
        if r is not None:
            if acct is not None and f.rec is not None:
                z = (0,) * st.nb
                acct(f.rec, f.costs, [scalar_at(a, z) for a in args], scalar_at(r, z))
            return r
        out = np.empty(st.bs, dtype=np.int64)
        first = None
        for idx in st.indices():
            vals = [scalar_at(a, idx) for a in args]
            r = impl(*vals)
            if cast is not None:
                r = cast(r)
            out[idx] = r
            if first is None:
                first = (vals, r)
        if acct is not None and f.rec is not None and first is not None:
            acct(f.rec, f.costs, *first)
        return out

    return Core("args", core, [e.args[i] for i in public])


RULE = Rule(Family.PER_BLOCK, admit, core)

__all__ = ["RULE", "claims"]
