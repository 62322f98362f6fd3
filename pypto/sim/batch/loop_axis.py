"""A region's own loop run as one more batch axis.

pypto-lib's gathers loop inside the region over the rows of a block's tile
(`for k in pl.range(G_TILE)`: read a token id, copy that row of the table). Batched over
the blocks, such a loop still runs its iterations one after the other, each op once per
iteration for all blocks. When the iterations carry nothing from one to the next and no
iteration can see another's writes, the order of the iterations does not matter, and the
loop runs as a batch axis: its variable becomes an `Aff` along a new leading axis, and
the body runs once for all iterations of all blocks (the 16 row reads become one fancy
index).

What must hold (checked here, statically, with the loop variable varying):
* the region still batches with the loop variable varying (conditions, loop bounds and
  non-affine uses of it refuse, exactly as for a block's own values);
* the loop carries no value but tensor parameters handed on as themselves (what a write
  into one returns), and nothing it defines is used after it; its body has no break /
  continue / return, and writes no tile defined before the loop;
* every tensor written in the body is accessed there, along some axis, at
  `coef * k + (the same in every access)` with loop terms that keep the iterations'
  footprints pairwise disjoint (`lattice.loop_separator`): no order between iterations
  is then observable. (Disjointness between blocks is the region's plan, proven with
  the loop's whole range.)

Untraced runs only: a traced batch replays each block's accesses and applies its costs
once per task, which a loop's per-iteration accesses and costs would have to follow.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pypto.ir.nodes import Assign, Break, Call, Continue, For, Function, If, Return, Var, While
from pypto.ir.transform import walk
from pypto.ir.types import ScalarType, ShapedType
from pypto.ops.registry import get
from pypto.sim.batch.codegen import generate
from pypto.sim.batch.footprints import Plan, plan_of
from pypto.sim.batch.lattice import lattice_disjoint, loop_separator
from pypto.sim.batch.masks import Masked
from pypto.sim.batch.masks import lift as lift_masked
from pypto.sim.batch.plan import _Analyzer, analyzed
from pypto.sim.batch.state import Aff, Fallback, Partial
from pypto.sim.engine.values import FRAME, Env, Stmt


@dataclass(frozen=True)
class LoopAxis:
    """A region loop that runs as a batch axis: its plan (the loop variable varying),
    its range, and the values from before it that its body reads and that vary per
    block (`lifted`: (name, rank); each gains the new axis while the body runs)."""

    plan: Plan
    start: int
    step: int
    trips: int
    lifted: tuple


class _AxisAnalyzer(_Analyzer):
    """The region's analysis with the variable of `loop` varying like a block's own
    value; it notes the accesses made in the loop's body."""

    def __init__(self, func: Function, varying: set, loop: For):
        # (axes are for untraced runs, which predicate conditions that differ per block:
        # one on the loop variable then differs per iteration, predicated the same way)
        super().__init__(func, varying | {loop.var.name}, predicate=True)
        self.params = self.params | {loop.var.name}  # an affine symbol, as a loop variable
        self.loop = loop
        self.inside: list = []

    def stmt(self, s: Any) -> None:
        if s is self.loop:
            first = len(self.accesses)
            super().stmt(s)
            self.inside = self.accesses[first:]
            return
        super().stmt(s)


def axis_loops(func: Function, plan: Plan) -> dict[int, LoopAxis]:
    """The loops at the top level of region `func` (batched under `plan`) that may run
    as a batch axis, by `id` of their `For`."""
    out = {}
    for i, s in enumerate(func.body):
        if isinstance(s, For):
            ax = _axis(func, plan, s, func.body[i + 1:])
            if ax is not None:
                out[id(s)] = ax
    return out


def _defined(stmts: tuple) -> set[str]:
    """Every name bound in `stmts` (assignments, loop variables, carries and results)."""
    out: set[str] = set()
    for n in walk(stmts):
        if isinstance(n, Assign):
            out.update(t.name for t in n.targets)
        elif isinstance(n, (For, While)):
            if isinstance(n, For):
                out.add(n.var.name)
            out.update(v.name for v in (*n.iter_args, *n.results))
        elif isinstance(n, If):
            out.update(v.name for v in n.results)
    return out


def _axis(func: Function, plan: Plan, loop: For, after: tuple) -> LoopAxis | None:
    k = loop.var.name
    rng = plan.loops.get(k)
    if rng is None or rng[2] < 2:
        return None
    # a carry may only be a tensor parameter handed on as itself (what a write into it
    # returns): each iteration writes its own windows of the same array
    if any(it.name not in plan.alias or it.name in plan.varying for it in loop.iter_args):
        return None
    start, step, trips = rng
    inner = _defined(loop.body) | {k} | {it.name for it in loop.iter_args}
    if any(isinstance(n, (Break, Continue, Return)) for n in walk(loop.body)):
        return None
    if any(isinstance(n, Var) and n.name in inner for n in walk(after)):
        return None  # a value of the loop is used after it
    used: dict[str, Any] = {}
    for n in walk(loop.body):
        if isinstance(n, Var) and n.name not in inner:
            used[n.name] = n.type
        elif isinstance(n, Call) and not _writes_own(n, plan, inner):
            return None
    an = analyzed(func, set(plan.varying),
                  lambda f, v: _AxisAnalyzer(f, v, loop))
    if isinstance(an, str):
        return None
    aplan = plan_of(an)
    if isinstance(aplan, str):
        return None
    for t in {a.tensor for a in an.inside if a.write}:
        accs = [a for a in an.inside if a.tensor == t]
        rank = len(accs[0].forms)
        if not any(_separates(loop_separator(accs, rank, k, ax, an.loops), step, trips)
                   for ax in range(rank)):
            return None
    lifted = []
    for name, t in sorted(used.items()):
        if name not in plan.varying:
            continue
        if name in plan.stacked:
            return None
        if isinstance(t, ShapedType):
            lifted.append((name, len(t.shape)))
        elif isinstance(t, ScalarType):
            lifted.append((name, 0))
        else:
            return None
    return LoopAxis(aplan, start, step, trips, tuple(lifted))


def _separates(sep: tuple | None, step: int, trips: int) -> bool:
    if sep is None:
        return False
    coef, width, terms = sep
    return lattice_disjoint(terms + [(coef * step, trips)], width)


def _writes_own(e: Call, plan: Plan, inner: set[str]) -> bool:
    """Does `e` write in place only into a tensor parameter or a tile defined inside the
    loop (a tile from before it would see every iteration's write at once)?"""
    try:
        op = get(e.op)
    except KeyError:
        return False
    a = dict(zip(op.params, e.args))
    names = []
    if op.window_write is not None:
        names.append(a.get(op.window_write.tensor))
    if op.writes is not None:
        names.append(a.get(op.writes))
    for t in names:
        if isinstance(t, Var) and t.name not in plan.alias and t.name not in inner:
            return False
        if t is not None and not isinstance(t, Var) and isinstance(t, Call):
            return False
    return True


def _lift(v: Any, rank: int, nb: int, n: int) -> Any:
    """`v` (a value of the batch with `nb` axes) in the batch with one more axis in front."""
    if type(v) is Aff:
        return Aff(v.base, (0,) + v.d)
    if type(v) is Masked:
        return lift_masked(v, rank, nb, n)
    if type(v) is np.ndarray and v.ndim == rank + nb:
        return v.reshape((1,) + v.shape)
    return v


def axis_loop(bc: Any, s: For, ax: LoopAxis) -> Stmt:
    """The closure running loop `s` as a batch axis; `bc`: the region's `BatchLowering`
    (its plan is the loop's while the body compiles: the loop variable varies there)."""
    outer = bc.plan
    bc.plan = ax.plan
    bc.loop_vars.append(s.var.name)
    try:
        # (plain: the closures of the body's statements, as elsewhere)
        body = generate(bc, s.body) if bc.settings.source != "plain" else bc.body(s.body)
    finally:
        bc.loop_vars.pop()
        bc.plan = outer
    var = s.var.name
    start, step, n = ax.start, ax.step, ax.trips
    lifted = ax.lifted
    inits = [bc.expr(i) for i in s.inits]
    carries = [(it.name, res.name) for it, res in zip(s.iter_args, s.results)]

    def loop(env: Env) -> None:
        fr = env[FRAME]
        run = fr.run
        mult = fr.work_mult
        more = n * mult
        if run.work + more > run.settings.max_work:
            raise Fallback("the work limit")  # (block by block reports it)
        run.work += more
        st = fr.batch
        nb = st.nb
        saved = [(name, env[name], rank) for name, rank in lifted if name in env]
        for name, v, rank in saved:
            env[name] = _lift(v, rank, nb, n)
        env[var] = Aff(start, (step,) + (0,) * nb)
        for (name, _res), f in zip(carries, inits):
            env[name] = f(env)
        fr.batch = st.axis(n)
        fr.work_mult = mult * n  # (the body's own loops count once per iteration, too)
        try:
            if body(env) is not None:
                raise Fallback("a loop signal")
        except Partial as p:  # (the blocks with a partial tile, over the outer axes)
            raise Partial(np.asarray(np.asarray(p.mask).any(axis=0)
                                     if np.ndim(p.mask) == nb + 1 else p.mask)) from None
        finally:
            fr.batch = st
            fr.work_mult = mult
            for name, v, _rank in saved:
                env[name] = v
            env.pop(var, None)
        y = env.pop("$y", None)
        for i, (name, res) in enumerate(carries):
            # (the parameter's array itself, as every iteration hands it on)
            env[res] = y[i] if y is not None and i < len(y) else env[name]
        return None

    return loop


__all__ = ["LoopAxis", "axis_loop", "axis_loops"]
