"""A batching rule, and what it asks of the plan's analysis and of the region's lowering.

A rule is one op family's whole batched meaning (`pypto.ops.facts.Family`):

* `admit(an, e, op, a, vargs) -> bool` - the plan's side: may the call `e` of `op`
  (its arguments `a` by parameter name, `vargs` whether each differs per block) run
  batched? Raises `NotBatchable` saying why not; returns whether its result differs
  per block. It notes the call's accesses for the footprint proof on `an`.
* `core(lo, e) -> Core | None` - the batched computation of the call, compiled once for
  all blocks (None: the call is uniform, compiled as block by block). A core gives the
  batch up at run time by raising `Fallback` / `Partial` (`pypto.sim.batch.state`).
* the partial-tile behaviour: what the op does with a `masks.Masked` operand (the
  family's module holds it).

`always` rules are asked about every call of their ops, uniform or not (a window notes
its access either way; the block index varies with no operand); the others only about
calls with an operand that differs per block.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from pypto.ir.nodes import Call
from pypto.ir.types import Type
from pypto.ops.facts import Family
from pypto.ops.registry import OpDef
from pypto.sim.batch.codegen import Core
from pypto.sim.batch.footprints import Access
from pypto.sim.config import Settings
from pypto.sim.engine.values import Expr
from pypto.sim.trace.costs import Accountant


class Analysis(Protocol):
    """What admission reads and notes on the plan's analysis (`plan._Analyzer`)."""

    func: Any
    varying: set
    ptypes: dict
    stacked: set
    uses: dict
    inits: dict
    accesses: list[Access]
    under: int  # predicated branches being analysed

    def is_var(self, e: Any) -> bool:
        """Does `e` differ per block (analysing the calls in it)?"""

    def resolve(self, e: Any) -> str | None:
        """The tensor parameter `e` is (or writes into), if any."""

    def view_of(self, e: Any) -> str | None:
        """The parameter `e` is a reshaped view of, if any."""

    def opaque(self, e: Any, write: bool, what: str) -> None:
        """Note (or refuse) an access through a view of a parameter."""

    def offsets(self, off: Any) -> list:
        """The affine forms of the offsets `off`."""

    def valid_ok(self, t: Type | None) -> bool:
        """May a value of type `t` be the operand of an op without a mask rule?"""

    def tile_view(self, e: Any) -> bool:
        """Is `e` a view of an on-chip tile's storage?"""

    def in_place_target(self, t: Any) -> None:
        """Refuse an in-place write into a view of a tile's storage."""

    def merge_uses(self, name: str) -> int:
        """How often `name` occurs in the other branches of the predicated ifs."""


class Lowering(Protocol):
    """What a core's compilation asks of the region's lowering (`compiler.BatchLowering`)."""

    settings: Settings
    plan: Any  # (`footprints.Plan`)
    func: Any
    cube_vars: set[str]
    merging: set[int]  # the window writes recorded for a merged write (`merged`)
    places: dict  # ops computed into the windows a later write fills (`placement`)
    dying: dict  # the operands that die at each op call (`ufuncs.dying_operands`)
    masked: int  # predicated branches being compiled

    def const(self, e: Any) -> tuple[bool, Any]:
        """(True, value) of a compile-time constant, else (False, None)."""

    def expr(self, e: Any, tolerant: bool = False) -> Expr:
        """The closure of expression `e`."""

    def vary(self, e: Any) -> bool:
        """Does `e` differ per block?"""

    def read_only(self, e: Any) -> bool:
        """Is `e` a tensor parameter the region never writes?"""

    def core(self, e: Call) -> Core | None:
        """The batched core of the call `e` (its rule's), None when uniform."""

    def accountant(self, e: Call, op: OpDef, public: list[int]) -> Accountant:
        """The trace's cost of one call of `op`."""

    def caster(self, t: Type | None, what: str) -> Callable[[Any], Any] | None:
        """The cast of a result to the dtype of type `t`."""

    def watched_divisor(self, e: Call, op: OpDef, public: list[int]) -> int | None:
        """The operand a `div` check watches for zeros, if any."""


@dataclass(frozen=True)
class Rule:
    """One family's batching rule (see the module docstring)."""

    family: Family
    admit: Callable[[Analysis, Call, OpDef, dict, list | None], bool]
    core: Callable[[Lowering, Call], Core | None]
    always: bool = False


def public_operands(op: OpDef, e: Call) -> list[int]:
    """The positions of the call's arguments that are the op's operands (not `_x`)."""
    return [i for i, p in enumerate(op.params) if not p.startswith("_") and i < len(e.args)]


__all__ = ["Analysis", "Lowering", "Rule", "public_operands"]
