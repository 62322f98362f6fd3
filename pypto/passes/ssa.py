"""ConvertToSSA: every name bound once; loop carries and branch merges made explicit.

The parser emits *named* IR: rebinding `x` makes a new `Var` called `x`, a loop
that reassigns an outer name carries it implicitly, and a name assigned in an
`if` arm is simply visible after the `if`. This pass rewrites each function so
that:

* every definition has a name of its own: the first binding of `x` keeps `x`,
  later ones become `x__1`, `x__2`, … (skipping names the program already uses);
* a name reassigned inside a `pl.range` / `pl.parallel` / `pl.pipeline` /
  `pl.unroll` / `pl.while_` body that is live at the loop head or after the loop
  becomes an explicit carry: an `iter_arg` (fresh name) initialised from the
  value before the loop, a `Yield` at the end of the body and a loop `result`
  bound after the loop. Carries the user wrote with `init_values` keep their
  place (first); implicit ones follow in order of first assignment;
* a name assigned in an arm of a run-time `if` and live after it becomes an
  `If` result, with a `Yield` at the end of both arms (user `pl.yield_` values
  first, implicit merges after);
* a value first defined inside a loop (or one arm) and used after it is
  *promoted*: it is carried too, starting from an undefined placeholder
  (`Attr(None)` typed as the value) because no value exists before the loop.

Liveness is computed on the named IR first (backward, with a fixpoint per
loop), so only values that are really needed are carried.

`pl.spmd` loops and `with` scopes are not loops for SSA: an SPMD loop body is
one region whose blocks run side by side, so its bindings flow out like those
of a `with` block.

Tensors have reference semantics (`assemble` writes its target's buffer and
returns it), so giving each version of a tensor its own name never changes
which buffer is written: the renaming is always safe.

Loops containing `break`/`continue` are structured by `LowerBreakContinue` first
(`ctrl_flow.py`); a `break` left in place would leave the loop with the values of
the iteration's start.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from pypto.ir.nodes import (
    Assign,
    Attr,
    Break,
    Continue,
    DynDim,
    Eval,
    For,
    Function,
    If,
    LoopKind,
    Param,
    Program,
    Return,
    Scope,
    Var,
    While,
    Yield,
)
from pypto.ir.transform import substitute, walk
from pypto.passes.base import Pass, PassContext

# --- helpers on named IR ------------------------------------------------------------


def _uses(node: Any) -> set[str]:
    return {n.name for n in walk(node) if isinstance(n, Var)}


def _stmt_defs(s: Any) -> list[Var]:
    """Variables a statement binds at its own level (not inside nested bodies)."""
    if isinstance(s, Assign):
        return list(s.targets)
    if isinstance(s, (For, While)):
        return list(s.results)
    if isinstance(s, If):
        return list(s.results)
    if isinstance(s, Scope) and s.task is not None:
        return [s.task]
    return []


def assigned_in(stmts: Any) -> dict[str, Var]:
    """Every name bound anywhere in `stmts` (first binding wins), in program order."""
    out: dict[str, Var] = {}

    def visit(body: tuple) -> None:
        for s in body:
            if isinstance(s, For):
                if s.kind is LoopKind.SPMD:
                    out.setdefault(s.var.name, s.var)
                visit(s.body)
            elif isinstance(s, While):
                visit(s.body)
            elif isinstance(s, If):
                visit(s.then_body)
                visit(s.else_body)
            elif isinstance(s, Scope):
                visit(s.body)
            for v in _stmt_defs(s):
                out.setdefault(v.name, v)

    visit(tuple(stmts))
    return out


class _Liveness:
    """Backward liveness on named IR; records what is live after each loop / if and
    at the head of each loop body."""

    def __init__(self) -> None:
        self.after: dict[int, frozenset] = {}
        self.head: dict[int, frozenset] = {}
        self.loops: list[tuple[set, set]] = []  # (live after loop, live at head)

    def block(self, stmts: tuple, live: set) -> set:
        for s in reversed(stmts):
            live = self.stmt(s, live)
        return live

    def stmt(self, s: Any, live: set) -> set:
        if isinstance(s, Assign):
            return (live - {t.name for t in s.targets}) | _uses(s.value)
        if isinstance(s, Eval):
            return live | _uses(s.expr)
        if isinstance(s, (Return, Yield)):
            return live | _uses(s.values)
        if isinstance(s, Break):
            return set(live) | (set(self.loops[-1][0]) if self.loops else set())
        if isinstance(s, Continue):
            return set(live) | (set(self.loops[-1][1]) if self.loops else set())
        if isinstance(s, If):
            self.after[id(s)] = frozenset(live)
            out = live - {r.name for r in s.results}
            return (_uses(s.cond) | self.block(s.then_body, set(out))
                    | self.block(s.else_body, set(out)))
        if isinstance(s, Scope):
            self.after[id(s)] = frozenset(live)
            inner = self.block(s.body, live - ({s.task.name} if s.task else set()))
            return inner | _uses(s.attrs)
        if isinstance(s, For):
            self.after[id(s)] = frozenset(live)
            bounds = _uses((s.start, s.stop, s.step, s.attrs))
            if s.kind is LoopKind.SPMD:
                return (self.block(s.body, set(live)) - {s.var.name}) | bounds
            out = live - {r.name for r in s.results}
            bound = {s.var.name} | {a.name for a in s.iter_args}
            head: set = set()
            while True:
                self.loops.append((out, head))
                body_in = self.block(s.body, out | (head - bound))
                self.loops.pop()
                if body_in <= head:
                    break
                head = head | body_in
            self.head[id(s)] = frozenset(head)
            return (head - bound) | out | bounds | _uses(s.inits)
        if isinstance(s, While):
            self.after[id(s)] = frozenset(live)
            out = live - {r.name for r in s.results}
            bound = {a.name for a in s.iter_args}
            head = _uses(s.cond) | out
            while True:
                self.loops.append((out, head))
                body_in = self.block(s.body, head - bound)
                self.loops.pop()
                new = head | body_in
                if new <= head:
                    break
                head = new
            self.head[id(s)] = frozenset(head)
            return (head - bound) | _uses(s.inits)
        return live | _uses(s)


def _undefined(var: Var) -> Attr:
    """The value of a promoted name before its first assignment."""
    return Attr(None, var.type, var.span)


# --- the rewrite --------------------------------------------------------------------


class _FunctionSSA:
    def __init__(self, f: Function):
        self.f = f
        self.reserved = {n.name for n in walk(f) if isinstance(n, (Var, DynDim))}
        self.taken: set[str] = set()
        self.env: dict[str, Var] = {}
        self.live = _Liveness()

    # names ------------------------------------------------------------------------

    def fresh(self, v: Var) -> Var:
        base = v.name
        name = base
        if name in self.taken:
            k = 1
            while f"{base}__{k}" in self.taken or f"{base}__{k}" in self.reserved:
                k += 1
            name = f"{base}__{k}"
        self.taken.add(name)
        return Var(name, self.rename(v.type), span=v.span)

    def rename(self, node: Any) -> Any:
        env = self.env

        def fn(e: Any) -> Any:
            if isinstance(e, Var):
                return env.get(e.name, e)
            return None

        return substitute(node, fn)

    # driver -----------------------------------------------------------------------

    def run(self) -> Function:
        f = self.f
        self.live.block(f.body, set())
        params = []
        for p in f.params:
            self.taken.add(p.var.name)
            self.env[p.var.name] = p.var
            params.append(p)
        body = self.block(f.body)
        return dataclasses.replace(f, params=tuple(params), body=body)

    def block(self, stmts: tuple) -> tuple:
        out: list = []
        for s in stmts:
            self.stmt(s, out)
        return tuple(out)

    def stmt(self, s: Any, out: list) -> None:
        if isinstance(s, Assign):
            value = self.rename(s.value)
            targets = tuple(self.fresh(t) for t in s.targets)
            for old, new in zip(s.targets, targets):
                self.env[old.name] = new
            out.append(Assign(targets, value, s.span))
        elif isinstance(s, Eval):
            out.append(Eval(self.rename(s.expr), s.span))
        elif isinstance(s, Return):
            out.append(Return(self.rename(s.values), s.span))
        elif isinstance(s, Yield):
            out.append(Yield(self.rename(s.values), s.span))
        elif isinstance(s, (Break, Continue)):
            out.append(s)
        elif isinstance(s, Scope):
            attrs = self.rename(s.attrs)
            body = self.block(s.body)
            task = None
            if s.task is not None:
                task = self.fresh(s.task)
                self.env[s.task.name] = task
            out.append(Scope(s.kind, body, attrs, task, s.span))
        elif isinstance(s, For) and s.kind is LoopKind.SPMD:
            start, stop, step, attrs = self.rename((s.start, s.stop, s.step, s.attrs))
            var = self.fresh(s.var)
            self.env[s.var.name] = var
            body = self.block(s.body)
            out.append(dataclasses.replace(s, var=var, start=start, stop=stop, step=step,
                                           body=body, attrs=attrs))
        elif isinstance(s, (For, While)):
            out.append(self.loop(s))
        elif isinstance(s, If):
            out.append(self.branch(s))
        else:
            out.append(self.rename(s))

    # loops ------------------------------------------------------------------------

    def _carried(self, s: Any) -> list[tuple[str, Var]]:
        """Implicitly carried names of loop `s`, with a representative definition."""
        needed = self.live.after.get(id(s), frozenset()) | self.live.head.get(id(s), frozenset())
        explicit = {a.name for a in s.iter_args}
        if isinstance(s, For):
            explicit.add(s.var.name)
        out = []
        for name, var in assigned_in(s.body).items():
            if name in needed and name not in explicit:
                out.append((name, self.env.get(name, var)))
        return out

    def loop(self, s: Any) -> Any:
        carried = self._carried(s)
        is_for = isinstance(s, For)
        if is_for:
            start, stop, step, attrs = self.rename((s.start, s.stop, s.step, s.attrs))
        inits = self.rename(s.inits) + tuple(
            self.env[name] if name in self.env else _undefined(rep) for name, rep in carried)
        saved = dict(self.env)
        if is_for:
            var = self.fresh(s.var)
            self.env[s.var.name] = var
        iter_args = []
        for a in s.iter_args:
            new = self.fresh(a)
            self.env[a.name] = new
            iter_args.append(new)
        for name, rep in carried:
            t = (self.env.get(name, rep)).type
            new = self.fresh(Var(name, t, span=rep.span))
            self.env[name] = new
            iter_args.append(new)
        cond = self.rename(s.cond) if not is_for else None
        body, yielded = self._body_with_yield(s.body)
        values = tuple(yielded) + tuple(self.env[name] for name, _ in carried)
        if values:
            span = s.body[-1].span if s.body else s.span
            body = body + (Yield(values, span),)
        self.env = saved
        results = []
        for r in s.results:
            new = self.fresh(r)
            self.env[r.name] = new
            results.append(new)
        for (name, rep), it in zip(carried, iter_args[len(s.iter_args):]):
            new = self.fresh(Var(name, it.type, span=rep.span))
            self.env[name] = new
            results.append(new)
        if is_for:
            return For(var, start, stop, step, s.kind, body, tuple(iter_args), inits,
                       tuple(results), attrs, s.span)
        assert cond is not None
        return While(cond, body, tuple(iter_args), inits, tuple(results), s.span)

    def _body_with_yield(self, stmts: tuple) -> tuple[tuple, list]:
        """Rewrite a loop or arm body; its own top-level `Yield` is taken out and its
        (renamed) values returned, so the caller can append implicit values."""
        out: list = []
        yielded: list = []
        for s in stmts:
            if isinstance(s, Yield):
                yielded = list(self.rename(s.values))
                continue
            self.stmt(s, out)
        return tuple(out), yielded

    # branches ---------------------------------------------------------------------

    def branch(self, s: If) -> If:
        cond = self.rename(s.cond)
        live_after = self.live.after.get(id(s), frozenset())
        explicit = {r.name for r in s.results}
        before = dict(self.env)
        then_body, then_y = self._body_with_yield(s.then_body)
        then_env = self.env
        self.env = dict(before)
        else_body, else_y = self._body_with_yield(s.else_body)
        else_env = self.env
        self.env = dict(before)
        merged: list[tuple[str, Var | Attr, Var | Attr]] = []
        arms = assigned_in(s.then_body)
        for name, var in assigned_in(s.else_body).items():
            arms.setdefault(name, var)
        for name, _rep in arms.items():
            if name in explicit or name not in live_after:
                continue
            tv, ev = then_env.get(name), else_env.get(name)
            if tv is ev:
                continue
            if tv is None:
                assert ev is not None
                merged.append((name, _undefined(ev), ev))
            elif ev is None:
                merged.append((name, tv, _undefined(tv)))
            else:
                merged.append((name, tv, ev))
        then_vals = tuple(then_y) + tuple(t for _, t, _ in merged)
        else_vals = tuple(else_y) + tuple(e for _, _, e in merged)
        if then_vals and not _terminates(then_body):
            then_body = then_body + (Yield(then_vals, _last_span(s.then_body, s)),)
        if else_vals and not _terminates(else_body):
            else_body = else_body + (Yield(else_vals, _last_span(s.else_body, s)),)
        results = []
        for r in s.results:
            new = self.fresh(r)
            self.env[r.name] = new
            results.append(new)
        for name, then_v, else_v in merged:
            t = then_v.type if isinstance(then_v, Var) else else_v.type
            new = self.fresh(Var(name, t, span=s.span))
            self.env[name] = new
            results.append(new)
        return If(cond, then_body, else_body, tuple(results), s.span)


def _terminates(body: tuple) -> bool:
    return bool(body) and isinstance(body[-1], (Break, Continue, Return))


def _last_span(body: tuple, s: Any) -> Any:
    return body[-1].span if body else s.span


class ConvertToSSA(Pass):
    name = "convert_to_ssa"
    summary = "one binding per name; explicit loop carries (iter_args/yield) and if merges"

    def run(self, program: Program, ctx: PassContext) -> Program:
        funcs = tuple(_FunctionSSA(f).run() for f in program.functions)
        return Program(program.name, funcs, program.entry, program.span)


__all__ = ["ConvertToSSA", "Param", "assigned_in"]
