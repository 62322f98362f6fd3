"""LowerBreakContinue: replace `break` / `continue` by flags and guards.

After this pass loop bodies always run to their end, which is what ConvertToSSA
needs to thread carried values (a `break` would otherwise leave the loop with the
values of the iteration's start, losing updates made before the `break`).

For a loop whose body (outside nested loops) contains `break` or `continue`:

* a BOOL flag `__brk<k>` is set False before the loop; `break` becomes
  `__brk<k> = True`; a `pl.range` body is wrapped in `if not __brk<k>:` (the
  remaining iterations do nothing), a `pl.while_` condition gets `and not __brk<k>`;
* a BOOL flag `__cont<k>` is set False at the start of every iteration and
  `continue` becomes `__cont<k> = True`;
* the statements after an `if` that may exit run under `if not (flags):`.

The loop's own `pl.yield_` stays the last statement of the body. The flags are
ordinary names: ConvertToSSA carries them like any other value.
"""
from __future__ import annotations

import dataclasses
import itertools
from typing import Any

from pypto.ir import dtypes
from pypto.ir.nodes import (
    Assign,
    Break,
    Call,
    Const,
    Continue,
    For,
    If,
    LoopKind,
    Program,
    Scope,
    Var,
    While,
    Yield,
)
from pypto.ir.transform import map_bodies
from pypto.ir.types import ScalarType
from pypto.passes.base import Pass, PassContext

_BOOL = ScalarType(dtypes.BOOL)


def _exits(stmts: tuple) -> set[str]:
    """Kinds of exits ("break"/"continue") in `stmts` that belong to the enclosing loop."""
    out: set[str] = set()
    for s in stmts:
        if isinstance(s, Break):
            out.add("break")
        elif isinstance(s, Continue):
            out.add("continue")
        elif isinstance(s, If):
            out |= _exits(s.then_body) | _exits(s.else_body)
        elif isinstance(s, Scope):
            out |= _exits(s.body)
    return out


def _not(e: Any, span: Any) -> Call:
    return Call("scalar.not", (e,), (), _BOOL, span)


def _or(a: Any, b: Any, span: Any) -> Call:
    return Call("scalar.or", (a, b), (), _BOOL, span)


class _Lowering:
    def __init__(self) -> None:
        self.counter = itertools.count()

    def block(self, stmts: tuple) -> tuple:
        out: list = []
        for s in stmts:
            if isinstance(s, (For, While)) and not (isinstance(s, For)
                                                    and s.kind is LoopKind.SPMD):
                out.extend(self.loop(s))
            else:
                out.append(map_bodies(s, self.block))
        return tuple(out)

    def loop(self, s: Any) -> list:
        body = self.block(s.body)
        exits = _exits(body)
        if not exits:
            return [dataclasses.replace(s, body=body)]
        k = next(self.counter)
        span = s.span
        brk = Var(f"__brk{k}", _BOOL, span=span) if "break" in exits else None
        cont = Var(f"__cont{k}", _BOOL, span=span) if "continue" in exits else None
        flags = [f for f in (brk, cont) if f is not None]
        self.flags = (brk, cont)
        tail: tuple = ()
        if body and isinstance(body[-1], Yield):
            body, tail = body[:-1], (body[-1],)
        guarded = self.guard(body, brk, cont, flags)
        prefix = (Assign((cont,), Const(False, _BOOL, span), span),) if cont else ()
        before = [Assign((brk,), Const(False, _BOOL, span), span)] if brk else []
        if isinstance(s, For):
            inner = prefix + guarded
            if brk is not None:
                inner = (If(_not(brk, span), inner, (), (), span),)
            return before + [dataclasses.replace(s, body=inner + tail)]
        cond = s.cond
        if brk is not None:
            cond = Call("scalar.and", (cond, _not(brk, span)), (), _BOOL, span)
        return before + [dataclasses.replace(s, cond=cond, body=prefix + guarded + tail)]

    def guard(self, stmts: tuple, brk: Var | None, cont: Var | None, flags: list) -> tuple:
        out: list = []
        for i, s in enumerate(stmts):
            if isinstance(s, Break):
                out.append(Assign((brk,), Const(True, _BOOL, s.span), s.span))
                return tuple(out)
            if isinstance(s, Continue):
                out.append(Assign((cont,), Const(True, _BOOL, s.span), s.span))
                return tuple(out)
            if isinstance(s, (If, Scope)) and _exits((s,)):
                out.append(map_bodies(s, lambda b: self.guard(b, brk, cont, flags)))
                rest = stmts[i + 1:]
                if rest:
                    cond = flags[0] if len(flags) == 1 else _or(flags[0], flags[1], s.span)
                    out.append(If(_not(cond, s.span), self.guard(rest, brk, cont, flags), (),
                                  (), s.span))
                return tuple(out)
            out.append(s)
        return tuple(out)


class LowerBreakContinue(Pass):
    name = "lower_break_continue"
    summary = "break/continue become flags and guards (structured loops for SSA)"

    def run(self, program: Program, ctx: PassContext) -> Program:
        low = _Lowering()
        funcs = tuple(dataclasses.replace(f, body=low.block(f.body)) for f in program.functions)
        return Program(program.name, funcs, program.entry, program.span)


__all__ = ["LowerBreakContinue"]
