"""The loop iterations a loop nest is sure to run, known when its outer loop starts.

A loop whose trip count is known on entry fails at once when it would take the run past
`SimConfig.max_work`; so does a nest, when the loops inside it are sure to run and their
bounds do not change while it runs: a 10^5 x 10^5 `pl.range` nest of tile ops inside a
region fails in a moment instead of after a quarter of an hour. (Orchestration loop nests
around one launch are sized by the launch planner; this covers every other nest.)

"Sure to run" is a lower bound, so an error is never raised for a nest that would stay
within the limit: only the loops standing directly in the body (not under an `if`)
count, only when no `break`, `continue` or `return` anywhere in the nest can cut it
short, and only when their bounds are plain scalar arithmetic over values bound before
the nest starts (not its loop variables, its carried values or anything it assigns; no
reads of memory the nest might write).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pypto.ir.nodes import Attr, Break, Call, Const, Continue, DynDim, For, Return, Var
from pypto.ir.transform import walk
from pypto.ir.types import ScalarType
from pypto.ops.facts import Role
from pypto.ops.registry import Unit, get
from pypto.passes.outline import defined_names
from pypto.sim.engine.values import Env, Expr

# a bound may call the scalar and control-plane ops that compute a scalar from their
# arguments alone (arithmetic, min / max, a tensor's dim) or read what is fixed for the
# block (its index); not those that read memory or have other roles
_FIXED_ROLES = (None, Role.BLOCK_INDEX, Role.SUBBLOCK_INDEX)

InnerWork = Callable[[Env], int]


def sure_inner_work(loop: For, compile_expr: Callable[[Any], Expr]) -> InnerWork | None:
    """A closure giving, on entry to `loop`, the loop iterations each of its iterations is
    sure to run in the loops nested in it (None: none are known)."""
    if any(isinstance(n, (Break, Continue, Return)) for n in walk(loop.body)):
        return None
    inside = set(defined_names(loop.body))
    inside.update(v.name for v in (loop.var, *loop.iter_args))
    return _inner(loop, inside, compile_expr)


def _inner(loop: For, inside: set[str], compile_expr: Callable[[Any], Expr]
           ) -> InnerWork | None:
    parts = []
    for st in loop.body:
        if isinstance(st, For) and all(_fixed(e, inside) for e in (st.start, st.stop, st.step)):
            parts.append((compile_expr(st.start), compile_expr(st.stop),
                          compile_expr(st.step), _inner(st, inside, compile_expr)))
    if not parts:
        return None

    def work(env: Env) -> int:
        total = 0
        for start, stop, step, deeper in parts:
            try:
                a, b, c = int(start(env)), int(stop(env)), int(step(env))
            except Exception:  # noqa: BLE001 - unknown here; the loop reports its own bounds
                continue
            if c == 0:
                continue  # the loop itself reports its zero step
            n = max(0, -((a - b) // c))
            total += n * (1 + (deeper(env) if deeper is not None and n else 0))
        return total

    return work


def _fixed(e: Any, inside: set[str]) -> bool:
    """Whether the bound `e` is plain scalar arithmetic over values bound outside."""
    for n in walk(e):
        if isinstance(n, Var):
            if n.name in inside:
                return False
        elif isinstance(n, Call):
            op = get(n.op)
            if op.unit not in (Unit.SCALAR, Unit.ORCH) or op.role not in _FIXED_ROLES \
                    or op.writes is not None or not isinstance(n.type, ScalarType):
                return False
        elif not isinstance(n, (Const, DynDim, Attr)):
            return False
    return True


__all__ = ["InnerWork", "sure_inner_work"]
