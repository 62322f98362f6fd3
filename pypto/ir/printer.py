"""Render IR as readable `pl`-style Python text (what the workbench shows)."""
from __future__ import annotations

from enum import Enum
from typing import Any

from pypto.ir.nodes import (Assign, Attr, Break, Call, CallFunc, Const, Continue, DynDim, Eval,
                            For, Function, GetItem, If, ListExpr, LoopKind, Program, Return,
                            Scope, ScopeKind, Var, While, Yield)
from pypto.ir.types import TensorType

_SCALAR_SYMBOLS = {"scalar.add": "+", "scalar.sub": "-", "scalar.mul": "*", "scalar.truediv": "/",
                   "scalar.floordiv": "//", "scalar.mod": "%", "scalar.lshift": "<<",
                   "scalar.rshift": ">>", "scalar.eq": "==", "scalar.ne": "!=", "scalar.lt": "<",
                   "scalar.le": "<=", "scalar.gt": ">", "scalar.ge": ">=", "scalar.and": "and",
                   "scalar.or": "or"}


def expr_str(e: Any) -> str:
    if isinstance(e, (Var, DynDim)):
        return e.name
    if isinstance(e, Const):
        return enum_str(e.value) if isinstance(e.value, Enum) else repr(e.value)
    if isinstance(e, Attr):
        v = e.value
        if isinstance(v, Enum):
            return enum_str(v)
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
        args = [expr_str(a) for a in e.args]
        if e.launch_attr("kind") == "device":  # a host's dispatch on one rank (pld)
            args.append(f"device={expr_str(e.launch_attr('device'))}")
        return f"self.{e.func}(" + ", ".join(args) + ")"
    if isinstance(e, (list, tuple)):
        return "[" + ", ".join(expr_str(i) for i in e) + "]"
    if isinstance(e, Enum):
        return enum_str(e)
    return repr(e)


def enum_str(v: Enum) -> str:
    """`pl.AtomicType.Add`; the communication enums live in `pld`."""
    space = "pld" if type(v).__module__ == "pypto.ir.distributed" else "pl"
    return f"{space}.{type(v).__name__}.{v.name}"


def _call_str(c: Call) -> str:
    sym = _SCALAR_SYMBOLS.get(c.op)
    if sym is not None:
        return f"({expr_str(c.args[0])} {sym} {expr_str(c.args[1])})"
    if c.op == "scalar.neg":
        return f"-{expr_str(c.args[0])}"
    if c.op == "scalar.not":
        return f"not {expr_str(c.args[0])}"
    from pypto.ops.registry import get

    op = get(c.op)
    params = list(op.signature.parameters.values())
    parts = []
    for p, a in zip(params, c.args):
        default = p.default
        if isinstance(a, (Attr, Const)) and p.default is not p.empty and a.value == default \
                and type(a.value) is type(default):
            continue
        if p.default is p.empty and p.kind is not p.KEYWORD_ONLY:
            parts.append(expr_str(a))
        else:
            parts.append(f"{p.name}={expr_str(a)}")
    name = op.names[0] if op.names else c.op
    return f"{name}(" + ", ".join(parts) + ")"


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
    if isinstance(e, CallFunc) and e.launch and e.launch_attr("kind") != "device":
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


__all__ = ["print_program", "print_function", "expr_str", "TensorType"]
