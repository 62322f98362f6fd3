"""The closure of one op call site, written as Python source for its shape.

The general closure of an op call (`FnCompiler.op_call` wrapped in `FnCompiler.guard`)
costs a frame per operand (each a closure reading the environment), a list of the
operands, the guard's frame, and a test per optional step (cast, valid-shape tag, cost)
on every call; a block-by-block loop of scalar index arithmetic pays them thousands of
times per block. For each *shape* of call site — the kinds of its operands (a variable,
a constant, any other expression), whether the impl takes the task frame, which of the
optional steps apply — this module writes the equivalent function once:

    def make(impl, cast, tag, acct, span, op, x0, x1):
        def run(env):
            try:
                try:
                    a0 = env[x0]          # a variable operand, read in place
                except KeyError:
                    raise undefined(env, x0, span) from None
                a1 = x1(env)              # any other operand: its closure
                r = cast(impl(a0, a1))
                fr = env[FRAME]
                rec = fr.rec
                if rec is not None:
                    acct(rec, fr.costs, [a0, a1], r)
                return r
            except PyptoError: ...        # the guard's clauses, as FnCompiler.guard
        return run

and binds it per site (`make(...)`): the same steps in the same order, the same faults
(a missing variable, an impl's failure named after the op) as the general closure. The
source is compiled by the simulator's one source writer (`pypto.sim.engine.source`), as
`<pypto:op-call:KINDS#N>`; `SimConfig(source="plain")` uses the general closure instead
(`FnCompiler.quick_op_call`).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pypto.errors import PyptoError
from pypto.ir.span import Span
from pypto.sim.engine.source import dump_source, run_source
from pypto.sim.engine.values import FRAME, Env, Expr

VAR, CONST, EXPR = "var", "const", "expr"

SHAPE_NOTE = ("this is a bug in pypto's op implementation or type rule, not in the "
              "kernel")
ZERO_HINT = "guard the divisor; its value is only known at run time"


class ResultShapeError(Exception):
    """An impl returned a result of another size than its type rule declared."""


def undefined(env: Env, name: str, span: Span | None) -> Exception:
    """The fault of reading variable `name` before it has a value."""
    return env[FRAME].fault(f"variable '{name}' is used before it has a value", span)


def failed(env: Env, op: str, span: Span | None, exc: Exception) -> Exception:
    """The fault of op `op`'s impl failing with `exc` (not a ZeroDivisionError nor a
    ResultShapeError, which have faults of their own)."""
    return env[FRAME].fault(f"pl op '{op}' failed while simulating: "
                            f"{type(exc).__name__}: {exc}", span)


def divides_by_zero(env: Env, op: str, span: Span | None) -> Exception:
    return env[FRAME].fault(f"pl op '{op}' divides by zero", span, hint=ZERO_HINT)


def bad_shape(env: Env, exc: Exception, span: Span | None) -> Exception:
    return env[FRAME].fault(str(exc), span, note=SHAPE_NOTE)


_GLOBALS = {
    "FRAME": FRAME, "PyptoError": PyptoError, "ResultShapeError": ResultShapeError,
    "undefined": undefined, "failed": failed, "divides_by_zero": divides_by_zero,
    "bad_shape": bad_shape,
}

@dataclass(frozen=True)
class OpSteps:
    """The steps of one op call, in the order every form of the call runs them on its
    evaluated operands: `impl` (given the task frame as `ctx=` when `wants_ctx`), `cast`
    to the declared dtype, the valid-shape `tag`, the cost (`acct`, traced runs; when
    the task frame has a record), then the divisor watch (checks=("div",): `divisor` is
    (k, zero_at, found): `found(frame, at)` where `zero_at(operand k, result)` finds a
    zero). `FnCompiler.op_steps` makes it once per call site; the general closure
    (`FnCompiler.op_call`) and the written one (`op_closure`) both run it."""

    op: str
    span: Span | None
    impl: Callable[..., Any]
    wants_ctx: bool
    cast: Callable[[Any], Any] | None
    tag: Callable[[Env, Any], Any] | None
    acct: Callable[..., None] | None
    divisor: tuple[int, Callable, Callable] | None


# (operand kinds, takes the frame, cast, tag, cost, the operand whose zeros are watched,
# assigns its result)
Shape = tuple[tuple[str, ...], bool, bool, bool, bool, int, bool]
_MAKERS: dict[Shape, tuple[Callable[..., Expr], str]] = {}  # -> (maker, its file name)


def _source(shape: Shape) -> str:
    kinds, ctx, cast, tag, acct, watched, store = shape
    n = len(kinds)
    xs = [f"x{i}" for i in range(n)]
    lines = [f"def make(impl, cast, tag, acct, span, vspans, op, zero_at, found, target"
             f"{''.join(', ' + x for x in xs)}):",
             "    def run(env):",
             "        try:"]
    body: list[str] = []
    args = []
    for i, k in enumerate(kinds):
        if k == VAR:
            body += ["try:",
                     f"    a{i} = env[x{i}]",
                     "except KeyError:",
                     f"    raise undefined(env, x{i}, vspans[{i}]) from None"]
            args.append(f"a{i}")
        elif k == EXPR:
            body.append(f"a{i} = x{i}(env)")
            args.append(f"a{i}")
        else:
            args.append(f"x{i}")
    arglist = ", ".join(args)
    if ctx:
        body += ["fr = env[FRAME]", "fr.span = span",
                 f"r = impl({arglist}{', ' if args else ''}ctx=fr)"]
    else:
        body.append(f"r = impl({arglist})")
    if cast:
        body.append("r = cast(r)")
    if tag:
        body.append("r = tag(env, r)")
    if acct:
        if not ctx:
            body.append("fr = env[FRAME]")
        body += ["rec = fr.rec", "if rec is not None:",
                 f"    acct(rec, fr.costs, [{arglist}], r)"]
    if watched >= 0:
        body += [f"at = zero_at({args[watched]}, r)", "if at is not None:",
                 "    found(env[FRAME], at)"]
    body += ["env[target] = r", "return None"] if store else ["return r"]
    lines += ["            " + b for b in body]
    lines += [
        "        except PyptoError:",
        "            raise",
        "        except RecursionError:",
        "            raise",
        "        except ResultShapeError as exc:",
        "            raise bad_shape(env, exc, span) from None",
        "        except ZeroDivisionError:",
        "            raise divides_by_zero(env, op, span) from None",
        "        except Exception as exc:",
        "            raise failed(env, op, span, exc) from exc",
        "    return run",
    ]
    return "\n".join(lines) + "\n"


def op_closure(operands: list[tuple[str, Any, Span | None]], steps: OpSteps,
               store: str | None = None, dump: str | None = None) -> Expr:
    """The guarded closure of one op call running `steps`: `operands` are (kind, what,
    span) with kind VAR (what: the variable's name), CONST (its value) or EXPR (its
    closure). With `store`, the closure is the statement assigning the result to that
    variable (it returns None). `dump`: the directory the maker's source is written to
    (`SimConfig.source_dump`)."""
    divisor = steps.divisor
    watched, zero_at, found = divisor if divisor is not None else (-1, None, None)
    shape: Shape = (tuple(k for k, _, _ in operands), steps.wants_ctx,
                    steps.cast is not None, steps.tag is not None, steps.acct is not None,
                    watched, store is not None)
    got = _MAKERS.get(shape)
    if got is None:
        ns: dict[str, Any] = dict(_GLOBALS)
        # (a maker lives as long as the process: its lines stay in linecache)
        name = run_source("op-call", "_".join(shape[0]) or "no_operands", _source(shape), ns)
        got = _MAKERS[shape] = (ns["make"], name)
    make, filename = got
    if dump is not None:
        dump_source(filename, dump)
    return make(steps.impl, steps.cast, steps.tag, steps.acct, steps.span,
                tuple(s for _, _, s in operands), steps.op, zero_at, found, store,
                *(w for _, w, _ in operands))


__all__ = ["CONST", "EXPR", "VAR", "OpSteps", "ResultShapeError", "op_closure"]
