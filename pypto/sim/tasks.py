"""Tasks: launching an outlined region (one task; an SPMD launch runs its blocks), the
on-chip budget check, dummy tasks and barriers. Mixed into `Machine`."""
from __future__ import annotations

import time
from typing import Any

import numpy as np

from pypto.errors import SimulationError
from pypto.ir.types import ShapedType
from pypto.sim import budget as _budget
from pypto.sim.trace import TaskRecord


class TaskRunner:
    """The task-running half of `Machine` (see `pypto.sim.machine`)."""

    # -- tasks ---------------------------------------------------------------------------

    def _new_id(self) -> int:
        t = self.next_tid
        self.next_tid += 1
        return t

    def dummy_task(self, deps: Any, span: Any) -> int:
        tid = self._new_id()
        if self.trace_on:
            rec = TaskRecord(tid, "task_dummy", "", "dummy", 0, span, deps=list(deps))
            self.trace.add_task(rec)
            self.trace.finish_task(rec, self.buffers)
        return tid

    def barrier(self, span: Any) -> None:
        if self.interleaver is not None:
            self.interleaver.barrier(span)

    def check_budget(self, cf: "Any", label: str, span: Any) -> None:
        est = self._budgets.get(cf.name)
        if est is None:
            mine = _budget.estimate(cf.func)
            est = _budget.from_analyses(self.compiled.analyses, cf.name) or mine
            est.at = est.at or mine.at
            est.span = est.span or mine.span
            self._budgets[cf.name] = est
        p = self.platform
        for space, cap_name in (("Vec", "UB"), ("Mat", "L1"), ("Acc", "L0C"), ("Left", "L0A"),
                                ("Right", "L0B")):
            used = est.bytes(space)
            cap = p.capacity(space)
            if cap and used > cap:
                live = ", ".join(f"{n} ({b:,} B)" for n, b in est.at.get(space, [])[:6])
                raise SimulationError(
                    f"region {label} needs about {used:,} bytes of {cap_name} ({space}) at its "
                    f"peak, more than the {cap:,} bytes usable on {p.name}"
                    + (f"; live tiles at the peak: {live}" if live else ""),
                    est.span.get(space) or span,
                    hint="shrink the tiles (fewer rows / columns per block) or loop over smaller "
                         "chunks inside the region" + (
                             ", or split the vector side across the two AIV lanes with "
                             "optimizations=[pl.split(pl.SplitMode.UP_DOWN)]"
                             if _is_mixed(cf.func) else ""),
                    note=f"estimate from {est.source}: peak of simultaneously live tiles, "
                         "allowing in-place reuse when an operand dies",
                    tensor=None, region=label, block=None)

    def launch(self, name: str, args: list, core_num: int, deps: list, info: dict, span: Any
               ) -> tuple:
        cf = self._funcs.get(name) or self.function(name)
        hint = info.get("name_hint") or name
        label = info.get("_label")
        if label is None:
            label = f"'{hint}' ({span.file}:{span.line})" if span is not None and span.known \
                else f"'{hint}'"
        if core_num < 1:
            raise self.fault(f"launch of {label} with core_num={core_num}; it must be >= 1",
                             span)
        self.work += core_num
        if self.work > self.cfg.max_work:
            self.add_work(0, span, f"launching {core_num} blocks of {label}")
        if self.check_ub and cf.name not in self._budget_ok:
            self.check_budget(cf, label, span)
            self._budget_ok.add(cf.name)
        tid = self._new_id()
        parent = self.cur
        rec = None
        if self.trace_on:
            rec = TaskRecord(tid, hint, name, info.get("kind") or "at", core_num, span,
                             parent=parent.id if parent is not None else None, deps=list(deps))
            for p, a in zip(cf.params, args):
                if isinstance(a, np.ndarray):
                    buf, origin = self.locate(a)
                    if buf is not None:
                        lo = origin if origin is not None else (0,) * buf.array.ndim
                        hi = tuple(o + s for o, s in zip(lo, a.shape)) if origin is not None \
                            else tuple(buf.array.shape)
                        rec.args.append((p[0], buf.name, p[2], tuple(lo), hi))
            self.trace.add_task(rec)
        saved = (self.cur, self.bc, self.block, self.region, self.ctx.in_region,
                 self.ctx.block_idx, self.ctx.block_num, self.ctx.task_id, self.interleaver)
        self.cur = rec
        self.region = label
        ctx = self.ctx
        ctx.in_region = True
        ctx.block_num = core_num
        ctx.task_id = tid
        t0 = time.perf_counter()
        rets = ()
        try:
            if cf.has_syncall and core_num > 1:
                rets = self._run_interleaved(cf, args, core_num, rec, label, span)
            else:
                call = cf.call
                brets = None
                if core_num > 1 and self.batch_on and parent is None:
                    from pypto.sim.batch import run_spmd

                    brets = run_spmd(self, cf, args, core_num, rec, label)
                for b in range(core_num if brets is None else 0):
                    ctx.block_idx = b
                    self.block = b
                    if rec is not None:
                        self.bc = dict.fromkeys(rec.cycles, 0.0)
                    rets = call(args)
                    if rec is not None:
                        self._close_block(rec)
                if brets is not None:
                    rets = brets
        finally:
            (self.cur, self.bc, self.block, self.region, ctx.in_region, ctx.block_idx,
             ctx.block_num, ctx.task_id, self.interleaver) = saved
            if parent is None:
                self._loc.clear()
        if rec is not None:
            rec.seconds = time.perf_counter() - t0
            self.trace.finish_task(rec, self.buffers)
        # Values a task hands back to orchestration live in global memory from now on.
        for r, t in zip(rets, cf.func.returns):
            if isinstance(r, np.ndarray) and isinstance(t, ShapedType):
                buf, _ = self.locate(r)
                if buf is None:
                    self.register(f"{hint}.out", r, None, None, "result")
        return rets, tid

    def _close_block(self, rec: TaskRecord) -> None:
        bc = self.bc
        rec.block_cycles.append(max(bc.values()) if bc else 0.0)
        cyc = rec.cycles
        for k, v in bc.items():
            cyc[k] += v

    def _run_interleaved(self, cf: "Any", args: list, n: int, rec: Any,
                         label: str, span: Any) -> tuple:
        from pypto.sim.blocks import Interleaver

        occupancy = self.platform.full_occupancy(cf.syncall_core_type)
        if cf.syncall_mode == "hard" and n > occupancy:
            raise self.fault(
                f"a hard pl.system.syncall in {label} needs all {n} blocks resident at once, but "
                f"{self.platform.name} runs at most {occupancy} such blocks together; on hardware "
                "this launch deadlocks", span,
                hint=f"launch at most {occupancy} blocks (full occupancy, sync_start=True) or "
                     "use mode='soft' with a GM workspace")
        costs = [dict.fromkeys(rec.cycles, 0.0) if rec is not None else None for _ in range(n)]

        def resume(b: int) -> None:
            self.ctx.block_idx = b
            self.block = b
            self.bc = costs[b]

        def describe() -> str:
            return f"task {label}"

        il = Interleaver(n, lambda b: cf.call(args), resume, describe)
        self.interleaver = il
        results = il.run()
        if rec is not None:
            for c in costs:
                self.bc = c
                self._close_block(rec)
        return results[-1] if results else ()



def _is_mixed(func: Any) -> bool:
    from pypto.sim.machine import _is_mixed as f

    return f(func)
