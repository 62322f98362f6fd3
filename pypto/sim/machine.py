"""The `Machine`: per-run state, faults, global buffers, access recording, the entry point.

Launching tasks lives in `pypto.sim.tasks` (mixed into `Machine`); compiling IR functions
into closures in `pypto.sim.compiler`.
"""
from __future__ import annotations

import re

import gc
import os
import time
from operator import add as _add
from typing import Any

import numpy as np

from pypto.errors import PyptoError, SimulationError
from pypto.ir.nodes import Call, For, Function, Var
from pypto.ir.transform import walk
from pypto.ops.registry import Unit, get
from pypto.ops.numeric import _QUIET
from pypto.sim.memory import (GlobalBuffer, _has_nan, fill_residue, origin_of, residue,
                              root_of)
from pypto.sim.tasks import TaskRunner
from pypto.sim.sanitizers.boxes import view_box
from pypto.sim.trace import Access, TaskRecord, Trace
from pypto.sim.values import _REGION_KINDS, UNDEF, ExecContext


class Machine(TaskRunner):
    """Runs one compiled program; reused across runs with the same configuration."""

    def __init__(self, compiled: Any, config: Any, platform: Any):
        self.compiled = compiled
        self.program = compiled.program
        self.cfg = config
        self.platform = platform
        self.trace_on = bool(config.trace)
        checks = set(config.checks or ())
        self.check_oob = "oob" in checks
        self.check_ub = "ub" in checks
        # checks=("uninit",): written-bitmaps of fresh memory, tested on every read; the
        # intrinsics and FnCompiler.call consult it only when it is not None
        self.uninit = None
        if "uninit" in checks:
            from pypto.sim.sanitizers.uninit import UninitTracker

            self.uninit = UninitTracker(self, getattr(config, "strict", True))
        self.ctx = ExecContext(self)
        self._funcs: dict = {}
        self._budgets: dict = {}
        self._written: set | None = None
        self._budget_ok: set = set()
        self.dyn: dict[str, int] = {}
        # batched execution of independent blocks (pypto.sim.batch); PYPTO_SIM_BATCH=0 turns
        # it off everywhere
        self.batch_on = bool(getattr(config, "batch", True)) and \
            os.environ.get("PYPTO_SIM_BATCH", "1") != "0"
        if self.uninit is not None:  # the written-bitmaps are kept by the per-block path
            self.batch_on = False
        self.work_mult = 1  # loop work counts once per block of a batched run
        self._batch_cache: dict = {}
        self._prep_cache: dict = {}  # batch._prepare: the static decisions per call shape
        self.batch_refusals: dict = {}  # region -> why it cannot run batched
        self.batch_stats = {"batched": 0, "fallback": 0}  # batched runs / abandoned ones
        # pl.Out parameters whose fill (residue / zero) may wait for the batched launch
        # loop that first mentions them (see `pending`); computed on the first run
        self._deferrable: frozenset | None = None
        self._nest_fors: set = set()  # ids of the For statements batch.loop_nest wraps
        self._reset()

    # -- per-run state ---------------------------------------------------------------

    def _reset(self) -> None:
        self.buffers: dict[int, GlobalBuffer] = {}
        self.buffer_list: list[GlobalBuffer] = []
        self.dyn.clear()
        self.trace = Trace(self.platform, self.program.name) if self.trace_on else None
        self.next_tid = 0
        self.cur: TaskRecord | None = None
        self.bc: dict | None = None
        self.block: int | None = None
        self.region: str | None = None
        self.task_stack: list = []
        self.work = 0
        self._loc: dict = {}
        self._last_access: dict = {}
        self.interleaver = None
        # oob_reads="warn": (site, tensor) -> OobRead, one record per reading site
        self.oob_reads: dict = {}
        if self.uninit is not None:
            self.uninit.reset()
        self.ctx.in_region = False
        self.ctx.block_idx = 0
        self.ctx.block_num = 1
        self.ctx.subblock_idx = 0
        self.ctx.task_id = -1
        self._seed_counter = 0
        # deferred fills of fresh pl.Out buffers: [array, seed (None: zeros)]; flushed by
        # anything that might look at them, or filled after a batched launch only where
        # it wrote nothing (pypto.sim.batch.launch_loop)
        self.pending: list = []

    # -- faults --------------------------------------------------------------------------

    def fault(self, message: str, span: Any = None, *, tensor: str | None = None,
              indices: Any = None, hint: str | None = None, note: str | None = None
              ) -> SimulationError:
        if tensor is not None:
            # Show the name the user wrote, not the one inlining/SSA made of it.
            shown = source_name(tensor)
            message = message.replace(f"'{tensor}'", f"'{shown}'")
            tensor = shown
        where = []
        if self.region is not None:
            where.append(f"region {self.region}")
            if self.block is not None:
                where.append(f"block {self.block}")
        else:
            where.append("orchestration")
        if tensor is not None:
            where.insert(0, f"tensor '{tensor}'")
        full = f"{message} [{', '.join(where)}]"
        return SimulationError(full, span, hint, note, tensor=tensor,
                               region=self.region or "orchestration", block=self.block,
                               indices=indices)

    def add_work(self, n: int, span: Any, what: str) -> None:
        self.work += n
        if self.work > self.cfg.max_work:
            raise self.fault(
                f"{what} pushes the simulated work past {self.cfg.max_work:.0e} loop "
                f"iterations / blocks in total ({self.work:,} so far)", span,
                hint="this is almost certainly a wrong loop bound or block count; shrink the "
                     "problem for simulation or raise SimConfig.max_work")

    # -- buffers -------------------------------------------------------------------------

    def register(self, name: str, array: np.ndarray, direction: str | None, host: Any,
                 kind: str) -> GlobalBuffer:
        buf = GlobalBuffer(name, array, direction, host, len(self.buffer_list), kind)
        self.buffers[id(root_of(array))] = buf
        self.buffer_list.append(buf)
        return buf

    def locate(self, a: Any) -> tuple:
        """(buffer, origin) of an array that is (a window of) a global tensor, else (None, None)."""
        c = self._loc.get(id(a))
        if c is not None and c[0] is a:
            return c[1], c[2]
        if not isinstance(a, np.ndarray):
            return None, None
        buf = self.buffers.get(id(root_of(a)))
        if buf is None:
            res = (None, None)
        else:
            base = buf.array
            res = (buf, (0,) * a.ndim if a is base or (a.shape == base.shape and a.ctypes.data
                                                       == base.ctypes.data)
                   else origin_of(a, base))
        self._loc[id(a)] = (a, res[0], res[1])
        return res

    @property
    def written_params(self) -> set:
        """Entry parameters the program may write (In arguments outside it skip the copy)."""
        if self._written is None:
            from pypto.sim.aliasing import written_entry_params

            try:
                self._written = written_entry_params(self.program)
            except Exception:  # noqa: BLE001 - be safe: copy everything
                self._written = {p.var.name for p in self.program.entry_function.params}
        return self._written

    def owns_root(self, a: np.ndarray) -> bool:
        return id(root_of(a)) in self.buffers

    def new_residue(self, shape: Any, dtype: np.dtype) -> np.ndarray:
        self._seed_counter += 1
        return residue(shape, dtype, self.cfg.seed * 7919 + self._seed_counter)

    def fill_residue(self, a: np.ndarray, defer: bool = False) -> None:
        self._seed_counter += 1
        seed = self.cfg.seed * 7919 + self._seed_counter
        if defer:
            self.pending.append([a, seed])
        else:
            fill_residue(a, seed)

    def fill_fresh(self, a: np.ndarray, defer: bool = False) -> None:
        """Fill a fresh pl.Out buffer used in place: residue, or zeros (cfg.uninit)."""
        if self.cfg.uninit == "zero":
            if defer:
                self.pending.append([a, None])
            else:
                a.fill(0)
        else:
            self.fill_residue(a, defer)

    def flush_pending(self, arrays: Any = None) -> None:
        """Do the deferred fills (of `arrays` only, when given)."""
        keep = []
        for item in self.pending:
            a, seed = item
            if arrays is not None and not any(a is x for x in arrays):
                keep.append(item)
            elif seed is None:
                a.fill(0)
            else:
                fill_residue(a, seed)
        self.pending = keep

    def fill_unwritten(self, a: np.ndarray, seed: Any, written: np.ndarray) -> None:
        """The deferred fill of `a`, only where the boolean mask `written` is False."""
        if seed is None:
            np.copyto(a, 0, where=~written)
        elif _has_nan(a.dtype):
            np.copyto(a, np.nan, where=~written)
        else:
            np.copyto(a, residue(a.shape, a.dtype, seed), where=~written)

    @property
    def deferrable(self) -> frozenset:
        """Out parameters of the entry whose first mention (in statement order) is a
        batched launch loop nest: nothing can look at them before it runs."""
        if self._deferrable is None:
            self._deferrable = frozenset()
            entry = self.program.entry_function
            if self.batch_on and self.uninit is None and entry.kind not in _REGION_KINDS:
                try:
                    self.function(entry.name)
                except Exception:  # noqa: BLE001 - reported by the run itself
                    return self._deferrable
                outs = {p.var.name for p in entry.params if p.direction.value == "Out"}
                found = set()
                for s in entry.body:
                    if not outs:
                        break
                    named = {n.name for n in walk(s) if isinstance(n, Var)} & outs
                    if named and isinstance(s, For) and id(s) in self._nest_fors:
                        found |= named
                    outs -= named
                self._deferrable = frozenset(found)
        return self._deferrable

    # -- access recording (trace mode) ---------------------------------------------------

    def record(self, a: np.ndarray, buf: GlobalBuffer, origin: tuple | None, lo: tuple,
               ext: tuple, write: bool, site: int, atomic: bool = False) -> None:
        if origin is None:
            # a window of a view that is not a window of the buffer (a reshape): its box
            # in the buffer, exact when it is one (else the enclosing box), so accesses of
            # disjoint parts through a reshape stay disjoint (pypto.sim.sanitizers)
            glo, ghi = view_box(a, buf.array, lo, ext)
        else:
            glo = tuple(map(_add, origin, lo))
            ghi = tuple(map(_add, glo, ext))
        mode = "W" if write else "R"
        blk = -1 if self.block is None else self.block
        rec = self.cur
        if rec is not None:
            # sanitizers (pypto.sim.sanitizers.races): atomic-add writes and syncall phases
            # are kept apart, so merged boxes never mix them
            phase = self.interleaver.phase if self.interleaver is not None else 0
            key = (buf.uid, mode, blk, atomic, phase)
            last = self._last_access.get(key)
            if last is None or last[0] is not rec or not _merge(last[1], glo, ghi):
                acc = Access(buf.name, mode, blk, glo, ghi, buf.uid, atomic, phase)
                rec.accesses.append(acc)
                self._last_access[key] = (rec, acc)
        else:
            self.trace.orchestration_accesses.append(Access(buf.name, mode, blk, glo, ghi,
                                                            buf.uid))
        if write:
            ev = self.trace.write_event(rec.id if rec is not None else -2, blk, site)
            w = buf.track_writers()
            if origin is not None:
                w[tuple(slice(l, h) for l, h in zip(glo, ghi))] = ev
            else:
                _strided_like(w, a, buf.array)[tuple(slice(l, l + e) for l, e in
                                                     zip(lo, ext))] = ev

    # -- functions -----------------------------------------------------------------------

    def function(self, name: str) -> Any:
        cf = self._funcs.get(name)
        if cf is None:
            from pypto.sim.compiler import FnCompiler

            cf = FnCompiler(self, self.program.function(name)).compile()
            self._funcs[name] = cf
        return cf


    # -- running the entry ------------------------------------------------------------

    def run(self, args: tuple, kwargs: dict) -> Any:
        # The cyclic GC is paused while simulating: a traced run allocates many small
        # acyclic objects (records, accesses), and full collections over them made the
        # cost per task grow with the number of tasks.
        # numpy's floating-point error state is set once for the run (op impls skip their
        # own np.errstate then).
        # (what `quiet_fp` does, with np.errstate: ~1.5 us cheaper than np.seterr twice)
        gc_on = gc.isenabled()
        gc.disable()
        _QUIET[0] += 1
        try:
            with np.errstate(all="ignore"):
                return self._run(args, kwargs)
        finally:
            _QUIET[0] -= 1
            if gc_on:
                gc.enable()

    def _run(self, args: tuple, kwargs: dict) -> Any:
        bind_arguments, copy_back = _api()
        self._reset()
        t0 = time.perf_counter()
        entry = self.__dict__.get("_entry_fn")  # sim speed: Program.function is a search
        if entry is None:
            entry = self._entry_fn = self.program.entry_function
        try:
            bound = bind_arguments(self, entry, args, kwargs)
        except BaseException:
            self.flush_pending()
            raise
        try:
            if entry.kind in _REGION_KINDS:
                info = {"kind": "at", "name_hint": entry.name}
                names = [p.var.name for p in entry.params]
                rets, _ = self.launch(entry.name, [bound.get(n, UNDEF) for n in names], 1, [],
                                      info, entry.span)
            else:
                cf = self.function(entry.name)
                rets = cf.call([bound.get(p[0], UNDEF) for p in cf.params])
        except PyptoError as err:
            self.flush_pending()
            _mark_partial_outputs(self, err)
            raise
        except BaseException:
            self.flush_pending()
            raise
        if self.pending:
            self.flush_pending()
        copy_back(self)
        if self.trace is not None:
            self.trace.seconds = time.perf_counter() - t0
        return rets


_API: list = []


def _api() -> tuple:
    """(bind_arguments, copy_back), imported on first use (pypto.sim.api imports us)."""
    if not _API:
        from pypto.sim.api import bind_arguments, copy_back

        _API.extend((bind_arguments, copy_back))
    return _API[0], _API[1]


def _mark_partial_outputs(machine: Machine, err: PyptoError) -> None:
    """A run that faults leaves pl.In arrays untouched and copies nothing back, but Out /
    InOut arrays simulated in place (C-contiguous, writable, not aliased) already hold
    whatever the run wrote before the fault. Name them on the error."""
    names = tuple(b.name for b in machine.buffer_list if b.kind == "param" and b.host is None
                  and b.direction in ("Out", "InOut"))
    err.partial_outputs = names
    if names:
        text = (", ".join(f"'{n}'" for n in names) + (" are" if len(names) > 1 else " is") +
                " written in place by the simulator and now hold"
                " a partial result of this failed run; pl.In arrays are unchanged")
        err.note = f"{err.note}\n{text}" if err.note else text


def _is_mixed(func: Function) -> bool:
    units = set()
    for n in walk(func.body):
        if isinstance(n, Call):
            try:
                units.add(get(n.op).unit)
            except KeyError:
                pass
    return Unit.CUBE in units and Unit.VECTOR in units


def _merge(acc: Access, lo: tuple, hi: tuple) -> bool:
    """Grow `acc` to cover the box [lo, hi) when the union is still a box (contained, or
    adjacent along one axis with equal extents elsewhere); False when it is not."""
    alo, ahi = acc.lo, acc.hi
    if alo == lo and ahi == hi:  # the same box again (a loop re-reading a window)
        return True
    # one pass: is it contained, and which axes differ (traced runs merge per access)
    inside = True
    diff = -1
    for ax in range(len(lo)):
        a, b, l, h = alo[ax], ahi[ax], lo[ax], hi[ax]
        if a == l and b == h:
            continue
        if inside and not (a <= l and h <= b):
            inside = False
        if diff >= 0 or l > b or h < a:
            diff = -2  # two differing axes, or apart along one: not a box unless contained
        elif diff == -1:
            diff = ax
    if inside:
        return True
    if diff < 0:
        return False
    acc.lo = alo[:diff] + (min(alo[diff], lo[diff]),) + alo[diff + 1:]
    acc.hi = ahi[:diff] + (max(ahi[diff], hi[diff]),) + ahi[diff + 1:]
    return True


def _strided_like(target: np.ndarray, view: np.ndarray, root: np.ndarray) -> np.ndarray:
    """A view of `target` (same shape as `root`) laid over `view`'s elements of `root`."""
    item = root.itemsize
    off = (view.__array_interface__["data"][0] - root.__array_interface__["data"][0]) // item
    strides = tuple(s // item * target.itemsize for s in view.strides)
    flat = target.reshape(-1)[off:]
    return np.lib.stride_tricks.as_strided(flat, shape=view.shape, strides=strides)


_RENAME_SUFFIX = re.compile(r"(__[A-Za-z_]*\d+)+$")


def source_name(name: str) -> str:
    """`x_flat__hc_head1__3` -> `x_flat`: drop the suffixes the inliner (`__<fn><k>`) and
    the SSA pass (`__<k>`) append."""
    return _RENAME_SUFFIX.sub("", name) or name
