"""The interpreter: IR functions compiled once into Python closures, run by a `Machine`.

Compilation turns every expression into a closure `f(env) -> value` and every
statement into a closure `s(env) -> signal` (None, or BREAK / CONTINUE /
RETURN), so running a kernel does no isinstance dispatch on IR nodes: the
decisions (which op, which arguments are constants, how to cast the result,
whether the site is inside a region) are taken once, at compile time. `env` is a
plain dict keyed by variable name (the IR's naming contract). The valid shape of
a value whose valid region is smaller than its physical shape rides on the value
itself (`pypto.ops.numeric.ValidArray`, shared with the op impls); a result whose
type rule declares a valid shape is tagged with it when the impl did not.

The memory ops (slice/load/store/assemble/read/write, tensor and tile
creation, valid-shape ops, task handles) are *intrinsics* here: they implement
the simulated memory model (views vs copies, residue, padding, bounds checks,
access recording). Every other op runs its registry `impl` and the result is cast
to the dtype its type rule declared.
"""
from __future__ import annotations

import math
import time
from typing import Any, Callable

import numpy as np

from pypto.errors import PyptoError, SimulationError
from pypto.ir import dtypes
from pypto.ir.dtypes import Kind
from pypto.ir.nodes import (Assign, Attr, Break, Call, CallFunc, Const, Continue, DynDim, Eval,
                            For, Function, FunctionKind, GetItem, If, ListExpr, Return, Scope,
                            ScopeKind, Var, While, Yield)
from pypto.ir.transform import walk
from pypto.ir.types import ScalarType, ShapedType, TileType
from pypto.ops.registry import Unit, get
from pypto.sim import budget as _budget
from pypto.ops.numeric import with_valid
from pypto.sim.memory import GlobalBuffer, origin_of, residue, root_of
from pypto.sim.trace import Access, TaskRecord, Trace

BREAK = "break"
CONTINUE = "continue"
RETURN = "return"


class _Undef:
    def __repr__(self) -> str:
        return "<undefined>"


UNDEF = _Undef()

_REGION_KINDS = (FunctionKind.INCORE, FunctionKind.AIC, FunctionKind.AIV, FunctionKind.GROUP)
_MATMUL_ARGS = {"matmul": (0, 1), "matmul_bias": (0, 1), "batch_matmul": (0, 1),
                "matmul_acc": (1, 2), "gemv": (0, 1), "gemv_acc": (1, 2), "gemv_bias": (0, 1)}


class ExecContext:
    """What impls with `wants_ctx=True` receive as `ctx=`."""

    __slots__ = ("machine", "in_region", "block_idx", "block_num", "subblock_idx", "platform",
                 "task_id", "span")

    def __init__(self, machine: "Machine"):
        self.machine = machine
        self.in_region = False
        self.block_idx = 0
        self.block_num = 1
        self.subblock_idx = 0
        self.platform = machine.platform
        self.task_id = -1
        self.span = None

    def new_task_id(self) -> int:
        return self.machine.dummy_task((), self.span)

    def barrier(self) -> None:
        self.machine.barrier(self.span)


def _pyint(v: Any) -> int:
    return int(v)


def _ints(vals: Any) -> list:
    return [int(v) for v in vals]


def _pad_mode(v: Any) -> str | None:
    if v is None:
        return None
    name = getattr(v, "name", None) or getattr(v, "value", None) or str(v)
    name = str(name).lower()
    if name in ("zero", "max", "min"):
        return name
    return None


def _scalar_caster(dt: Any) -> Callable | None:
    if dt.kind is Kind.HANDLE:
        return None
    if dt.kind is Kind.BOOL:
        return bool
    if dt.kind in (Kind.SINT, Kind.UINT):
        return _pyint
    if dt.name == "FP32":
        f32 = np.float32
        return lambda v: float(f32(v))
    npdt = dt.np
    return lambda v: float(np.asarray(v, dtype=np.float64).astype(npdt))


class Machine:
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
        self.ctx = ExecContext(self)
        self._funcs: dict = {}
        self._budgets: dict = {}
        self._written: set | None = None
        self._budget_ok: set = set()
        self.dyn: dict[str, int] = {}
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
        self.ctx.in_region = False
        self.ctx.block_idx = 0
        self.ctx.block_num = 1
        self.ctx.subblock_idx = 0
        self.ctx.task_id = -1
        self._seed_counter = 0

    # -- faults --------------------------------------------------------------------------

    def fault(self, message: str, span: Any = None, *, tensor: str | None = None,
              indices: Any = None, hint: str | None = None, note: str | None = None
              ) -> SimulationError:
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

    def fill_residue(self, a: np.ndarray) -> None:
        from pypto.sim.memory import fill_residue

        self._seed_counter += 1
        fill_residue(a, self.cfg.seed * 7919 + self._seed_counter)

    # -- access recording (trace mode) ---------------------------------------------------

    def record(self, a: np.ndarray, buf: GlobalBuffer, origin: tuple | None, lo: tuple,
               ext: tuple, write: bool, site: int) -> None:
        if origin is None:
            root = buf.array
            glo, ghi = (0,) * root.ndim, tuple(root.shape)
        else:
            glo = tuple(o + l for o, l in zip(origin, lo))
            ghi = tuple(g + e for g, e in zip(glo, ext))
        mode = "W" if write else "R"
        blk = -1 if self.block is None else self.block
        rec = self.cur
        if rec is not None:
            key = (buf.uid, mode, blk)
            last = self._last_access.get(key)
            if last is None or last[0] is not rec or not _merge(last[1], glo, ghi):
                acc = Access(buf.name, mode, blk, glo, ghi, buf.uid)
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

    def function(self, name: str) -> "CompiledFunction":
        cf = self._funcs.get(name)
        if cf is None:
            cf = FnCompiler(self, self.program.function(name)).compile()
            self._funcs[name] = cf
        return cf

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

    def check_budget(self, cf: "CompiledFunction", label: str, span: Any) -> None:
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
                for b in range(core_num):
                    ctx.block_idx = b
                    self.block = b
                    if rec is not None:
                        self.bc = dict.fromkeys(rec.cycles, 0.0)
                    rets = call(args)
                    if rec is not None:
                        self._close_block(rec)
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

    def _run_interleaved(self, cf: "CompiledFunction", args: list, n: int, rec: Any,
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

    # -- running the entry ------------------------------------------------------------

    def run(self, args: tuple, kwargs: dict) -> Any:
        from pypto.sim.api import bind_arguments, copy_back

        self._reset()
        t0 = time.perf_counter()
        entry = self.program.entry_function
        bound = bind_arguments(self, entry, args, kwargs)
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
            _mark_partial_outputs(self, err)
            raise
        copy_back(self)
        if self.trace is not None:
            self.trace.seconds = time.perf_counter() - t0
        return rets


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
    if all(a <= l and h <= b for a, b, l, h in zip(alo, ahi, lo, hi)):
        return True
    diff = -1
    for ax, (a, b, l, h) in enumerate(zip(alo, ahi, lo, hi)):
        if a == l and b == h:
            continue
        if diff >= 0:
            return False
        if l > b or h < a:
            return False
        diff = ax
    if diff < 0:
        return True
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


class CompiledFunction:
    __slots__ = ("name", "func", "params", "body", "has_syncall", "syncall_mode",
                 "syncall_core_type", "call", "in_region")

    def __init__(self, name: str, func: Function, params: list, body: Callable, in_region: bool):
        self.name = name
        self.func = func
        self.params = params  # [(name, type, direction)]
        self.body = body
        self.in_region = in_region
        self.has_syncall = False
        self.syncall_mode = "hard"
        self.syncall_core_type = "mix"
        names = [p[0] for p in params]
        undef = UNDEF

        def call(args: list) -> tuple:
            env = {}
            for n, a in zip(names, args):
                if a is not undef:
                    env[n] = a
            body(env)
            return env.get("$ret", ())

        self.call = call


# --- the compiler -----------------------------------------------------------------------


class FnCompiler:
    def __init__(self, machine: Machine, func: Function):
        self.m = machine
        self.func = func
        self.in_region = func.kind in _REGION_KINDS
        self.cube_vars: set[str] = set()
        self.split_aiv_depth = 0

    def compile(self) -> CompiledFunction:
        params = [(p.var.name, p.var.type, p.direction.value) for p in self.func.params]
        body = self.body(self.func.body)
        cf = CompiledFunction(self.func.name, self.func, params, body, self.in_region)
        for n in walk(self.func.body):
            if isinstance(n, Call) and n.op == "system.syncall":
                cf.has_syncall = True
                args = dict(zip(get(n.op).params, n.args))
                mode = args.get("mode")
                if isinstance(mode, (Attr, Const)):
                    cf.syncall_mode = str(mode.value)
                ct = args.get("core_type")
                if isinstance(ct, (Attr, Const)):
                    cf.syncall_core_type = str(ct.value)
        return cf

    # -- expressions -------------------------------------------------------------------

    def const(self, e: Any) -> tuple[bool, Any]:
        if isinstance(e, (Const, Attr)):
            return True, e.value
        if isinstance(e, ListExpr):
            items = [self.const(i) for i in e.items]
            if all(c for c, _ in items):
                return True, [v for _, v in items]
            return False, None
        if isinstance(e, (int, float, bool, str)) or e is None:
            return True, e
        return False, None

    def expr(self, e: Any, tolerant: bool = False) -> Callable:
        ok, v = self.const(e)
        if ok:
            return lambda env: v
        if isinstance(e, Var):
            name = e.name
            if tolerant:
                return lambda env: env.get(name, UNDEF)
            m = self.m

            def var(env: dict) -> Any:
                try:
                    return env[name]
                except KeyError:
                    raise m.fault(f"variable '{name}' is used before it has a value",
                                  e.span) from None

            return var
        if isinstance(e, DynDim):
            name = e.name
            dyn = self.m.dyn

            def dim(env: dict) -> int:
                try:
                    return dyn[name]
                except KeyError:
                    raise self.m.fault(f"dynamic dim {name} is not bound by any argument",
                                       e.span) from None

            return dim
        if isinstance(e, ListExpr):
            fns = [self.expr(i) for i in e.items]
            return lambda env: [f(env) for f in fns]
        if isinstance(e, Call):
            return self.call(e)
        if isinstance(e, GetItem):
            vf = self.expr(e.value)
            i = e.index
            return lambda env: vf(env)[i]
        if isinstance(e, CallFunc):
            if dict(e.launch):
                return self.launch(e, None)
            return self.plain_call(e)
        if isinstance(e, (list, tuple)):
            fns = [self.expr(i) for i in e]
            return lambda env: [f(env) for f in fns]
        raise SimulationError(f"the simulator cannot evaluate {type(e).__name__} nodes",
                              getattr(e, "span", None))

    def plain_call(self, e: CallFunc) -> Callable:
        m = self.m
        argfns = [self.expr(a, tolerant=True) for a in e.args]
        name = e.func
        single = not (e.type is not None and type(e.type).__name__ == "TupleType")

        def run(env: dict) -> Any:
            cf = m.function(name)
            rets = cf.call([f(env) for f in argfns])
            if single:
                return rets[0] if rets else None
            return rets

        return run

    # -- launches ---------------------------------------------------------------------

    def launch(self, e: CallFunc, targets: tuple | None) -> Callable:
        m = self.m
        info = dict(e.launch)
        sp = e.span
        hint = info.get("name_hint") or e.func
        info["_label"] = f"'{hint}' ({sp.file}:{sp.line})" if sp is not None and sp.known \
            else f"'{hint}'"
        argfns = [self.expr(a, tolerant=True) for a in e.args]
        core = info.get("core_num")
        core_f = None if core is None else self.expr(core)
        deps_f = [self.expr(d, tolerant=True) for d in (info.get("deps") or ())]
        name = e.func
        span = e.span
        tnames = [t.name for t in targets] if targets else None

        def run(env: dict) -> Any:
            args = [f(env) for f in argfns]
            n = 1 if core_f is None else int(core_f(env))
            deps = _flatten_deps([f(env) for f in deps_f])
            rets, tid = m.launch(name, args, n, deps, info, span)
            if tnames is None:
                return tid
            outs = tnames[:-1]
            for t, r in zip(outs, rets):
                env[t] = r
            env[tnames[-1]] = tid
            return None

        return run

    # -- op calls ---------------------------------------------------------------------

    def call(self, e: Call, target: str | None = None) -> Callable:
        from pypto.sim.intrinsics import INTRINSICS

        factory = INTRINSICS.get(e.op)
        if factory is not None:
            fn = factory(self, e, target)
        else:
            fn = self.op_call(e)
        return self._guard(fn, e)

    def _guard(self, fn: Callable, e: Call) -> Callable:
        m = self.m
        span = e.span
        op = e.op

        def guarded(env: dict) -> Any:
            try:
                return fn(env)
            except PyptoError:
                raise
            except RecursionError:
                raise
            except ZeroDivisionError:  # a run-time scalar divisor of 0: the kernel's fault
                raise m.fault(f"pl op '{op}' divides by zero", span,
                              hint="guard the divisor; its value is only known at run time"
                              ) from None
            except Exception as exc:  # noqa: BLE001 - an impl failed on these values
                raise m.fault(f"pl op '{op}' failed while simulating: "
                              f"{type(exc).__name__}: {exc}", span) from exc

        return guarded

    def caster(self, t: Any, what: str, span: Any = None) -> Callable | None:
        m = self.m
        if isinstance(t, ShapedType):
            npdt = t.dtype.np
            static = t.static_shape()
            nd = np.ndarray
            asarray = np.asarray

            def cast(r: Any) -> Any:
                if not isinstance(r, nd):
                    r = asarray(r)
                if r.dtype != npdt:
                    r = r.astype(npdt)
                if static is not None and r.shape != static:
                    if r.size == math.prod(static):
                        r = r.reshape(static)
                    else:
                        raise m.fault(f"{what} produced shape {list(r.shape)} but its type rule "
                                      f"declared {list(static)}", span,
                                      note="this is a bug in pypto's op implementation or type "
                                           "rule, not in the kernel")
                return r

            return cast
        if isinstance(t, ScalarType):
            return _scalar_caster(t.dtype)
        return None

    def op_call(self, e: Call) -> Callable:
        m = self.m
        try:
            op = get(e.op)
        except KeyError:
            raise SimulationError(f"unknown op '{e.op}'", e.span) from None
        impl = op.impl
        span = e.span
        if impl is None:
            def missing(env: dict) -> Any:
                raise m.fault(f"pl op '{e.op}' has no simulator implementation yet", span,
                              hint="ask for it, or rewrite with ops the simulator knows")
            return missing
        names = op.params
        public = [i for i, p in enumerate(names) if not p.startswith("_") and i < len(e.args)]
        argfns = [self.expr(e.args[i]) for i in public]
        consts = [self.const(e.args[i]) for i in public]
        cast = self.caster(e.type, f"pl op '{e.op}'", e.span)
        wants_ctx = op.wants_ctx
        ctx = m.ctx
        unit = op.unit
        acct = self._accountant(e, op, public) if m.trace_on else None
        tag = self._typed_valid(e.type)
        cvals = None
        if all(c for c, _ in consts):
            cvals = [v for _, v in consts]
            argfns = None

        def run(env: dict) -> Any:
            args = cvals if argfns is None else [f(env) for f in argfns]
            if wants_ctx:
                ctx.span = span
                r = impl(*args, ctx=ctx)
            else:
                r = impl(*args)
            if cast is not None:
                r = cast(r)
            if tag is not None:
                r = tag(env, r)
            if acct is not None and m.cur is not None:
                acct(args, r)
            return r

        return run

    def _typed_valid(self, t: Any) -> Callable | None:
        """Tag results with the valid shape their type rule declares (when the impl did not)."""
        if not isinstance(t, ShapedType) or t.valid_shape is None:
            return None
        fns = [self.expr(d) for d in t.valid_shape]

        def tag(env: dict, r: Any) -> Any:
            if getattr(r, "valid", None) is not None or not isinstance(r, np.ndarray):
                return r
            try:
                v = tuple(int(f(env)) for f in fns)
            except (SimulationError, KeyError, TypeError, ValueError):
                return r
            if len(v) != r.ndim or v == r.shape:
                return r
            return with_valid(r, tuple(min(a, b) for a, b in zip(v, r.shape)))

        return tag

    def _accountant(self, e: Call, op: Any, public: list) -> Callable:
        m = self.m
        unit = op.unit
        uname = unit.value
        p = m.platform
        if unit is Unit.VECTOR:
            vbpc, issue = p.vector_bpc, p.vector_issue_cycles

            def vec(args: list, r: Any) -> None:
                rec = m.cur
                n = r.size if isinstance(r, np.ndarray) else 1
                for a in args:
                    if isinstance(a, np.ndarray) and a.size > n:
                        n = a.size
                rec.vector_elements += n
                rec.op_counts[uname] = rec.op_counts.get(uname, 0) + 1
                rec.units.add(uname)
                m.bc["vector"] += issue + n * 4 / vbpc

            return vec
        if unit is Unit.CUBE and e.op in _MATMUL_ARGS:
            i, j = _MATMUL_ARGS[e.op]
            pos = {k: n for n, k in enumerate(public)}
            names = op.params
            ta_i = pos.get(names.index("a_trans")) if "a_trans" in names else None
            tb_i = pos.get(names.index("b_trans")) if "b_trans" in names else None
            li, ri = pos.get(i), pos.get(j)

            def cube(args: list, r: Any) -> None:
                rec = m.cur
                a, b = args[li], args[ri]
                if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
                    return
                ma, ka = (a.shape[-2], a.shape[-1]) if a.ndim >= 2 else (1, a.shape[-1])
                if ta_i is not None and args[ta_i]:
                    ma, ka = ka, ma
                kb, nb = (b.shape[-2], b.shape[-1]) if b.ndim >= 2 else (b.shape[-1], 1)
                if tb_i is not None and args[tb_i]:
                    kb, nb = nb, kb
                batch = max(1, a.size // max(1, a.shape[-1] * (a.shape[-2] if a.ndim >= 2
                                                                 else 1)))
                isz = a.itemsize
                kt = 16 if isz <= 2 else 8
                passes = 1 if isz <= 2 else p.mad_fp32_passes
                cyc = p.mad_head_cycles + passes * math.ceil(ma / 16) * math.ceil(ka / kt) * \
                    math.ceil(nb / 16)
                rec.flops += 2 * ma * ka * nb * batch
                rec.op_counts["cube"] = rec.op_counts.get("cube", 0) + 1
                rec.units.add("cube")
                m.bc["cube"] += cyc * batch
                rec.bytes["l1_to_l0"] += a.nbytes + b.nbytes
                m.bc["mte1"] += a.nbytes / p.l1_to_l0a_bpc + b.nbytes / p.l1_to_l0b_bpc

            return cube

        def other(args: list, r: Any) -> None:
            rec = m.cur
            rec.op_counts[uname] = rec.op_counts.get(uname, 0) + 1
            if unit is Unit.SCALAR:
                m.bc["scalar"] += 1
                rec.units.add("scalar")

        return other

    # -- statements -------------------------------------------------------------------

    def body(self, stmts: tuple) -> Callable:
        fns = [self.stmt(s) for s in stmts]
        if not fns:
            return lambda env: None
        if len(fns) == 1:
            return fns[0]
        if len(fns) == 2:
            f0, f1 = fns

            def run2(env: dict) -> Any:
                r = f0(env)
                if r is not None:
                    return r
                return f1(env)

            return run2

        def run(env: dict) -> Any:
            for f in fns:
                r = f(env)
                if r is not None:
                    return r
            return None

        return run

    def stmt(self, s: Any) -> Callable:
        meth = getattr(self, "s_" + type(s).__name__, None)
        if meth is None:
            raise SimulationError(f"the simulator cannot run {type(s).__name__} statements",
                                  getattr(s, "span", None))
        return meth(s)

    def s_Assign(self, s: Assign) -> Callable:
        v = s.value
        targets = s.targets
        if isinstance(v, CallFunc) and dict(v.launch):
            return self.launch(v, targets)
        if len(targets) == 1:
            name = targets[0].name
            if isinstance(v, Call):
                vf = self.call(v, target=name)
                try:
                    if get(v.op).unit is Unit.CUBE:
                        self.cube_vars.add(name)
                    else:
                        self.cube_vars.discard(name)
                except KeyError:
                    pass
            else:
                vf = self.expr(v)
                if isinstance(v, Var) and v.name in self.cube_vars:
                    self.cube_vars.add(name)
            def assign(env: dict) -> None:
                env[name] = vf(env)
            return assign
        vf = self.expr(v)
        names = [t.name for t in targets]

        def assign_many(env: dict) -> None:
            vals = vf(env)
            for n, x in zip(names, vals):
                env[n] = x
        return assign_many

    def s_Eval(self, s: Eval) -> Callable:
        e = s.expr
        if isinstance(e, CallFunc) and dict(e.launch):
            f = self.launch(e, None)
        else:
            f = self.expr(e)

        def ev(env: dict) -> None:
            f(env)
        return ev

    def s_Yield(self, s: Yield) -> Callable:
        fns = [self.expr(v) for v in s.values]

        def yld(env: dict) -> None:
            env["$y"] = [f(env) for f in fns]
        return yld

    def s_Return(self, s: Return) -> Callable:
        fns = [self.expr(v) for v in s.values]

        def ret(env: dict) -> str:
            env["$ret"] = tuple(f(env) for f in fns)
            return RETURN
        return ret

    def s_Break(self, s: Break) -> Callable:
        return lambda env: BREAK

    def s_Continue(self, s: Continue) -> Callable:
        return lambda env: CONTINUE

    def s_For(self, s: For) -> Callable:
        m = self.m
        start, stop, step = self.expr(s.start), self.expr(s.stop), self.expr(s.step)
        var = s.var.name
        self._carry_cube(s)
        body = self.body(s.body)
        iters = [v.name for v in s.iter_args]
        inits = [self.expr(i) for i in s.inits]
        results = [v.name for v in s.results]
        span = s.span

        def loop(env: dict) -> Any:
            a, b, c = int(start(env)), int(stop(env)), int(step(env))
            if c == 0:
                raise m.fault("loop step is 0", span)
            rng = range(a, b, c)
            n = max(0, -((a - b) // c))  # not len(rng): that overflows past 2**63 trips
            if n:
                m.work += n
                if m.work > m.cfg.max_work:
                    m.add_work(0, span, f"a loop of {n:,} iterations")
            if iters:
                carried = [f(env) for f in inits]
                for i in rng:
                    env[var] = i
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
            for i in rng:
                env[var] = i
                r = body(env)
                if r is not None:
                    if r is BREAK:
                        break
                    if r is not CONTINUE:
                        return r
            return None

        return loop

    def s_While(self, s: While) -> Callable:
        m = self.m
        cond = self.expr(s.cond)
        self._carry_cube(s)
        body = self.body(s.body)
        iters = [v.name for v in s.iter_args]
        inits = [self.expr(i) for i in s.inits]
        results = [v.name for v in s.results]
        span = s.span
        limit = m.cfg.max_work

        def loop(env: dict) -> Any:
            carried = [f(env) for f in inits]
            while True:
                for k, x in zip(iters, carried):
                    env[k] = x
                if not cond(env):
                    break
                m.work += 1
                if m.work > limit:
                    m.add_work(0, span, "a while loop")
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

    def _carry_cube(self, s: Any) -> None:
        """Loop carries (and results) of a cube result stay in L0C: storing them drains it."""
        for it, init, res in zip(s.iter_args, s.inits, s.results or s.iter_args):
            if isinstance(init, Var) and init.name in self.cube_vars:
                self.cube_vars.add(it.name)
                self.cube_vars.add(res.name)

    def s_If(self, s: If) -> Callable:
        cond = self.expr(s.cond)
        then = self.body(s.then_body)
        other = self.body(s.else_body)
        results = [v.name for v in s.results]

        if not results:
            def branch(env: dict) -> Any:
                if cond(env):
                    return then(env)
                return other(env)
            return branch

        def branch_r(env: dict) -> Any:
            r = then(env) if cond(env) else other(env)
            if r is not None:
                return r
            y = env.pop("$y", None)
            if y is not None:
                for k, x in zip(results, y):
                    env[k] = x
            return None

        return branch_r

    def s_Scope(self, s: Scope) -> Callable:
        if s.kind is ScopeKind.SPLIT_AIV:
            return self._split_aiv(s)
        if s.kind in (ScopeKind.INCORE, ScopeKind.SPMD):
            raise SimulationError("an InCore region reached the simulator without being "
                                  "outlined into a kernel (the outline pass did not run)",
                                  s.span)
        body = self.body(s.body)
        task = s.task.name if s.task is not None else None
        if task is None:
            return body
        m = self.m

        def scoped(env: dict) -> Any:
            r = body(env)
            env[task] = m.dummy_task((), s.span)
            return r
        return scoped

    def _split_aiv(self, s: Scope) -> Callable:
        loop = s.body[0] if len(s.body) == 1 and isinstance(s.body[0], For) else None
        ctx = self.m.ctx
        if loop is None:
            return self.body(s.body)
        body = self.body(loop.body)
        var = loop.var.name

        def lanes(env: dict) -> Any:
            saved = ctx.subblock_idx
            try:
                for lane in (0, 1):
                    ctx.subblock_idx = lane
                    env[var] = lane
                    r = body(env)
                    if r is not None and r is not CONTINUE:
                        return r if r is not BREAK else None
            finally:
                ctx.subblock_idx = saved
            return None

        return lanes


def _flatten_deps(vals: list) -> list:
    out = []
    for v in vals:
        if v is None or v is UNDEF:
            continue
        if isinstance(v, (list, tuple)):
            out.extend(_flatten_deps(list(v)))
        else:
            try:
                i = int(v)
            except (TypeError, ValueError):
                continue
            if i >= 0:
                out.append(i)
    return out


__all__ = ["Machine", "ExecContext", "CompiledFunction", "FnCompiler", "UNDEF"]
