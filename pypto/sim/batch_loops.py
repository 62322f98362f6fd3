"""Orchestration side of batching: a `pl.parallel` loop nest whose body is one launch
runs as one batch (one task per iteration)."""

import math
from typing import Any, Callable

from pypto.ir.nodes import Assign, Call, CallFunc, Const, Eval, For, ListExpr, LoopKind, Var, Yield
from pypto.sim.batch import launch_loop, run_spmd
from pypto.sim.batch_compiler import _SCALAR, BatchCompiler, _is_int, _NeedArray
from pypto.ops.registry import get
from pypto.sim.batch_plan import AFFINE_SYMBOLS, index_symbol
from pypto.sim.batch_state import Aff, Fallback
from pypto.sim.values import UNDEF, _flatten_deps

# --- orchestration: parallel launch loop nests ---------------------------------------------


def _free_vars(e: Any, out: set) -> set:
    if isinstance(e, Var):
        out.add(e.name)
    elif isinstance(e, ListExpr):
        for i in e.items:
            _free_vars(i, out)
    elif isinstance(e, (Call, CallFunc)):
        for a in e.args:
            _free_vars(a, out)
    return out


def loop_nest(fc: Any, s: For, seq: Callable) -> Callable:
    """Wrap the compiled loop `seq` of a parallel launch loop nest so that it runs batched
    when it can; `seq` unchanged when the nest has another shape."""
    levels = []
    cur = s
    launch = None
    while True:
        if cur.kind is not LoopKind.PARALLEL:
            return seq
        body = list(cur.body)
        y = body.pop() if body and isinstance(body[-1], Yield) else None
        if len(body) != 1 or (y is None) != (not cur.iter_args):
            return seq
        if y is not None and len(y.values) != len(cur.iter_args):
            return seq
        levels.append((cur, y))
        inner = body[0]
        if isinstance(inner, For):
            if [i.name if isinstance(i, Var) else None for i in inner.inits] != \
                    [v.name for v in cur.iter_args]:
                return seq
            if y is not None and [v.name if isinstance(v, Var) else None for v in y.values] != \
                    [r.name for r in inner.results]:
                return seq
            cur = inner
            continue
        if isinstance(inner, Assign) and isinstance(inner.value, CallFunc) and \
                dict(inner.value.launch):
            launch, targets = inner.value, [t.name for t in inner.targets]
        elif isinstance(inner, Eval) and isinstance(inner.expr, CallFunc) and \
                dict(inner.expr.launch):
            launch, targets = inner.expr, None
        else:
            return seq
        break
    info = dict(launch.launch)
    core = info.get("core_num")
    if core is not None and not (isinstance(core, Const) and core.value == 1) and core != 1:
        return seq
    if info.get("deps"):
        return seq
    loop_vars = [lv.var.name for lv, _ in levels]
    inner_iters = [v.name for v in levels[-1][0].iter_args]
    nest_names = set(loop_vars)
    for lv, _ in levels:
        nest_names.update(v.name for v in lv.iter_args)
    for k, (lv, _) in enumerate(levels):
        if k and (_free_vars(lv.start, set()) | _free_vars(lv.stop, set()) |
                  _free_vars(lv.step, set())) & nest_names:
            return seq
    # the innermost yields hand the launch's outputs back as the carries
    carries = []
    ylast = levels[-1][1]
    if ylast is not None:
        outs = targets[:-1] if targets else []
        for k, v in enumerate(ylast.values):
            if not isinstance(v, Var) or v.name not in outs:
                return seq
            o = outs.index(v.name)
            js = [j for j, a in enumerate(launch.args)
                  if isinstance(a, Var) and a.name == inner_iters[k]]
            if len(js) != 1:
                return seq
            carries.append((js[0], o))
    # launch arguments: constants, outer values, carries, affine functions of loop vars
    argk = []
    for a in launch.args:
        f = _arg_fn(fc, a, loop_vars, inner_iters)
        if f is None:
            return seq
        argk.append(f)
    m = fc.m
    bounds = [(fc.expr(lv.start), fc.expr(lv.stop), fc.expr(lv.step)) for lv, _ in levels]
    # constant loop bounds (the usual case) need no evaluation per call
    consts = [[fc.const(x) for x in (lv.start, lv.stop, lv.step)] for lv, _ in levels]
    const_raw = None
    if all(ok and type(v) is int for c in consts for ok, v in c):
        const_raw = [tuple(v for _, v in c) for c in consts]
    outer_inits = [fc.expr(i) for i in levels[0][0].inits]
    sp = launch.span
    hint = info.get("name_hint") or launch.func
    info["_label"] = f"'{hint}' ({sp.file}:{sp.line})" if sp is not None and sp.known \
        else f"'{hint}'"
    name = launch.func
    nl = len(levels)
    # the names each level's carries land in after the loops: (name, carry index)
    carry_names = [(n, i) for lv, _ in levels
                   for i, (it, res) in enumerate(zip(lv.iter_args, lv.results))
                   for n in (it.name, res.name)]

    def sequential(env: dict) -> Any:
        if m.pending:  # block by block: every deferred fill happens first
            m.flush_pending()
        return seq(env)

    # the batch shape, work count and loop variables of the last call, by loop bounds
    # (the same Aff objects again, so the window memos compare them by identity)
    shape_memo: list = [None]

    def shape_of(raw: list) -> tuple | None:
        ranges = []
        for a, b, c in raw:
            if c == 0:
                return None
            ranges.append((a, max(0, -((a - b) // c)), c))
        bs = tuple(n for _, n, _ in ranges)
        B = math.prod(bs)
        if B < 2:
            return None
        pre = 0
        acc = 1
        for n in bs:
            acc *= n
            pre += acc
        lv = {}
        for k, (a, n, c) in enumerate(ranges):
            d = [0] * nl
            d[k] = c
            lv[loop_vars[k]] = Aff(a, tuple(d))
        # the loop variables' values after the loops (what the sequential loops leave)
        last = [(loop_vars[k], a + (n - 1) * c) for k, (a, n, c) in enumerate(ranges)]
        return raw, last, bs, B, pre, lv

    def loop(env: dict) -> Any:  # batched when it can be, else `sequential`
        if not m.batch_on or m.cur is not None or m.interleaver is not None:
            return sequential(env)
        raw = const_raw or [(int(f0(env)), int(f1(env)), int(f2(env)))
                            for f0, f1, f2 in bounds]
        shape = shape_memo[0]
        if shape is None or shape[0] != raw:
            shape = shape_of(raw)
            if shape is None:
                return sequential(env)
            shape_memo[0] = shape
        _, last, bs, B, pre, lv = shape
        carried = [f(env) for f in outer_inits]
        cv = dict(zip(inner_iters, carried))
        args = [f(env, lv, cv) for f in argk]
        for x in args:
            if x is None:
                return sequential(env)
        r = launch_loop(m, name, args, bs, info, launch.span, pre, carries)
        if r is None:
            return sequential(env)
        rets, tid = r
        for v, x in last:
            env[v] = x
        for it, i in carry_names:
            env[it] = carried[i]
        if targets is not None:
            for t, x in zip(targets[:-1], rets):
                env[t] = x
            env[targets[-1]] = tid
        return None

    m._nest_fors.add(id(s))
    return loop


def _arg_fn(fc: Any, a: Any, loop_vars: list, iters: list) -> Callable | None:
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
        op = _SCALAR[sym]

        def scal(env: dict, lv: dict, cv: dict) -> Any:
            vals = [f(env, lv, cv) for f in fs]
            if not all(type(v) is Aff or _is_int(v) for v in vals):
                return None
            try:
                r = op(vals, None)
            except _NeedArray:
                return None
            return r if type(r) is Aff or _is_int(r) else None

        return scal
    if _free_vars(a, set()) & (set(loop_vars) | set(iters)):
        return None
    f = fc.expr(a, tolerant=True)
    return lambda env, lv, cv: f(env)


__all__ = ["Aff", "BatchCompiler", "launch_loop", "run_spmd", "loop_nest", "Fallback",
           "UNDEF", "_flatten_deps"]
