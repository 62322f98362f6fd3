"""What the device runtime sees of a traced run: its submits, in order, with its ids.

The runtime (hw-native-sys/simpler, `tensormap_and_ringbuffer`) knows a run as a
sequence of *submits* from the orchestration: one per task launch and one per
`alloc_tensors` (the code the compiler emits for `pl.create_tensor`, a kernel-less
task that owns the buffers it allocates). Each has

* a **task id** `(ring << 32) | local` (`PTO2TaskId`): the ring is the runtime scope
  depth, `min(depth, 3)` (`current_ring_id`), and `local` counts the submits of that
  ring in order;
* its tensor arguments, each with the runtime's type (`TensorArgType`): INPUT, INOUT,
  OUTPUT_EXISTING (a callee `pl.Out` the compiler hands a tensor it already has) or
  OUTPUT (a tensor the runtime allocates for the task: a launch's new result);
* whether it sits in a manual scope, its explicit `deps=`, `allow_early_resolve`.

**Scope depth** follows the compiler's `MaterializeRuntimeScopes` and the executor:
the executor opens the root scope (depth 0) around the orchestration; an auto-scoped
function's body is one AUTO scope (depth 1), and so is each `for` and `if` body
inside it outside a manual scope; `pl.scope()` / `pl.manual_scope()` add one each.
A function written with `auto_scope=False` (its `auto_scope` attribute) gets no compiler
scopes.

**Alloc tasks**: consecutive `pl.create_tensor`s with no launch between them are one
`alloc_tensors` call, as the compiler batches them.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from pypto.ir.nodes import (
    Assign,
    Attr,
    Call,
    CallFunc,
    Const,
    For,
    Function,
    FunctionKind,
    If,
    Program,
    Scope,
    ScopeKind,
)
from pypto.ir.span import Span
from pypto.ir.transform import walk
from pypto.ops.facts import Role
from pypto.ops.registry import get
from pypto.sim.trace.trace import TaskRecord, Trace

RINGS = 4  # PTO2_MAX_RING_DEPTH

# the compiler's call-site direction -> the runtime's TensorArgType
_ARG_TYPES = {"Input": "INPUT", "InOut": "INOUT", "OutputExisting": "OUTPUT_EXISTING",
              "Output": "OUTPUT", "NoDep": "INPUT"}
# the callee's own direction, when the compiler's task graph has no node for a site
_BY_CALLEE = {"In": "INPUT", "InOut": "INOUT", "Out": "OUTPUT_EXISTING"}


def task_id(ring: int, local: int) -> int:
    """The runtime's `PTO2TaskId::make(ring, local)`."""
    return (ring << 32) | local


@dataclass(frozen=True)
class SubmitArg:
    """One tensor argument of a submit, as the runtime's tensor descriptor has it."""

    idx: int  # its slot among the task's tensor arguments
    param: str  # the callee parameter
    type: str  # INPUT / OUTPUT / INOUT / OUTPUT_EXISTING
    tensor: str  # the buffer's name
    uid: int  # the buffer (the runtime's buffer address)
    lo: tuple  # the window's box in the buffer
    hi: tuple
    manual_dep: bool  # no tensor-map lookup or insert (`manual_dep=True`, `no_dep_args=`)


@dataclass(frozen=True)
class Submit:
    """One submit the orchestration makes: a task launch or an alloc."""

    pos: int  # its place in submit order
    task_id: int  # (ring << 32) | local
    kind: str  # "task" or "alloc"
    trace_id: int | None  # the trace's task id (a task); None for an alloc
    name: str  # the region's name_hint, or "alloc"
    function: str  # the kernel launched ("" for an alloc)
    span: Span | None
    manual: bool  # inside a manual scope: no dependency tracking but `deps=`
    early_dispatch: bool  # allow_early_resolve=True
    block_num: int
    args: tuple  # SubmitArg
    explicit: tuple  # the trace ids its `deps=` name
    owns: tuple = ()  # the buffers it allocates (uids): an alloc's, a launch's new results
    scopes: tuple = ()  # the scope instances it sits in (`scope_path`), outermost first
    heap_bytes: int = 0  # the heap it takes on its ring: its new buffers, each padded

    @property
    def ring(self) -> int:
        return self.task_id >> 32

    @property
    def local(self) -> int:
        return self.task_id & 0xFFFFFFFF


@dataclass(frozen=True)
class ScopeNode:
    """A runtime scope in the program text: a function body, a `for` or `if` body the
    compiler wraps (auto-scoped functions), or a `pl.scope()` / `pl.manual_scope()`."""

    kind: str  # "body", "for", "then", "else", "scope" or "manual"
    span: Span | None
    # the variables of the loops around it, a for body's own included: each iteration
    # of them opens it anew
    loops: tuple = ()

    @cached_property
    def site(self) -> str:
        """`file.py:line`, as scope_stats names a scope's site."""
        if self.span is None or not getattr(self.span, "line", 0):
            return "?:0"
        return f"{Path(str(self.span.file)).name}:{self.span.line}"


@dataclass(frozen=True)
class _Site:
    chain: tuple  # the ScopeNodes around it, outermost first (the root scope not included)
    manual: bool
    early: bool

    @property
    def depth(self) -> int:
        return len(self.chain)


_ROOT_SITE = _Site((), False, False)


def _sites(program: Program | None) -> dict:
    """Launch site (callee, span) -> its `_Site`; a pl.create_tensor's span -> its
    `_Site` (key (None, span))."""
    out: dict = {}
    if program is None:
        return out
    for f in program.functions:
        if f.kind in (FunctionKind.ORCHESTRATION, FunctionKind.OPAQUE, FunctionKind.INLINE):
            _walk_function(f, out)
    return out


def _auto_scoped(f: Function) -> bool:
    """Does the compiler place AUTO scopes in `f` (auto_scope=True, the default)? A text
    or older IR without the attribute: yes unless it opens an AUTO `pl.scope()` itself,
    which only auto_scope=False allows."""
    given = f.attr("auto_scope")
    if given is not None:
        return bool(given)
    return not any(isinstance(s, Scope) and s.kind is ScopeKind.RUNTIME and
                   s.attr("mode", 0) in (0, None) for s in walk(f.body))


def _walk_function(f: Function, out: dict) -> None:
    auto = _auto_scoped(f)

    loops: list = []  # the loop variables around the statement being walked

    def body(stmts: tuple, chain: tuple, manual: bool) -> None:
        for s in stmts:
            stmt(s, chain, manual)

    def scoped(stmts: tuple, node: ScopeNode, chain: tuple, manual: bool) -> None:
        body(stmts, chain + (node,) if auto and not manual else chain, manual)

    def stmt(s: Any, chain: tuple, manual: bool) -> None:
        if isinstance(s, For):
            if s.kind.value == "spmd":
                exprs(s, chain, manual)
            else:
                loops.append(s.var.name)
                scoped(s.body, ScopeNode("for", s.span, tuple(loops)), chain, manual)
                loops.pop()
            return
        if isinstance(s, If):
            scoped(s.then_body, ScopeNode("then", s.span, tuple(loops)), chain, manual)
            scoped(s.else_body, ScopeNode("else", s.span, tuple(loops)), chain, manual)
            return
        if isinstance(s, Scope) and s.kind in (ScopeKind.RUNTIME, ScopeKind.MANUAL):
            m = manual or s.kind is ScopeKind.MANUAL or s.attr("mode", 0) not in (0, None)
            node = ScopeNode("manual" if m else "scope", s.span, tuple(loops))
            body(s.body, chain + (node,), m)
            return
        if hasattr(s, "body") and isinstance(getattr(s, "body", None), tuple) and \
                not isinstance(s, Scope):
            body(s.body, chain, manual)
            return
        exprs(s, chain, manual)

    def exprs(s: Any, chain: tuple, manual: bool) -> None:
        for n in walk(s):
            if isinstance(n, CallFunc) and n.launch:
                early = bool(n.launch_attr("allow_early_resolve", False))
                out.setdefault((n.func, n.span), _Site(chain, manual, early))
            elif isinstance(n, Scope) and n.kind is ScopeKind.MANUAL:
                manual = True
            elif hasattr(n, "op") and isinstance(getattr(n, "op", None), str):
                try:
                    role = get(n.op).role
                except KeyError:
                    continue
                if role is Role.ALLOC_TENSOR:
                    out.setdefault((None, n.span), _Site(chain, manual, False))

    top = (ScopeNode("body", f.span),) if auto else ()
    body(f.body, top, False)


def scope_path(chain: tuple, loops: tuple) -> tuple:
    """The scope instances a submit sits in, outermost first: each node of its static
    `chain` with the values of the loops around it (one instance per iteration); `loops`
    are the submit's (variable, value) pairs."""
    values = dict(loops)
    return tuple((node, tuple(values.get(v) for v in node.loops)) for node in chain)


class CallDirections:
    """The compiler's call-site direction of each launch argument (its task graph)."""

    def __init__(self, program: Program | None, analyses: dict):
        graph = analyses.get("task_graph")
        self.by_site: dict = {}
        for n in (graph.nodes if graph is not None else ()):
            self.by_site.setdefault((n.function, n.span), []).append(n)
        self.manual_dep = _manual_dep_tensors(program)

    def of(self, rec: TaskRecord) -> tuple[dict, bool | None]:
        """(param -> direction, all of its static nodes manual? (None: no node))."""
        nodes = self.by_site.get((rec.function, rec.span), [])
        if not nodes:
            return {}, None
        rank = {"NoDep": 0, "Scalar": 0, "Input": 1, "OutputExisting": 2, "Output": 2,
                "InOut": 3}
        dirs: dict = {}
        for n in nodes:
            for a in n.args:
                old = dirs.get(a.param)
                if old is None or rank.get(a.direction, 3) > rank.get(old, 3):
                    dirs[a.param] = a.direction
        return dirs, all(n.manual for n in nodes)


def _manual_dep_tensors(program: Program | None) -> set:
    """Names of the tensors created with `manual_dep=True`."""
    out: set = set()
    if program is None:
        return out
    for f in program.functions:
        for s in walk(f.body):
            if isinstance(s, Assign) and isinstance(s.value, Call) and \
                    get(s.value.op).role is Role.ALLOC_TENSOR and len(s.targets) == 1:
                args = dict(zip(get(s.value.op).params, s.value.args))
                md = args.get("manual_dep")
                if isinstance(md, (Const, Attr)) and md.value:
                    out.add(s.targets[0].name)
    return out


def runtime_submits(trace: Trace, program: Program | None, analyses: dict) -> list[Submit]:
    """The submits of a traced run of `program`, in the order the orchestration made
    them (see the module docstring). Nested launches (a kernel launched from inside a
    task) are not submits of the orchestration and are left out."""
    sites = _sites(program)
    dirs = CallDirections(program, analyses)
    locals_ = [0] * RINGS
    out: list[Submit] = []

    def next_id(depth: int) -> int:
        ring = min(max(depth, 0), RINGS - 1)
        tid = task_id(ring, locals_[ring])
        locals_[ring] += 1
        return tid

    results: dict = {}
    for uid, tid in trace.results.items():
        results.setdefault(tid, []).append(uid)
    allocs = trace.allocs
    ai = 0
    tasks = sorted(trace.tasks, key=lambda t: t.id)
    by_id = {t.id: t for t in tasks}
    for i in range(len(tasks) + 1):
        # the allocs made before the i-th task: one alloc_tensors call while consecutive
        # in one scope instance
        batch: list = []
        batch_scopes: tuple = ()
        batch_site = _DEFAULT_SITE
        while ai < len(allocs) and allocs[ai][0] <= i:
            _, name, uid, span, loops = allocs[ai][:5]
            ai += 1
            site = sites.get((None, span)) or _DEFAULT_SITE
            scopes = scope_path(site.chain, loops)
            if batch and scopes != batch_scopes:
                out.append(_alloc(len(out), next_id(batch_site.depth), batch, batch_site,
                                  batch_scopes, trace))
                batch = []
            batch.append((name, uid, span))
            batch_site, batch_scopes = site, scopes
        if batch:
            out.append(_alloc(len(out), next_id(batch_site.depth), batch, batch_site,
                              batch_scopes, trace))
        if i == len(tasks):
            break
        t = tasks[i]
        if t.parent is not None and t.parent in by_id:
            continue  # launched from inside a task
        site = sites.get((t.function, t.span)) or _DEFAULT_SITE
        d, static_manual = dirs.of(t)
        manual = site.manual if static_manual is None else (site.manual or static_manual)
        args = []
        for k, (param, tensor, callee, lo, hi, uid) in enumerate(t.args):
            direction = d.get(param)
            typ = _ARG_TYPES.get(direction or "", "") or _BY_CALLEE.get(callee, "INOUT")
            md = direction == "NoDep" or tensor in dirs.manual_dep
            args.append(SubmitArg(k, param, typ, tensor, uid, tuple(lo), tuple(hi), md))
        owns = tuple(results.get(t.id, ()))
        out.append(Submit(len(out), next_id(site.depth), "task", t.id, t.name, t.function,
                          t.span, manual, site.early, t.blocks, tuple(args), tuple(t.deps),
                          owns, scope_path(site.chain, t.loops), _heap(owns, trace)))
    return out


# a site the static walk did not place (not expected): the function body's scope
_DEFAULT_SITE = _Site((ScopeNode("body", None),), False, False)

OUTPUT_ALIGN = 1024  # PTO2_PACKED_OUTPUT_ALIGN: each output in the packed buffer


def _heap(uids: tuple, trace: Trace) -> int:
    """Bytes a submit's new buffers take in its ring's heap, each padded to 1024."""
    total = 0
    for uid in uids:
        info = trace.buffers.get(uid)
        if info is None:
            continue
        _, shape, dtype, _ = info
        n = int(np.dtype(dtype).itemsize)
        for d in shape:
            n *= int(d)
        total += -(-n // OUTPUT_ALIGN) * OUTPUT_ALIGN
    return total


def _alloc(pos: int, tid: int, batch: list, site: _Site, scopes: tuple,
           trace: Trace) -> Submit:
    owns = tuple(uid for _, uid, _ in batch)
    return Submit(pos, tid, "alloc", None, "alloc", "", batch[0][2], site.manual, False, 1,
                  (), (), owns, scopes, _heap(owns, trace))


__all__ = ["OUTPUT_ALIGN", "RINGS", "CallDirections", "ScopeNode", "Submit", "SubmitArg",
           "runtime_submits", "scope_path", "task_id"]
