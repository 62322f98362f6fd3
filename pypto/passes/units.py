"""ClassifyUnits: which side of a core group (cube AIC / vector AIV) runs each op of
every InCore function, and which tiles cross between the sides.

Rules (reference §2.1, applied to the tensor-level and tile-level forms alike):

* an op whose registry unit is CUBE (`matmul`, `matmul_acc`, …) runs on the cube;
  VECTOR ops (elementwise, reductions, broadcasts, sort, gather…) on the vector side;
* `load` goes to the side of its `target_memory` (Mat → cube, Vec → vector);
  a tensor-level `slice` inside a region is a load: it goes to the cube (into Mat)
  when its value feeds a cube op (through views and carries), to the vector side
  otherwise, and to both when both kinds consume it (it is loaded twice);
* `move` goes to the side of its target memory (Mat/Left/Right/Acc/Bias → cube,
  Vec → vector);
* `store` / `assemble` go to the side that produced the value written (a matmul
  result is drained by the cube's FIX pipe; a vector tile by MTE3 on the vector
  side); other MTE ops follow their first tile operand;
* SCALAR / ORCH / META ops (index arithmetic, views, allocations) are shared:
  they are duplicated onto whichever side needs them and do not classify a region.

A region is "cube" or "vector" when only that side runs ops, "mixed" when both
do (ExpandMixedKernel would split it into AIC + AIV joined by a tpush/tpop ring),
"scalar" when neither does. For a mixed region every value produced on one side
and consumed on the other is a crossing of the cross-core pipe (C→V or V→C).

Published as `ctx.analyses["units"]`: function name → `UnitReport`. The dataflow walk
(`pypto.passes.dataflow`) is shared with the buffer estimate and the task graph.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from pypto.ir.nodes import Function, FunctionKind, Program
from pypto.ir.types import MemorySpace, ShapedType, TileType
from pypto.ops.facts import View
from pypto.ops.registry import OpDef, Unit, get
from pypto.passes.autotile import folded_casts
from pypto.passes.base import Pass, PassContext
from pypto.passes.dataflow import Dataflow, OpNode, Storage

CUBE, VECTOR = "cube", "vector"
CUBE_SPACES = {MemorySpace.Mat, MemorySpace.Left, MemorySpace.Right, MemorySpace.Acc,
               MemorySpace.Bias, MemorySpace.LeftScale, MemorySpace.RightScale}


# --- unit classification --------------------------------------------------------------


@dataclass(frozen=True)
class Crossing:
    """One tile handed from one side of a mixed region to the other."""

    direction: str  # "C->V" or "V->C"
    value: str
    shape: tuple
    dtype: str
    nbytes: int | None

    def __str__(self) -> str:
        return f"{self.direction} {self.value} [{', '.join(map(str, self.shape))}] {self.dtype}"


@dataclass
class UnitReport:
    function: str
    sides: dict = field(default_factory=dict)  # op result name -> "cube"/"vector"/"both"/"shared"
    op_units: dict = field(default_factory=dict)  # registry unit -> count
    side_counts: dict = field(default_factory=dict)  # "cube"/"vector"/"shared" -> count
    classification: str = "scalar"
    crossings: tuple = ()
    value_sides: dict = field(default_factory=dict)  # every value -> frozenset of sides

    @property
    def directions(self) -> tuple:
        return tuple(sorted({c.direction for c in self.crossings}))


def _mem(e: Any) -> MemorySpace | None:
    v = getattr(e, "value", None)
    return v if isinstance(v, MemorySpace) else None


def _side_of_mem(m: MemorySpace | None) -> str | None:
    if m is None:
        return None
    return CUBE if m in CUBE_SPACES else VECTOR


def _target_side(op: OpNode, d: OpDef) -> str:
    """The side an op placing its result in the memory its `memory_param` names feeds."""
    assert d.memory_param is not None
    return _side_of_mem(_mem(op.arg(d.memory_param))) or VECTOR


def classify(f: Function, flow: Dataflow | None = None) -> UnitReport:
    flow = flow or Dataflow(f)
    consumers = flow.consumers()
    classes = flow.alias_classes()
    storage = Storage(flow)
    folded = folded_casts(flow)  # casts the compiler folds into the cube's Acc -> Mat drain
    members: dict[str, list[str]] = defaultdict(list)
    for v, root in classes.items():
        members[root].append(v)

    def group(v: str) -> list[str]:
        return members.get(classes.get(v, v), [v])

    # what kinds of ops consume a value (through views and carries)
    feeds_memo: dict[str, frozenset] = {}

    def feeds(v: str, seen: set | None = None) -> frozenset:
        if v in feeds_memo:
            return feeds_memo[v]
        seen = seen if seen is not None else set()
        out: set = set()
        for g in group(v):
            if g in seen:
                continue
            seen.add(g)
            for op, _param in consumers.get(g, ()):
                d = get(op.op)
                if d.unit is Unit.CUBE or op.result in folded:
                    out.add(CUBE)
                elif d.unit is Unit.VECTOR:
                    out.add(VECTOR)
                elif d.view is View.ALIAS:
                    out |= feeds(op.result, seen)
                elif d.memory_param is not None:  # a move / load into its target memory
                    out.add(_target_side(op, d))
        feeds_memo[v] = frozenset(out)
        return feeds_memo[v]

    side: dict[str, frozenset] = {}  # value -> sides that hold it
    op_side: dict[str, str] = {}

    def value_side(v: str | None) -> frozenset:
        if v is None:
            return frozenset()
        out: set = set()
        for g in group(v):
            out |= side.get(g, frozenset())
        return frozenset(out)

    # iterate: sides of carried values depend on their producers
    for _ in range(4):
        for op in flow.ops:
            d = get(op.op)
            t = op.call.type
            s: frozenset
            if d.unit is Unit.CUBE or op.result in folded:
                s = frozenset({CUBE})
            elif d.unit is Unit.VECTOR:
                s = frozenset({VECTOR})
            elif d.memory_param is not None:  # load, move: the side of their target
                s = frozenset({_target_side(op, d)})
            elif d.view is View.WINDOW:  # a slice
                src = op.operand(d.params[0])
                if src is not None and not storage.in_gm(src):
                    s = value_side(src) or frozenset({VECTOR})  # a window of an on-chip tile
                else:
                    s = feeds(op.result) or frozenset({VECTOR})  # a load from GM
            elif d.window_write is not None:  # assemble / store
                src = op.operand(d.window_write.source)
                have = value_side(src)
                s = frozenset({CUBE}) if have == frozenset({CUBE}) else frozenset({VECTOR})
            elif d.unit is Unit.MTE:
                if isinstance(t, TileType) and _side_of_mem(t.memory):
                    s = frozenset({_side_of_mem(t.memory)})
                else:
                    first = next((v for _, v in op.operands if v is not None and
                                  isinstance(flow.types.get(v), ShapedType)), None)
                    s = value_side(first) or frozenset({VECTOR})
            elif d.view is View.ALIAS:
                s = value_side(op.operand(d.params[0]))
            else:
                s = frozenset()
            side[op.result] = s
            if d.unit in (Unit.CUBE, Unit.VECTOR, Unit.MTE):
                op_side[op.result] = "both" if len(s) > 1 else next(iter(s), VECTOR)
            else:
                op_side[op.result] = "shared"

    # crossings: a value consumed on the side that did not produce it
    crossings: dict[tuple, Crossing] = {}
    for op in flow.ops:
        where = op_side[op.result]
        if where not in (CUBE, VECTOR):
            continue
        w = get(op.op).window_write
        for param, v in op.operands:
            if v is None or v in flow.params:
                continue
            if w is not None and param == w.tensor:  # written, not consumed
                continue
            vt = flow.types.get(v)
            if not isinstance(vt, ShapedType):
                continue
            have = value_side(v)
            if not have or where in have:
                continue
            if storage.in_gm(v):
                continue
            direction = "C->V" if where == VECTOR else "V->C"
            root = classes.get(v, v)
            key = (direction, root)
            if key not in crossings:
                crossings[key] = Crossing(direction, v, tuple(vt.shape), repr(vt.dtype),
                                          vt.nbytes())

    units: dict[str, int] = defaultdict(int)
    counts: dict[str, int] = defaultdict(int)
    for op in flow.ops:
        units[get(op.op).unit.value] += 1
        where = op_side[op.result]
        if where == "both":
            counts[CUBE] += 1
            counts[VECTOR] += 1
        else:
            counts[where] += 1
    has_c, has_v = counts.get(CUBE, 0) > 0, counts.get(VECTOR, 0) > 0
    kind = "mixed" if has_c and has_v else CUBE if has_c else VECTOR if has_v else "scalar"
    values = {v: value_side(v) for v in flow.types}
    return UnitReport(f.name, dict(op_side), dict(sorted(units.items())),
                      dict(sorted(counts.items())), kind,
                      tuple(crossings[k] for k in crossings), values)


class ClassifyUnits(Pass):
    name = "classify_units"
    summary = "assign each InCore op to the cube or vector side; find cross-core tiles"

    def run(self, program: Program, ctx: PassContext) -> Program:
        reports = {}
        for f in program.functions:
            if f.kind is FunctionKind.INCORE:
                reports[f.name] = classify(f)
        ctx.analyses["units"] = reports
        return program


__all__ = [
    "CUBE",
    "CUBE_SPACES",
    "VECTOR",
    "ClassifyUnits",
    "Crossing",
    "UnitReport",
    "classify",
]
