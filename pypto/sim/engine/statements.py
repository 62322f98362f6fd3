"""Compiling statements into closures `s(env) -> signal` (None, BREAK, CONTINUE, RETURN):
the base of `FnCompiler` (`pypto.sim.engine.compiler`). A `Lowering` it holds (the batch
engine's) is asked first for every `if`, counted loop and body."""
from __future__ import annotations

import abc
from collections.abc import Callable
from typing import Any

from pypto.errors import SimulationError
from pypto.ir.nodes import (
    Assign,
    Attr,
    Break,
    Call,
    CallFunc,
    Const,
    Continue,
    Eval,
    For,
    Function,
    If,
    LoopKind,
    Return,
    Scope,
    ScopeKind,
    Var,
    While,
    Yield,
)
from pypto.ir.nodes import Stmt as IRStmt
from pypto.ir.options import SplitMode
from pypto.ops.registry import Unit, get
from pypto.sim.config import Settings
from pypto.sim.engine.bodygen import written_body
from pypto.sim.engine.function import Lowering
from pypto.sim.engine.nest_work import sure_inner_work
from pypto.sim.engine.values import BREAK, CONTINUE, FRAME, RETURN, Env, Expr, Stmt


class StmtCompiler(abc.ABC):
    """Statement compilers; the compiler of expressions (`FnCompiler`) derives from it."""

    in_region: bool
    cube_vars: set[str]  # values held in L0C (storing them drains it)
    loop_vars: list[str]  # the variables of the loops being compiled, outermost first
    settings: Settings  # the run's (the source mode among them)
    func: Function  # the function being compiled
    lowering: Lowering | None  # asked first for calls and statements (`function.Lowering`)

    @abc.abstractmethod
    def expr(self, e: Any, tolerant: bool = False) -> Expr:
        """The closure computing expression `e`."""

    @abc.abstractmethod
    def call(self, e: Call, target: str | None = None) -> Expr:
        """The closure of the op call `e` (assigned to `target`)."""

    @abc.abstractmethod
    def launch(self, e: CallFunc, targets: tuple[Var, ...] | None) -> Expr:
        """The closure launching the task `e` (assigning its outputs to `targets`)."""

    @abc.abstractmethod
    def loop_nest(self, s: For, seq: Stmt) -> Stmt:
        """The closure of the orchestration loop `s` compiled as `seq` (a loop nest whose
        body is one launch may run batched)."""

    # -- statements -------------------------------------------------------------------

    def body(self, stmts: tuple) -> Stmt:
        if self.lowering is not None:
            own = self.lowering.lower_body(stmts)
            if own is not None:
                return own
        written = written_body(self, stmts)  # (loops and ifs written out as Python)
        return written if written is not None else self.sequence([self.stmt(s) for s in stmts])

    def sequence(self, fns: list[Stmt]) -> Stmt:
        """The closure running the compiled statements `fns` in order."""
        if not fns:
            return lambda env: None
        if len(fns) == 1:
            return fns[0]
        if len(fns) == 2:
            f0, f1 = fns

            def run2(env: Env) -> str | None:
                r = f0(env)
                if r is not None:
                    return r
                return f1(env)

            return run2

        def run(env: Env) -> str | None:
            for f in fns:
                r = f(env)
                if r is not None:
                    return r
            return None

        return run

    def stmt(self, s: IRStmt) -> Stmt:
        method = _STATEMENTS.get(type(s))
        if method is None:
            raise SimulationError(f"the simulator cannot run {type(s).__name__} statements",
                                  getattr(s, "span", None))
        compile_: Callable[[Any], Stmt] = getattr(self, method)
        return compile_(s)

    def s_assign(self, s: Assign) -> Stmt:
        v = s.value
        targets = s.targets
        if isinstance(v, CallFunc) and v.launch:
            return self.launch(v, targets)
        if len(targets) == 1:
            name = targets[0].name
            if isinstance(v, Call):
                st = self.call_assign(v, name)
                self.note_cube(name, v)
                return st
            vf = self.expr(v)
            if isinstance(v, Var) and v.name in self.cube_vars:
                self.cube_vars.add(name)

            def assign(env: Env) -> None:
                env[name] = vf(env)
            return assign
        vf = self.expr(v)
        names = [t.name for t in targets]

        def assign_many(env: Env) -> None:
            vals = vf(env)
            for n, x in zip(names, vals):
                env[n] = x
        return assign_many

    def call_assign(self, e: Call, target: str) -> Stmt:
        """The statement `target = e` of the op call `e`."""
        vf = self.call(e, target=target)

        def assign(env: Env) -> None:
            env[target] = vf(env)
        return assign

    def note_cube(self, name: str, v: Call) -> None:
        """`name` is assigned the result of `v`: a cube result stays in L0C."""
        try:
            if get(v.op).unit is Unit.CUBE:
                self.cube_vars.add(name)
            else:
                self.cube_vars.discard(name)
        except KeyError:
            pass

    def s_eval(self, s: Eval) -> Stmt:
        e = s.expr
        f = self.launch(e, None) if isinstance(e, CallFunc) and e.launch else self.expr(e)

        def ev(env: Env) -> None:
            f(env)
        return ev

    def s_yield(self, s: Yield) -> Stmt:
        fns = [self.expr(v) for v in s.values]
        if len(fns) == 1:  # (sim speed: the common case without a comprehension's call)
            f0 = fns[0]

            def yld1(env: Env) -> None:
                env["$y"] = [f0(env)]
            return yld1

        def yld(env: Env) -> None:
            env["$y"] = [f(env) for f in fns]
        return yld

    def s_return(self, s: Return) -> Stmt:
        fns = [self.expr(v) for v in s.values]
        if len(fns) == 1:  # (sim speed: one value, as most entries return, without a
            f0 = fns[0]    # generator's calls)

            def ret1(env: Env) -> str:
                env["$ret"] = (f0(env),)
                return RETURN
            return ret1

        def ret(env: Env) -> str:
            env["$ret"] = tuple([f(env) for f in fns])
            return RETURN
        return ret

    def s_break(self, s: Break) -> Stmt:
        return lambda env: BREAK

    def s_continue(self, s: Continue) -> Stmt:
        return lambda env: CONTINUE

    def s_for(self, s: For) -> Stmt:
        if self.lowering is not None:
            own = self.lowering.lower_for(s)
            if own is not None:
                return own
        bounds = self.loop_bounds(s)
        var = s.var.name
        self.carry_cube(s)
        self.loop_vars.append(var)
        try:
            body = self.body(s.body)
        finally:
            self.loop_vars.pop()
        iters = [v.name for v in s.iter_args]
        inits = [self.expr(i) for i in s.inits]
        results = [v.name for v in s.results]
        trips = self.loop_trips(s, bounds)

        def loop(env: Env) -> str | None:
            rng = trips(env)
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

        if not self.in_region and s.kind is not LoopKind.SPMD:
            return self.loop_nest(s, loop)
        return loop

    def loop_bounds(self, s: For) -> tuple[Expr, Expr, Expr]:
        """The closures of the start, stop and step of loop `s`."""
        return self.expr(s.start), self.expr(s.stop), self.expr(s.step)

    def loop_trips(self, s: For, bounds: tuple[Expr, Expr, Expr]) -> Callable[[Env], range]:
        """The closure giving the iterations of loop `s` (its `bounds` compiled) as it
        starts: a step of 0 is a fault, and the run's work grows by its trips (and the
        inner loop trips they are sure to run), checked against `max_work` first."""
        start, stop, step = bounds
        span = s.span
        inner = sure_inner_work(s, self.expr)

        def trips(env: Env) -> range:
            a, b, c = int(start(env)), int(stop(env)), int(step(env))
            if c == 0:
                raise env[FRAME].fault("loop step is 0", span)
            rng = range(a, b, c)
            n = max(0, -((a - b) // c))  # not len(rng): that overflows past 2**63 trips
            if n:
                fr = env[FRAME]
                run = fr.run
                more = n * fr.work_mult
                limit = run.settings.max_work
                if run.work + more > limit:  # before it runs
                    raise fr.over_work(span, f"a loop of {n:,} iterations", more)
                if inner is not None:  # and the loops it is sure to run, with it
                    each = inner(env)
                    if run.work + more * (1 + each) > limit:
                        raise fr.over_work(span, f"a loop nest of {n:,} iterations running "
                                                 f"{each:,} inner loop iterations each",
                                           more * (1 + each))
                run.work += more
            return rng

        return trips

    def s_while(self, s: While) -> Stmt:
        cond = self.expr(s.cond)
        self.carry_cube(s)
        body = self.body(s.body)
        iters = [v.name for v in s.iter_args]
        inits = [self.expr(i) for i in s.inits]
        results = [v.name for v in s.results]
        span = s.span

        where = f"{span.file}:{span.line}" if span is not None and span.known else "?"

        def loop(env: Env) -> str | None:
            carried = [f(env) for f in inits]
            fr = env[FRAME]
            run = fr.run
            limit = run.settings.max_work
            mult = fr.work_mult
            # this execution may do max_while units of work - its iterations and the loop
            # iterations and blocks inside them - so an endless loop with a heavy body
            # (one launching regions) ends as soon, in time, as a bare counter does
            endless = run.settings.max_while * mult
            start = run.work
            n = 0  # iterations of this execution of the loop
            while True:
                for k, x in zip(iters, carried):
                    env[k] = x
                if not cond(env):
                    break
                n += 1
                if run.work - start + mult > endless:
                    raise _endless(fr, span, where, n - 1, (run.work - start) // mult,
                                  run.settings.max_while)
                run.work += mult
                if run.work > limit:
                    raise fr.over_work(span, f"the pl.while_ loop at {where}, in its "
                                             f"iteration {n:,},")
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

    def carry_cube(self, s: For | While) -> None:
        """Loop carries (and results) of a cube result stay in L0C: storing them drains it."""
        for it, init, res in zip(s.iter_args, s.inits, s.results or s.iter_args):
            if isinstance(init, Var) and init.name in self.cube_vars:
                self.cube_vars.add(it.name)
                self.cube_vars.add(res.name)

    def s_if(self, s: If) -> Stmt:
        if self.lowering is not None:
            own = self.lowering.lower_if(s)
            if own is not None:
                return own
        cond = self.expr(s.cond)
        then = self.body(s.then_body)
        other = self.body(s.else_body)
        results = [v.name for v in s.results]

        if not results:
            def branch(env: Env) -> str | None:
                if cond(env):
                    return then(env)
                return other(env)
            return branch

        def branch_r(env: Env) -> str | None:
            r = then(env) if cond(env) else other(env)
            if r is not None:
                return r
            y = env.pop("$y", None)
            if y is not None:
                for k, x in zip(results, y):
                    env[k] = x
            return None

        return branch_r

    def s_scope(self, s: Scope) -> Stmt:
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
        span = s.span

        def scoped(env: Env) -> str | None:
            r = body(env)
            env[task] = env[FRAME].run.dummy_task((), span)
            return r
        return scoped

    def _split_aiv(self, s: Scope) -> Stmt:
        loop = s.body[0] if len(s.body) == 1 and isinstance(s.body[0], For) else None
        if loop is None:
            return self.body(s.body)
        body = self.body(loop.body)
        var = loop.var.name
        mode: Any = dict(s.attrs).get("mode")
        if isinstance(mode, (Attr, Const)):
            mode = mode.value
        mode_name = SplitMode(int(mode)).name
        # values the lanes write (SSA carries through the lane loop)
        iters = [v.name for v in loop.iter_args]
        inits = [self.expr(i) for i in loop.inits]
        results = [v.name for v in loop.results]

        def lanes(env: Env) -> str | None:
            fr = env[FRAME]
            saved, saved_mode, saved_slots = fr.subblock_idx, fr.split_mode, fr.lane_slots
            fr.split_mode, fr.lane_slots = mode_name, {}
            carried = [f(env) for f in inits]
            try:
                for lane in (0, 1):
                    fr.subblock_idx = lane
                    env[var] = lane
                    for k, x in zip(iters, carried):
                        env[k] = x
                    r = body(env)
                    if r is not None and r is not CONTINUE:
                        return r if r is not BREAK else None
                    y = env.pop("$y", None)
                    if y is not None:
                        carried = list(y)
            finally:
                fr.subblock_idx, fr.split_mode, fr.lane_slots = saved, saved_mode, saved_slots
            for k, x in zip(results, carried):
                env[k] = x
            return None

        return lanes


def _endless(fr: Any, span: Any, where: str, n: int, work: int, limit: int) -> Exception:
    """The fault of a `pl.while_` loop past `SimConfig.max_while` units of work (`n`
    iterations, `work` units: the iterations and the work inside them)."""
    inside = "" if work == n else (f" ({work:,} loop iterations and blocks, counting what "
                                   "ran inside them)")
    return fr.fault(
        f"the pl.while_ loop at {where} ran {n:,} iterations{inside} without its condition "
        "turning false: taken for an endless loop", span,
        hint="check that the loop's carried values move its condition toward false; if it "
             f"really needs to run longer, raise SimConfig.max_while (now {limit:,}: the "
             "loop iterations and blocks one execution of a pl.while_ may run)")


# statement type -> the method compiling it (looked up on the compiler: a subclass may
# compile a statement its own way, as the batch compiler does loops it runs as an axis)
_STATEMENTS: dict[type, str] = {
    Assign: "s_assign", Eval: "s_eval", Yield: "s_yield", Return: "s_return",
    Break: "s_break", Continue: "s_continue", For: "s_for", While: "s_while", If: "s_if",
    Scope: "s_scope",
}

__all__ = ["StmtCompiler"]
