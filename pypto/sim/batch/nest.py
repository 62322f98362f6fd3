"""Orchestration side of batching: a loop nest whose body is one launch may run as one
batch (one task per iteration).

The loops may be `pl.parallel` or sequential (`pl.range`, `pl.pipeline`, `pl.unroll`):
iterations of a sequential loop that carry no value (at most the launch's own output
tensor, handed back unchanged) are independent tasks when no iteration can see another's
writes, which is what the batch plan proves before any loop runs batched (every written
tensor's per-iteration footprints, reads included, are pairwise disjoint, and no other
argument overlaps a written tensor: `Plan.separated`, `run._prepare`). Batched, the
tasks are numbered, traced and costed in the loops' order, so the trace is the one the
sequential loops record.

`nest_of` recognises the shape at compile time and gives a `Nest`: how to evaluate
the loop bounds into a batch shape and the launch's arguments into batched values
(`Aff` for the loop variables and affine functions of them), and what the loops leave
in the environment afterwards. Whether a given run takes the batched path is decided
by the runtime (`pypto.sim.runtime.launch.launch_nest`).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pypto.ir.nodes import Assign, Call, CallFunc, Const, Eval, For, ListExpr, LoopKind, Var, Yield
from pypto.ops.registry import get
from pypto.sim.batch.plan import AFFINE_SYMBOLS, index_symbol
from pypto.sim.batch.scalars import SCALAR, NeedArray, is_int
from pypto.sim.batch.state import Aff
from pypto.sim.engine.compiler import launch_site
from pypto.sim.engine.function import Compiler, LaunchSite
from pypto.sim.engine.values import UNDEF, Env, Expr

ArgFn = Callable[[Env, dict, dict], Any]  # (env, loop variables, carries) -> argument

# loops whose iterations may become a batch (sequential ones too: see the docstring)
NEST_KINDS = frozenset((LoopKind.PARALLEL, LoopKind.RANGE, LoopKind.PIPELINE, LoopKind.UNROLL))


@dataclass
class Shape:
    """One evaluation of a nest's loop bounds: the batch shape and what follows from it."""

    raw: list[tuple[int, int, int]]  # (start, stop, step) per level
    last: list[tuple[str, int]]  # the loop variables' values after the loops
    bs: tuple[int, ...]  # the batch shape (trip count per level)
    pre_work: int  # the loop iterations block-by-block execution counts
    loop_vars: dict[str, Aff]  # per loop variable, its value in every block


class Nest:
    """A loop nest in orchestration whose body is one launch."""

    def __init__(self, site: LaunchSite, targets: list[str] | None, loop_vars: list[str],
                 inner_iters: list[str], carries: list[tuple[int, int]], argk: list[ArgFn],
                 bounds: list[tuple[Expr, Expr, Expr]], const_raw: list | None,
                 outer_inits: list[Expr], carry_names: list[tuple[str, int]]):
        self.site = site
        self.targets = targets  # the launch's outputs and task id, or None
        self.loop_vars = loop_vars
        self.inner_iters = inner_iters
        self.carries = carries  # (argument index, output index) of the carried tensors
        self.argk = argk
        self.bounds = bounds
        self.const_raw = const_raw  # constant loop bounds need no evaluation per call
        self.outer_inits = outer_inits
        self.carry_names = carry_names  # the names each level's carries land in after
        # the batch shape, work count and loop variables of the last call, by loop bounds
        # (the same Aff objects again, so the window memos compare them by identity; a
        # benign cache shared by runs: it is replaced whole, never half-updated)
        self._shape: Shape | None = None

    def shape(self, env: Env) -> Shape | None:
        """The batch shape of the nest in `env`, or None (fewer than 2 iterations, a
        step of 0)."""
        raw = self.const_raw or [(int(f0(env)), int(f1(env)), int(f2(env)))
                                 for f0, f1, f2 in self.bounds]
        shape = self._shape
        if shape is not None and shape.raw == raw:
            return shape
        ranges = []
        for a, b, c in raw:
            if c == 0:
                return None
            ranges.append((a, max(0, -((a - b) // c)), c))
        bs = tuple(n for _, n, _ in ranges)
        if math.prod(bs) < 2:
            return None
        pre = 0
        acc = 1
        for n in bs:
            acc *= n
            pre += acc
        nl = len(ranges)
        lv = {}
        for k, (a, _n, c) in enumerate(ranges):
            d = [0] * nl
            d[k] = c
            lv[self.loop_vars[k]] = Aff(a, tuple(d))
        last = [(self.loop_vars[k], a + (n - 1) * c) for k, (a, n, c) in enumerate(ranges)]
        shape = self._shape = Shape(raw, last, bs, pre, lv)
        return shape

    def arguments(self, env: Env, shape: Shape) -> tuple[list, list] | None:
        """(the launch's batched arguments, the initial carries), or None when an
        argument cannot be batched."""
        carried = [f(env) for f in self.outer_inits]
        cv = dict(zip(self.inner_iters, carried))
        lv = shape.loop_vars
        args = [f(env, lv, cv) for f in self.argk]
        for x in args:
            if x is None:
                return None
        return args, carried

    def finish(self, env: Env, shape: Shape, carried: list, rets: tuple, tid: int) -> None:
        """Leave in `env` what the sequential loops would have left."""
        for v, x in shape.last:
            env[v] = x
        for it, i in self.carry_names:
            env[it] = carried[i]
        if self.targets is not None:
            for t, x in zip(self.targets[:-1], rets):
                env[t] = x
            env[self.targets[-1]] = tid


def _free_vars(e: Any, out: set[str]) -> set[str]:
    if isinstance(e, Var):
        out.add(e.name)
    elif isinstance(e, ListExpr):
        for i in e.items:
            _free_vars(i, out)
    elif isinstance(e, (Call, CallFunc)):
        for a in e.args:
            _free_vars(a, out)
    return out


def nest_of(fc: Compiler, s: For) -> Nest | None:
    """The `Nest` of the orchestration loop `s`, or None when it has another shape."""
    levels = []
    cur = s
    while True:
        if cur.kind not in NEST_KINDS:
            return None
        body = list(cur.body)
        y = body.pop() if body and isinstance(body[-1], Yield) else None
        if len(body) != 1 or (y is None) != (not cur.iter_args):
            return None
        if y is not None and len(y.values) != len(cur.iter_args):
            return None
        levels.append((cur, y))
        inner = body[0]
        if isinstance(inner, For):
            if [i.name if isinstance(i, Var) else None for i in inner.inits] != \
                    [v.name for v in cur.iter_args]:
                return None
            if y is not None and [v.name if isinstance(v, Var) else None for v in y.values] != \
                    [r.name for r in inner.results]:
                return None
            cur = inner
            continue
        if isinstance(inner, Assign) and isinstance(inner.value, CallFunc) and \
                inner.value.launch:
            launch, targets = inner.value, [t.name for t in inner.targets]
        elif isinstance(inner, Eval) and isinstance(inner.expr, CallFunc) and inner.expr.launch:
            launch, targets = inner.expr, None
        else:
            return None
        break
    info = dict(launch.launch)
    core = info.get("core_num")
    if core is not None and not (isinstance(core, Const) and core.value == 1) and core != 1:
        return None
    if info.get("deps"):
        return None
    loop_vars = [lv.var.name for lv, _ in levels]
    inner_iters = [v.name for v in levels[-1][0].iter_args]
    nest_names = set(loop_vars)
    for lv, _ in levels:
        nest_names.update(v.name for v in lv.iter_args)
    for k, (lv, _) in enumerate(levels):
        if k and (_free_vars(lv.start, set()) | _free_vars(lv.stop, set()) |
                  _free_vars(lv.step, set())) & nest_names:
            return None
    # the innermost yields hand the launch's outputs back as the carries
    carries = []
    ylast = levels[-1][1]
    if ylast is not None:
        outs = targets[:-1] if targets else []
        for k, v in enumerate(ylast.values):
            if not isinstance(v, Var) or v.name not in outs:
                return None
            o = outs.index(v.name)
            js = [j for j, a in enumerate(launch.args)
                  if isinstance(a, Var) and a.name == inner_iters[k]]
            if len(js) != 1:
                return None
            carries.append((js[0], o))
    # launch arguments: constants, outer values, carries, affine functions of loop vars
    argk = []
    for a in launch.args:
        f = _arg_fn(fc, a, loop_vars, inner_iters)
        if f is None:
            return None
        argk.append(f)
    bounds = [(fc.expr(lv.start), fc.expr(lv.stop), fc.expr(lv.step)) for lv, _ in levels]
    consts = [[fc.const(x) for x in (lv.start, lv.stop, lv.step)] for lv, _ in levels]
    const_raw = None
    if all(ok and type(v) is int for c in consts for ok, v in c):
        const_raw = [tuple(v for _, v in c) for c in consts]
    outer_inits = [fc.expr(i) for i in levels[0][0].inits]
    carry_names = [(n, i) for lv, _ in levels
                   for i, (it, res) in enumerate(zip(lv.iter_args, lv.results))
                   for n in (it.name, res.name)]
    site = launch_site(launch, (*fc.loop_vars, *loop_vars))
    return Nest(site, targets, loop_vars, inner_iters, carries, argk, bounds, const_raw,
                outer_inits, carry_names)


def _arg_fn(fc: Compiler, a: Any, loop_vars: list[str], iters: list[str]) -> ArgFn | None:
    if isinstance(a, Var):
        n = a.name
        if n in loop_vars:
            return lambda env, lv, cv: lv[n]
        if n in iters:
            return lambda env, lv, cv: cv[n]
        return lambda env, lv, cv: env.get(n, UNDEF)  # fc.expr(a, tolerant=True), inlined
    sym = index_symbol(get(a.op)) if isinstance(a, Call) else None
    if sym in AFFINE_SYMBOLS:
        fs = [_arg_fn(fc, x, loop_vars, iters) for x in a.args]
        if any(f is None for f in fs):
            return None
        arith = SCALAR[sym]

        def scal(env: Env, lv: dict, cv: dict) -> Any:
            vals = [f(env, lv, cv) for f in fs]  # type: ignore[misc]
            if not all(type(v) is Aff or is_int(v) for v in vals):
                return None
            try:
                r = arith(vals, None)
            except NeedArray:
                return None
            return r if type(r) is Aff or is_int(r) else None

        return scal
    if _free_vars(a, set()) & (set(loop_vars) | set(iters)):
        return None
    f = fc.expr(a, tolerant=True)
    return lambda env, lv, cv: f(env)


__all__ = ["NEST_KINDS", "Nest", "Shape", "nest_of"]
