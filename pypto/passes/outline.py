"""OutlineRegions: cut every InCore region into its own function and a launch.

Each `pl.at` body, each `pl.spmd` body (loop or `with` form) and each
`pl.spmd_submit` becomes one InCore function; the orchestration keeps a
`CallFunc` carrying launch attributes (block count, name hint, deps,
optimizations) whose value is the region's outputs plus its TaskId.

Parameters are the region's live-in values. A captured tensor the region writes
(via `assemble`, `store`, `write`) becomes `Out`, or `InOut` when the region also
reads it. Values defined inside and used after the region are returned.
A `pl.at` nested in another region is outlined first and becomes a named
sub-kernel launched from its parent's body.
"""
from __future__ import annotations

import dataclasses
import itertools
from typing import Any

from pypto.ir import dtypes
from pypto.ir.nodes import (
    Assign,
    Call,
    CallFunc,
    Direction,
    Eval,
    For,
    Function,
    FunctionKind,
    If,
    LoopKind,
    Param,
    Program,
    Return,
    Scope,
    ScopeKind,
    Var,
    While,
)
from pypto.ir.transform import map_bodies, walk
from pypto.ir.types import ScalarType, ShapedType, TupleType
from pypto.ops.facts import View
from pypto.ops.registry import get
from pypto.passes.base import Pass, PassContext

_TASK = ScalarType(dtypes.TASK_ID)
_INDEX = ScalarType(dtypes.INDEX)


def defined_names(stmts: Any) -> dict[str, Var]:
    out: dict[str, Var] = {}
    for n in walk(stmts):
        if isinstance(n, Assign):
            for t in n.targets:
                out.setdefault(t.name, t)
        elif isinstance(n, For):
            out.setdefault(n.var.name, n.var)
            for v in (*n.iter_args, *n.results):
                out.setdefault(v.name, v)
        elif isinstance(n, Scope) and n.task is not None:
            out.setdefault(n.task.name, n.task)
        elif isinstance(n, (While, If)):
            for v in (*getattr(n, "iter_args", ()), *n.results):
                out.setdefault(v.name, v)
    return out


def used_vars(stmts: Any) -> dict[str, Var]:
    out: dict[str, Var] = {}
    for n in walk(stmts):
        if isinstance(n, Var):
            out.setdefault(n.name, n)
    return out


def written_roots(stmts: Any) -> set[str]:
    """Names of tensors written in place by ops in `stmts` (assemble target, store tensor…)."""
    out = set()
    for n in walk(stmts):
        if isinstance(n, Call):
            op = get(n.op)
            if op.writes is not None:
                arg = n.args[op.params.index(op.writes)]
                if isinstance(arg, Var):
                    out.add(arg.name)
    return out


def read_names(stmts: Any) -> set[str]:
    """Names read by ops other than as the in-place target of a write."""
    out = set()
    for n in walk(stmts):
        if isinstance(n, Call):
            op = get(n.op)
            for pname, arg in zip(op.params, n.args):
                if pname == op.writes:
                    continue
                for v in walk(arg):
                    if isinstance(v, Var):
                        out.add(v.name)
        elif isinstance(n, (CallFunc, For, Scope, Return, If, While)):
            for f in ("args", "start", "stop", "step", "cond", "inits", "values", "attrs"):
                for v in walk(getattr(n, f, ())):
                    if isinstance(v, Var):
                        out.add(v.name)
    return out


class OutlineRegions(Pass):
    name = "outline_regions"
    summary = "cut pl.at / pl.spmd regions into InCore functions and launches"

    def run(self, program: Program, ctx: PassContext) -> Program:
        self.new: list[Function] = []
        self.counter = itertools.count()
        self.ctx = ctx
        self.names = {f.name for f in program.functions}
        funcs = []
        for f in program.functions:
            if f.kind is FunctionKind.INCORE:
                funcs.append(f)
                continue
            self.parent = f
            body = self._body(f.body, f.body, nested=False)
            kind = f.kind
            if kind is FunctionKind.OPAQUE and body is not f.body:
                kind = FunctionKind.ORCHESTRATION
            funcs.append(dataclasses.replace(f, body=body, kind=kind))
        return Program(program.name, tuple(funcs) + tuple(self.new), program.entry, program.span)

    def _body(self, stmts: tuple, whole: tuple, nested: bool) -> tuple:
        out = []
        for i, s in enumerate(stmts):
            region = _region_of(s)
            if region is None:
                out.append(map_bodies(s, lambda b: self._body(b, whole, nested)))
                continue
            after = stmts[i + 1:]
            out.extend(self._outline(s, region, after, whole, nested))
        return tuple(out)

    def _outline(self, s: Any, region: str, after: tuple, whole: tuple, nested: bool) -> list:
        attrs = dict(s.attrs)
        body = s.body
        # Inner regions first: they become sub-kernels launched from this body.
        body = self._body(body, whole, nested=True)
        # A user's `pl.at` (it has a level) holding a kernel call is a kernel calling a
        # kernel, outlined like any region; the scope the parser puts around a plain call
        # from orchestration, and a `with pl.spmd` dispatch body, launch the kernel.
        single = None if "level" in attrs else _single_kernel_call(body, self._funcs_by_name())
        if isinstance(s, For):
            body = (Assign((s.var,), Call("get_block_idx", (), (), _INDEX, s.span), s.span),) + body
        core_num = attrs.get("core_num")
        launch = {
            "kind": region, "name_hint": attrs.get("name_hint", ""), "core_num": core_num,
            "deps": attrs.get("deps", ()), "optimizations": attrs.get("optimizations", ()),
            "allow_early_resolve": attrs.get("allow_early_resolve", False),
            "sync_start": attrs.get("sync_start", False), "nested": nested,
            "no_dep_args": attrs.get("no_dep_args", ()),
            # a dispatch predicate: evaluated by the runtime when the task is ready
            "predicate": attrs.get("predicate"),
        }
        task = getattr(s, "task", None) or Var(f"_task{next(self.counter)}", _TASK, span=s.span)
        # the tensors tagged for the args dump (after SSA a name is one value): the
        # indices of the parameters that receive them
        dumped = {v.name for v in attrs.get("dumps", ()) if isinstance(v, Var)}
        if single is not None:
            stmt, call = single
            targets = stmt.targets if isinstance(stmt, Assign) else ()
            launch["name_hint"] = launch["name_hint"] or call.func
            launch["dumps"] = tuple(i for i, a in enumerate(call.args)
                                    if isinstance(a, Var) and a.name in dumped)
            lc = dataclasses.replace(call, type=TupleType(tuple(v.type for v in targets) +
                                                          (_TASK,)))
            return [Assign(tuple(targets) + (task,), _with_launch(lc, launch), s.span)]
        params, outs = self._interface(body, s, whole)
        launch["dumps"] = tuple(i for i, p in enumerate(params) if p.var.name in dumped)
        hint = launch["name_hint"] or region
        fname = f"{self.parent.name}_{hint}"
        if fname in self.names:
            fname = f"{fname}_{next(self.counter)}"
        self.names.add(fname)
        ret = (Return(tuple(outs), s.span),) if outs else ()
        func = Function(fname, tuple(params), body + ret, FunctionKind.INCORE,
                        tuple(v.type for v in outs),
                        (("name_hint", launch["name_hint"]), ("region", region),
                         ("parent", self.parent.name), ("source_name", fname)), s.span)
        self.new.append(func)
        args = tuple(p.var for p in params)
        call = CallFunc(fname, args, TupleType(tuple(v.type for v in outs) + (_TASK,)), s.span)
        return [Assign(tuple(outs) + (task,), _with_launch(call, launch), s.span)]

    def _funcs_by_name(self) -> dict:
        return {f.name: f for f in self.new}

    def _interface(self, body: tuple, region: Any, whole: tuple) -> tuple[list, list]:
        # The program is in SSA form (ConvertToSSA runs first): a name defined in the
        # region is defined nowhere else, so live-ins are the names used but not
        # defined here, and outputs are the names defined here and used anywhere
        # outside the region (every such use comes after it).
        defined = defined_names(body)
        used = used_vars(body)
        # A write through a loop carry, a view or an earlier assemble's result still
        # lands in the buffer the region received: follow aliases back to it.
        root = alias_roots(body)
        written = {root(n) for n in written_roots(body)}
        reads = {root(n) for n in read_names(body)}
        outer_defs = defined_names(whole)
        params = []
        for name, var in used.items():
            if name in defined:
                continue
            outer = outer_defs.get(name) or self._param_var(name) or var
            direction = Direction.IN
            if isinstance(outer.type, ShapedType) and name in written:
                direction = Direction.INOUT if name in reads else Direction.OUT
            params.append(Param(outer, direction, var.span))
        param_names = {p.var.name for p in params}
        later = _used_outside(whole, region)
        outs = [v for n, v in defined.items()
                if n in later and n not in param_names and not n.startswith("_task")]
        return params, outs

    def _param_var(self, name: str) -> Var | None:
        for p in self.parent.params:
            if p.var.name == name:
                return p.var
        return None


def alias_roots(stmts: Any) -> Any:
    """A function mapping a name to the name of the buffer it aliases in `stmts`:
    loop carries alias their initial values, loop results their carries, copies and
    views their sources, and an in-place op's result (assemble, store) its target. (A
    window of a tensor inside a region is a load into a new tile: not an alias.)"""
    parent: dict[str, str] = {}
    for n in walk(stmts):
        if isinstance(n, Assign) and len(n.targets) == 1:
            t, v = n.targets[0], n.value
            if isinstance(v, Var):
                parent[t.name] = v.name
            elif isinstance(v, Call):
                op = get(v.op)
                src = None
                if op.writes is not None:
                    src = v.args[op.params.index(op.writes)]
                elif op.view is View.ALIAS and v.args:
                    src = v.args[0]
                if isinstance(src, Var) and isinstance(t.type, ShapedType):
                    parent[t.name] = src.name
        elif isinstance(n, (For, While)):
            for a, i in zip(n.iter_args, n.inits):
                if isinstance(i, Var):
                    parent[a.name] = i.name
            for r, a in zip(n.results, n.iter_args):
                parent[r.name] = a.name

    def root(name: str) -> str:
        seen = set()
        while name in parent and name not in seen:
            seen.add(name)
            name = parent[name]
        return name

    return root


def _used_outside(whole: tuple, region: Any) -> set[str]:
    """Names used in `whole` outside the statement `region` (compared by identity)."""
    out: set[str] = set()
    stack = [whole]
    while stack:
        n = stack.pop()
        if n is region:
            continue
        if isinstance(n, tuple):
            stack.extend(n)
            continue
        if isinstance(n, Var):
            out.add(n.name)
            continue
        if not dataclasses.is_dataclass(n) or isinstance(n, type):
            continue
        for f in dataclasses.fields(n):
            if f.name not in ("span", "type"):
                stack.append(getattr(n, f.name))
    return out


def _region_of(s: Any) -> str | None:
    if isinstance(s, Scope) and s.kind in (ScopeKind.INCORE, ScopeKind.SPMD):
        return "at" if s.kind is ScopeKind.INCORE else "spmd"
    if isinstance(s, For) and s.kind is LoopKind.SPMD:
        return "spmd"
    return None


def _single_kernel_call(body: tuple, _new: dict) -> tuple | None:
    """A region whose whole body is one call of an InCore kernel launches that kernel."""
    if len(body) != 1:
        return None
    s = body[0]
    value = s.value if isinstance(s, Assign) else s.expr if isinstance(s, Eval) else None
    if isinstance(value, CallFunc) and not dict(getattr(value, "launch", ())):
        return s, value
    return None


def _with_launch(call: CallFunc, launch: dict) -> CallFunc:
    return dataclasses.replace(call, launch=tuple(launch.items()))
