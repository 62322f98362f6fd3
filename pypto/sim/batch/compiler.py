"""`BatchLowering`: compiles a region body once for all blocks of a batch.

The lowering has the region's block-by-block compiler (`FnCompiler`), which asks it
first for every op call, `if`, counted loop and body (`engine.function.Lowering`).
Uniform values compile exactly as block by block; each op call the plan marks varying
compiles to a `Core` - its rule's (`pypto.sim.batch.rules`, by the op's family): a
function of the batched frame and the evaluated operands whose values carry leading
batch axes (or are `Aff` scalars). Conditions that differ per block run predicated
(`predicate`), loops of shifted bounds per iteration (`shifted`), some loops as one
more batch axis (`loop_axis`). The region's top-level statements call the cores from
one generated function (`pypto.sim.batch.codegen`); anywhere else a core runs behind a
closure.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pypto.ir.nodes import Call, For, Function, If, ListExpr, Var
from pypto.ir.nodes import Stmt as IRStmt
from pypto.ir.types import Type
from pypto.ops.facts import Role
from pypto.ops.registry import OpDef, get
from pypto.sim.batch import rules
from pypto.sim.batch.codegen import Core, generate, generate_call
from pypto.sim.batch.loop_axis import axis_loop, axis_loops
from pypto.sim.batch.merged import merge_sites, write_merged
from pypto.sim.batch.placement import placements
from pypto.sim.batch.plan import BLOCK, Plan
from pypto.sim.batch.predicate import (
    agreed_if,
    predicated,
    untaken_if,
)
from pypto.sim.batch.shifted import shifted_loop
from pypto.sim.batch.tag_flow import guarded_places
from pypto.sim.batch.ufuncs import (
    dying_operands,
)
from pypto.sim.engine.compiler import FnCompiler
from pypto.sim.engine.function import CompiledFunction, Host
from pypto.sim.engine.values import FRAME, Env, Expr, Stmt
from pypto.sim.trace.costs import Accountant


class BatchLowering:
    """Compiles a region for batched execution under a `Plan` (see the module
    docstring): it has the block-by-block compiler of the region (`fc`), which asks it
    first for every op call, `if`, counted loop and body (`engine.function.Lowering`),
    and it asks the rule table for each op call's core."""

    def __init__(self, host: Host, func: Function, plan: Plan):
        self.fc = fc = FnCompiler(host, func, lowering=self)
        fc.in_region = True
        self.settings = fc.settings
        self.func = func
        self.cube_vars = fc.cube_vars  # (the compiler's: values held in L0C)
        self.plan = plan
        self.masked = 0  # predicated branches being compiled
        self.dying = dying_operands(func)
        # the region's loops that run as a batch axis (untraced: see loop_axis)
        self.axes = {} if self.settings.trace else axis_loops(func, plan)
        # ops computed straight into the windows a later write fills (untraced; where
        # a tile may be partial, only in a batch where none is: `tag_flow`)
        self.places = {} if self.settings.trace else \
            guarded_places(func, placements(func, plan.alias))
        # the window-write calls recorded for a merged write (`merged.merge_sites`)
        self.merging: set[int] = set()

    def compile(self) -> CompiledFunction:
        cf = self.fc.compile()
        if len(set(p[0] for p in cf.params)) == len(cf.params) and \
                self.settings.source != "plain":
            cf.call = generate_call(cf.name, [p[0] for p in cf.params], cf.body,
                                    self.settings.source_dump)
        return cf

    # -- the block-by-block compiler's (for the rules, the generator and the loops) -----

    @property
    def loop_vars(self) -> list[str]:
        return self.fc.loop_vars

    def const(self, e: Any) -> tuple[bool, Any]:
        return self.fc.const(e)

    def expr(self, e: Any, tolerant: bool = False) -> Expr:
        return self.fc.expr(e, tolerant)

    def call(self, e: Call, target: str | None = None) -> Expr:
        return self.fc.call(e, target)

    def stmt(self, s: IRStmt) -> Stmt:
        return self.fc.stmt(s)

    def body(self, stmts: tuple) -> Stmt:
        return self.fc.body(stmts)

    def note_cube(self, name: str, v: Call) -> None:
        self.fc.note_cube(name, v)

    def carry_cube(self, s: For) -> None:
        self.fc.carry_cube(s)

    def accountant(self, e: Call, op: OpDef, public: list[int]) -> Accountant:
        return self.fc.accountant(e, op, public)

    def caster(self, t: Type | None, what: str) -> Callable[[Any], Any] | None:
        return self.fc.caster(t, what)

    def watched_divisor(self, e: Call, op: OpDef, public: list[int]) -> int | None:
        return self.fc.watched_divisor(e, op, public)

    # -- the hooks the block-by-block compiler asks first --------------------------------

    def lower_body(self, stmts: tuple) -> Stmt | None:
        # the region's top level: one generated function (plain: closures, as elsewhere)
        if stmts is self.func.body and self.settings.source != "plain":
            return generate(self, stmts)
        return None

    def lower_if(self, s: If) -> Stmt | None:
        if not self.vary(s.cond):
            gone = self.plan.untaken.get(id(s))
            if gone is not None:  # (a branch the batch cannot run: taking it gives up)
                k, why = gone
                return untaken_if(None if k == 0 else self.body(s.then_body),
                                  None if k == 1 else self.body(s.else_body),
                                  self.expr(s.cond), [r.name for r in s.results], why)
            return None
        if id(s) in self.plan.agreed:  # (branches that cannot run predicated)
            return agreed_if(self.body(s.then_body), self.body(s.else_body),
                             self.expr(s.cond), [r.name for r in s.results],
                             lambda env: env[FRAME])
        # a condition that differs per block: both branches, predicated (`predicate`;
        # traced, each block records the branch it takes: `branch_trace`); a tile
        # written in them is each block's own (`window_write.blocal_write`). Untraced,
        # their final writes of the same window are made as one (`merged`: it records no
        # accesses)
        sites = None if self.settings.trace else merge_sites(s, self.plan.alias, self.vary)
        if sites is not None:
            self.merging.update(id(e) for e in sites)
        self.masked += 1
        try:
            then, other = self.body(s.then_body), self.body(s.else_body)
        finally:
            self.masked -= 1
        return predicated(then, other, self.expr(s.cond), [r.name for r in s.results],
                          lambda env: env[FRAME], write_merged if sites is not None else None)

    def lower_for(self, s: For) -> Stmt | None:
        if self.vary(s.start) or self.vary(s.stop):  # (the same trips per block: `shifted`)
            return shifted_loop(self, s)
        ax = self.axes.get(id(s))
        if ax is None:
            return None
        return axis_loop(self, s, ax)

    def lower_call(self, e: Call, target: str | None) -> Expr | None:
        c = self.core(e)
        if c is None:
            return None
        fn = c.fn
        if c.kind == "args":
            argfns = [self.expr(a) for a in c.operands]

            def run(env: Env) -> Any:
                return fn(env[FRAME], [f(env) for f in argfns])
        elif c.kind == "window":
            src_f, off_f = self.expr(c.operands[0]), self.expr(c.operands[1])

            def run(env: Env) -> Any:
                return fn(env[FRAME], src_f(env), off_f(env), env)
        else:
            target_e, offset, fused_ops, source = c.operands
            tgt_f, off_f, src_f = self.expr(target_e), self.expr(offset), self.expr(source)
            fargfns = [self.expr(a) for a in fused_ops]

            def run(env: Env) -> Any:
                return fn(env[FRAME], tgt_f(env), off_f(env), [f(env) for f in fargfns],
                          lambda: src_f(env))
        return self.fc.guard(run, e)

    # -- the batch --------------------------------------------------------------------------

    def vary(self, e: Any) -> bool:
        """Does `e` differ per block (the plan's varying values, the block index)?"""
        pv = self.plan.varying
        if isinstance(e, Var):
            return e.name in pv
        if isinstance(e, ListExpr):
            return any(self.vary(i) for i in e.items)
        if isinstance(e, (list, tuple)):
            return any(self.vary(i) for i in e)
        if isinstance(e, Call):
            op = get(e.op)
            if op.role is Role.BLOCK_INDEX:
                return BLOCK in pv
            if op.window_write is not None:
                return False
            return any(self.vary(a) for a in e.args)
        return False

    def read_only(self, e: Any) -> bool:
        """Is `e` a tensor parameter the region never writes?"""
        p = self.plan.alias.get(e.name) if isinstance(e, Var) else None
        return p is not None and p not in self.plan.written and e.name not in self.plan.varying

    def core(self, e: Call) -> Core | None:
        """The batched core of the op call `e` (its rule's: `rules`), or None when it is
        uniform."""
        op = get(e.op)
        rule = rules.of(op)
        if rule is not None and rule.always:  # (windows, index arithmetic)
            return rule.core(self, e)
        if not any(self.vary(x) for x in e.args):
            return None
        rule = rules.resolve(op, e)
        if rule is None:  # pragma: no cover
            raise AssertionError(f"batch plan admitted {e.op}")
        return rule.core(self, e)


__all__ = ["BatchLowering"]
