"""Compiling IR functions into closures: expressions, calls of functions and ops, launches.

Compilation turns every expression into a closure `f(env) -> value` and every statement
into a closure `s(env) -> signal` (`pypto.sim.engine.values`), so running a kernel does
no isinstance dispatch on IR nodes: the decisions (which op, which arguments are
constants, how to cast the result, whether the site is inside a region) are taken once,
at compile time. The closures hold no run state: what a run changes lives in the task
frame they find in their environment (`env[FRAME]`), so one compiled function serves
any number of runs.

The memory ops (windows, writes, element access, allocation, valid shapes, task
handles) are *intrinsics* (`pypto.sim.engine.intrinsics`); every other op runs its
registry `impl` and the result is cast to the dtype its type rule declared. Statements
are compiled by its base `StmtCompiler` (`pypto.sim.engine.statements`), launches by
`pypto.sim.engine.launches`.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from pypto.errors import PyptoError, SimulationError
from pypto.ir.distributed import DistributedTensorType
from pypto.ir.nodes import (
    Attr,
    Call,
    CallFunc,
    Const,
    DynDim,
    For,
    Function,
    GetItem,
    ListExpr,
    Var,
)
from pypto.ir.span import Span
from pypto.ir.transform import walk
from pypto.ir.types import ScalarType, ShapedType, TupleType, Type
from pypto.ops.facts import Role
from pypto.ops.numeric import with_valid
from pypto.ops.registry import OpDef, Unit, get
from pypto.sim.checks.divide import zero_at
from pypto.sim.engine.function import CompiledFunction, Host, Lowering
from pypto.sim.engine.group import compile_group
from pypto.sim.engine.intrinsics import intrinsic
from pypto.sim.engine.launches import launch as launch_closure
from pypto.sim.engine.launches import not_simulatable
from pypto.sim.engine.opcall import CONST, EXPR, VAR, OpSteps, ResultShapeError, op_closure
from pypto.sim.engine.statements import StmtCompiler
from pypto.sim.engine.values import FRAME, UNDEF, Env, Expr, Stmt, scalar_caster
from pypto.sim.faults import source_name
from pypto.sim.trace.costs import Accountant, accountant

_CHECKED_UNITS = (Unit.VECTOR, Unit.CUBE, Unit.MTE)  # ops whose operands the uninit check reads


class FnCompiler(StmtCompiler):
    """Compiles one IR function for `host` (the runtime whose settings it follows)."""

    def __init__(self, host: Host, func: Function, lowering: Lowering | None = None):
        self.host = host
        self.settings = host.settings
        self.func = func
        self.lowering = lowering
        self.in_region = func.kind.is_region
        self.cube_vars: set[str] = set()  # values held in L0C (storing them drains it)
        self.loop_vars: list[str] = []  # the loops being compiled, outermost first

    def compile(self) -> CompiledFunction:
        params = [(p.var.name, p.var.type, p.direction.value) for p in self.func.params]
        extern = self.func.attr("extern")
        top: list[Stmt] | None = None
        if extern is not None:
            body = not_simulatable(self.func, extern, None)
        elif self.func.attr("group"):
            body = compile_group(self, self.host, self.func, self.body)
        elif self.in_region:
            body = self.body(self.func.body)
        else:  # (orchestration: its statements are kept for the short path of a call)
            top = [self.stmt(s) for s in self.func.body]
            body = self.sequence(top)
        cf = CompiledFunction(self.func.name, self.func, params, body, self.in_region)
        cf.top = top
        for n in walk(self.func.body):
            if isinstance(n, Call) and get(n.op).role is Role.BARRIER:
                cf.has_syncall = True
                args = dict(zip(get(n.op).params, n.args))
                mode = args.get("mode")
                if isinstance(mode, (Attr, Const)):
                    cf.syncall_mode = str(mode.value)
                ct = args.get("core_type")
                if isinstance(ct, (Attr, Const)):
                    cf.syncall_core_type = str(ct.value)
        return cf

    # -- expressions -------------------------------------------------------------------

    def const(self, e: Any) -> tuple[bool, Any]:
        """(True, value) when `e` is a compile-time constant, else (False, None)."""
        if isinstance(e, (Const, Attr)):
            return True, e.value
        if isinstance(e, ListExpr):
            items = [self.const(i) for i in e.items]
            if all(c for c, _ in items):
                return True, [v for _, v in items]
            return False, None
        if isinstance(e, (int, float, bool, str)) or e is None:
            return True, e
        return False, None

    def expr(self, e: Any, tolerant: bool = False) -> Expr:
        ok, v = self.const(e)
        if ok:
            return lambda env: v
        if isinstance(e, Var):
            name = e.name
            if tolerant:
                return lambda env: env.get(name, UNDEF)
            span = e.span

            def var(env: Env) -> Any:
                try:
                    return env[name]
                except KeyError:
                    raise env[FRAME].fault(f"variable '{name}' is used before it has a value",
                                           span) from None

            return var
        if isinstance(e, DynDim):
            dim_name, dim_span = e.name, e.span

            def dim(env: Env) -> int:
                fr = env[FRAME]
                try:
                    return fr.run.dyn[dim_name]
                except KeyError:
                    raise fr.fault(f"dynamic dim {dim_name} is not bound by any argument",
                                   dim_span) from None

            return dim
        if isinstance(e, ListExpr):
            fns = [self.expr(i) for i in e.items]
            return lambda env: [f(env) for f in fns]
        if isinstance(e, Call):
            return self.call(e)
        if isinstance(e, GetItem):
            vf = self.expr(e.value)
            i = e.index
            return lambda env: vf(env)[i]
        if isinstance(e, CallFunc):
            if e.launch:
                return self.launch(e, None)
            return self.plain_call(e)
        if isinstance(e, (list, tuple)):
            fns = [self.expr(i) for i in e]
            return lambda env: [f(env) for f in fns]
        raise SimulationError(f"the simulator cannot evaluate {type(e).__name__} nodes",
                              getattr(e, "span", None))

    def plain_call(self, e: CallFunc) -> Expr:
        host = self.host
        argfns = [self.expr(a, tolerant=True) for a in e.args]
        name = e.func
        single = not isinstance(e.type, TupleType)

        def run(env: Env) -> Any:
            rets = host.function(name).call([f(env) for f in argfns], env[FRAME])
            if single:
                return rets[0] if rets else None
            return rets

        return run

    def loop_nest(self, s: For, seq: Stmt) -> Stmt:
        return self.host.launch_nest(self, s, seq)

    def launch(self, e: CallFunc, targets: tuple[Var, ...] | None) -> Expr:
        return launch_closure(self, e, targets)

    # -- op calls ---------------------------------------------------------------------

    def call(self, e: Call, target: str | None = None) -> Expr:
        if self.lowering is not None:
            own = self.lowering.lower_call(e, target)
            if own is not None:
                return own
        try:
            op: OpDef | None = get(e.op)
        except KeyError:  # reported by op_call
            op = None
        factory = intrinsic(op) if op is not None else None
        if factory is not None:
            fn = factory(self, e, target)
        else:
            if op is not None and not (self.settings.check_uninit and op.unit in _CHECKED_UNITS):
                quick = self.quick_op_call(e, op)
                if quick is not None:  # (guarded itself)
                    return quick
            fn = self.op_call(e)
            if self.settings.check_uninit and op is not None and op.unit in _CHECKED_UNITS:
                fn = _uninit_checked(e, op, fn)
        return self.guard(fn, e)

    def call_assign(self, e: Call, target: str) -> Stmt:
        """The statement `target = e`: a registry op's call assigns its result itself
        (one frame less per statement) where calls compile the plain way (a subclass
        compiling calls its own way, a `Lowering`, keeps the general statement)."""
        if self.lowering is None and not self.settings.check_uninit:
            try:
                op: OpDef | None = get(e.op)
            except KeyError:
                op = None
            if op is not None and intrinsic(op) is None:
                quick = self.quick_op_call(e, op, target)
                if quick is not None:
                    return quick
        return super().call_assign(e, target)

    def quick_op_call(self, e: Call, op: OpDef, store: str | None = None) -> Expr | None:
        """The guarded closure of the registry op call `e` written for its shape
        (`pypto.sim.engine.opcall`; with `store`, the statement assigning its result to
        that variable), or None where `op_call` builds it (no impl)."""
        impl = op.impl
        if impl is None or self.settings.source == "plain":  # (plain: `op_call`'s closure)
            return None
        public = [i for i, p in enumerate(op.params) if not p.startswith("_") and i < len(e.args)]
        operands: list[tuple[str, Any, Span | None]] = []
        for i in public:
            a = e.args[i]
            ok, v = self.const(a)
            if ok:
                operands.append((CONST, v, None))
            elif isinstance(a, Var):
                operands.append((VAR, a.name, a.span))
            else:
                operands.append((EXPR, self.expr(a), None))
        return op_closure(operands, self.op_steps(e, op, impl, public), store,
                          self.settings.source_dump)

    def op_steps(self, e: Call, op: OpDef, impl: Callable[..., Any],
                 public: list[int]) -> OpSteps:
        """The steps of the op call `e` (`OpSteps`), after its operands compiled (the
        valid-shape tag compiles its dims' expressions after them)."""
        cast = self.caster(e.type, f"pl op '{e.op}'")
        acct = self.accountant(e, op, public) if self.settings.trace else None
        tag = self._typed_valid(e.type)
        k = self.watched_divisor(e, op, public)
        divisor = None
        if k is not None:
            ok, d = self.const(e.args[public[k]])
            # (a constant divisor other than 0 and not an array never divides by zero:
            # `zero_at` of it is None whatever the result)
            if not (ok and not isinstance(d, (np.ndarray, list, str, bytes)) and d != 0):
                divisor = (k, zero_at, _zero_division(e, op, e.args[public[k]]))
        return OpSteps(e.op, e.span, impl, op.wants_ctx, cast, tag, acct, divisor)

    def guard(self, fn: Expr, e: Call) -> Expr:
        """`fn` with the failures of an impl turned into faults naming the op."""
        span = e.span
        op = e.op

        def guarded(env: Env) -> Any:
            try:
                return fn(env)
            except PyptoError:
                raise
            except RecursionError:
                raise
            except ResultShapeError as exc:
                raise env[FRAME].fault(str(exc), span,
                                       note="this is a bug in pypto's op implementation or "
                                            "type rule, not in the kernel") from None
            except ZeroDivisionError:  # a run-time scalar divisor of 0: the kernel's fault
                raise env[FRAME].fault(
                    f"pl op '{op}' divides by zero", span,
                    hint="guard the divisor; its value is only known at run time") from None
            except Exception as exc:  # an impl failed on these values
                raise env[FRAME].fault(f"pl op '{op}' failed while simulating: "
                                       f"{type(exc).__name__}: {exc}", span) from exc

        return guarded

    def caster(self, t: Type | None, what: str) -> Callable[[Any], Any] | None:
        """The cast of a result to the type its type rule declared (None: keep it); a
        result of another size raises `ResultShapeError` (the guard reports it)."""
        if isinstance(t, DistributedTensorType):
            return None  # a window is itself (a host's view of it is no array)
        if isinstance(t, ShapedType):
            npdt = t.dtype.np
            static = t.static_shape()
            nd = np.ndarray
            asarray = np.asarray

            def cast(r: Any) -> Any:
                if not isinstance(r, nd):
                    r = asarray(r)
                if r.dtype != npdt:
                    r = r.astype(npdt)
                if static is not None and r.shape != static:
                    if r.size == math.prod(static):
                        r = r.reshape(static)
                    else:
                        raise ResultShapeError(f"{what} produced shape {list(r.shape)} but "
                                               f"its type rule declared {list(static)}")
                return r

            return cast
        if isinstance(t, ScalarType):
            return scalar_caster(t.dtype)
        return None

    def op_call(self, e: Call) -> Expr:
        try:
            op = get(e.op)
        except KeyError:
            raise SimulationError(f"unknown op '{e.op}'", e.span) from None
        impl = op.impl
        span = e.span
        if impl is None:
            def missing(env: Env) -> Any:
                raise env[FRAME].fault(f"pl op '{e.op}' has no simulator implementation yet",
                                       span, hint="ask for it, or rewrite with ops the "
                                                  "simulator knows")
            return missing
        names = op.params
        public = [i for i, p in enumerate(names) if not p.startswith("_") and i < len(e.args)]
        argfns = [self.expr(e.args[i]) for i in public]
        consts = [self.const(e.args[i]) for i in public]
        steps = self.op_steps(e, op, impl, public)
        cast, tag, acct, wants_ctx = steps.cast, steps.tag, steps.acct, steps.wants_ctx
        # all arguments constant: evaluated once, here
        cvals = [v for _, v in consts] if all(c for c, _ in consts) else None
        if steps.divisor is not None:  # checks=("div",): an integer division (its own
            # closure, so that no other op pays for the check)
            k, _, found = steps.divisor

            def divide(env: Env) -> Any:
                args = cvals if cvals is not None else [f(env) for f in argfns]
                r = impl(*args)
                if cast is not None:
                    r = cast(r)
                if tag is not None:
                    r = tag(env, r)
                if acct is not None:
                    fr = env[FRAME]
                    if fr.rec is not None:
                        acct(fr.rec, fr.costs, args, r)
                at = zero_at(args[k], r)
                if at is not None:
                    found(env[FRAME], at)
                return r

            return divide

        def run(env: Env) -> Any:
            args = cvals if cvals is not None else [f(env) for f in argfns]
            if wants_ctx:
                fr = env[FRAME]
                fr.span = span
                r = impl(*args, ctx=fr)
            else:
                r = impl(*args)
            if cast is not None:
                r = cast(r)
            if tag is not None:
                r = tag(env, r)
            if acct is not None:
                fr = env[FRAME]
                if fr.rec is not None:
                    acct(fr.rec, fr.costs, args, r)
            return r

        return run

    def watched_divisor(self, e: Call, op: OpDef, public: list[int]) -> int | None:
        """checks=("div",): the position (among the evaluated arguments) of the divisor of
        an op dividing integers, else None."""
        t = e.type
        if not self.settings.check_div or op.divisor is None or op.wants_ctx or \
                not isinstance(t, (ShapedType, ScalarType)) or not t.dtype.is_int():
            return None
        i = op.params.index(op.divisor)
        return public.index(i) if i in public else None

    def _typed_valid(self, t: Type | None) -> Callable[[Env, Any], Any] | None:
        """Tag results with the valid shape their type rule declares (when the impl did not)."""
        if not isinstance(t, ShapedType) or t.valid_shape is None:
            return None
        fns = [self.expr(d) for d in t.valid_shape]

        def tag(env: Env, r: Any) -> Any:
            if getattr(r, "valid", None) is not None or not isinstance(r, np.ndarray):
                return r
            try:
                v = tuple(int(f(env)) for f in fns)
            except (SimulationError, KeyError, TypeError, ValueError):
                return r
            if len(v) != r.ndim or v == r.shape:
                return r
            return with_valid(r, tuple(min(a, b) for a, b in zip(v, r.shape)))

        return tag

    def accountant(self, e: Call, op: OpDef, public: list[int]) -> Accountant:
        return accountant(self.settings.platform, e, op, public)


def _zero_division(e: Call, op: OpDef, divisor: Any) -> Callable[[Any, tuple], None]:
    """What an integer division by zero at `e` does (`checks=("div",)`): a batched run
    falls back to block by block (which finds it again, per block); otherwise the run's
    divide log reports it (raises when strict)."""
    span = e.span
    opname = f"scalar {op.symbol}" if op.unit is Unit.SCALAR and op.symbol else f"pl.{e.op}"
    name = _divisor_name(divisor)

    def found(fr: Any, at: tuple) -> None:
        if fr.batched:
            raise ZeroDivisionError(f"{opname} divides by zero in a batched run")
        log = fr.run.divides
        if log is not None:
            log.found(fr, span, opname, name, at)

    return found


def _divisor_name(e: Any) -> str:
    """The name of what a division divides by: a variable, a constant, or the tensor a
    window or view of which it is ("<expression>" when none)."""
    while isinstance(e, Call):
        op = get(e.op)
        src = op.window_read.tensor if op.window_read is not None else \
            op.params[0] if op.view is not None else None
        if src is None:
            return "<expression>"
        e = e.args[op.params.index(src)]
    if isinstance(e, Var):
        return e.name
    return str(e.value) if isinstance(e, Const) else "<expression>"


def _uninit_checked(e: Call, op: OpDef, fn: Expr) -> Expr:
    """`fn` (an op's closure) with its array operands checked before it runs and its
    in-place parameter marked written after (`checks=("uninit",)`). Only variables are
    checked: an operand computed by a nested call is a fresh value (its own reads are
    checked there)."""
    params = list(zip(op.params, e.args))
    reads = [(v.name, source_name(v.name)) for p, v in params
             if p != op.writes and isinstance(v, Var) and isinstance(v.type, ShapedType)]
    written = [v.name for p, v in params if p == op.writes and isinstance(v, Var)]
    if not reads and not written:
        return fn
    span, opname = e.span, f"pl.{e.op}"

    def checked(env: Env) -> Any:
        fr = env[FRAME]
        track = fr.run.uninit
        for var, user in reads:
            a = env.get(var)
            if a is not None:
                track.read_valid(fr, a, span, opname, user)
        r = fn(env)
        for var in written:
            a = env.get(var)
            if a is not None:
                track.wrote(a)
        return r

    return checked


__all__ = ["FnCompiler"]
