"""Compiling statements into closures `s(env) -> signal` (None, BREAK, CONTINUE, RETURN).
Mixed into `FnCompiler` (`pypto.sim.compiler`)."""
from __future__ import annotations

from typing import Any, Callable

from pypto.errors import SimulationError
from pypto.ir.nodes import (Assign, Break, Call, CallFunc, Continue, Eval, For, If, LoopKind,
                            Return, Scope, ScopeKind, Var, While, Yield)
from pypto.ops.registry import Unit, get
from pypto.sim.values import BREAK, CONTINUE, RETURN


class StmtCompiler:
    """Statement compilers; the host class provides `m`, `expr`, `call`, `launch`,
    `cube_vars`."""

    # -- statements -------------------------------------------------------------------

    def body(self, stmts: tuple) -> Callable:
        fns = [self.stmt(s) for s in stmts]
        if not fns:
            return lambda env: None
        if len(fns) == 1:
            return fns[0]
        if len(fns) == 2:
            f0, f1 = fns

            def run2(env: dict) -> Any:
                r = f0(env)
                if r is not None:
                    return r
                return f1(env)

            return run2

        def run(env: dict) -> Any:
            for f in fns:
                r = f(env)
                if r is not None:
                    return r
            return None

        return run

    def stmt(self, s: Any) -> Callable:
        meth = getattr(self, "s_" + type(s).__name__, None)
        if meth is None:
            raise SimulationError(f"the simulator cannot run {type(s).__name__} statements",
                                  getattr(s, "span", None))
        return meth(s)

    def s_Assign(self, s: Assign) -> Callable:
        v = s.value
        targets = s.targets
        if isinstance(v, CallFunc) and dict(v.launch):
            return self.launch(v, targets)
        if len(targets) == 1:
            name = targets[0].name
            if isinstance(v, Call):
                vf = self.call(v, target=name)
                try:
                    if get(v.op).unit is Unit.CUBE:
                        self.cube_vars.add(name)
                    else:
                        self.cube_vars.discard(name)
                except KeyError:
                    pass
            else:
                vf = self.expr(v)
                if isinstance(v, Var) and v.name in self.cube_vars:
                    self.cube_vars.add(name)
            def assign(env: dict) -> None:
                env[name] = vf(env)
            return assign
        vf = self.expr(v)
        names = [t.name for t in targets]

        def assign_many(env: dict) -> None:
            vals = vf(env)
            for n, x in zip(names, vals):
                env[n] = x
        return assign_many

    def s_Eval(self, s: Eval) -> Callable:
        e = s.expr
        if isinstance(e, CallFunc) and dict(e.launch):
            f = self.launch(e, None)
        else:
            f = self.expr(e)

        def ev(env: dict) -> None:
            f(env)
        return ev

    def s_Yield(self, s: Yield) -> Callable:
        fns = [self.expr(v) for v in s.values]

        def yld(env: dict) -> None:
            env["$y"] = [f(env) for f in fns]
        return yld

    def s_Return(self, s: Return) -> Callable:
        fns = [self.expr(v) for v in s.values]

        def ret(env: dict) -> str:
            env["$ret"] = tuple(f(env) for f in fns)
            return RETURN
        return ret

    def s_Break(self, s: Break) -> Callable:
        return lambda env: BREAK

    def s_Continue(self, s: Continue) -> Callable:
        return lambda env: CONTINUE

    def s_For(self, s: For) -> Callable:
        m = self.m
        start, stop, step = self.expr(s.start), self.expr(s.stop), self.expr(s.step)
        var = s.var.name
        self._carry_cube(s)
        body = self.body(s.body)
        iters = [v.name for v in s.iter_args]
        inits = [self.expr(i) for i in s.inits]
        results = [v.name for v in s.results]
        span = s.span

        def loop(env: dict) -> Any:
            a, b, c = int(start(env)), int(stop(env)), int(step(env))
            if c == 0:
                raise m.fault("loop step is 0", span)
            rng = range(a, b, c)
            n = max(0, -((a - b) // c))  # not len(rng): that overflows past 2**63 trips
            if n:
                m.work += n * m.work_mult
                if m.work > m.cfg.max_work:
                    m.add_work(0, span, f"a loop of {n:,} iterations")
            if iters:
                carried = [f(env) for f in inits]
                for i in rng:
                    env[var] = i
                    for k, x in zip(iters, carried):
                        env[k] = x
                    r = body(env)
                    if r is not None:
                        if r is BREAK:
                            break
                        if r is not CONTINUE:
                            return r
                    y = env.pop("$y", None)
                    if y is not None:
                        carried = y
                for k, x in zip(results, carried):
                    env[k] = x
                return None
            for i in rng:
                env[var] = i
                r = body(env)
                if r is not None:
                    if r is BREAK:
                        break
                    if r is not CONTINUE:
                        return r
            return None

        if not self.in_region and s.kind is LoopKind.PARALLEL:
            from pypto.sim.batch_loops import loop_nest

            return loop_nest(self, s, loop)
        return loop

    def s_While(self, s: While) -> Callable:
        m = self.m
        cond = self.expr(s.cond)
        self._carry_cube(s)
        body = self.body(s.body)
        iters = [v.name for v in s.iter_args]
        inits = [self.expr(i) for i in s.inits]
        results = [v.name for v in s.results]
        span = s.span
        limit = m.cfg.max_work

        def loop(env: dict) -> Any:
            carried = [f(env) for f in inits]
            while True:
                for k, x in zip(iters, carried):
                    env[k] = x
                if not cond(env):
                    break
                m.work += m.work_mult
                if m.work > limit:
                    m.add_work(0, span, "a while loop")
                r = body(env)
                if r is not None:
                    if r is BREAK:
                        break
                    if r is not CONTINUE:
                        return r
                y = env.pop("$y", None)
                if y is not None:
                    carried = y
            for k, x in zip(results, carried):
                env[k] = x
            return None

        return loop

    def _carry_cube(self, s: Any) -> None:
        """Loop carries (and results) of a cube result stay in L0C: storing them drains it."""
        for it, init, res in zip(s.iter_args, s.inits, s.results or s.iter_args):
            if isinstance(init, Var) and init.name in self.cube_vars:
                self.cube_vars.add(it.name)
                self.cube_vars.add(res.name)

    def s_If(self, s: If) -> Callable:
        cond = self.expr(s.cond)
        then = self.body(s.then_body)
        other = self.body(s.else_body)
        results = [v.name for v in s.results]

        if not results:
            def branch(env: dict) -> Any:
                if cond(env):
                    return then(env)
                return other(env)
            return branch

        def branch_r(env: dict) -> Any:
            r = then(env) if cond(env) else other(env)
            if r is not None:
                return r
            y = env.pop("$y", None)
            if y is not None:
                for k, x in zip(results, y):
                    env[k] = x
            return None

        return branch_r

    def s_Scope(self, s: Scope) -> Callable:
        if s.kind is ScopeKind.SPLIT_AIV:
            return self._split_aiv(s)
        if s.kind in (ScopeKind.INCORE, ScopeKind.SPMD):
            raise SimulationError("an InCore region reached the simulator without being "
                                  "outlined into a kernel (the outline pass did not run)",
                                  s.span)
        body = self.body(s.body)
        task = s.task.name if s.task is not None else None
        if task is None:
            return body
        m = self.m

        def scoped(env: dict) -> Any:
            r = body(env)
            env[task] = m.dummy_task((), s.span)
            return r
        return scoped

    def _split_aiv(self, s: Scope) -> Callable:
        loop = s.body[0] if len(s.body) == 1 and isinstance(s.body[0], For) else None
        ctx = self.m.ctx
        if loop is None:
            return self.body(s.body)
        body = self.body(loop.body)
        var = loop.var.name
        # values the lanes write (SSA carries through the lane loop)
        iters = [v.name for v in loop.iter_args]
        inits = [self.expr(i) for i in loop.inits]
        results = [v.name for v in loop.results]

        def lanes(env: dict) -> Any:
            saved = ctx.subblock_idx
            carried = [f(env) for f in inits]
            try:
                for lane in (0, 1):
                    ctx.subblock_idx = lane
                    env[var] = lane
                    for k, x in zip(iters, carried):
                        env[k] = x
                    r = body(env)
                    if r is not None and r is not CONTINUE:
                        return r if r is not BREAK else None
                    y = env.pop("$y", None)
                    if y is not None:
                        carried = y
            finally:
                ctx.subblock_idx = saved
            for k, x in zip(results, carried):
                env[k] = x
            return None

        return lanes

