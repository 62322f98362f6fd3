"""DeriveTaskGraph: the static task graph of the orchestration and the direction of
every launch argument.

Nodes are launch sites (one per `CallFunc` with launch attributes, with the loops
around it); a launch inside a loop stands for all its iterations.

**Directions** (reference §4.2, DeriveCallDirections): a non-tensor argument is
`Scalar`; a callee `In` parameter gives `Input`, `InOut` gives `InOut`; a callee
`Out` gives `InOut` when the launch sits inside a sequential loop (R-seq), when an
earlier launch of the same function already wrote the same root tensor (R-prior),
or when the argument is rooted at an `InOut` parameter of the caller
(R-enclosing), else `OutputExisting`. A tensor named in `no_dep_args=` is `NoDep`.

**Accesses.** Each tensor argument is traced to its root tensor (a parameter of
the caller or a `create_tensor`), through views (`slice`, `reshape`), carries and
the outputs of earlier launches (a launch output that the callee returns from one
of its tensor parameters is that argument's buffer). The callee's body gives the
rectangle read and written per parameter (`slice`/`load` windows, `assemble` /
`store` targets); offsets must be compile-time ints, or scalar parameters bound
to literals at the call. Anything else is "unknown", which overlaps everything.

**Edges** follow the runtime's model: a reader waits for the last overlapping
writer (RAW); a writer waits for the overlapping readers since and for the
previous overlapping writer (WAR, WAW); read-read makes no edge; `NoDep`
arguments take no part; launches in a `pl.manual_scope` get no data edges.
Explicit `deps=` add edges from the launches that produced those TaskIds (origin
"explicit"). Sequential loop bodies are walked twice; edges found only the
second time are loop-carried (from one iteration to the next). Parallel loops
assert independent iterations, so they get no loop-carried edges.

Published as `ctx.analyses["task_graph"]` (`TaskGraph`).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from pypto.ir.nodes import (
    Assign,
    Call,
    CallFunc,
    Const,
    Direction,
    Eval,
    For,
    Function,
    If,
    ListExpr,
    LoopKind,
    Program,
    Scope,
    ScopeKind,
    Var,
    While,
    Yield,
)
from pypto.ir.printer import expr_str
from pypto.ir.span import Span
from pypto.ir.transform import walk
from pypto.ir.types import ArrayType, ScalarType, ShapedType, TensorType
from pypto.ops.facts import Role, View
from pypto.ops.registry import get
from pypto.passes.base import Pass, PassContext
from pypto.passes.dataflow import Dataflow, Storage, returned_param_sets
from pypto.passes.regions import LoopInfo, loop_info

Rect = tuple  # ((lo, hi), ...) per dim; None = unknown


@dataclass(frozen=True)
class TaskArg:
    param: str  # the callee parameter
    arg: str  # the caller's argument, printed
    direction: str  # Input / Output / InOut / OutputExisting / NoDep / Scalar
    callee_direction: str  # In / Out / InOut of the callee parameter
    root: str | None = None  # the root tensor in the caller
    read: Rect | None = None  # rectangle of the root read (None: unknown / none)
    write: Rect | None = None
    reads: bool = False
    writes: bool = False

    def __str__(self) -> str:
        where = f" -> {self.root}" if self.root else ""
        return f"{self.param}={self.arg}:{self.direction}{where}"


@dataclass(frozen=True)
class TaskNode:
    id: int
    function: str
    name_hint: str
    kind: str  # at / spmd
    caller: str
    loops: tuple  # LoopInfo
    task_var: str | None
    args: tuple  # TaskArg
    manual: bool
    span: Span = dataclasses.field(default_factory=Span.unknown, compare=False, repr=False)

    def __str__(self) -> str:
        loops = "".join(f"[{lp}]" for lp in self.loops)
        return f"t{self.id} {self.function}{loops}(" + ", ".join(map(str, self.args)) + ")"


@dataclass(frozen=True)
class TaskEdge:
    src: int
    dst: int
    kind: str  # RAW / WAR / WAW / explicit
    origin: str  # "data" or "explicit"
    tensor: str | None = None
    loop_carried: bool = False

    def __str__(self) -> str:
        what = f" {self.tensor}" if self.tensor else ""
        carried = " (loop-carried)" if self.loop_carried else ""
        return f"t{self.src} -> t{self.dst} {self.kind}{what}{carried}"


@dataclass(frozen=True)
class TaskGraph:
    nodes: tuple
    edges: tuple
    orchestration_writes: tuple = ()  # (root, span) written directly by orchestration ops

    def preds(self, node: int) -> list[TaskEdge]:
        return [e for e in self.edges if e.dst == node]

    def succs(self, node: int) -> list[TaskEdge]:
        return [e for e in self.edges if e.src == node]

    def edge_set(self) -> set[tuple]:
        return {(e.src, e.dst, e.kind, e.tensor, e.loop_carried) for e in self.edges}

    def __str__(self) -> str:
        return "\n".join([str(n) for n in self.nodes] + [str(e) for e in self.edges])


# --- rectangles --------------------------------------------------------------------------


def overlaps(a: Rect | None, b: Rect | None) -> bool:
    if a is None or b is None:
        return True
    return all(lo1 < hi2 and lo2 < hi1 for (lo1, hi1), (lo2, hi2) in zip(a, b))


def covers(a: Rect | None, b: Rect | None) -> bool:
    if a is None or b is None:
        return False
    return all(lo1 <= lo2 and hi2 <= hi1 for (lo1, hi1), (lo2, hi2) in zip(a, b))


def _int(e: Any, env: dict) -> int | None:
    if isinstance(e, bool):
        return None
    if isinstance(e, int):
        return e
    if isinstance(e, Const) and isinstance(e.value, int) and not isinstance(e.value, bool):
        return e.value
    if isinstance(e, Var) and e.name in env:
        return env[e.name]
    return None


def _ints(e: Any, env: dict) -> list | None:
    items = e.items if isinstance(e, ListExpr) else e if isinstance(e, (list, tuple)) else None
    if items is None:
        return None
    out = [_int(i, env) for i in items]
    return None if any(i is None for i in out) else out


def _whole(t: Any) -> Rect | None:
    shape = t.static_shape() if isinstance(t, ShapedType) else None
    return tuple((0, d) for d in shape) if shape is not None else None


def _rect(offsets: list | None, shape: Any) -> Rect | None:
    if offsets is None or shape is None:
        return None
    if len(shape) < len(offsets):
        shape = [1] * (len(offsets) - len(shape)) + list(shape)
    return tuple((o, o + d) for o, d in zip(offsets, shape))


def _union(a: Rect | None, b: Rect | None, first: bool) -> Rect | None:
    if first:
        return b
    if a is None or b is None:
        return None
    return tuple((min(l1, l2), max(h1, h2)) for (l1, h1), (l2, h2) in zip(a, b))


def _shift(view: Rect | None, inner: Rect | None, rank: int) -> Rect | None:
    """`inner` (in the view's coordinates) in the root's coordinates."""
    if view is None or inner is None:
        return None
    if len(inner) != len(view):
        return None
    return tuple((vl + il, vl + ih) for (vl, _), (il, ih) in zip(view, inner))


# --- what a callee does with its tensor parameters --------------------------------------


def callee_accesses(f: Function, env: dict) -> dict[str, tuple]:
    """param -> (reads, read rect, writes, write rect) with scalar params in `env`."""
    flow = Dataflow(f)
    storage = Storage(flow)
    params = {p.var.name: p for p in f.params}
    by_root = {storage.root(n): n for n in params if isinstance(flow.types.get(n), ShapedType)}
    acc: dict[str, list] = {n: [False, None, False, None] for n in by_root.values()}

    def touch(value: str | None, write: bool, rect: Rect | None) -> None:
        if value is None:
            return
        p = by_root.get(storage.root(value))
        if p is None:
            return
        a = acc[p]
        i = 2 if write else 0
        a[i + 1] = _union(a[i + 1], rect, not a[i])
        a[i] = True

    for op in flow.ops:
        d = get(op.op)
        rd, w = d.window_read, d.window_write
        if rd is not None:  # slice / load
            touch(op.operand(rd.tensor), False, _rect(_ints(op.arg(rd.offset), env),
                                                      _ints(op.arg(rd.shape), env)))
        elif w is not None:  # assemble / store (a reshaping store gives its shapes)
            src_t = flow.types.get(op.operand(w.source) or "")
            shape = _ints(op.arg("shapes"), env) or (
                src_t.static_shape() if isinstance(src_t, ShapedType) else None)
            touch(op.operand(w.tensor), True, _rect(_ints(op.arg(w.offset), env), shape))
            touch(op.operand(w.source), False, None)
        elif d.role in (Role.ELEMENT_READ, Role.ELEMENT_WRITE):  # (tensor first)
            write = d.role is Role.ELEMENT_WRITE
            off = _ints(op.arg("offset"), env)
            touch(op.operands[0][1], write, _rect(off, [1] * len(off)) if off else None)
        elif d.view is View.ALIAS:  # a view accesses nothing
            continue
        else:
            for p, v in op.operands:
                if v is None:
                    continue
                if p == d.writes:
                    touch(v, True, None)
                elif v in flow.types and storage.root(v) in by_root:
                    touch(v, False, _whole(flow.types[v]))
    for call, _, _ in flow.launches:  # nested launches: anything passed on is unknown
        for a in call.args:
            if isinstance(a, Var):
                touch(a.name, True, None)
                touch(a.name, False, None)
    return {p: tuple(a) for p, a in acc.items()}


def returned_params(f: Function) -> list[str | None]:
    """For each returned value of `f`, the tensor parameter whose buffer it is (of
    several sharing one buffer, the last in parameter order)."""
    order = {p.var.name: i for i, p in enumerate(f.params)}
    return [max(ps, key=order.__getitem__) if ps else None for ps in returned_param_sets(f)]


# --- the walk over the orchestration -------------------------------------------------------


@dataclass
class _Access:
    node: int
    rect: Rect | None


@dataclass
class _State:
    writers: dict  # root -> list[_Access]
    readers: dict  # root -> list[_Access]

    def copy(self) -> _State:
        return _State({k: list(v) for k, v in self.writers.items()},
                      {k: list(v) for k, v in self.readers.items()})

    def merge(self, other: _State) -> None:
        for mine, theirs in ((self.writers, other.writers), (self.readers, other.readers)):
            for k, v in theirs.items():
                cur = mine.setdefault(k, [])
                for a in v:
                    if a not in cur:
                        cur.append(a)


class _GraphBuilder:
    def __init__(self, program: Program):
        self.program = program
        self.funcs = {f.name: f for f in program.functions}
        self.nodes: dict[int, TaskNode] = {}
        self.node_of_call: dict[int, int] = {}
        self.edges: dict[tuple, TaskEdge] = {}
        self.orch_writes: list = []
        self.written_roots: dict[str, set] = {}  # caller -> roots written by earlier launches

    def build(self, f: Function) -> None:
        self.f = f
        self.inout_params = {p.var.name for p in f.params if p.direction is Direction.INOUT}
        # value name -> (root, rect of the view in root coordinates or None=unknown)
        self.root: dict[str, tuple] = {}
        for p in f.params:
            if isinstance(p.var.type, ShapedType):
                self.root[p.var.name] = (p.var.name, _whole(p.var.type))
        self.tasks: dict[str, set] = {}  # TaskId / array name -> producing nodes
        self.scalars: dict[str, int] = {}
        self.block(f.body, _State({}, {}), (), (), False, False)

    # aliases -----------------------------------------------------------------------

    def alias(self, dst: str, src: Any) -> None:
        if isinstance(src, Var):
            if src.name in self.root:
                self.root[dst] = self.root[src.name]
            if src.name in self.tasks:
                self.tasks.setdefault(dst, set()).update(self.tasks[src.name])

    def block(self, stmts: tuple, st: _State, loops: tuple, nodes: tuple, manual: bool,
              carried: bool) -> None:
        for s in stmts:
            self.stmt(s, st, loops, nodes, manual, carried)

    def stmt(self, s: Any, st: _State, loops: tuple, nodes: tuple, manual: bool,
             carried: bool) -> None:
        if isinstance(s, Assign):
            v = s.value
            if isinstance(v, CallFunc) and v.launch:
                self.launch(s, v, st, loops, nodes, manual, carried)
            elif isinstance(v, CallFunc):
                for t in s.targets:
                    self.root.setdefault(t.name, (t.name, None))
            elif isinstance(v, Var) and len(s.targets) == 1:
                self.alias(s.targets[0].name, v)
            elif isinstance(v, Call) and len(s.targets) == 1:
                self.orch_op(s.targets[0], v, s.span)
            if len(s.targets) == 1 and isinstance(v, Const) and isinstance(v.value, int):
                self.scalars[s.targets[0].name] = v.value
        elif isinstance(s, Eval):
            if isinstance(s.expr, CallFunc) and s.expr.launch:
                self.launch(s, s.expr, st, loops, nodes, manual, carried)
            elif isinstance(s.expr, Call):
                self.orch_op(None, s.expr, s.span)
        elif isinstance(s, (For, While)):
            for a, i in zip(s.iter_args, s.inits):
                self.alias(a.name, i)
            info = loop_info(s)
            seq = isinstance(s, While) or s.kind is not LoopKind.PARALLEL
            self.block(s.body, st, loops + (info,), nodes + (s,), manual, carried)
            if seq:
                ys = s.body[-1].values if s.body and isinstance(s.body[-1], Yield) else ()
                for a, y in zip(s.iter_args, ys):
                    self.alias_union(a.name, y)
                self.block(s.body, st, loops + (info,), nodes + (s,), manual, True)
            ys = s.body[-1].values if s.body and isinstance(s.body[-1], Yield) else ()
            for r, a, y in zip(s.results, s.iter_args, ys or (None,) * len(s.results)):
                self.alias(r.name, a)
                if y is not None:
                    self.alias_union(r.name, y)
        elif isinstance(s, If):
            other = st.copy()
            self.block(s.then_body, st, loops, nodes, manual, carried)
            self.block(s.else_body, other, loops, nodes, manual, carried)
            st.merge(other)
            for arm in (s.then_body, s.else_body):
                if arm and isinstance(arm[-1], Yield):
                    for r, y in zip(s.results, arm[-1].values):
                        self.alias_union(r.name, y)
        elif isinstance(s, Scope):
            self.block(s.body, st, loops, nodes, manual or s.kind is ScopeKind.MANUAL, carried)

    def alias_union(self, dst: str, src: Any) -> None:
        if not isinstance(src, Var):
            return
        if src.name in self.tasks:
            self.tasks.setdefault(dst, set()).update(self.tasks[src.name])
        if dst not in self.root and src.name in self.root:
            self.root[dst] = self.root[src.name]

    def orch_op(self, target: Var | None, call: Call, span: Span) -> None:
        d = get(call.op)
        args = dict(zip(d.params, call.args))
        w = d.window_read
        if d.view is View.WINDOW and w is not None and target is not None:  # a slice
            src = args[w.tensor]
            if isinstance(src, Var) and src.name in self.root:
                root, view = self.root[src.name]
                inner = _rect(_ints(args[w.offset], self.scalars), _ints(args[w.shape],
                                                                          self.scalars))
                self.root[target.name] = (root, _shift(view, inner, 0))
            return
        if d.view is View.ALIAS and target is not None:  # reshape and other views
            src = call.args[0]
            if isinstance(src, Var) and src.name in self.root:
                self.root[target.name] = (self.root[src.name][0], None)
            return
        if d.role is Role.ALLOC_TENSOR and target is not None:
            self.root[target.name] = (target.name, _whole(target.type))
            return
        if d.role is Role.ARRAY_SET and target is not None:
            for a in call.args:
                if isinstance(a, Var) and a.name in self.tasks:
                    self.tasks.setdefault(target.name, set()).update(self.tasks[a.name])
            arr = call.args[0]
            if isinstance(arr, Var):
                self.tasks.setdefault(arr.name, set()).update(self.tasks.get(target.name, ()))
            return
        if d.role is Role.ARRAY_GET and target is not None:
            arr = call.args[0]
            if isinstance(arr, Var) and arr.name in self.tasks:
                self.tasks[target.name] = set(self.tasks[arr.name])
            return
        if d.writes is not None:
            w = args.get(d.writes)
            if isinstance(w, Var) and w.name in self.root:
                self.orch_writes.append((self.root[w.name][0], span))
                if target is not None:
                    self.root[target.name] = self.root[w.name]

    # launches ----------------------------------------------------------------------

    def launch(self, s: Any, call: CallFunc, st: _State, loops: tuple, nodes: tuple,
               manual: bool, carried: bool) -> None:
        callee = self.funcs[call.func]
        la = dict(call.launch)
        first = id(call) not in self.node_of_call
        if first:
            node_id = len(self.nodes)
            self.node_of_call[id(call)] = node_id
        node_id = self.node_of_call[id(call)]
        env = {}
        for p, a in zip(callee.params, call.args):
            if isinstance(p.var.type, ScalarType):
                n = _int(a, self.scalars)
                if n is not None:
                    env[p.var.name] = n
        accesses = callee_accesses(callee, env)
        no_dep = set(la.get("no_dep_args", ()) or ())
        seq = any(isinstance(n, While) or n.kind is not LoopKind.PARALLEL for n in nodes)
        written_before = self.written_roots.setdefault(self.f.name, set())
        args = []
        for p, a in zip(callee.params, call.args):
            text = expr_str(a)
            if not isinstance(p.var.type, ShapedType):
                args.append(TaskArg(p.var.name, text, "Scalar", p.direction.value))
                continue
            root, view = self.root.get(a.name, (a.name, None)) if isinstance(a, Var) else \
                (None, None)
            reads, rrect, writes, wrect = accesses.get(p.var.name, (False, None, False, None))
            rrect = _shift(view, rrect, 0) if reads else None
            wrect = _shift(view, wrect, 0) if writes else None
            if p.direction is Direction.IN:
                direction = "Input"
            elif p.direction is Direction.INOUT or seq or root in written_before or \
                    root in self.inout_params:
                direction = "InOut"
            else:
                direction = "OutputExisting"
            if isinstance(a, Var) and (a.name in no_dep or (root in no_dep)):
                direction = "NoDep"
            reads = reads or p.direction is not Direction.OUT
            writes = writes or p.direction is not Direction.IN
            args.append(TaskArg(p.var.name, text, direction, p.direction.value, root, rrect,
                                wrect, reads, writes))
        for arg in args:
            if arg.writes and arg.root:
                written_before.add(arg.root)
        targets = s.targets if isinstance(s, Assign) else ()
        task_var = targets[-1].name if targets and isinstance(targets[-1].type, ScalarType) \
            else None
        if first:
            self.nodes[node_id] = TaskNode(node_id, call.func, la.get("name_hint", ""),
                                           la.get("kind", "at"), self.f.name, loops, task_var,
                                           tuple(args), manual, call.span)
        # explicit deps
        for dep in la.get("deps", ()) or ():
            for v in walk(dep):
                if isinstance(v, Var):
                    for src in sorted(self.tasks.get(v.name, ())):
                        self.add_edge(src, node_id, "explicit", "explicit", None, carried)
        # data edges
        if not manual:
            for arg in args:
                if arg.root is None or arg.direction in ("NoDep", "Scalar"):
                    continue
                writers = st.writers.setdefault(arg.root, [])
                readers = st.readers.setdefault(arg.root, [])
                if arg.reads:
                    for w in writers:
                        if overlaps(w.rect, arg.read) and (w.node != node_id or carried):
                            self.add_edge(w.node, node_id, "RAW", "data", arg.root, carried)
                if arg.writes:
                    for r in readers:
                        if overlaps(r.rect, arg.write) and (r.node != node_id or carried):
                            self.add_edge(r.node, node_id, "WAR", "data", arg.root, carried)
                    for w in writers:
                        if overlaps(w.rect, arg.write) and (w.node != node_id or carried):
                            self.add_edge(w.node, node_id, "WAW", "data", arg.root, carried)
            for arg in args:
                if arg.root is None or arg.direction in ("NoDep", "Scalar"):
                    continue
                writers = st.writers.setdefault(arg.root, [])
                readers = st.readers.setdefault(arg.root, [])
                if arg.writes:
                    keep_w = [w for w in writers if not covers(arg.write, w.rect)]
                    keep_r = [r for r in readers if not covers(arg.write, r.rect)]
                    writers[:] = keep_w + [_Access(node_id, arg.write)]
                    readers[:] = keep_r
                if arg.reads and not arg.writes:
                    readers.append(_Access(node_id, arg.read))
        # outputs alias the tensors the callee returns from its parameters
        outs = targets[:-1] if task_var else targets
        rets = returned_params(callee)
        by_param = {p.var.name: a for p, a in zip(callee.params, call.args)}
        for t, pname in zip(outs, rets):
            src = by_param.get(pname) if pname else None
            if isinstance(src, Var) and src.name in self.root:
                self.root[t.name] = self.root[src.name]
            elif isinstance(t.type, ShapedType):
                self.root[t.name] = (t.name, _whole(t.type))
        if task_var:
            self.tasks[task_var] = {node_id}

    def add_edge(self, src: int, dst: int, kind: str, origin: str, tensor: str | None,
                 carried: bool) -> None:
        key = (src, dst, kind, tensor)
        if key in self.edges:
            return
        loop_carried = carried and (src >= dst)
        if carried and not loop_carried:
            return  # found on the first walk already (or a forward edge in the body)
        self.edges[key] = TaskEdge(src, dst, kind, origin, tensor, loop_carried)


def derive_task_graph(program: Program) -> TaskGraph:
    b = _GraphBuilder(program)
    for f in program.functions:
        if any(isinstance(n, CallFunc) and n.launch for n in walk(f.body)) or \
                f.name == program.entry:
            b.build(f)
    nodes = tuple(b.nodes[i] for i in sorted(b.nodes))
    edges = tuple(sorted(b.edges.values(), key=lambda e: (e.src, e.dst, e.kind, e.tensor or "")))
    return TaskGraph(nodes, edges, tuple(b.orch_writes))


class DeriveTaskGraph(Pass):
    name = "derive_task_graph"
    summary = "launch argument directions and the static task dependency graph"

    def run(self, program: Program, ctx: PassContext) -> Program:
        ctx.analyses["task_graph"] = derive_task_graph(program)
        return program


__all__ = [
    "ArrayType",
    "DeriveTaskGraph",
    "LoopInfo",
    "TaskArg",
    "TaskEdge",
    "TaskGraph",
    "TaskNode",
    "TensorType",
    "covers",
    "derive_task_graph",
    "overlaps",
]
