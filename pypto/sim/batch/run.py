"""Batched execution: the independent blocks of a launch run as one vectorised pass.

Two shapes of launch run batched (see `pypto.sim.batch.plan` for when):

* a `pl.parallel` loop nest in orchestration whose body is one launch (the usual
  "one task per tile" kernel): the iterations become the batch, one task each
  (`launch_loop`);
* an SPMD launch of N blocks (no syncall): the blocks become the batch (`run_spmd`).

Every value of the region is either *uniform* (the same for all blocks: a plain value,
exactly what block-by-block execution computes) or *batched*: an array with one leading
axis per batch axis (extent 1 where the value does not depend on that axis; numpy
broadcasting does the rest). Block-varying integer scalars are `Aff` (base + a step per
batch axis), so the windows of all blocks are one strided view of the tensor. The body
runs once, in a `BatchFrame`; the trace is rebuilt afterwards by replaying the logged
accesses per task (or block) in program order, with the per-block costs, so the trace
equals the one block-by-block execution records. Anything unexpected at run time (a
bound check that fails, a valid-shape-tagged value, an error of any kind) abandons the
batch, restores the tensors the region both reads and writes, and runs block by block,
which reports exactly what it always reported.

Which mode a launch runs in is decided in one place, `pypto.sim.runtime.launch`; this
module runs the batched mode.
"""
from __future__ import annotations

import math
import threading
import time
from typing import Any, TypeVar

import numpy as np

from pypto.ops.numeric import _QUIET
from pypto.sim.batch.branch_trace import add_costs, block_costs
from pypto.sim.batch.compiler import BatchLowering
from pypto.sim.batch.deferred import BatchTrace
from pypto.sim.batch.fills import fill_unwritten, write_only
from pypto.sim.batch.frame import BatchFrame
from pypto.sim.batch.masks import Masked, partial_blocks
from pypto.sim.batch.plan import BLOCK, Plan, analyze
from pypto.sim.batch.replay import Replay
from pypto.sim.batch.state import (
    Aff,
    BatchState,
    Fallback,
    Partial,
    Stack,
)
from pypto.sim.device.memory import PendingFill
from pypto.sim.engine.function import CompiledFunction, Host, LaunchSite
from pypto.sim.machine.decisions import ARGUMENTS, LAUNCH, PLAN, RUN, Decision, refused
from pypto.sim.machine.frame import TaskFrame
from pypto.sim.trace.trace import TaskRecord

E = TypeVar("E", bound=BaseException)


class BatchedRegion:
    """A region compiled for batched execution under one plan."""

    __slots__ = ("cf", "covered", "names", "plan", "write_only", "written")

    def __init__(self, plan: Plan, cf: CompiledFunction):
        self.plan = plan
        self.cf = cf
        self.names = [p[0] for p in cf.params]
        # the parameters the region writes (by position): `_prepare` checks on every call
        # that each is passed once and overlaps no other argument
        self.written = tuple(j for j, n in enumerate(self.names) if n in plan.written)
        self.write_only: dict[str, bool] = {}  # parameter -> fills.write_only (memoised)
        self.covered: list = [None]  # the last coverage answer (fills.fill_unwritten)


class BatchCache:
    """What an executable remembers about batching its regions (static decisions only:
    shared by every run of it)."""

    def __init__(self) -> None:
        # (region, varying) -> the region compiled batched, or why it cannot be
        self.regions: dict[tuple, BatchedRegion | Decision] = {}
        self.prepared: dict[tuple, tuple] = {}  # `_prepare`'s static part per call shape
        self.refusals: dict[str, str] = {}  # region -> why it cannot run batched
        # concurrent calls: a region is planned and compiled once, by the first of them
        self._lock = threading.Lock()

    def region(self, host: Host, cf: CompiledFunction, varying: frozenset[str]
               ) -> BatchedRegion | Decision:
        key = (cf.name, varying)
        if key in self.regions:
            return self.regions[key]
        with self._lock:
            if key in self.regions:
                return self.regions[key]
            # (conditions that differ per block run predicated; traced, each block
            # records the branch it takes: `branch_trace`)
            plan = analyze(cf.func, set(varying), predicate=True)
            region: BatchedRegion | Decision
            if isinstance(plan, Plan):
                region = BatchedRegion(plan, BatchLowering(host, cf.func, plan).compile())
            else:
                self.refusals[cf.name] = plan
                region = refused(PLAN, plan)
            self.regions[key] = region
        return region


def prepare(host: Host, cache: BatchCache, cf: CompiledFunction, args: list, bs: tuple,
            spmd: bool, body: bool = False) -> BatchedRegion | Decision:
    """The batched region of `cf` for these arguments, or why they run block by block
    (the plan's refusal or the arguments'). `body`: one launch of a
    loop body of several (`pypto.sim.batch.body`), which checks the blocks' footprints
    over all its launches itself and takes the fresh tensors a region returns."""
    # the static part (plan, separation) is memoised per region, varying steps and batch
    # shape; the tensors themselves are checked on every call
    key: tuple | None
    try:
        key = (cf.name, spmd, body, bs,
               *[a.d if type(a) is Aff else "S" if type(a) is Stack else None for a in args])
        hit = cache.prepared.get(key)
    except TypeError:
        key, hit = None, None
    if hit is None:
        hit = _prepare_static(host, cache, cf, args, bs, spmd, body)
        if key is not None:
            if len(cache.prepared) > 1024:
                cache.prepared.clear()
            cache.prepared[key] = hit
    region, written = hit
    if isinstance(region, Decision):
        return region
    for j in written:
        a = args[j]
        if not isinstance(a, np.ndarray):
            continue
        if type(a) is not np.ndarray or not a.flags.writeable:
            return _READ_ONLY
        passed = 0
        for b in args:
            if b is a:
                passed += 1
            elif isinstance(b, np.ndarray) and np.may_share_memory(a, b):
                return _SHARED
        if passed > 1:
            return _TWICE
    return region


# this call's arguments, refused by `prepare`
_READ_ONLY = refused(ARGUMENTS, "a tensor it writes is passed read-only or as a view of "
                                "another type")
_SHARED = refused(ARGUMENTS, "a tensor it writes shares memory with another argument")
_TWICE = refused(ARGUMENTS, "a tensor it writes is passed more than once")


def _prepare_static(host: Host, cache: BatchCache, cf: CompiledFunction, args: list,
                    bs: tuple, spmd: bool, body: bool) -> tuple:
    names = [p[0] for p in cf.params]
    varying = {n for n, a in zip(names, args) if type(a) is Aff or type(a) is Stack}
    if spmd:
        varying.add(BLOCK)
    region = cache.region(host, cf, frozenset(varying))
    if isinstance(region, Decision):
        return region, ()
    if body:
        return region, region.written
    if any(region.plan.vreturns):
        cache.refusals[cf.name] = "returns a varying value"
        return refused(PLAN, "returns a varying value"), ()
    deltas = {n: a.d for n, a in zip(names, args) if type(a) is Aff}
    if spmd:
        deltas[BLOCK] = (1,)
    why = region.plan.separated(deltas, bs)
    if why is not None:
        cache.refusals[cf.name] = why
        return refused(ARGUMENTS, why), ()
    return region, region.written


def run_batched(fr: TaskFrame, region: BatchedRegion, args: list, bs: tuple, spmd: bool,
                label: str, tid: int, mult: int, wlog: bool, undo: list | None = None,
                split: bool = False) -> tuple:
    """Run the batched body; returns (rets, its frame) or raises Fallback after undoing
    what it did (with `undo`, a list: its window writes are logged there for the caller
    to undo instead)."""
    run = fr.run
    snaps = [(a, a.copy()) for n, a in zip(region.names, args)
             if n in region.plan.written and isinstance(a, np.ndarray)] \
        if region.plan.read_written and undo is None else []
    tracing = run.trace is not None
    st = BatchState(bs, spmd, tracing, wlog, undo, split)
    proto = TaskRecord(tid, "", "", "", 1) if tracing else None
    f = BatchFrame(run, st, proto, label, bs[0] if spmd else 1, tid, mult)
    work = run.work
    try:
        if _QUIET.depth:  # the run already ignores floating-point errors (Executable.run)
            rets = region.cf.call(args, f)
        else:
            with np.errstate(all="ignore"):
                rets = region.cf.call(args, f)
    except Exception as exc:  # any failure: undo, run block by block
        for a, copy in snaps:
            a[...] = copy
        run.work = work
        run.batch.fallback += 1
        partial = _cause(exc, Partial)
        if partial is not None:  # (the caller may split the batch: `launch_loop`)
            raise partial from None
        given = _cause(exc, Fallback)  # (a core's own words, maybe behind an op's fault)
        raise Fallback(str(given) if given is not None else
                       f"{type(exc).__name__}: {exc}") from exc
    for r in rets:
        if type(r) is Masked:  # (a partial tile handed on: block by block from here)
            for a, copy in snaps:
                a[...] = copy
            run.work = work
            raise Partial(partial_blocks(bs, r))
    run.batch.batched += 1
    return rets, f


def _cause(exc: BaseException | None, cls: type[E]) -> E | None:
    """The `cls` exception behind `exc` (the op guard reports it as a fault it
    causes)."""
    seen = 0
    while exc is not None and seen < 8:
        if isinstance(exc, cls):
            return exc
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return None


def fallback_decision(exc: Fallback) -> Decision:
    """The decision of a batch abandoned at run time by `exc`."""
    return refused(RUN, str(exc))




class Split:
    """`launch_loop`'s answer when the first `n` iterations of the outermost loop could
    run batched but a later one has a partial tile (`state.Partial`)."""

    __slots__ = ("n",)

    def __init__(self, n: int):
        self.n = n


def launch_loop(host: Host, cache: BatchCache, fr: TaskFrame, cf: CompiledFunction,
                site: LaunchSite, args: list, bs: tuple, pre_work: int,
                carries: list[tuple[int, int]], loops: tuple = ((), (), ())
                ) -> tuple[tuple, int] | Split | Decision:
    """Run the tasks of a parallel launch loop nest (batch shape `bs`) batched. Returns
    (rets, last task id), a `Split`, or why the loop runs block by block instead
    (nothing changed in both cases). `loops`: the
    outer loops' (variable, value) pairs, the nest's (start, stop, step) per level and
    its variables (each task records its loop values)."""
    run = fr.run
    region = prepare(host, cache, cf, args, bs, False)
    if isinstance(region, Decision):
        return region
    names = region.names
    rets_alias = region.plan.returns
    for j, o in carries:  # carried tensors must come back as themselves
        if o >= len(rets_alias) or rets_alias[o] != names[j]:
            return _NOT_ITSELF
    n_tasks = math.prod(bs)
    if run.work + pre_work + n_tasks > run.settings.max_work:
        return PAST_WORK
    if run.settings.check_ub:
        host.check_budget(cf, site.label, site.span)
    w0 = run.work
    run.work += pre_work + n_tasks
    tid0 = run.next_tid
    t0 = time.perf_counter() if run.trace is not None else 0.0
    kept = _pending_args(run.memory.pending, region, args, run.memory) \
        if run.memory.pending else None
    try:
        rets, f = run_batched(fr, region, args, bs, False, site.label, tid0, n_tasks,
                              bool(kept), split=True)
    except Partial as p:
        run.work = w0
        run.memory.forget_views()
        # the iterations before the first one with a partial tile (the outermost loop's
        # tail iterations: a last, short tile) may run batched on their own
        first = 0
        if p.mask.ndim and p.mask.shape[0] == bs[0]:
            rows = np.asarray(p.mask.reshape(bs[0], -1).any(axis=1))
            first = int(np.argmax(rows))
        if first == 0:
            cache.refusals.setdefault(cf.name, _FIRST_PARTIAL.reason)
            return _FIRST_PARTIAL
        run.batch.fallback -= 1  # (not abandoned: split; a carried tensor is the same
        return Split(first)      # array throughout, checked above)
    except Fallback as exc:
        run.work = w0
        run.memory.forget_views()
        return fallback_decision(exc)
    st = f.batch
    if kept:
        assert st.wlog is not None
        fill_unwritten(run.memory, kept, st.wlog, st, region.covered)
    run.next_tid = tid0 + n_tasks
    trace = run.trace
    if trace is not None:
        assert f.rec is not None and st.log is not None
        dt = (time.perf_counter() - t0) / n_tasks
        targs = task_args(fr, cf, args)
        outer, raw, names = loops
        log = Replay(st.log, len(bs))
        # (the tasks' accesses and writes: made when read; at once on a multi-card run)
        later = BatchTrace(trace, run.memory) if run.comm is None else None
        for flat, idx in enumerate(np.ndindex(*bs)):
            here = tuple((v, a + i * c) for v, (a, _, c), i in zip(names, raw, idx))
            rec = TaskRecord(tid0 + flat, site.hint, site.func, site.kind, 1, site.span,
                             parent=None, deps=[], loops=tuple(outer) + here)
            rec.args = list(targs)
            trace.add_task(rec)
            task = TaskFrame(run, rec, site.label, 0)
            if later is not None:
                later.add(log, rec, idx, 0)
            else:
                log.run(task, idx)
            task.costs = block_costs(f, rec, idx)
            task.close_block()
            rec.seconds = dt
            trace.finish_task(rec, run.memory)
        if later is not None:
            later.close()
    run.memory.forget_views()
    return rets, tid0 + n_tasks - 1


_NOT_ITSELF = refused(ARGUMENTS, "a tensor the loop carries does not come back as itself")
# (block by block, the launch that passes the limit reports it, where it happens)
PAST_WORK = refused(LAUNCH, "the nest would pass the work limit (SimConfig.max_work)")
_FIRST_PARTIAL = refused(RUN, "partial tiles (a valid shape or clamp short of the window) "
                              "in the first iteration")


def task_args(fr: TaskFrame, cf: CompiledFunction, args: list) -> list[tuple]:
    """The trace's (param, buffer, direction, lo, hi, uid) of the tensor arguments of a
    task."""
    out = []
    trace = fr.run.trace
    for p, a in zip(cf.params, args):
        if isinstance(a, np.ndarray):
            buf, origin = fr.run.memory.locate(a)
            if buf is not None:
                if trace is not None:
                    trace.note_buffer(buf)
                lo = origin if origin is not None else (0,) * buf.array.ndim
                hi = tuple(o + s for o, s in zip(lo, a.shape)) if origin is not None \
                    else tuple(buf.array.shape)
                out.append((p[0], buf.name, p[2], tuple(lo), hi, buf.uid))
    return out


def _pending_args(pending: list[PendingFill], region: BatchedRegion, args: list,
                  memory: Any) -> list[PendingFill]:
    """The deferred fills among this launch's arguments that may still wait until after
    the batched run (the region only writes them through windows); the other pending
    buffers passed in are filled now."""
    names = region.names
    kept = []
    flush = []
    for item in pending:
        a = item.array
        # fast: passed as a written parameter, which `_prepare` found passed once and
        # overlapping no other argument
        for j in region.written:
            if args[j] is a:
                params = [names[j]]
                break
        else:
            params = [n for n, x in zip(names, args) if isinstance(x, np.ndarray) and
                      (x is a or np.may_share_memory(x, a))]
            if not params:
                continue
        if len(params) == 1 and all(x is a for n, x in zip(names, args) if n in params) and \
                _write_only(region, params[0]):
            kept.append(item)
        else:
            flush.append(a)
    if flush:
        memory.flush_pending(flush)
    return kept


def _write_only(region: BatchedRegion, param: str) -> bool:
    r = region.write_only.get(param)
    if r is None:
        r = region.write_only[param] = write_only(region.cf.func, region.plan.alias, param)
    return r


def run_spmd(host: Host, cache: BatchCache, task: TaskFrame, cf: CompiledFunction, args: list,
             n: int) -> tuple | Decision:
    """Run the `n` blocks of one SPMD launch (the task of frame `task`) batched. Returns
    the region's returns, or why the blocks run one by one instead."""
    region = prepare(host, cache, cf, args, (n,), True)
    if isinstance(region, Decision):
        return region
    assert task.region is not None
    try:
        rets, f = run_batched(task, region, args, (n,), True, task.region, task.task_id, n,
                              False)
    except Fallback as exc:
        return fallback_decision(exc)
    rec = task.rec
    if rec is not None:
        assert f.rec is not None and f.batch.log is not None
        log = Replay(f.batch.log, 1)
        later = BatchTrace(task.run.trace, task.run.memory) \
            if task.run.comm is None and task.run.trace is not None else None
        for b in range(n):
            task.block = b
            if later is not None:
                later.add(log, rec, (b,), b)
            else:
                log.run(task, (b,))
            task.costs = block_costs(f, rec, (b,))
            task.close_block()
        if later is not None:
            later.close()
    return rets


__all__ = ["PAST_WORK", "BatchCache", "BatchedRegion", "Split", "add_costs",
           "fallback_decision", "launch_loop", "prepare", "run_batched", "run_spmd",
           "task_args"]
