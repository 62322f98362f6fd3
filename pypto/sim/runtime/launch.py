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
the caller's frame is left as it was.
"""
from __future__ import annotations

import math
import time
from typing import Any, Protocol

import numpy as np

from pypto.ir.nodes import CallFunc, For, LoopKind
from pypto.ir.span import Span
from pypto.ir.transform import walk
from pypto.ir.types import ShapedType
from pypto.sim.batch.body import run_body
from pypto.sim.batch.nest import Nest, Shape, nest_of
from pypto.sim.batch.run import BatchCache, Split, launch_loop, run_spmd, task_args
from pypto.sim.batch.state import arg_at
from pypto.sim.engine.function import CompiledFunction, Compiler, Host, LaunchSite
from pypto.sim.engine.values import FRAME, Env, Stmt
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
            rets = _interleaved(exe, task, cf, args, core_num, span)
        else:
            batched = run_spmd(exe, exe.batch, task, cf, args, core_num) \
                if core_num > 1 and settings.batch and top else None
            if batched is not None:
                rets = batched
            elif rec is None:
                call = cf.call
                for b in range(core_num):
                    task.block = b
                    rets = call(args, task)
            else:
                call = cf.call
                for b in range(core_num):
                    task.start_block(b)
                    rets = call(args, task)
                    task.close_block()
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

        def refused(env: Env) -> str | None:
            if exe.settings.batch:
                exe.batch.refusals.setdefault(where, why)
            return seq(env)

        return refused
    runner = LaunchNest(exe, s, nest, seq)
    exe.nests[id(s)] = runner
    return runner


class LaunchNest:
    """A launch loop nest of orchestration (`Nest`): called with the environment, it runs
    the nest batched when this run can, else its loops sequentially (`seq`)."""

    __slots__ = ("exe", "nest", "parallel", "region", "s", "seq", "site", "splits")

    def __init__(self, exe: Executable, s: For, nest: Nest, seq: Stmt):
        self.exe = exe
        self.s = s
        self.nest = nest
        self.seq = seq
        self.site = nest.site
        self.parallel = _all_parallel(s, len(nest.loop_vars))
        self.region: CompiledFunction | None = None  # the launched region, on first use
        # batch shape -> where the last call split it (`Split`): the next call with that
        # shape splits there at once, instead of finding out with a batch that stops (a
        # wrong guess costs speed only: a partial head stops its batch, and the nest runs
        # sequentially, as when a split fails)
        self.splits: dict[tuple, int] = {}

    def sequential(self, env: Env) -> str | None:
        memory = env[FRAME].run.memory
        if memory.pending:  # block by block: every deferred fill happens first
            memory.flush_pending()
        return self.seq(env)

    def __call__(self, env: Env) -> str | None:
        exe, nest, s = self.exe, self.nest, self.s
        fr = env[FRAME]
        if fr.in_region or fr.interleaver is not None:
            return self.sequential(env)
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
        if shape is None or not exe.settings.batch:
            return self.sequential(env)
        if not nest.single:
            if run_body(exe, exe.batch, fr, nest, shape, env):
                return None
            return self.sequential(env)
        got = nest.arguments(env, shape)
        if got is None:
            return self.sequential(env)
        args, carried = got
        site = self.site
        assert site is not None
        cf = self.region
        if cf is None:
            cf = self.region = exe.function(site.func)
        if cf.has_syncall:
            return self.sequential(env)
        # the outer loops' values (a traced task records them; untraced, nothing does)
        outer = tuple((v, env[v]) for v in site.loops if v in env
                      and v not in shape.loop_vars) if fr.run.trace is not None else ()
        splits = self.splits
        n = splits.get(shape.bs)
        r = Split(n) if n is not None else \
            launch_loop(exe, exe.batch, fr, cf, site, args, shape.bs, shape.pre_work,
                        nest.carries, (outer, shape.raw, nest.loop_vars))
        if isinstance(r, Split):
            splits[shape.bs] = r.n
            r = _split(exe, fr, nest, shape, cf, site, env, outer, r.n)
            if r is None:
                splits.pop(shape.bs, None)
        if r is None:
            return self.sequential(env)
        nest.finish(env, shape, carried, *r)
        return None


def _split(exe: Executable, fr: TaskFrame, nest: Nest, shape: Shape, cf: CompiledFunction,
           site: LaunchSite, env: Env, outer: tuple, n: int) -> tuple[tuple, int] | None:
    """The nest's first `n` outermost iterations batched, then the others (their tiles
    are partial: a valid shape or a clamp short of the window) batched with masks when
    untraced, else one launch at a time, in program order; (the last launch's returns,
    its task id), or None when the first part does not run batched after all (nothing
    changed)."""
    run = fr.run
    # (a deferred pl.Out fill stays deferred: the head's batch fills what it leaves
    # unwritten, the tail's launches then write their part of that)
    head = nest.sub_shape(shape, 0, n)
    tail = nest.sub_shape(shape, n, shape.bs[0])
    got, rest = nest.arguments(env, head), nest.arguments(env, tail)
    if got is None or rest is None:
        return None
    r = launch_loop(exe, exe.batch, fr, cf, site, got[0], head.bs, head.pre_work,
                    nest.carries, (outer, head.raw, nest.loop_vars))
    if r is None or isinstance(r, Split):
        return None
    if run.trace is None and math.prod(tail.bs) > 1:
        # untraced, the partial tiles batch too (with masks: `pypto.sim.batch.masks`;
        # a single one costs less block by block)
        t = launch_loop(exe, exe.batch, fr, cf, site, rest[0], tail.bs, tail.pre_work,
                        nest.carries, (outer, tail.raw, nest.loop_vars))
        if t is not None and not isinstance(t, Split):
            return t
    args = rest[0]
    run.work += tail.pre_work  # the loops' own iterations, as the sequential loops count
    names = nest.loop_vars
    for idx in np.ndindex(*tail.bs):
        here = tuple((v, a + i * c) for v, (a, _, c), i in zip(names, tail.raw, idx))
        r = launch(exe, fr, site, [arg_at(a, idx) for a in args], 1, [], outer + here)
    return r


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
