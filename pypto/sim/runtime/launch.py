"""Launching tasks: the one place that decides how the blocks of a launch run.

* a launch whose region meets at `pl.system.syncall`, with more than one block: its
  blocks run interleaved, each in a frame of its own (`Interleaver`);
* a top-level SPMD launch, when batching is on: its blocks run batched
  (`pypto.sim.batch.run.run_spmd`), falling back to
* block by block, in one task frame;
* a loop nest of orchestration whose body is one launch (`pl.parallel`, or sequential
  loops whose iterations carry nothing and touch disjoint windows): its iterations run
  as one batch (`launch_loop`) when they can, else the loops run sequentially and each
  iteration launches as above.

Every launch is one task (one `TaskRecord` in a traced run) with a frame of its own;
the caller's frame is left as it was. Each launch notes how it ran, and why, in the
run's `DecisionLog` (`pypto.sim.machine.decisions`): the batch engine answers a
refusal or a run-time fallback with a `Decision`, and this module records it.
"""
from __future__ import annotations

import functools
import math
import time
from typing import Any, Protocol

import numpy as np

from pypto.ir.nodes import CallFunc, For, LoopKind
from pypto.ir.span import Span
from pypto.ir.transform import walk
from pypto.ir.types import ShapedType
from pypto.sim.batch.body import run_body
from pypto.sim.batch.nest import LaunchStep, Nest, Shape, nest_of
from pypto.sim.batch.run import BatchCache, Split, launch_loop, run_spmd, task_args
from pypto.sim.batch.state import arg_at
from pypto.sim.engine.function import CompiledFunction, Compiler, Host, LaunchSite
from pypto.sim.engine.values import FRAME, Env, Stmt
from pypto.sim.machine.decisions import (
    BODY_BATCH,
    LAUNCH,
    NEST_BATCH,
    NESTED,
    ONE_BLOCK,
    PLAN,
    RUN,
    SPLIT,
    SPMD_BATCH,
    SYNCALL,
    Decision,
    refused,
)
from pypto.sim.machine.frame import TaskFrame
from pypto.sim.machine.interleave import Interleaver
from pypto.sim.trace.trace import TaskRecord


class Executable(Host, Protocol):
    """What launching needs of the executable it runs (`pypto.sim.runtime.executable`)."""

    batch: BatchCache  # batching decisions about its regions
    nests: dict[int, LaunchNest]  # id of a For statement -> its launch nest
    budget_ok: set[str]  # regions the ub check passed


def launch(exe: Executable, fr: TaskFrame, site: LaunchSite, args: list, core_num: int,
           deps: list[int], loops: tuple = ()) -> tuple[tuple, int]:
    """Run the task `site` launches from frame `fr` with `core_num` blocks, inside loops
    at `loops` ((variable, value) pairs): (its returns, its task id)."""
    cf = exe.function(site.func)
    label = site.label
    span = site.span
    if core_num < 1:
        raise fr.fault(f"launch of {label} with core_num={core_num}; it must be >= 1", span)
    run = fr.run
    settings = run.settings
    run.work += core_num
    if run.work > settings.max_work:
        raise fr.over_work(span, f"launching {core_num} blocks of {label}")
    if settings.check_ub and cf.name not in exe.budget_ok:
        exe.check_budget(cf, label, span)
    if deps and run.comm is not None:  # a deferred completion (pld.system.defer_wait)
        run.comm.before_launch(deps)
    tid = run.next_tid
    run.next_tid = tid + 1
    parent = fr.rec
    trace = run.trace
    rec = None
    if trace is not None:
        rec = TaskRecord(tid, site.hint, site.func, site.kind, core_num, span,
                         parent=parent.id if parent is not None else None, deps=list(deps),
                         loops=tuple(loops))
        rec.args = task_args(fr, cf, args)
        trace.add_task(rec)
    task = TaskFrame(run, rec, label, None, core_num, tid, True)
    top = not fr.in_region
    capture = run.capture
    if capture is not None:
        capture.before(run.memory, tid, cf.params, args, site.dumps)
    t0 = time.perf_counter()
    rets: tuple = ()
    try:
        if cf.has_syncall and core_num > 1:
            run.decisions.note(cf.name, SYNCALL)
            rets = _interleaved(exe, task, cf, args, core_num, span)
        else:
            # how its blocks run: one decision, asked here once
            how: tuple | Decision = ONE_BLOCK
            if core_num > 1:
                how = NESTED if not top else \
                    run_spmd(exe, exe.batch, task, cf, args, core_num) if settings.batch \
                    else batching_off(settings.no_batch)
            if not isinstance(how, Decision):
                run.decisions.note(cf.name, SPMD_BATCH)
                rets = how
            else:
                if how is ONE_BLOCK:
                    run.decisions.note_single(cf.name)
                else:
                    run.decisions.note(cf.name, how)
                rets = _per_block(cf, args, task, core_num)
    finally:
        if top:
            run.memory.forget_views()
    if rec is not None and trace is not None:
        rec.seconds = time.perf_counter() - t0
        trace.finish_task(rec, run.memory)
    if capture is not None:
        capture.after(run.memory, tid, cf.params, args, site.dumps)
    # Values a task hands back to orchestration live in global memory from now on.
    for r, t in zip(rets, cf.func.returns):
        if isinstance(r, np.ndarray) and isinstance(t, ShapedType):
            buf, _ = run.memory.locate(r)
            if buf is None:
                buf = run.memory.register(f"{site.hint}.out", r, None, None, "result")
                if trace is not None:
                    trace.results[buf.uid] = tid
                    trace.note_buffer(buf)
    return rets, tid


def _per_block(cf: CompiledFunction, args: list, task: TaskFrame, n: int) -> tuple:
    """The `n` blocks of the task of frame `task`, one after the other: the last
    block's returns."""
    rets: tuple = ()
    call = cf.call
    if task.rec is None:
        for b in range(n):
            task.block = b
            rets = call(args, task)
    else:
        for b in range(n):
            task.start_block(b)
            rets = call(args, task)
            task.close_block()
    return rets


@functools.lru_cache(maxsize=8)
def batching_off(why: str) -> Decision:
    """The decision of every launch of a run whose settings turn batching off."""
    return refused(LAUNCH, why)


def _interleaved(exe: Executable, task: TaskFrame, cf: CompiledFunction, args: list,
                 n: int, span: Span | None) -> tuple:
    """The `n` blocks of a task that meet at `pl.system.syncall`, interleaved."""
    platform = exe.settings.platform
    occupancy = platform.full_occupancy(cf.syncall_core_type)
    label = task.region
    if cf.syncall_mode == "hard" and n > occupancy:
        raise task.fault(
            f"a hard pl.system.syncall in {label} needs all {n} blocks resident at once, but "
            f"{platform.name} runs at most {occupancy} such blocks together; on hardware "
            "this launch deadlocks", span,
            hint=f"launch at most {occupancy} blocks (full occupancy, sync_start=True) or "
                 "use mode='soft' with a GM workspace")
    frames = [task.for_block(b) for b in range(n)]
    call = cf.call
    il = Interleaver(n, lambda b: call(args, frames[b]), lambda: f"task {label}")
    for f in frames:
        f.interleaver = il
    results = il.run()
    for f in frames:
        f.close_block()
    return results[-1] if results else ()


def launch_nest(exe: Executable, fc: Compiler, s: For, seq: Stmt) -> Stmt:
    """The closure running the orchestration loop `s` (compiled as `seq`): when it is a
    launch nest (`nest_of`: parallel or sequential loops around launches and integer
    arithmetic), a `LaunchNest` (batched when this run can, else `seq`)."""
    nest = nest_of(fc, s)
    if nest is None:
        return seq
    if isinstance(nest, str):
        if not _direct_launches(s):
            return seq
        where = f"loop {s.span.file}:{s.span.line}" if s.span is not None else "loop"
        why = nest
        settings = exe.settings
        decision = refused(PLAN, f"its loop cannot run batched: {why}") if settings.batch \
            else batching_off(settings.no_batch)
        regions = _launched(s)

        def sequential(env: Env) -> str | None:
            if settings.batch:
                exe.batch.refusals.setdefault(where, why)
            note = env[FRAME].run.decisions.note
            for region in regions:
                note(region, decision)
            return seq(env)

        return sequential
    runner = LaunchNest(exe, s, nest, seq)
    exe.nests[id(s)] = runner
    return runner


class LaunchNest:
    """A launch loop nest of orchestration (`Nest`): called with the environment, it runs
    the nest batched when this run can, else its loops sequentially (`seq`)."""

    __slots__ = ("exe", "nest", "parallel", "region", "regions", "s", "seq", "site", "splits")

    def __init__(self, exe: Executable, s: For, nest: Nest, seq: Stmt):
        self.exe = exe
        self.s = s
        self.nest = nest
        self.seq = seq
        self.site = nest.site
        self.parallel = _all_parallel(s, len(nest.loop_vars))
        self.region: CompiledFunction | None = None  # the launched region, on first use
        # the regions it launches (each notes the nest's decision)
        self.regions = tuple(st.site.func for st in nest.steps if isinstance(st, LaunchStep))
        # batch shape -> where the last call split it (`Split`): the next call with that
        # shape splits there at once, instead of finding out with a batch that stops (a
        # wrong guess costs speed only: a partial head stops its batch, and the nest runs
        # sequentially, as when a split fails)
        self.splits: dict[tuple, int] = {}

    def note(self, env: Env, decision: Decision) -> None:
        """Note `decision` for every region the nest launches."""
        note = env[FRAME].run.decisions.note
        for region in self.regions:
            note(region, decision)

    def sequential(self, env: Env, decision: Decision | None = None) -> str | None:
        """The nest's loops run sequentially (each iteration launches as `launch`
        decides), after noting why (`decision`; None: nothing beyond "one block")."""
        run = env[FRAME].run
        if decision is not None:
            self.note(env, decision)
        memory = run.memory
        if memory.pending:  # block by block: every deferred fill happens first
            memory.flush_pending()
        return self.seq(env)

    def __call__(self, env: Env) -> str | None:
        exe, nest, s = self.exe, self.nest, self.s
        fr = env[FRAME]
        if fr.in_region or fr.interleaver is not None:
            return self.sequential(env, NESTED if fr.in_region else _IN_SYNCALL)
        try:
            shape = nest.shape(env)
        except Exception:  # noqa: BLE001 - the loops report their own bounds
            shape = None
        if shape is not None:
            # its size is known: a nest past the work limit fails before it runs, batched
            # or not (at one task per iteration, it would fail only after hours)
            more = shape.pre_work + math.prod(shape.bs) * nest.n_launches
            if fr.run.work + more > fr.run.settings.max_work:
                raise fr.over_work(s.span, _nest_words(self.parallel, shape.bs), more)
        if shape is None:
            return self.sequential(env)
        if not exe.settings.batch:
            return self.sequential(env, batching_off(exe.settings.no_batch))
        if not nest.single:
            how = run_body(exe, exe.batch, fr, nest, shape, env)
            if how is BODY_BATCH:
                self.note(env, how)
                return None
            return self.sequential(env, how)
        got = nest.arguments(env, shape)
        if got is None:
            return self.sequential(env, _NOT_AFFINE)
        args, carried = got
        site = self.site
        assert site is not None
        cf = self.region
        if cf is None:
            cf = self.region = exe.function(site.func)
        if cf.has_syncall:
            return self.sequential(env, SYNCALL)
        # the outer loops' values (a traced task records them; untraced, nothing does)
        outer = tuple((v, env[v]) for v in site.loops if v in env
                      and v not in shape.loop_vars) if fr.run.trace is not None else ()
        splits = self.splits
        n = splits.get(shape.bs)
        r = Split(n) if n is not None else \
            launch_loop(exe, exe.batch, fr, cf, site, args, shape.bs, shape.pre_work,
                        nest.carries, (outer, shape.raw, nest.loop_vars))
        how = NEST_BATCH
        if isinstance(r, Split):
            splits[shape.bs] = r.n
            r, how = _split(exe, fr, nest, shape, cf, site, env, outer, r.n)
            if isinstance(r, Decision):
                splits.pop(shape.bs, None)
        if isinstance(r, Decision):
            return self.sequential(env, r)
        self.note(env, how)
        nest.finish(env, shape, carried, *r)
        return None


_IN_SYNCALL = refused(LAUNCH, "launched between blocks meeting at pl.system.syncall")
_NOT_AFFINE = refused(LAUNCH, "an argument of the launch is not affine in the loop "
                              "variables at run time")


def _split(exe: Executable, fr: TaskFrame, nest: Nest, shape: Shape, cf: CompiledFunction,
           site: LaunchSite, env: Env, outer: tuple, n: int
           ) -> tuple[tuple[tuple, int] | Decision, Decision]:
    """The nest's first `n` outermost iterations batched, then the others (their tiles
    are partial: a valid shape or a clamp short of the window) batched with masks when
    untraced, else one launch at a time, in program order: ((the last launch's returns,
    its task id), how the nest ran), or (why not, that again) when the first part does
    not run batched after all (nothing changed)."""
    run = fr.run
    # (a deferred pl.Out fill stays deferred: the head's batch fills what it leaves
    # unwritten, the tail's launches then write their part of that)
    head = nest.sub_shape(shape, 0, n)
    tail = nest.sub_shape(shape, n, shape.bs[0])
    got, rest = nest.arguments(env, head), nest.arguments(env, tail)
    if got is None or rest is None:
        return _NOT_AFFINE, _NOT_AFFINE
    r = launch_loop(exe, exe.batch, fr, cf, site, got[0], head.bs, head.pre_work,
                    nest.carries, (outer, head.raw, nest.loop_vars))
    if isinstance(r, Decision):
        return r, r
    if isinstance(r, Split):
        return _SPLIT_TWICE, _SPLIT_TWICE
    if run.trace is None and math.prod(tail.bs) > 1:
        # untraced, the partial tiles batch too (with masks: `pypto.sim.batch.masks`;
        # a single one costs less block by block)
        t = launch_loop(exe, exe.batch, fr, cf, site, rest[0], tail.bs, tail.pre_work,
                        nest.carries, (outer, tail.raw, nest.loop_vars))
        if not isinstance(t, Decision) and not isinstance(t, Split):
            return t, _split_decision(n, "batched with masks")
    args = rest[0]
    run.work += tail.pre_work  # the loops' own iterations, as the sequential loops count
    names = nest.loop_vars
    for idx in np.ndindex(*tail.bs):
        here = tuple((v, a + i * c) for v, (a, _, c), i in zip(names, tail.raw, idx))
        r = launch(exe, fr, site, [arg_at(a, idx) for a in args], 1, [], outer + here)
    return r, _split_decision(n, "one launch at a time")


_SPLIT_TWICE = refused(RUN, "the first iterations before a partial tile have partial tiles "
                            "too")


@functools.lru_cache(maxsize=64)
def _split_decision(n: int, rest: str) -> Decision:
    """A nest split before iteration `n` of its outermost loop, its rest run `rest`."""
    return Decision(SPLIT, RUN, f"partial tiles from iteration {n} of the outermost loop "
                                f"on: the {n} before it batched, the rest {rest}")


def _launched(s: For) -> tuple[str, ...]:
    """The regions the body of loop `s` launches itself (not inside inner loops)."""
    names: dict[str, None] = {}
    for st in s.body:
        if not isinstance(st, For):
            for n in walk(st):
                if isinstance(n, CallFunc) and n.launch:
                    names[n.func] = None
    return tuple(names)


def _all_parallel(s: For, depth: int) -> bool:
    """Whether the `depth` loops of the nest rooted at `s` are all pl.parallel."""
    cur: Any = s
    for _ in range(depth):
        if not isinstance(cur, For) or cur.kind is not LoopKind.PARALLEL:
            return False
        cur = next((b for b in cur.body if isinstance(b, For)), None)
    return True


def _nest_words(parallel: bool, bs: tuple[int, ...]) -> str:
    """The nest as the over-work error names it: its loops' kind and its size."""
    total = math.prod(bs)
    if len(bs) == 1:
        return (f"a pl.parallel launch of {total:,} tasks" if parallel
                else f"a loop of {total:,} iterations")
    dims = " x ".join(f"{n:,}" for n in bs)
    return (f"a pl.parallel launch nest of {dims} = {total:,} tasks" if parallel
            else f"a loop nest of {dims} = {total:,} iterations")


def _direct_launches(s: For) -> bool:
    """Does the body of loop `s` launch a task itself (not only inside inner loops)?"""
    for st in s.body:
        if isinstance(st, For):
            continue
        if any(isinstance(n, CallFunc) and n.launch for n in walk(st)):
            return True
    return False


__all__ = ["LaunchNest", "launch", "launch_nest"]
