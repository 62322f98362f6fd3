"""Elementwise ops (`Family.UFUNC`): the impl acts on the trailing axes its type rule
describes, so with operands carrying leading batch axes it computes every block at
once (`trailing`); where its `Ufunc` fact names the numpy ufunc it is, the fast paths
of `ufuncs` apply (the ufunc without the impl's dispatch, into a dying operand, into
the windows a later write fills).

Partial tiles (`tags`): block by block an elementwise ufunc computes every element; its
result is tagged like the first tagged operand (numpy wraps the result in that
operand's class), with that operand's valid shape when the shapes are equal and with
none otherwise (`elementwise`). That holds for ops whose impl is a ufunc of their
first `n` operands: the `Ufunc` fact's arity (operands of one rank, the others left at
their defaults: a vector of another rank is reshaped by the impl), or the op's
`Batch.tag_arity` (log, recip, rsqrt: a ufunc of the first operand alone). Integer
operands, whose division is not the bare ufunc, and every other elementwise op give
the batch up on a tagged operand.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from pypto.ir.nodes import Call
from pypto.ir.types import ShapedType
from pypto.ops.facts import Family
from pypto.ops.registry import OpDef, get
from pypto.sim.batch.codegen import Core
from pypto.sim.batch.masks import BY_BLOCK, Masked, as_masked, tagged, uniform
from pypto.sim.batch.rules import trailing
from pypto.sim.batch.rules.rule import Analysis, Lowering, Rule
from pypto.sim.batch.state import BatchState
from pypto.sim.engine.intrinsics.common import falsy_const


def arity(e: Call) -> int | None:
    """The number of leading operands the op of `e` is a ufunc of, for the tags of its
    result (None: no tag rule for this call)."""
    op = get(e.op)
    if op.batch is not None and op.batch.tag_arity is not None:
        return op.batch.tag_arity
    uf = op.ufunc
    if uf is None or uf.reduce_axis is not None:
        return None
    n = uf.arity
    ranks = {len(a.type.shape) for a in e.args[:n]
             if isinstance(getattr(a, "type", None), ShapedType)}
    if len(e.args) < n or not all(falsy_const(x) for x in e.args[n:]) or len(ranks) != 1:
        return None  # (a vector of another rank is reshaped by the impl)
    return n


def tags(e: Call) -> trailing.Tags | None:
    """The partial-tile rule of the call `e` (see the module docstring), or None."""
    n = arity(e)
    if n is None:
        return None

    def run(st: BatchState, compute: Any, args: list, rank: int) -> Any:
        trailing.refuse_ints(st, args)
        args = [as_masked(a) for a in args]
        return elementwise(args, n, compute(trailing.data(args)), rank, st.bs)

    return run


def elementwise(args: list, n: int, r: np.ndarray, rank: int, bs: tuple = ()) -> Any:
    """The tags of an elementwise ufunc op's result `r` (over operands `args[:n]`): per
    block, the first tagged operand's, its valid shape when its tile shape is the
    result's."""
    shape = r.shape[-rank:]
    out: dict = {}
    for a in args[:n]:
        if not tagged(a):
            continue
        a = as_masked(a)
        same = a.data.shape[-rank:] == shape
        if a.every is not BY_BLOCK:  # (tagged in every block: the blocks left take it)
            tag = a.every if same else None
            if not out:
                return uniform(r, tag)
            for idx in np.ndindex(*bs):
                out.setdefault(idx, tag)
            break
        for idx, v in a.tags.items():
            out.setdefault(idx, v if same else None)
    return Masked(r, out) if out else r


def admit(an: Analysis, e: Call, op: OpDef, a: dict, vargs: list | None) -> bool:
    assert vargs is not None
    return trailing.admit(an, e, op, vargs, tags(e))


def core(lo: Lowering, e: Call) -> Core | None:
    return trailing.core(lo, e, tags(e))


RULE = Rule(Family.UFUNC, admit, core)

__all__ = ["RULE", "arity", "elementwise", "tags"]
