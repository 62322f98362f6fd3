"""Shared helpers for the pass tests: run the pipeline, pick a pass's output, check SSA."""
from __future__ import annotations

from typing import Any

from pypto.ir.nodes import (
    Assign,
    Attr,
    For,
    Function,
    If,
    Program,
    Return,
    Scope,
    Var,
    While,
    Yield,
)


def after_pass(compiled: Any, name: str) -> Program:
    for rec in compiled.records:
        if rec.name == name:
            return rec.after
    raise KeyError(name)


def function(program: Program, name: str | None = None) -> Function:
    return program.function(name or program.entry)


def definitions(f: Function) -> list[str]:
    """Every name the function binds (params, assignments, loop vars, carries, results)."""
    out = [p.var.name for p in f.params]

    def visit(body: tuple) -> None:
        for s in body:
            if isinstance(s, Assign):
                out.extend(t.name for t in s.targets)
            elif isinstance(s, For):
                out.append(s.var.name)
                out.extend(a.name for a in s.iter_args)
                visit(s.body)
                out.extend(r.name for r in s.results)
            elif isinstance(s, While):
                out.extend(a.name for a in s.iter_args)
                visit(s.body)
                out.extend(r.name for r in s.results)
            elif isinstance(s, If):
                visit(s.then_body)
                visit(s.else_body)
                out.extend(r.name for r in s.results)
            elif isinstance(s, Scope):
                visit(s.body)
                if s.task is not None:
                    out.append(s.task.name)

    visit(f.body)
    return out


def check_ssa(f: Function) -> None:
    """Single assignment, and every use sees a definition in an enclosing scope before it."""
    names = definitions(f)
    dupes = sorted({n for n in names if names.count(n) > 1})
    assert not dupes, f"{f.name}: names bound more than once: {dupes}"

    def uses(node: Any) -> set[str]:
        from pypto.ir.transform import walk

        return {n.name for n in walk(node) if isinstance(n, Var)}

    def block(body: tuple, visible: set[str]) -> None:
        visible = set(visible)
        for s in body:
            if isinstance(s, Assign):
                missing = uses(s.value) - visible
                assert not missing, f"{f.name}: {missing} used before definition in {s}"
                visible |= {t.name for t in s.targets}
            elif isinstance(s, For):
                assert not (uses((s.start, s.stop, s.step, s.inits)) - visible)
                inner = visible | {s.var.name} | {a.name for a in s.iter_args}
                block(s.body, inner)
                if s.iter_args:
                    assert isinstance(s.body[-1], Yield), f"{f.name}: carried loop without yield"
                    assert len(s.body[-1].values) == len(s.iter_args) == len(s.inits) \
                        == len(s.results)
                visible |= {r.name for r in s.results}
                if s.kind.value == "spmd":
                    visible |= set(definitions_of(s.body))
            elif isinstance(s, While):
                inner = visible | {a.name for a in s.iter_args}
                assert not (uses(s.cond) - inner)
                block(s.body, inner)
                assert isinstance(s.body[-1], Yield)
                visible |= {r.name for r in s.results}
            elif isinstance(s, If):
                assert not (uses(s.cond) - visible)
                block(s.then_body, visible)
                block(s.else_body, visible)
                if s.results:
                    for arm in (s.then_body, s.else_body):
                        assert isinstance(arm[-1], Yield), f"{f.name}: if arm without yield"
                        assert len(arm[-1].values) == len(s.results)
                visible |= {r.name for r in s.results}
            elif isinstance(s, Scope):
                block(s.body, visible)
                visible |= set(definitions_of(s.body))
                if s.task is not None:
                    visible.add(s.task.name)
            elif isinstance(s, (Return, Yield)):
                missing = uses(s.values) - visible
                assert not missing, f"{f.name}: {missing} used before definition in {s}"

    def definitions_of(body: tuple) -> list[str]:
        return definitions(Function("tmp", (), body, f.kind))

    block(f.body, {p.var.name for p in f.params})


def is_undefined(e: Any) -> bool:
    return isinstance(e, Attr) and e.value is None


def names(vs: Any) -> list[str]:
    return [v.name if isinstance(v, Var) else repr(v) for v in vs]
