"""Batched execution: the independent blocks of a launch run as one vectorised pass.

Two shapes of launch run batched (see `pypto.sim.batch_plan` for when):

* a `pl.parallel` loop nest in orchestration whose body is one launch (the usual
  "one task per tile" kernel): the iterations become the batch, one task each;
* an SPMD launch of N blocks (no syncall): the blocks become the batch.

Every value of the region is either *uniform* (the same for all blocks: a plain value,
exactly what block-by-block execution computes) or *batched*: an array with one leading
axis per batch axis (extent 1 where the value does not depend on that axis; numpy
broadcasting does the rest). Block-varying integer scalars are `Aff` (base + a step per
batch axis), so the windows of all blocks are one strided view of the tensor. The body
runs once; the trace is rebuilt afterwards by replaying the logged accesses per task
(or block) in program order, with the per-block costs, so the trace equals the one
block-by-block execution records. Anything unexpected at run time (a bound check that
fails, a valid-shape-tagged value, an error of any kind) abandons the batch, restores
the tensors the region both reads and writes, and runs block by block, which reports
exactly what it always reported.
"""
from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from pypto.ops.numeric import _QUIET
from pypto.sim.batch_compiler import BatchCompiler
from pypto.sim.batch_plan import (
    BLOCK,
    Plan,
    analyze,
    write_only,
)
from pypto.sim.batch_state import Aff, BatchState, Fallback, _lo_at, _Log
from pypto.sim.trace import TaskRecord

# --- preparing and running a batch -------------------------------------------------------


class _Entry:
    __slots__ = ("plan", "cf", "st", "names", "written", "write_only")

    def __init__(self, plan: Plan, cf: Any, st: BatchState):
        self.plan = plan
        self.cf = cf
        self.st = st
        self.names = [p[0] for p in cf.params]
        # the parameters the region writes (by position): `_prepare` checks on every call
        # that each is passed once and overlaps no other argument
        self.written = tuple(j for j, n in enumerate(self.names) if n in plan.written)
        self.write_only: dict = {}  # parameter -> batch_plan.write_only (memoised)


def _entry(m: Any, cf: Any, varying: frozenset) -> _Entry | None:
    cache = m._batch_cache
    key = (cf.name, varying)
    if key in cache:
        return cache[key]
    plan = analyze(cf.func, set(varying))
    entry = None
    if isinstance(plan, Plan):
        st = BatchState()
        bc = BatchCompiler(m, cf.func, plan, st).compile()
        entry = _Entry(plan, bc, st)
    else:
        m.batch_refusals[cf.name] = plan
    cache[key] = entry
    return entry


def _prepare(m: Any, cf: Any, args: list, bs: tuple, spmd: bool) -> _Entry | None:
    # the static part (plan, separation) is memoised per region, varying steps and batch
    # shape; the tensors themselves are checked on every call
    try:
        key = (cf.name, spmd, bs, *[a.d if type(a) is Aff else None for a in args])
        hit = m._prep_cache.get(key)
    except TypeError:
        key, hit = None, None
    if hit is None:
        hit = _prepare_static(m, cf, args, bs, spmd)
        if key is not None:
            if len(m._prep_cache) > 1024:
                m._prep_cache.clear()
            m._prep_cache[key] = hit
    entry, written = hit
    if entry is None:
        return None
    for j in written:
        a = args[j]
        if not isinstance(a, np.ndarray):
            continue
        if type(a) is not np.ndarray or not a.flags.writeable:
            return None
        passed = 0
        for b in args:
            if b is a:
                passed += 1
            elif isinstance(b, np.ndarray) and np.may_share_memory(a, b):
                return None
        if passed > 1:
            return None
    return entry


def _prepare_static(m: Any, cf: Any, args: list, bs: tuple, spmd: bool) -> tuple:
    names = [p[0] for p in cf.params]
    varying = {n for n, a in zip(names, args) if type(a) is Aff}
    if spmd:
        varying.add(BLOCK)
    entry = _entry(m, cf, frozenset(varying))
    if entry is None:
        return None, ()
    plan = entry.plan
    deltas = {n: a.d for n, a in zip(names, args) if type(a) is Aff}
    if spmd:
        deltas[BLOCK] = (1,)
    if not plan.separated(deltas, bs):
        return None, ()
    return entry, entry.written


def _snapshot(entry: _Entry, names: list, args: list) -> list:
    if not entry.plan.read_written:
        return []
    return [(a, a.copy()) for n, a in zip(names, args)
            if n in entry.plan.written and isinstance(a, np.ndarray)]


def _run(m: Any, entry: _Entry, args: list, bs: tuple, spmd: bool, label: str, tid: int,
         mult: int) -> tuple:
    """Run the batched body; returns (rets, log, proto record, proto block costs) or raises
    Fallback after undoing what it did."""
    st = entry.st
    if st.bs is not bs or spmd:
        st.set(bs, spmd)
    snaps = _snapshot(entry, entry.names, args) if entry.plan.read_written else ()
    ctx = m.ctx
    saved = (m.cur, m.bc, m.block, m.region, ctx.in_region, ctx.block_idx, ctx.block_num,
             ctx.task_id, m.work_mult, m.work)
    proto = bc = log = None
    if m.trace_on:
        had_record = "record" in m.__dict__
        prev_record = m.__dict__.get("record")
        proto = TaskRecord(tid, "", "", "", 1)
        bc = dict.fromkeys(proto.cycles, 0.0)
        log = _Log()
        st.log = log.items
        m.record = log.record
    m.cur = proto
    m.bc = bc
    m.block = 0
    m.region = label
    ctx.in_region = True
    ctx.block_idx = 0
    ctx.block_num = bs[0] if spmd else 1
    ctx.task_id = tid
    m.work_mult = mult
    try:
        if _QUIET[0]:  # the run already ignores floating-point errors (Machine.run)
            rets = entry.cf.call(args)
        else:
            with np.errstate(all="ignore"):
                rets = entry.cf.call(args)
    except Exception as exc:  # noqa: BLE001 - any failure: undo, run block by block
        for a, copy in snaps:
            a[...] = copy
        m.work = saved[9]
        m.batch_stats["fallback"] += 1
        m.batch_fault = exc
        raise Fallback(str(exc)) from exc
    finally:
        (m.cur, m.bc, m.block, m.region, ctx.in_region, ctx.block_idx, ctx.block_num,
         ctx.task_id, m.work_mult) = saved[:9]
        st.log = None
        if m.trace_on:
            if had_record:
                m.record = prev_record
            else:
                del m.record
    m.batch_stats["batched"] += 1
    return rets, (log.items if log is not None else None), proto, bc


def _replay(m: Any, items: list, idx: tuple) -> None:
    rec = m.record
    for a, buf, origin, lo, ext, write, site, rest in items:
        rec(a, buf, origin, _lo_at(lo, idx), tuple(ext), write, site, *rest)


def _add_costs(rec: TaskRecord, proto: TaskRecord) -> None:
    rec.units |= proto.units
    oc = rec.op_counts
    for k, v in proto.op_counts.items():
        oc[k] = oc.get(k, 0) + v
    by = rec.bytes
    for k, v in proto.bytes.items():
        by[k] = by.get(k, 0) + v
    rec.flops += proto.flops
    rec.vector_elements += proto.vector_elements


def launch_loop(m: Any, name: str, args: list, bs: tuple, info: dict, span: Any,
                pre_work: int, carries: list) -> tuple | None:
    """Run the tasks of a parallel launch loop nest (batch shape `bs`) batched. Returns
    (rets, last task id), or None to run the loop block by block instead."""
    cf = m._funcs.get(name) or m.function(name)
    if cf.has_syncall:
        return None
    entry = _prepare(m, cf, args, bs, False)
    if entry is None:
        return None
    names = entry.names
    rets_alias = entry.plan.returns
    for j, o in carries:  # carried tensors must come back as themselves
        if o >= len(rets_alias) or rets_alias[o] != names[j]:
            return None
    B = math.prod(bs)
    if m.work + pre_work + B > m.cfg.max_work:
        return None
    hint = info.get("name_hint") or name
    label = info.get("_label") or f"'{hint}'"
    if m.check_ub and cf.name not in m._budget_ok:
        m.check_budget(cf, label, span)
        m._budget_ok.add(cf.name)
    w0 = m.work
    m.work += pre_work + B
    tid0 = m.next_tid
    t0 = time.perf_counter() if m.trace_on else 0.0
    kept = _pending_args(m, entry, cf, args) if m.pending else None
    st = entry.st
    st.wlog = [] if kept else None
    try:
        rets, items, proto, bc = _run(m, entry, args, bs, False, label, tid0, B)
    except Fallback:
        st.wlog = None
        m.work = w0
        m._loc.clear()
        return None
    if kept:
        wlog, st.wlog = st.wlog, None
        _fill_unwritten(m, kept, wlog, st)
    m.next_tid = tid0 + B
    if m.trace_on:
        dt = (time.perf_counter() - t0) / B
        targs = []
        for p, a in zip(cf.params, args):
            if isinstance(a, np.ndarray):
                buf, origin = m.locate(a)
                if buf is not None:
                    lo = origin if origin is not None else (0,) * buf.array.ndim
                    hi = tuple(o + s for o, s in zip(lo, a.shape)) if origin is not None \
                        else tuple(buf.array.shape)
                    targs.append((p[0], buf.name, p[2], tuple(lo), hi))
        kind = info.get("kind") or "at"
        saved = (m.cur, m.bc, m.block, m.region)
        m.region = label
        m.block = 0
        try:
            for flat, idx in enumerate(np.ndindex(*bs)):
                rec = TaskRecord(tid0 + flat, hint, name, kind, 1, span, parent=None, deps=[])
                rec.args = list(targs)
                m.trace.add_task(rec)
                m.cur = rec
                _replay(m, items, idx)
                _add_costs(rec, proto)
                m.bc = dict(bc)
                m._close_block(rec)
                rec.seconds = dt
                m.trace.finish_task(rec, m.buffers)
        finally:
            m.cur, m.bc, m.block, m.region = saved
    m._loc.clear()
    return rets, tid0 + B - 1


def _pending_args(m: Any, entry: _Entry, cf: Any, args: list) -> list:
    """The deferred fills among this launch's arguments that may still wait until after
    the batched run (the region only writes them through windows); the other pending
    buffers passed in are filled now."""
    names = entry.names
    kept = []
    flush = []
    for item in m.pending:
        a = item[0]
        # fast: passed as a written parameter, which `_prepare` found passed once and
        # overlapping no other argument
        for j in entry.written:
            if args[j] is a:
                params = [names[j]]
                break
        else:
            params = [n for n, x in zip(names, args) if isinstance(x, np.ndarray) and
                      (x is a or np.may_share_memory(x, a))]
            if not params:
                continue
        if len(params) == 1 and all(x is a for n, x in zip(names, args) if n in params) and \
                _write_only(entry, params[0]):
            kept.append(item)
        else:
            flush.append(a)
    if flush:
        m.flush_pending(flush)
    return kept


def _write_only(entry: _Entry, param: str) -> bool:
    r = entry.write_only.get(param)
    if r is None:
        r = entry.write_only[param] = write_only(entry.cf.func, entry.plan.alias, param)
    return r


def _fill_unwritten(m: Any, kept: list, wlog: list, st: BatchState) -> None:
    """After a batched run: the deferred fills of `kept`, only where the run wrote
    nothing (nothing when its windows cover the whole buffer)."""
    for item in kept:
        a, seed = item
        mine = [w for w in wlog if w[0] is a or np.may_share_memory(w[0], a)]
        m.pending = [p for p in m.pending if p is not item]
        if all(w[0] is a for w in mine) and _covers_memo(a, mine, st):
            continue
        from pypto.sim.machine import _strided_like

        written = np.zeros(a.shape, dtype=np.bool_)
        for tgt, offs, shp, los in mine:
            wv = written if tgt is a else _strided_like(written, tgt, a)
            if los is None:
                st.window(wv, offs, shp, True)[...] = True
            else:
                for lo in los:
                    wv[tuple(slice(o, o + s) for o, s in zip(lo, shp))] = True
        m.fill_unwritten(a, seed, written)


_COVERS: dict = {}


def _covers_memo(a: np.ndarray, writes: list, st: BatchState) -> bool:
    """`_covers`, remembering the last answer on the batch state: the same shape, batch
    shape and writes (offsets compared by value; the loop-variable Affs are the same
    objects call after call) give the same answer without hashing them."""
    sig = [(offs, shp) for _t, offs, shp, los in writes if los is None]
    last = st.covered
    if last is not None and len(sig) == len(writes):
        try:
            if last[0] == a.shape and last[1] == st.bs and last[2] == sig:
                return last[3]
        except ValueError:  # an array offset
            pass
    r = _covers(a, writes, st)
    st.covered = (a.shape, st.bs, sig, r) if len(sig) == len(writes) else None
    return r


def _covers(a: np.ndarray, writes: list, st: BatchState) -> bool:
    """Do these batched window writes (each a regular tiling of boxes) cover `a`?"""
    try:
        # (offsets are ints or Aff, both hashable by value; an array offset raises)
        key = (a.shape, st.bs, *[(*offs, shp) for _t, offs, shp, los in writes
                                 if los is None])
    except TypeError:
        return False
    r = _COVERS.get(key)
    if r is None:
        if len(_COVERS) > 4096:
            _COVERS.clear()
        r = _COVERS[key] = _covers_uncached(a, writes, st)
    return r


def _covers_uncached(a: np.ndarray, writes: list, st: BatchState) -> bool:
    boxes = set()
    for _tgt, offs, shp, los in writes:
        if los is not None:
            return False
        lo = []
        hi = []
        for ax, o in enumerate(offs):
            b = o.base if type(o) is Aff else int(o)
            lo.append(b)
            hi.append(b + shp[ax])
        moved = set()
        for k, n in enumerate(st.bs):
            if n <= 1:
                continue
            axes = [ax for ax, o in enumerate(offs) if type(o) is Aff and o.d[k]]
            if len(axes) != 1 or axes[0] in moved:
                return False
            ax = axes[0]
            d = offs[ax].d[k]
            if abs(d) != shp[ax] or hi[ax] - lo[ax] != shp[ax]:
                return False
            moved.add(ax)
            if d > 0:
                hi[ax] += d * (n - 1)
            else:
                lo[ax] += d * (n - 1)
        boxes.add((tuple(lo), tuple(hi)))
    if not boxes or len(boxes) > 256:
        return False
    boxes = list(boxes)
    vol = 0
    for i, (lo, hi) in enumerate(boxes):
        if any(l < 0 or h > d for l, h, d in zip(lo, hi, a.shape)):
            return False
        vol += math.prod(h - l for l, h in zip(lo, hi))
        for lo2, hi2 in boxes[:i]:
            if all(l < h2 and l2 < h for l, h, l2, h2 in zip(lo, hi, lo2, hi2)):
                return False
    return vol == a.size


def run_spmd(m: Any, cf: Any, args: list, n: int, rec: Any, label: str) -> tuple | None:
    """Run the `n` blocks of one SPMD launch batched into task `rec` (None: not traced).
    Returns the region's returns, or None to run the blocks one by one instead."""
    entry = _prepare(m, cf, args, (n,), True)
    if entry is None:
        return None
    t0 = time.perf_counter()
    try:
        rets, items, proto, bc = _run(m, entry, args, (n,), True, label, m.ctx.task_id, n)
    except Fallback:
        return None
    if rec is not None:
        saved = (m.cur, m.bc, m.block)
        try:
            m.cur = rec
            for b in range(n):
                m.block = b
                m.ctx.block_idx = b
                _replay(m, items, (b,))
                _add_costs(rec, proto)
                m.bc = dict(bc)
                m._close_block(rec)
        finally:
            m.cur, m.bc, m.block = saved
    del t0
    return rets
