"""Render IR as readable `pl`-style Python text (what the workbench shows).

The IR does not know the op table (it sits above the IR): how a call of an op is
spelled - its public name, its signature (for keyword arguments and defaults left
out), the Python operator of a scalar op - comes from the lookup that `pypto.ops`
installs with `use_op_spellings` when it loads. Without one, calls print as
`op(args...)`.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from enum import Enum
from typing import Any, Callable

from pypto.ir.nodes import (Assign, Attr, Break, Call, CallFunc, Const, Continue, DynDim, Eval,
                            For, Function, GetItem, If, ListExpr, LoopKind, Program, Return,
                            Scope, ScopeKind, Var, While, Yield)



@dataclass(frozen=True)
class OpSpelling:
    """How a call of one op is written."""

    name: str  # the public spelling, e.g. "pl.row_sum"
    params: tuple[inspect.Parameter, ...]  # the op's signature, in argument order
    symbol: str | None = None  # a Python operator: infix with two operands, else prefix


_SPELLINGS: list[Callable[[str], OpSpelling | None]] = []


def use_op_spellings(lookup: Callable[[str], OpSpelling | None]) -> None:
    """Spell op calls as `lookup(op name)` says (installed by `pypto.ops`)."""
    _SPELLINGS[:] = [lookup]


def expr_str(e: Any) -> str:
    if isinstance(e, (Var, DynDim)):
        return e.name
    if isinstance(e, Const):
        return repr(e.value)
    if isinstance(e, Attr):
        v = e.value
        if isinstance(v, Enum):
            return f"pl.{type(v).__name__}.{v.name}"
        if isinstance(v, (tuple, list)):
            return "[" + ", ".join(expr_str(i) if not isinstance(i, str) else repr(i)
                                   for i in v) + "]"
        return repr(v)
    if isinstance(e, ListExpr):
        return "[" + ", ".join(expr_str(i) for i in e.items) + "]"
    if isinstance(e, GetItem):
        return f"{expr_str(e.value)}[{e.index}]"
    if isinstance(e, Call):
        return _call_str(e)
    if isinstance(e, CallFunc):
        return f"self.{e.func}(" + ", ".join(expr_str(a) for a in e.args) + ")"
    if isinstance(e, (list, tuple)):
        return "[" + ", ".join(expr_str(i) for i in e) + "]"
    if isinstance(e, Enum):
        return f"pl.{type(e).__name__}.{e.name}"
    return repr(e)


def _call_str(c: Call) -> str:
    op = _SPELLINGS[0](c.op) if _SPELLINGS else None
    if op is None:
        return f"{c.op}(" + ", ".join(expr_str(a) for a in c.args) + ")"
    sym = op.symbol
    if sym is not None and len(c.args) == 2:
        return f"({expr_str(c.args[0])} {sym} {expr_str(c.args[1])})"
    if sym is not None and len(c.args) == 1:
        return f"{sym}{' ' if sym.isalpha() else ''}{expr_str(c.args[0])}"
    parts = []
    for p, a in zip(op.params, c.args):
        default = p.default
        if isinstance(a, (Attr, Const)) and p.default is not p.empty and a.value == default \
                and type(a.value) is type(default):
            continue
        if p.default is p.empty:
            parts.append(expr_str(a))
        else:
            parts.append(f"{p.name}={expr_str(a)}")
    return f"{op.name}(" + ", ".join(parts) + ")"


def type_str(t: Any) -> str:
    return str(t)


class _Printer:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def line(self, depth: int, text: str) -> None:
        self.lines.append("    " * depth + text)

    def body(self, stmts: tuple, depth: int) -> None:
        if not stmts:
            self.line(depth, "pass")
        for s in stmts:
            self.stmt(s, depth)

    def stmt(self, s: Any, d: int) -> None:
        if isinstance(s, Assign):
            lhs = ", ".join(t.name for t in s.targets)
            ann = f": {type_str(s.targets[0].type)}" if len(s.targets) == 1 else ""
            self.line(d, f"{lhs}{ann} = {expr_str(s.value)}{_launch_comment(s.value)}")
        elif isinstance(s, Eval):
            self.line(d, expr_str(s.expr) + _launch_comment(s.expr))
        elif isinstance(s, For):
            self._for(s, d)
        elif isinstance(s, While):
            carried = ", ".join(a.name for a in s.iter_args)
            inits = ", ".join(expr_str(i) for i in s.inits)
            self.line(d, f"for ({carried},) in pl.while_(init_values=({inits},)):")
            self.line(d + 1, f"pl.cond({expr_str(s.cond)})")
            self.body(s.body, d + 1)
            if s.results:
                self.line(d, "# results: " + ", ".join(r.name for r in s.results))
        elif isinstance(s, If):
            self.line(d, f"if {expr_str(s.cond)}:")
            self.body(s.then_body, d + 1)
            if s.else_body:
                self.line(d, "else:")
                self.body(s.else_body, d + 1)
            if s.results:
                self.line(d, "# results: " + ", ".join(r.name for r in s.results))
        elif isinstance(s, Yield):
            self.line(d, "pl.yield_(" + ", ".join(expr_str(v) for v in s.values) + ")")
        elif isinstance(s, Return):
            self.line(d, "return " + ", ".join(expr_str(v) for v in s.values))
        elif isinstance(s, Break):
            self.line(d, "break")
        elif isinstance(s, Continue):
            self.line(d, "continue")
        elif isinstance(s, Scope):
            self._scope(s, d)
        else:
            self.line(d, f"<{type(s).__name__}>")

    def _for(self, s: For, d: int) -> None:
        args = [expr_str(s.start), expr_str(s.stop)]
        if not (isinstance(s.step, Const) and s.step.value == 1):
            args.append(expr_str(s.step))
        extra = [f"{k}={expr_str(v)}" for k, v in s.attrs if k in ("stage", "name_hint") and v]
        if s.iter_args:
            extra.append("init_values=(" + ", ".join(expr_str(i) for i in s.inits) + ",)")
            target = f"{s.var.name}, (" + ", ".join(a.name for a in s.iter_args) + ",)"
        else:
            target = s.var.name
        if s.kind is LoopKind.SPMD:
            args = [expr_str(s.stop)]
        self.line(d, f"for {target} in pl.{s.kind.value}(" + ", ".join(args + extra) + "):")
        self.body(s.body, d + 1)
        if s.results:
            self.line(d, "# results: " + ", ".join(r.name for r in s.results))

    def _scope(self, s: Scope, d: int) -> None:
        kw = []
        if s.kind is ScopeKind.INCORE:
            kw.append("level=pl.Level.CORE_GROUP")
        for k, v in s.attrs:
            if k == "level" or v in ("", (), False, None):
                continue
            kw.append(f"{k}={expr_str(v) if not isinstance(v, str) else repr(v)}")
        head = {ScopeKind.SPMD: "pl.spmd", ScopeKind.INCORE: "pl.at",
                ScopeKind.RUNTIME: "pl.scope", ScopeKind.MANUAL: "pl.manual_scope",
                ScopeKind.CLUSTER: "pl.cluster", ScopeKind.SPLIT_AIV: "pl.split_aiv"}[s.kind]
        tail = f" as {s.task.name}" if s.task is not None else ""
        self.line(d, f"with {head}({', '.join(kw)}){tail}:")
        self.body(s.body, d + 1)

    def function(self, f: Function, d: int = 0) -> None:
        params = []
        for p in f.params:
            t = type_str(p.var.type)
            if p.direction.value != "In":
                t = f"pl.{p.direction.value}[{t}]"
            params.append(f"{p.var.name}: {t}")
        self.line(d, f"@pl.function(type=pl.FunctionType.{f.kind.value})")
        self.line(d, f"def {f.name}(self, " + ", ".join(params) + "):")
        self.body(f.body, d + 1)


def _launch_comment(e: Any) -> str:
    if isinstance(e, CallFunc) and e.launch:
        la = dict(e.launch)
        parts = [f"task {la.get('kind')}"]
        if la.get("name_hint"):
            parts.append(repr(la["name_hint"]))
        if la.get("core_num") is not None:
            parts.append(f"blocks={expr_str(la['core_num'])}")
        if la.get("deps"):
            parts.append("deps=[" + ", ".join(expr_str(x) for x in la["deps"]) + "]")
        return "  # " + " ".join(parts)
    return ""


def print_function(f: Function) -> str:
    p = _Printer()
    p.function(f)
    return "\n".join(p.lines)


def print_program(prog: Program) -> str:
    p = _Printer()
    p.line(0, "@pl.program")
    p.line(0, f"class {prog.name}:")
    for i, f in enumerate(prog.functions):
        if i:
            p.lines.append("")
        p.function(f, 1)
    return "\n".join(p.lines)


__all__ = ["print_program", "print_function", "expr_str", "OpSpelling", "use_op_spellings"]
