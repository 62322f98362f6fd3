"""Compiling IR functions into closures: expressions, calls of functions and ops, launches.

Statements are compiled by the `StmtCompiler` mixin (`pypto.sim.statements`), the memory
ops by `pypto.sim.intrinsics`, trace-mode cost accounting by `pypto.sim.costs`.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from pypto.errors import PyptoError, SimulationError
from pypto.ir.nodes import Attr, Call, CallFunc, Const, DynDim, Function, GetItem, ListExpr, Var
from pypto.ir.transform import walk
from pypto.ir.types import ScalarType, ShapedType
from pypto.ops.numeric import with_valid
from pypto.ops.facts import Role
from pypto.ops.registry import get
from pypto.sim.statements import StmtCompiler
from pypto.sim.values import _REGION_KINDS, UNDEF, _flatten_deps, _scalar_caster


class CompiledFunction:
    __slots__ = ("name", "func", "params", "body", "has_syncall", "syncall_mode",
                 "syncall_core_type", "call", "in_region")

    def __init__(self, name: str, func: Function, params: list, body: Callable, in_region: bool):
        self.name = name
        self.func = func
        self.params = params  # [(name, type, direction)]
        self.body = body
        self.in_region = in_region
        self.has_syncall = False
        self.syncall_mode = "hard"
        self.syncall_core_type = "mix"
        names = [p[0] for p in params]
        undef = UNDEF

        def call(args: list) -> tuple:
            env = {}
            for n, a in zip(names, args):
                if a is not undef:
                    env[n] = a
            body(env)
            return env.get("$ret", ())

        self.call = call


# --- the compiler -----------------------------------------------------------------------


class FnCompiler(StmtCompiler):
    def __init__(self, machine: Any, func: Function):
        self.m = machine
        self.func = func
        self.in_region = func.kind in _REGION_KINDS
        self.cube_vars: set[str] = set()
        self.split_aiv_depth = 0

    def compile(self) -> CompiledFunction:
        params = [(p.var.name, p.var.type, p.direction.value) for p in self.func.params]
        body = self.body(self.func.body)
        cf = CompiledFunction(self.func.name, self.func, params, body, self.in_region)
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

    def expr(self, e: Any, tolerant: bool = False) -> Callable:
        ok, v = self.const(e)
        if ok:
            return lambda env: v
        if isinstance(e, Var):
            name = e.name
            if tolerant:
                return lambda env: env.get(name, UNDEF)
            m = self.m

            def var(env: dict) -> Any:
                try:
                    return env[name]
                except KeyError:
                    raise m.fault(f"variable '{name}' is used before it has a value",
                                  e.span) from None

            return var
        if isinstance(e, DynDim):
            name = e.name
            dyn = self.m.dyn

            def dim(env: dict) -> int:
                try:
                    return dyn[name]
                except KeyError:
                    raise self.m.fault(f"dynamic dim {name} is not bound by any argument",
                                       e.span) from None

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
            if dict(e.launch):
                return self.launch(e, None)
            return self.plain_call(e)
        if isinstance(e, (list, tuple)):
            fns = [self.expr(i) for i in e]
            return lambda env: [f(env) for f in fns]
        raise SimulationError(f"the simulator cannot evaluate {type(e).__name__} nodes",
                              getattr(e, "span", None))

    def plain_call(self, e: CallFunc) -> Callable:
        m = self.m
        argfns = [self.expr(a, tolerant=True) for a in e.args]
        name = e.func
        single = not (e.type is not None and type(e.type).__name__ == "TupleType")

        def run(env: dict) -> Any:
            cf = m.function(name)
            rets = cf.call([f(env) for f in argfns])
            if single:
                return rets[0] if rets else None
            return rets

        return run

    # -- launches ---------------------------------------------------------------------

    def launch(self, e: CallFunc, targets: tuple | None) -> Callable:
        m = self.m
        info = dict(e.launch)
        sp = e.span
        hint = info.get("name_hint") or e.func
        info["_label"] = f"'{hint}' ({sp.file}:{sp.line})" if sp is not None and sp.known \
            else f"'{hint}'"
        argfns = [self.expr(a, tolerant=True) for a in e.args]
        core = info.get("core_num")
        core_f = None if core is None else self.expr(core)
        deps_f = [self.expr(d, tolerant=True) for d in (info.get("deps") or ())]
        name = e.func
        span = e.span
        tnames = [t.name for t in targets] if targets else None

        def run(env: dict) -> Any:
            args = [f(env) for f in argfns]
            n = 1 if core_f is None else int(core_f(env))
            deps = _flatten_deps([f(env) for f in deps_f])
            rets, tid = m.launch(name, args, n, deps, info, span)
            if tnames is None:
                return tid
            outs = tnames[:-1]
            for t, r in zip(outs, rets):
                env[t] = r
            env[tnames[-1]] = tid
            return None

        return run

    # -- op calls ---------------------------------------------------------------------

    def call(self, e: Call, target: str | None = None) -> Callable:
        from pypto.sim.intrinsics import intrinsic

        try:
            factory = intrinsic(get(e.op))
        except KeyError:  # reported by op_call
            factory = None
        if factory is not None:
            fn = factory(self, e, target)
        else:
            fn = self.op_call(e)
            if self.m.uninit is not None:  # checks=("uninit",): operands read, in-place writes
                fn = self.m.uninit.wrap_op(self, e, fn)
        return self._guard(fn, e)

    def _guard(self, fn: Callable, e: Call) -> Callable:
        m = self.m
        span = e.span
        op = e.op

        def guarded(env: dict) -> Any:
            try:
                return fn(env)
            except PyptoError:
                raise
            except RecursionError:
                raise
            except ZeroDivisionError:  # a run-time scalar divisor of 0: the kernel's fault
                raise m.fault(f"pl op '{op}' divides by zero", span,
                              hint="guard the divisor; its value is only known at run time"
                              ) from None
            except Exception as exc:  # noqa: BLE001 - an impl failed on these values
                raise m.fault(f"pl op '{op}' failed while simulating: "
                              f"{type(exc).__name__}: {exc}", span) from exc

        return guarded

    def caster(self, t: Any, what: str, span: Any = None) -> Callable | None:
        m = self.m
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
                        raise m.fault(f"{what} produced shape {list(r.shape)} but its type rule "
                                      f"declared {list(static)}", span,
                                      note="this is a bug in pypto's op implementation or type "
                                           "rule, not in the kernel")
                return r

            return cast
        if isinstance(t, ScalarType):
            return _scalar_caster(t.dtype)
        return None

    def op_call(self, e: Call) -> Callable:
        m = self.m
        try:
            op = get(e.op)
        except KeyError:
            raise SimulationError(f"unknown op '{e.op}'", e.span) from None
        impl = op.impl
        span = e.span
        if impl is None:
            def missing(env: dict) -> Any:
                raise m.fault(f"pl op '{e.op}' has no simulator implementation yet", span,
                              hint="ask for it, or rewrite with ops the simulator knows")
            return missing
        names = op.params
        public = [i for i, p in enumerate(names) if not p.startswith("_") and i < len(e.args)]
        argfns = [self.expr(e.args[i]) for i in public]
        consts = [self.const(e.args[i]) for i in public]
        cast = self.caster(e.type, f"pl op '{e.op}'", e.span)
        wants_ctx = op.wants_ctx
        ctx = m.ctx
        acct = self._accountant(e, op, public) if m.trace_on else None
        tag = self._typed_valid(e.type)
        cvals = None
        if all(c for c, _ in consts):
            cvals = [v for _, v in consts]
            argfns = None

        def run(env: dict) -> Any:
            args = cvals if argfns is None else [f(env) for f in argfns]
            if wants_ctx:
                ctx.span = span
                r = impl(*args, ctx=ctx)
            else:
                r = impl(*args)
            if cast is not None:
                r = cast(r)
            if tag is not None:
                r = tag(env, r)
            if acct is not None and m.cur is not None:
                acct(args, r)
            return r

        return run

    def _typed_valid(self, t: Any) -> Callable | None:
        """Tag results with the valid shape their type rule declares (when the impl did not)."""
        if not isinstance(t, ShapedType) or t.valid_shape is None:
            return None
        fns = [self.expr(d) for d in t.valid_shape]

        def tag(env: dict, r: Any) -> Any:
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


    def _accountant(self, e: Call, op: Any, public: list) -> Callable:
        from pypto.sim.costs import accountant

        return accountant(self.m, e, op, public)
