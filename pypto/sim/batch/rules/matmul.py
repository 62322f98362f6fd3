"""Products (`Family.MATMUL`: matmul, matmul_acc): np.matmul on the trailing two axes
for all blocks at once (`trailing`). A varying operand of lower rank than the result
(a 2-D activation times a [1, N, K] slice of one expert's weights) gets its missing
axes after the batch axes (`trailing.core(lift=True)`); vectors are refused.

Partial tiles (`tags`): numpy's rule for the result's tag over the operands as `_mm`
passes them to np.matmul (each cast, transposed when asked) - a transposed operand keeps
its tag only when its tile is square (swapaxes keeps the shape), and only an operand of
the result's tile shape passes its valid shape on (`ufunc.elementwise` over the two);
then matmul_acc's `acc + product`. Stacked products (rank above 2) give the batch up
on a tagged operand.
"""
from __future__ import annotations

from typing import Any

from pypto.ir.nodes import Call
from pypto.ops.facts import Family
from pypto.ops.registry import OpDef, get
from pypto.sim.batch.codegen import Core
from pypto.sim.batch.masks import BY_BLOCK, Masked, as_masked, refuse
from pypto.sim.batch.rules import trailing
from pypto.sim.batch.rules.rule import Analysis, Lowering, Rule
from pypto.sim.batch.rules.ufunc import elementwise
from pypto.sim.batch.state import BatchState, Fallback

_PARAMS = ("acc", "lhs", "rhs", "a_trans", "b_trans", "init_cond")


def tags(e: Call) -> trailing.Tags:
    """The partial-tile rule of the product `e` (see the module docstring)."""
    op = get(e.op)
    public = [p for i, p in enumerate(op.params) if not p.startswith("_") and i < len(e.args)]
    acc, lhs, rhs, a_trans, b_trans, init = (public.index(p) if p in public else None
                                             for p in _PARAMS)

    def run(st: BatchState, compute: Any, args: list, rank: int) -> Any:
        args = [as_masked(a) for a in args]
        if rank != 2:  # (the rules below read the last two axes as the tile's)
            refuse(st, args)
            raise Fallback("a tagged operand of a stacked product")
        r = compute(trailing.data(args))
        shape = r.shape[-rank:]
        ops: list[Masked | None] = []
        for k, tk in ((lhs, a_trans), (rhs, b_trans)):
            a = args[k] if k is not None else None
            if type(a) is not Masked:
                ops.append(None)
                continue
            tile = a.data.shape[-rank:]
            trans = tk is not None and bool(args[tk])
            keep = tile == shape and (not trans or tile[0] == tile[1])
            ops.append(Masked(r, {}, a.every if keep else None) if a.every is not BY_BLOCK
                       else Masked(r, {i: (v if keep else None) for i, v in a.tags.items()}))
        prod = elementwise(ops, 2, r, rank, st.bs) if any(o is not None for o in ops) else r
        if acc is None or (init is not None and bool(args[init])):
            return prod
        return elementwise([args[acc], prod], 2, r, rank, st.bs)

    return run


def admit(an: Analysis, e: Call, op: OpDef, a: dict, vargs: list | None) -> bool:
    assert vargs is not None
    return trailing.admit(an, e, op, vargs, tags(e), product=True)


def core(lo: Lowering, e: Call) -> Core | None:
    return trailing.core(lo, e, tags(e), lift=True)


RULE = Rule(Family.MATMUL, admit, core)

__all__ = ["RULE", "tags"]
