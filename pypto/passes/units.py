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

Published as `ctx.analyses["units"]`: function name → `UnitReport`.
The `Dataflow` walker here is shared with the buffer estimate.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from pypto.ir.nodes import (Assign, Call, CallFunc, Eval, For, Function, FunctionKind, GetItem,
                            If, ListExpr, Program, Return, Scope, Var, While, Yield)
from pypto.ir.types import MemorySpace, ShapedType, TileType, TensorType
from pypto.ops.facts import View
from pypto.ops.registry import OpDef, Unit, get
from pypto.passes.base import Pass, PassContext

CUBE, VECTOR = "cube", "vector"
CUBE_SPACES = {MemorySpace.Mat, MemorySpace.Left, MemorySpace.Right, MemorySpace.Acc,
               MemorySpace.Bias, MemorySpace.LeftScale, MemorySpace.RightScale}


# --- the dataflow walk ----------------------------------------------------------------


@dataclass
class OpNode:
    """One op application (named or nested) of an InCore function."""

    index: int
    call: Call
    result: str  # the SSA name it is assigned to, or "%<index>" for a nested call
    operands: tuple  # (parameter name, value name or None) in signature order
    pos: int  # program-order position: the statement's, +1 per op nested before it in it
    loops: tuple  # ids of the enclosing loops (outermost first)

    @property
    def op(self) -> str:
        return self.call.op

    def operand(self, param: str) -> str | None:
        for p, v in self.operands:
            if p == param:
                return v
        return None

    def arg(self, param: str) -> Any:
        names = get(self.call.op).params
        return self.call.args[names.index(param)] if param in names else None


@dataclass
class LoopSpan:
    node: Any
    start: int
    end: int = 0


class Dataflow:
    """A linear walk over one function: ops, value types, carries/copies (aliases),
    definition and use positions, loops (with their statement span) and launches."""

    def __init__(self, f: Function):
        self.f = f
        self.ops: list[OpNode] = []
        self.producer: dict[str, OpNode] = {}
        self.types: dict[str, Any] = {}
        self.aliases: list[tuple[str, str]] = []
        self.defs: dict[str, int] = {}
        self.uses: dict[str, list[int]] = defaultdict(list)
        self.loops: list[LoopSpan] = []
        self.value_loops: dict[str, tuple] = {}
        self.launches: list[tuple[CallFunc, int, tuple]] = []
        self.params = [p.var.name for p in f.params]
        self._stack: list[int] = []
        self.pos = 0
        self._taken = False
        for p in f.params:
            self._define(p.var.name, p.var.type)
        self._block(f.body, None)
        self.end = self.pos

    # values --------------------------------------------------------------------

    def _define(self, name: str, t: Any) -> None:
        self.types[name] = t
        self.defs.setdefault(name, self.pos)
        self.value_loops[name] = tuple(self._stack)

    def _use(self, name: str) -> None:
        self.uses[name].append(self.pos)

    def ref(self, e: Any) -> str | None:
        if isinstance(e, Var):
            self._use(e.name)
            return e.name
        if isinstance(e, Call):
            params = get(e.op).params
            # Nested calls are evaluated first, each at its own position (the compiler
            # flattens them into one statement each), so a temporary lives from its op
            # to the op that consumes it, not across the whole statement.
            names = [a.name if isinstance(a, Var) else self.ref(a) for a in e.args]
            if self._taken:
                self.pos += 1
            self._taken = True
            for a, n in zip(e.args, names):
                if n is not None and isinstance(a, (Var, Call)):
                    self._use(n)
            operands = tuple(zip(params, names))
            node = OpNode(len(self.ops), e, f"%{len(self.ops)}", operands, self.pos,
                          tuple(self._stack))
            self.ops.append(node)
            self.producer[node.result] = node
            self._define(node.result, e.type)
            self._use(node.result)
            return node.result
        if isinstance(e, CallFunc):
            for a in e.args:
                self.ref(a)
            self.launches.append((e, self.pos, tuple(self._stack)))
            return None
        if isinstance(e, GetItem):
            self.ref(e.value)
            return None
        if isinstance(e, ListExpr):
            for i in e.items:
                self.ref(i)
            return None
        if isinstance(e, tuple):
            for i in e:
                self.ref(i)
        return None

    def _rename_result(self, old: str, new: str, t: Any) -> None:
        node = self.producer.pop(old)
        node.result = new
        self.producer[new] = node
        self.types.pop(old, None)
        self.defs.pop(old, None)
        self.uses.pop(old, None)
        self.value_loops.pop(old, None)
        self._define(new, t)

    # statements ------------------------------------------------------------------

    def _block(self, stmts: tuple, sink: list | None) -> None:
        for s in stmts:
            self.pos += 1
            self._taken = False  # the statement's first op takes its position
            self._stmt(s, sink)

    def _stmt(self, s: Any, sink: list | None) -> None:
        if isinstance(s, Assign):
            r = self.ref(s.value)
            if len(s.targets) == 1:
                t = s.targets[0]
                if r is not None and r.startswith("%"):
                    self._rename_result(r, t.name, t.type)
                    return
                self._define(t.name, t.type)
                if r is not None:
                    self.aliases.append((t.name, r))
                return
            for t in s.targets:
                self._define(t.name, t.type)
        elif isinstance(s, Eval):
            self.ref(s.expr)
        elif isinstance(s, Return):
            self.ref(s.values)
        elif isinstance(s, Yield):
            refs = [self.ref(v) for v in s.values]
            if sink is not None:
                sink.append(refs)
        elif isinstance(s, (For, While)):
            if isinstance(s, For):
                self.ref((s.start, s.stop, s.step))
            inits = [self.ref(i) for i in s.inits]
            span = LoopSpan(s, self.pos)
            self.loops.append(span)
            self._stack.append(id(s))
            if isinstance(s, For):
                self._define(s.var.name, s.var.type)
            for a, i in zip(s.iter_args, inits):
                self._define(a.name, a.type)
                if i is not None:
                    self.aliases.append((a.name, i))
            if isinstance(s, While):
                self.ref(s.cond)
            sink: list = []
            self._block(s.body, sink)
            # carried values stay live to the end of the loop
            for a in s.iter_args:
                self._use(a.name)
            self._stack.pop()
            span.end = self.pos
            ys = sink[-1] if sink else []
            for a, r, y in zip(s.iter_args, s.results, ys + [None] * len(s.iter_args)):
                self._define(r.name, r.type)
                self.aliases.append((r.name, a.name))
                if y is not None:
                    self.aliases.append((a.name, y))
        elif isinstance(s, If):
            self.ref(s.cond)
            sinks = []
            for arm in (s.then_body, s.else_body):
                sink_arm: list = []
                self._block(arm, sink_arm)
                sinks.append(sink_arm[-1] if sink_arm else [])
            for k, r in enumerate(s.results):
                self._define(r.name, r.type)
                for ys in sinks:
                    if k < len(ys) and ys[k] is not None:
                        self.aliases.append((r.name, ys[k]))
        elif isinstance(s, Scope):
            self.ref(s.attrs)
            self._block(s.body, sink)
            if s.task is not None:
                self._define(s.task.name, s.task.type)

    # helpers ---------------------------------------------------------------------

    def alias_classes(self, extra: list | None = None) -> dict[str, str]:
        """Union-find over carries/copies (and `extra` pairs): value → class root."""
        parent: dict[str, str] = {}

        def find(x: str) -> str:
            parent.setdefault(x, x)
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        for a, b in list(self.aliases) + list(extra or ()):
            ra, rb = find(a), find(b)
            if ra != rb:
                # keep the earliest-defined value as the root (deterministic)
                if (self.defs.get(ra, 0), ra) <= (self.defs.get(rb, 0), rb):
                    parent[rb] = ra
                else:
                    parent[ra] = rb
        for name in self.types:
            find(name)
        return {n: find(n) for n in parent}

    def consumers(self) -> dict[str, list[tuple[OpNode, str]]]:
        out: dict[str, list] = defaultdict(list)
        for op in self.ops:
            for p, v in op.operands:
                if v is not None:
                    out[v].append((op, p))
        return out


class Storage:
    """Which values share one buffer: carries and copies, an `assemble`/`store` result
    and its target, a view and its source (incl. a slice or fillpad of a tile),
    `matmul_acc`'s result and accumulator.
    A buffer that holds a tensor parameter lives in GM, not on chip."""

    def __init__(self, flow: Dataflow):
        extra = []
        for op in flow.ops:
            src = None
            d = get(op.op)
            if d.writes is not None:  # assemble / store: the result is the target
                src = op.operand(d.writes)
            elif d.view is View.ALIAS:
                src = op.operand(d.params[0])
            elif d.view is View.WINDOW:
                # a window / pad of an on-chip tile is a view of its buffer (the compiler
                # lowers tile.slice and tile.fillpad to PTO views on the input's MemRef);
                # a slice of a tensor is a load into a new buffer
                x = op.operand(d.params[0])
                if isinstance(flow.types.get(x or ""), TileType):
                    src = x
            elif d.matmul is not None and d.matmul.acc is not None:
                src = op.operand(d.matmul.acc)
            if src is not None:
                extra.append((op.result, src))
        self.classes = flow.alias_classes(extra)
        self.gm_roots = {self.classes.get(p, p) for p in flow.params
                         if isinstance(flow.types.get(p), TensorType)}

    def root(self, v: str) -> str:
        return self.classes.get(v, v)

    def in_gm(self, v: str) -> bool:
        return self.root(v) in self.gm_roots


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
    return _side_of_mem(_mem(op.arg(d.memory_param))) or VECTOR


def classify(f: Function, flow: Dataflow | None = None) -> UnitReport:
    flow = flow or Dataflow(f)
    consumers = flow.consumers()
    classes = flow.alias_classes()
    storage = Storage(flow)
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
            for op, param in consumers.get(g, ()):
                d = get(op.op)
                if d.unit is Unit.CUBE:
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
            if d.unit is Unit.CUBE:
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
            elif d.window is not None and d.window.write:  # assemble / store
                src = op.operand(d.window.source)
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
        w = get(op.op).window
        for param, v in op.operands:
            if v is None or v in flow.params:
                continue
            if w is not None and w.write and param == w.tensor:  # written, not consumed
                continue
            t = flow.types.get(v)
            if not isinstance(t, ShapedType):
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
                shape = tuple(t.shape)
                crossings[key] = Crossing(direction, v, shape, repr(t.dtype), t.nbytes())

    units: dict[str, int] = defaultdict(int)
    counts: dict[str, int] = defaultdict(int)
    for op in flow.ops:
        units[get(op.op).unit.value] += 1
        w = op_side[op.result]
        if w == "both":
            counts[CUBE] += 1
            counts[VECTOR] += 1
        else:
            counts[w] += 1
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


__all__ = ["ClassifyUnits", "Dataflow", "UnitReport", "Crossing", "classify", "CUBE", "VECTOR",
           "CUBE_SPACES", "Storage"]
