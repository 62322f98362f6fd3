"""The dataflow walk of one function, shared by the passes (units, buffers, task graph)
and the simulator: op applications in program order with their operands, value types,
definition and use positions, loops, launches, and which values share one buffer.

* `Dataflow` — a linear walk over a function: every op application (named or nested)
  at its program-order position, carries and copies as aliases.
* `Storage` — which values are one buffer: carries and copies, an in-place op's result
  and its target (assemble, store), a view and its source (and a window of an on-chip
  tile), an accumulating matmul's result and its accumulator. A buffer that holds a
  tensor parameter lives in GM.
* `returned_param_sets` — for each value a function returns, the tensor parameters
  whose buffer it may be.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from pypto.ir.nodes import (
    Assign,
    Call,
    CallFunc,
    Eval,
    For,
    Function,
    GetItem,
    If,
    ListExpr,
    Return,
    Scope,
    Var,
    While,
    Yield,
)
from pypto.ir.span import Span
from pypto.ir.types import TensorType, TileType
from pypto.ops.facts import View
from pypto.ops.registry import get


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
        self.spans: dict[int, Span] = {}  # position -> the statement (or nested op) there
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
                self.spans[self.pos] = e.span
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
            self.spans[self.pos] = s.span
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
            body_sink: list = []
            self._block(s.body, body_sink)
            # carried values stay live to the end of the loop
            for a in s.iter_args:
                self._use(a.name)
            self._stack.pop()
            span.end = self.pos
            ys = body_sink[-1] if body_sink else []
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


def returned_param_sets(f: Function) -> list[frozenset[str]]:
    """For each value the last `return` of `f` hands back: the tensor parameters whose
    buffer it may be (empty: a value the function made)."""
    rets = [s for s in f.body if isinstance(s, Return)]
    if not rets:
        return []
    storage = Storage(Dataflow(f))
    by_root: dict[str, set[str]] = defaultdict(set)
    for p in f.params:
        by_root[storage.root(p.var.name)].add(p.var.name)
    values = []
    for v in rets[-1].values:
        if isinstance(v, Call) and get(v.op).writes in get(v.op).params:
            # `return pl.store(t, [0, 0], out)`: an in-place write hands back its target
            v = v.args[get(v.op).params.index(get(v.op).writes)]
        values.append(frozenset(by_root.get(storage.root(v.name), ())) if isinstance(v, Var)
                      else frozenset())
    return values


__all__ = ["Dataflow", "LoopSpan", "OpNode", "Storage", "returned_param_sets"]
