"""Expansions (`Family.EXPAND`: row_expand, col_expand): a vector broadcast to the shape
of the first operand, computed for all blocks at once (`trailing`).

Partial tiles (`tags`): the result is a fresh array - untagged whatever the operands
carry - which then takes the valid shape its type declares (`masks.declared`).
"""
from __future__ import annotations

from typing import Any

from pypto.ir.nodes import Call
from pypto.ops.facts import Family
from pypto.ops.registry import OpDef
from pypto.sim.batch.codegen import Core
from pypto.sim.batch.masks import as_masked
from pypto.sim.batch.rules import trailing
from pypto.sim.batch.rules.rule import Analysis, Lowering, Rule
from pypto.sim.batch.state import BatchState


def tags(st: BatchState, compute: Any, args: list, rank: int) -> Any:
    return compute(trailing.data([as_masked(a) for a in args]))


def admit(an: Analysis, e: Call, op: OpDef, a: dict, vargs: list | None) -> bool:
    assert vargs is not None
    return trailing.admit(an, e, op, vargs, tags)


def core(lo: Lowering, e: Call) -> Core | None:
    return trailing.core(lo, e, tags)


RULE = Rule(Family.EXPAND, admit, core)

__all__ = ["RULE", "tags"]
