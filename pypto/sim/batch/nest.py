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
from pypto.ir.transform import walk
from pypto.ir.types import ScalarType
from pypto.ops.registry import get
from pypto.sim.batch.scalars import AFFINE_SYMBOLS, SCALAR, NeedArray, index_symbol, is_int
from pypto.sim.batch.state import Aff
from pypto.sim.engine.function import Compiler, LaunchSite
from pypto.sim.engine.launches import launch_site
from pypto.sim.engine.values import UNDEF, Env, Expr

ArgFn = Callable[[Env, dict], Any]  # (env, the nest's batched values by name) -> argument

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


@dataclass
class ScalarStep:
    """`target = fn(...)`: integer arithmetic of the body (an `Aff` or an int)."""

    target: str
    fn: ArgFn


@dataclass
class LaunchStep:
    """A launch of the body: its site, the names its outputs and task id land in, and
    its arguments."""

    site: LaunchSite
    targets: list[str] | None
    argk: list[ArgFn]
    call: CallFunc


Step = ScalarStep | LaunchStep


class Nest:
    """A loop nest in orchestration whose innermost body is launches and integer
    arithmetic (`steps`); `single` when it is one launch (the common, fastest case)."""

    def __init__(self, steps: list[Step], carries: list[tuple[int, int, int]],
                 loop_vars: list[str], inner_iters: list[str],
                 bounds: list[tuple[Expr, Expr, Expr]], const_raw: list | None,
                 outer_inits: list[Expr], carry_names: list[tuple[str, int]]):
        self.steps = steps
        self.loop_vars = loop_vars
        self.inner_iters = inner_iters
        # per carried tensor: (launch step, argument index, output index)
        self.step_carries = carries
        self.bounds = bounds
        self.const_raw = const_raw  # constant loop bounds need no evaluation per call
        self.outer_inits = outer_inits
        self.carry_names = carry_names  # the names each level's carries land in after
        first = steps[0]
        self.single = len(steps) == 1 and isinstance(first, LaunchStep)
        self.n_launches = sum(isinstance(st, LaunchStep) for st in steps)
        launch = first if isinstance(first, LaunchStep) else None
        self.site = launch.site if launch is not None else None
        self.targets = launch.targets if launch is not None else None
        self.argk = launch.argk if launch is not None else []
        self.carries = [(j, o) for _, j, o in carries]  # (single: argument, output)
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

    def sub_shape(self, shape: Shape, lo: int, hi: int) -> Shape:
        """`shape` cut to the outermost loop's iterations `lo <= i < hi` (a fresh
        `Shape`, not memoised)."""
        (a, _b, c), *rest = shape.raw
        raw = [(a + lo * c, a + hi * c, c), *rest]
        bs = (hi - lo,) + shape.bs[1:]
        pre = 0
        acc = 1
        for n in bs:
            acc *= n
            pre += acc
        lv = {}
        for k, v in enumerate(self.loop_vars):
            x = shape.loop_vars[v]
            lv[v] = Aff(x.base + (lo * c if k == 0 else 0), x.d)
        return Shape(raw, shape.last, bs, pre, lv)

    def values(self, env: Env, shape: Shape) -> tuple[dict, list]:
        """(the batched values the body starts from: loop variables and carries, the
        initial carries)."""
        carried = [f(env) for f in self.outer_inits]
        bv = dict(shape.loop_vars)
        bv.update(zip(self.inner_iters, carried))
        return bv, carried

    def arguments(self, env: Env, shape: Shape) -> tuple[list, list] | None:
        """A single launch's batched arguments and the initial carries, or None when an
        argument cannot be batched."""
        bv, carried = self.values(env, shape)
        args = [f(env, bv) for f in self.argk]
        for x in args:
            if x is None:
                return None
        return args, carried

    def finish(self, env: Env, shape: Shape, carried: list, rets: tuple, tid: int) -> None:
        """Leave in `env` what the sequential loops would have left (a single launch)."""
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


def nest_of(fc: Compiler, s: For) -> Nest | str | None:
    """The `Nest` of the orchestration loop `s`; None when it launches nothing (or other
    loops do, inside it), else why it cannot run batched."""
    levels = []
    cur = s
    while True:
        if cur.kind not in NEST_KINDS:
            return f"a {cur.kind.value} loop"
        body = list(cur.body)
        y = body.pop() if body and isinstance(body[-1], Yield) else None
        if (y is None) != (not cur.iter_args) or \
                (y is not None and len(y.values) != len(cur.iter_args)):
            return "its loops carry values"
        levels.append((cur, y))
        inner = body[0] if len(body) == 1 else None
        if isinstance(inner, For):
            if [i.name if isinstance(i, Var) else None for i in inner.inits] != \
                    [v.name for v in cur.iter_args]:
                return "its loops carry values"
            if y is not None and [v.name if isinstance(v, Var) else None for v in y.values] != \
                    [r.name for r in inner.results]:
                return "its loops carry values"
            cur = inner
            continue
        break
    if not any(_launches(st) for st in body):
        return None
    loop_vars = [lv.var.name for lv, _ in levels]
    inner_iters = [v.name for v in levels[-1][0].iter_args]
    nest_names = set(loop_vars)
    for lv, _ in levels:
        nest_names.update(v.name for v in lv.iter_args)
    for k, (lv, _) in enumerate(levels):
        if k and (_free_vars(lv.start, set()) | _free_vars(lv.stop, set()) |
                  _free_vars(lv.step, set())) & nest_names:
            return "an inner loop's bounds depend on an outer loop"
    steps = _steps(fc, body, [*loop_vars, *inner_iters], (*fc.loop_vars, *loop_vars))
    if isinstance(steps, str):
        return steps
    # the innermost yields hand launch outputs back as the carries: each is a tensor the
    # launch took as that carry and returns as itself (checked at run time)
    carries = []
    ylast = levels[-1][1]
    for k, v in enumerate(ylast.values if ylast is not None else ()):
        found = None
        for i, st in enumerate(steps):
            if isinstance(st, LaunchStep) and st.targets and isinstance(v, Var) and \
                    v.name in st.targets[:-1]:
                found = (i, st)
        if found is None:
            return "its loops carry values"
        i, st = found
        assert st.targets is not None
        js = [j for j, a in enumerate(st.call.args)
              if isinstance(a, Var) and a.name == inner_iters[k]]
        if len(js) != 1:
            return "its loops carry values"
        carries.append((i, js[0], st.targets[:-1].index(v.name)))
    bounds = [(fc.expr(lv.start), fc.expr(lv.stop), fc.expr(lv.step)) for lv, _ in levels]
    consts = [[fc.const(x) for x in (lv.start, lv.stop, lv.step)] for lv, _ in levels]
    const_raw = None
    if all(ok and type(v) is int for c in consts for ok, v in c):
        const_raw = [tuple(v for _, v in c) for c in consts]
    outer_inits = [fc.expr(i) for i in levels[0][0].inits]
    carry_names = [(n, i) for lv, _ in levels
                   for i, (it, res) in enumerate(zip(lv.iter_args, lv.results))
                   for n in (it.name, res.name)]
    return Nest(steps, carries, loop_vars, inner_iters, bounds, const_raw, outer_inits,
                carry_names)


def _launches(s: Any) -> bool:
    return any(isinstance(n, CallFunc) and n.launch for n in walk(s))


def _steps(fc: Compiler, body: list, names: list[str], loops: tuple[str, ...]
           ) -> list[Step] | str:
    """The steps of an innermost loop body, or why it is not one."""
    known = list(names)
    steps: list[Step] = []
    for st in body:
        v = st.value if isinstance(st, Assign) else st.expr if isinstance(st, Eval) else None
        if isinstance(v, CallFunc) and v.launch:
            info = dict(v.launch)
            core = info.get("core_num")
            if core is not None and not (isinstance(core, Const) and core.value == 1) \
                    and core != 1:
                return "it launches SPMD tasks"
            if info.get("deps"):
                return "its launches take deps="
            if info.get("predicate") is not None:  # each task decides at its dispatch
                return "its launches have a dispatch predicate"
            argk = []
            for a in v.args:
                f = _arg_fn(fc, a, known)
                if f is None:
                    return "a launch argument is not affine in the loop variables"
                argk.append(f)
            targets = [t.name for t in st.targets] if isinstance(st, Assign) else None
            steps.append(LaunchStep(launch_site(v, loops), targets, argk, v))
            known.extend(targets or ())
            continue
        if isinstance(st, Assign) and len(st.targets) == 1 and \
                isinstance(st.targets[0].type, ScalarType) and \
                st.targets[0].type.dtype.is_int():
            f = _arg_fn(fc, st.value, known)
            if f is None:
                return "integer arithmetic that is not affine in the loop variables"
            steps.append(ScalarStep(st.targets[0].name, f))
            known.append(st.targets[0].name)
            continue
        what = type(st).__name__
        if isinstance(v, Call):
            what = f"pl.{v.op}"
        return f"its body has {what} besides launches and integer arithmetic"
    return steps


def _arg_fn(fc: Compiler, a: Any, names: list[str]) -> ArgFn | None:
    if isinstance(a, Var):
        n = a.name
        if n in names:
            return lambda env, bv: bv[n]
        return lambda env, bv: env.get(n, UNDEF)  # fc.expr(a, tolerant=True), inlined
    sym = index_symbol(get(a.op)) if isinstance(a, Call) else None
    if sym in AFFINE_SYMBOLS:
        fs = [_arg_fn(fc, x, names) for x in a.args]
        if any(f is None for f in fs):
            return None
        arith = SCALAR[sym]

        def scal(env: Env, bv: dict) -> Any:
            vals = [f(env, bv) for f in fs]  # type: ignore[misc]
            if not all(type(v) is Aff or is_int(v) for v in vals):
                return None
            try:
                r = arith(vals, None)
            except NeedArray:
                return None
            return r if type(r) is Aff or is_int(r) else None

        return scal
    if _free_vars(a, set()) & set(names):
        return None
    f = fc.expr(a, tolerant=True)
    return lambda env, bv: f(env)


__all__ = ["NEST_KINDS", "LaunchStep", "Nest", "ScalarStep", "Shape", "Step", "nest_of"]
