"""A loop body of several launches, batched: each launch runs once for all iterations.

pypto-lib's orchestration loops rarely hold one launch: a tile's projection is one
region and its residual add the next (the first hands its result to the second),
between them integer arithmetic on the loop variables. Run batched, each launch of the
body runs for every iteration at once, in body order: launch 1 for all iterations, then
launch 2 for all iterations, ... - the loop split into one loop per launch. That
reordering is the sequential order's equal exactly when no iteration can see what
another iteration does, which is checked before anything runs:

* every tensor a launch writes is accessed (by any launch of the body, reads included)
  at offsets whose per-iteration footprints are pairwise disjoint: along some axis,
  `const + step * i (+ the regions' own loop terms)` with one step for all those
  accesses and cells that never meet (`lattice.lattice_disjoint`), from the concrete
  offsets of this run;
* no array passed to a launch overlaps a written one without being the same array;
* a fresh tensor a launch returns is its iteration's own (a `Stack`: one per iteration,
  along the batch axes) and only later launches of the same iteration read it.

Within an iteration the launches still run in body order, so what launch 2 reads of
launch 1's result is what it reads block by block. The tasks are numbered, traced,
costed and their returns registered as the sequential loops do (iteration by iteration,
launch by launch). Anything unexpected at run time undoes every window write the body
made (the undo log) and the loop runs sequentially.
"""
from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from pypto.sim.batch.branch_trace import block_costs
from pypto.sim.batch.deferred import BatchTrace
from pypto.sim.batch.lattice import lattice_disjoint
from pypto.sim.batch.nest import LaunchStep, Nest, ScalarStep, Shape
from pypto.sim.batch.plan import Plan
from pypto.sim.batch.replay import Replay
from pypto.sim.batch.run import (
    PAST_WORK,
    BatchCache,
    BatchedRegion,
    fallback_decision,
    prepare,
    run_batched,
    task_args,
)
from pypto.sim.batch.state import Aff, Fallback, Stack
from pypto.sim.engine.function import CompiledFunction, Host
from pypto.sim.engine.values import Env
from pypto.sim.faults import source_name
from pypto.sim.machine.decisions import ARGUMENTS, BODY_BATCH, LAUNCH, Decision, refused
from pypto.sim.machine.frame import TaskFrame
from pypto.sim.trace.trace import TaskRecord


class _Launch:
    """One launch of the body in this run: its region and arguments."""

    __slots__ = ("args", "cf", "frame", "outs", "region", "rets", "step")

    def __init__(self, step: LaunchStep, cf: CompiledFunction, region: BatchedRegion,
                 args: list):
        self.step = step
        self.cf = cf
        self.region = region
        self.args = args
        self.outs: list = []  # per output: the uniform array, or a Stack
        self.rets: tuple = ()
        self.frame: Any = None


def run_body(host: Host, cache: BatchCache, fr: TaskFrame, nest: Nest, shape: Shape,
             env: Env) -> Decision:
    """Run the loop nest's body batched (`shape`: this run's loops): `BODY_BATCH`, or
    why it cannot, having changed nothing (the caller runs the loops sequentially)."""
    run = fr.run
    bs = shape.bs
    bv, carried = nest.values(env, shape)
    launches: list[_Launch] = []
    for step in nest.steps:
        if isinstance(step, ScalarStep):
            v = step.fn(env, bv)
            if v is None:
                return _SCALAR
            bv[step.target] = v
            continue
        args = [f(env, bv) for f in step.argk]
        if any(a is None for a in args):
            return _ARGUMENT
        cf = host.function(step.site.func)
        if cf.has_syncall:
            return _SYNCALL
        region = prepare(host, cache, cf, args, bs, False, body=True)
        if isinstance(region, Decision):
            return region
        ln = _Launch(step, cf, region, args)
        plan = region.plan
        for alias, varies in zip(plan.returns, plan.vreturns):
            given = args[region.names.index(alias)] if alias is not None else None
            if alias is not None and (not varies or type(given) is Stack):
                ln.outs.append(given)  # (a Stack it wrote in place: the same tensors)
            else:
                ln.outs.append(Stack(None))
        if step.targets is not None:
            for t, x in zip(step.targets[:-1], ln.outs):
                bv[t] = x
        launches.append(ln)
    for li, j, o in nest.step_carries:
        ln = launches[sum(isinstance(s, LaunchStep) for s in nest.steps[:li])]
        if o >= len(ln.outs) or ln.outs[o] is not ln.args[j]:
            return _NOT_ITSELF  # a carried tensor must come back as itself
    why = _independent(launches, bs)
    if why is not None:
        for ln in launches:
            cache.refusals.setdefault(ln.cf.name, why)
        return refused(ARGUMENTS, why)
    m = len(launches)
    n_tasks = math.prod(bs)
    if run.work + shape.pre_work + n_tasks * m > run.settings.max_work:
        return PAST_WORK
    if run.memory.pending:
        run.memory.flush_pending()
    for ln in launches:
        if run.settings.check_ub:
            host.check_budget(ln.cf, ln.step.site.label, ln.step.site.span)
    w0, tid0 = run.work, run.next_tid
    run.work += shape.pre_work + n_tasks * m
    t0 = time.perf_counter()
    undo: list = []
    try:
        for k, ln in enumerate(launches):
            for name in ln.region.plan.stacked:  # written in place: each its own, writable
                s = ln.args[ln.region.names.index(name)]
                if type(s) is Stack and s.array is not None and not s.array.flags.writeable:
                    s.array = np.array(s.array)
            args = [a.array if type(a) is Stack else a for a in ln.args]
            ln.rets, ln.frame = run_batched(fr, ln.region, args, bs, False,
                                            ln.step.site.label, tid0 + k, n_tasks, False,
                                            undo)
            for o, out in enumerate(ln.outs):
                if type(out) is Stack:
                    r = ln.rets[o]
                    if not isinstance(r, np.ndarray):
                        raise Fallback("a returned value that is not an array")
                    out.array = np.broadcast_to(r, bs + r.shape[len(r.shape) -
                                                                 _rank(ln, o):])
    except Fallback as exc:
        for view, old in reversed(undo):
            view[...] = old
        run.work = w0
        run.memory.forget_views()
        return fallback_decision(exc)
    run.next_tid = tid0 + n_tasks * m
    last = _finish(fr, launches, bs, tid0, shape, env, (time.perf_counter() - t0) /
                   (n_tasks * m))
    for v, x in shape.last:
        env[v] = x
    for it, i in nest.carry_names:
        env[it] = carried[i]
    idx = tuple(n - 1 for n in bs)
    for step in nest.steps:
        if isinstance(step, ScalarStep):
            v = bv[step.target]
            env[step.target] = v.at(idx) if type(v) is Aff else v
    for k, (ln, outs) in enumerate(zip(launches, last)):
        names = ln.step.targets
        if names is not None:
            for name, x in zip(names[:-1], outs):
                env[name] = x
            env[names[-1]] = tid0 + (n_tasks - 1) * m + k
    run.memory.forget_views()
    return BODY_BATCH


# the loop body's steps, refused before anything ran
_SCALAR = refused(ARGUMENTS, "an integer of the loop body is not affine in the loop "
                             "variables at run time")
_ARGUMENT = refused(ARGUMENTS, "an argument of a launch is not affine in the loop "
                               "variables at run time")
_SYNCALL = refused(LAUNCH, "a launch of the loop body meets at pl.system.syncall")
_NOT_ITSELF = refused(ARGUMENTS, "a tensor the loop carries does not come back as itself")


def _rank(ln: _Launch, o: int) -> int:
    t = ln.cf.func.returns[o]
    return len(getattr(t, "shape", ()))


def _finish(fr: TaskFrame, launches: list[_Launch], bs: tuple, tid0: int, shape: Shape,
            env: Env, dt: float) -> list[list]:
    """Trace the tasks and register the fresh tensors they returned, iteration by
    iteration, launch by launch (as the sequential loops do); the last iteration's
    outputs per launch."""
    run = fr.run
    memory = run.memory
    trace = run.trace
    m = len(launches)
    names = list(shape.loop_vars)
    parent = fr.rec.id if fr.rec is not None else None
    flat_last = math.prod(bs) - 1
    last: list[list] = [[] for _ in launches]
    logs = [Replay(ln.frame.batch.log, len(bs)) for ln in launches] \
        if trace is not None else []
    # (the tasks' accesses and writes: made when read; at once on a multi-card run)
    later = BatchTrace(trace, memory) if trace is not None and run.comm is None else None
    for flat, idx in enumerate(np.ndindex(*bs)):
        if trace is None and flat != flat_last:
            continue
        mine: list[list] = []
        for k, ln in enumerate(launches):
            outs = []
            for out in ln.outs:
                outs.append(out)
            args = [mine[_producer(launches, a)][_out_index(launches, a)]
                    if type(a) is Stack else a.at(idx) if type(a) is Aff else a
                    for a in ln.args]
            if trace is not None:
                site = ln.step.site
                f = ln.frame
                outer = tuple((v, env[v]) for v in site.loops if v in env
                              and v not in shape.loop_vars)
                here = tuple((v, a + i * c) for v, (a, _, c), i in
                             zip(names, shape.raw, idx))
                rec = TaskRecord(tid0 + flat * m + k, site.hint, site.func, site.kind, 1,
                                 site.span, parent=parent, deps=[], loops=outer + here)
                rec.args = task_args(fr, ln.cf, args)
                trace.add_task(rec)
                task = TaskFrame(run, rec, site.label, 0)
                if later is not None:
                    later.add(logs[k], rec, idx, 0, args)
                else:
                    logs[k].run(task, idx, args)
                task.costs = block_costs(f, rec, idx)
                task.close_block()
                rec.seconds = dt
                trace.finish_task(rec, memory)
            got = []
            for out in outs:
                if type(out) is Stack and _producer(launches, out) < k:
                    # an earlier launch's tensor this one wrote in place: registered then
                    got.append(mine[_producer(launches, out)][_out_index(launches, out)])
                elif type(out) is Stack:
                    assert out.array is not None
                    a = np.array(out.array[idx])  # its own buffer, as a fresh return is
                    buf = memory.register(f"{ln.step.site.hint}.out", a, None, None, "result")
                    if trace is not None:
                        trace.results[buf.uid] = tid0 + flat * m + k
                        trace.note_buffer(buf)
                    got.append(a)
                else:
                    got.append(out)
            mine.append(got)
            if flat == flat_last:
                last[k] = got
    if later is not None:
        later.close()
    return last


def _producer(launches: list[_Launch], s: Stack) -> int:
    for k, ln in enumerate(launches):
        if any(o is s for o in ln.outs):
            return k
    raise AssertionError("a Stack without its launch")  # pragma: no cover


def _out_index(launches: list[_Launch], s: Stack) -> int:
    for ln in launches:
        for o, x in enumerate(ln.outs):
            if x is s:
                return o
    raise AssertionError("a Stack without its launch")  # pragma: no cover


# -- independence --------------------------------------------------------------------------


def _independent(launches: list[_Launch], bs: tuple) -> str | None:
    """Why the iterations of the body might see each other's writes, or None when their
    footprints on every written tensor are pairwise disjoint (see the module docstring)."""
    arrays: dict[int, np.ndarray] = {}
    accesses: dict[int, list] = {}
    written: set[int] = set()
    for ln in launches:
        plan = ln.region.plan
        params = dict(zip(ln.region.names, ln.args))
        for a in ln.args:
            if isinstance(a, np.ndarray):
                arrays[id(a)] = a
        for acc in plan.accesses:
            a = params.get(acc.tensor)
            if not isinstance(a, np.ndarray):
                continue  # a Stack: the iteration's own
            accesses.setdefault(id(a), []).append((acc, _concrete(acc, plan, params)))
            if acc.write:
                written.add(id(a))
    items = list(arrays.items())
    for i, (ka, a) in enumerate(items):
        for kb, b in items[i + 1:]:
            if (ka in written or kb in written) and np.may_share_memory(a, b):
                return "a launch of the loop body passes a view of a tensor it writes"
    for key in written:
        why = _separated(accesses[key], bs)
        if why is not None:
            return f"the windows of '{_name(launches, key)}' {why}"
    return None


def _name(launches: list[_Launch], key: int) -> str:
    for ln in launches:
        for n, a in zip(ln.region.names, ln.args):
            if id(a) == key:
                return source_name(n)
    return "?"


def _concrete(acc: Any, plan: Plan, params: dict) -> list | None:
    """Per axis of the access: (const, steps per batch axis, loop terms), from this run's
    arguments; None for an axis whose offset is not known that way."""
    if acc.ext is None or any(f is None for f in acc.forms):
        return None
    out: list = []
    for const, coefs in acc.forms:
        steps: dict[int, int] = {}
        terms = []
        ok = True
        for sym, c in coefs.items():
            if isinstance(sym, tuple):  # ("u", name): a uniform unknown
                v = params.get(sym[1])
                rng = plan.loops.get(sym[1])
                if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
                    const += c * int(v)
                elif rng is not None:
                    start, step, n = rng
                    const += c * start
                    terms.append((c * step, n))
                else:
                    ok = False
                continue
            v = params.get(sym)
            if type(v) is Aff:
                const += c * v.base
                for k, d in enumerate(v.d):
                    if d:
                        steps[k] = steps.get(k, 0) + c * d
            elif isinstance(v, (int, np.integer)) and not isinstance(v, bool):
                const += c * int(v)
            else:
                ok = False
        out.append((const, steps, sorted(terms)) if ok else None)
    return out


def _separated(items: list, bs: tuple) -> str | None:
    for _, forms in items:
        if forms is None:
            return "are not all at known offsets"
    for k, n in enumerate(bs):
        if n <= 1:
            continue
        rank = len(items[0][1])
        found = False
        for ax in range(rank):
            step = None
            terms = None
            lo = hi = None
            for acc, forms in items:
                f = forms[ax] if ax < len(forms) else None
                if f is None:
                    break
                const, steps, tm = f
                s = steps.get(k, 0)
                if s == 0 or (step is not None and s != step) or \
                        (terms is not None and tm != terms) or \
                        any(steps.get(j, 0) for j in range(len(bs)) if j != k and bs[j] > 1):
                    break
                step, terms = s, tm
                lo = const if lo is None else min(lo, const)
                e = acc.ext[ax]
                hi = const + e if hi is None else max(hi, const + e)
            else:
                if step is not None and terms is not None and lo is not None and \
                        hi is not None and lattice_disjoint(terms + [(step, n)], hi - lo):
                    found = True
                    break
        if not found:
            return f"may overlap from iteration to iteration (loop {k})"
    return None


__all__ = ["run_body"]
