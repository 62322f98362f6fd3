"""Counted loops whose bounds differ per block by the same amount, batched.

pypto-lib's regions walk a block's own rows with `for t in pl.range(t0, t0 + TILE, STEP)`
(`t0` from the block index): every block runs the same number of iterations, at rows
shifted per block. The plan admits them when the bounds' affine forms differ only by a
constant (`forms.shifted_loop`); the batch runs the iterations once, the
variable one value per block (`start + step * i`: an `Aff` where the start is one, else
one integer per block). Should the trip counts differ after all (a start the plan could
not see through), the batch gives up (`Fallback`: block by block from the start).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from pypto.ir.nodes import For
from pypto.sim.batch.scalars import SCALAR
from pypto.sim.batch.state import Aff, Fallback
from pypto.sim.engine.values import BREAK, CONTINUE, FRAME, Env, Stmt


def _trips(a: Any, b: Any, c: int) -> int:
    """The trip count of `range(a, b, c)` in every block (a, b per block); Fallback when
    the blocks' counts differ."""
    if type(a) is Aff and type(b) is Aff and a.d == b.d:
        return max(0, -((a.base - b.base) // c))
    n = np.maximum(0, -((np.asarray(a, dtype=np.int64) - np.asarray(b, dtype=np.int64)) // c))
    if n.size == 0 or n.min() != n.max():
        raise Fallback("loop trip counts differ per block")
    return int(n.flat[0])


def shifted_loop(bc: Any, s: For) -> Stmt:
    """The closure of loop `s` (bounds differing per block by a constant): its body
    compiled by `bc` (the region's `BatchLowering`), run for each iteration with the
    loop variable one value per block."""
    start, stop, step = bc.expr(s.start), bc.expr(s.stop), bc.expr(s.step)
    var = s.var.name
    bc.carry_cube(s)
    bc.loop_vars.append(var)
    try:
        body = bc.body(s.body)
    finally:
        bc.loop_vars.pop()
    iters = [v.name for v in s.iter_args]
    inits = [bc.expr(i) for i in s.inits]
    results = [v.name for v in s.results]
    span = s.span
    add = SCALAR["+"]

    def loop(env: Env) -> str | None:
        fr = env[FRAME]
        a, b, c = start(env), stop(env), step(env)
        if type(c) is not int or c == 0:
            raise Fallback("a loop step that is not a nonzero integer")
        n = _trips(a, b, c)
        if n:
            run = fr.run
            more = n * fr.work_mult
            if run.work + more > run.settings.max_work:
                raise fr.over_work(span, f"a loop of {n:,} iterations", more)
            run.work += more
        st = fr.batch
        carried = [f(env) for f in inits]
        for i in range(n):
            env[var] = add([a, i * c], st)
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

    return loop


__all__ = ["shifted_loop"]
