"""InlineFunctions: splice every `@pl.jit.inline` body into its callers.

Callee locals are alpha-renamed (`x` → `x__inline_<name><k>`) so they cannot
clash with the caller's names; parameters become assignments from the call's
arguments; the final `return` becomes an assignment to the call's targets.
Inline functions disappear from the program afterwards.
"""
from __future__ import annotations

import itertools
from typing import Any

from pypto.ir.nodes import Assign, CallFunc, Eval, FunctionKind, ListExpr, Program, Return, Var
from pypto.ir.transform import Mutator, map_bodies
from pypto.ir.types import TupleType
from pypto.passes.base import Pass, PassContext


class _Rename(Mutator):
    def __init__(self, suffix: str):
        self.suffix = suffix
        self.map: dict[str, str] = {}

    def visit_Var(self, v: Var) -> Var:
        new = self.map.setdefault(v.name, f"{v.name}__{self.suffix}")
        t = self.visit_type(v.type)
        return Var(new, t, v.uid, v.span)


class InlineFunctions(Pass):
    name = "inline_functions"
    summary = "splice @pl.jit.inline bodies into their callers"

    def run(self, program: Program, ctx: PassContext) -> Program:
        funcs = {f.name: f for f in program.functions}
        counter = itertools.count(1)

        def expand(body: tuple) -> tuple:
            out: list = []
            for stmt in body:
                call = _inline_call(stmt, funcs)
                if call is None:
                    out.append(_recurse(stmt))
                    continue
                callee = funcs[call.func]
                ren = _Rename(f"{callee.attr('source_name', callee.name)}{next(counter)}")
                params = ren.visit(tuple(p.var for p in callee.params))
                for pv, arg in zip(params, call.args):
                    out.append(Assign((pv,), arg, stmt.span))
                inner = expand(ren.visit(callee.body))
                for s in inner:
                    if isinstance(s, Return):
                        if isinstance(stmt, Assign):
                            vals = s.values
                            if len(stmt.targets) == len(vals):
                                for t, v in zip(stmt.targets, vals):
                                    out.append(Assign((t,), v, s.span))
                            else:  # one target receiving several returned values
                                out.append(Assign(stmt.targets, _tuple_of(vals), s.span))
                        continue
                    out.append(s)
            return tuple(out)

        def _recurse(stmt: Any) -> Any:
            return map_bodies(stmt, expand)

        new_funcs = []
        for f in program.functions:
            if f.kind is FunctionKind.INLINE:
                continue
            new_funcs.append(f.__class__(f.name, f.params, expand(f.body), f.kind, f.returns,
                                         f.attrs, f.span))
        return Program(program.name, tuple(new_funcs), program.entry, program.span)


def _inline_call(stmt: Any, funcs: dict) -> CallFunc | None:
    value = stmt.value if isinstance(stmt, Assign) else stmt.expr if isinstance(stmt, Eval) \
        else None
    if isinstance(value, CallFunc) and value.func in funcs and \
            funcs[value.func].kind is FunctionKind.INLINE:
        return value
    return None


def _tuple_of(values: tuple) -> Any:
    return ListExpr(tuple(values), TupleType(tuple(v.type for v in values)))
