"""The batching rules: one per op family, the table the plan and the lowering ask.

An op's registry entry names its family (`pypto.ops.facts.Batch`); the family's module
here holds the op's whole batched meaning - the plan's admission of a call, the core
that computes it for all blocks at once, and what a partial tile does to it (see
`rule.Rule`):

    window_read   slice, load            window_write  assemble, store
    ufunc         elementwise ops        reduce        row / column reductions
    expand        row_expand, col_expand matmul        matmul, matmul_acc
    index_scalar  block index, + - * // %, pl.read of an integer
    compare       comparisons, and / or / not of integer scalars
    reshape       pl.reshape             tag_only      set_validshape, transpose, fillpad
    per_block     integer scalar ops computed per block (pl.min, pl.max, casts)
    form          ops computing a batch themselves (gather)

`trailing` holds what the families of ops on trailing axes share. An op without a
family runs block by block wherever an operand differs per block, but for a call on
integer scalars (`per_block.claims`).
"""
from __future__ import annotations

from pypto.ir.nodes import Call
from pypto.ops.facts import Family
from pypto.ops.registry import OpDef
from pypto.sim.batch.rules import (
    compare,
    expand,
    form,
    index_scalar,
    matmul,
    per_block,
    reduce,
    reshape,
    tag_only,
    ufunc,
    window_read,
    window_write,
)
from pypto.sim.batch.rules.rule import Rule

MODULES = (window_read, window_write, ufunc, reduce, expand, matmul, index_scalar, compare,
           reshape, tag_only, per_block, form)
RULES: dict[Family, Rule] = {m.RULE.family: m.RULE for m in MODULES}


def of(op: OpDef) -> Rule | None:
    """The rule of `op`'s family (None: it has none)."""
    return RULES[op.batch.family] if op.batch is not None else None


def resolve(op: OpDef, e: Call) -> Rule | None:
    """The rule of the call `e` of `op`, one of whose operands differs per block: its
    family's - but a comparison of other than integer scalars is not a comparison's, and
    a call on integer scalars no scalar family claims goes per block (a cast of an
    index, a shift). None: no rule takes it."""
    rule = of(op)
    fam = rule.family if rule is not None else None
    if fam is Family.INDEX_SCALAR or (fam is Family.COMPARE and compare.claims(op, e)):
        return rule
    if per_block.claims(op, e):
        return RULES[Family.PER_BLOCK]
    if fam is Family.COMPARE or fam is Family.PER_BLOCK:
        return None
    return rule


__all__ = ["MODULES", "RULES", "Rule", "of", "resolve"]
