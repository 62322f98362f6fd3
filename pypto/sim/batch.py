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
from typing import Any, Callable

import numpy as np
from numpy.lib.stride_tricks import as_strided

from pypto.ir.nodes import (Assign, Call, CallFunc, Const, Eval, For, ListExpr, LoopKind, Var,
                            Yield)
from pypto.ir.types import ShapedType
from pypto.ops.numeric import _QUIET
from pypto.ops.registry import get
from pypto.sim.batch_plan import (BLOCK, ELEMENTWISE, SCALAR_AFFINE, SCALAR_DIV, WINDOW_READS,
                                  WINDOW_WRITES, Plan, analyze, write_only)
from pypto.sim.compiler import FnCompiler
from pypto.sim.trace import TaskRecord
from pypto.sim.values import UNDEF, _flatten_deps


class Fallback(Exception):
    """Abandon the batch; run block by block."""


class Aff:
    """An integer that differs per block: `base + sum(d[k] * index[k])`."""

    __slots__ = ("base", "d")

    def __init__(self, base: int, d: tuple):
        self.base = base
        self.d = d

    def at(self, idx: tuple) -> int:
        v = self.base
        for x, i in zip(self.d, idx):
            v += x * i
        return v

    def __repr__(self) -> str:
        return f"Aff({self.base}, {self.d})"


def _at(v: Any, idx: tuple) -> Any:
    if type(v) is Aff:
        return v.at(idx)
    if isinstance(v, np.ndarray) and v.ndim == len(idx) and v.dtype.kind in "iu":
        return int(v[tuple(i if n > 1 else 0 for i, n in zip(idx, v.shape))])
    return v


def _lo_at(lo: Any, idx: tuple) -> tuple:
    return tuple(int(_at(o, idx)) for o in lo)


class BatchState:
    """The batch shape of the current batched run (set before each run)."""

    def __init__(self) -> None:
        self.bs: tuple = ()
        self.nb = 0
        self.blk: Any = None
        self.log: list | None = None
        # the window writes of this run into deferred-fill buffers: (target, offsets,
        # shape, per-block origins or None); set by launch_loop while fills are pending
        self.wlog: list | None = None

    def set(self, bs: tuple, spmd: bool) -> None:
        self.bs = bs
        self.nb = len(bs)
        self.blk = Aff(0, (1,)) if spmd else None

    def materialize(self, v: Any) -> Any:
        if type(v) is Aff:
            out = np.asarray(v.base, dtype=np.int64)
            for k, (x, n) in enumerate(zip(v.d, self.bs)):
                if x:
                    shape = [1] * self.nb
                    shape[k] = n
                    out = out + (np.arange(n, dtype=np.int64) * x).reshape(shape)
            return out
        return v

    # -- windows -------------------------------------------------------------------

    def window(self, a: np.ndarray, offs: list, shp: tuple, write: bool) -> np.ndarray | None:
        """All blocks' windows of `a` as one strided view (leading batch axes), or None
        when the offsets are not affine."""
        nb, bs = self.nb, self.bs
        st = a.strides
        ashape = a.shape
        base = []
        bstr = [0] * nb
        moved = [False] * nb
        for ax, o in enumerate(offs):
            if type(o) is Aff:
                b = lo = hi = o.base
                s_ax = st[ax]
                for k, x in enumerate(o.d):
                    if x:
                        moved[k] = True
                        bstr[k] += x * s_ax
                        span = x * (bs[k] - 1)
                        if span < 0:
                            lo += span
                        else:
                            hi += span
            elif isinstance(o, np.ndarray):
                return None
            else:
                b = lo = hi = int(o)
            if lo < 0 or hi + shp[ax] > ashape[ax]:
                raise Fallback("out of bounds")
            base.append(b)
        bshape = []
        for k in range(nb):
            n = bs[k]
            if moved[k] and n > 1:
                bshape.append(n)
            else:
                if write and n > 1:
                    raise Fallback("blocks write the same window")
                bshape.append(1)
                bstr[k] = 0
        shape = tuple(bshape) + tuple(shp)
        strides = tuple(bstr) + st
        # fast path (sim speed: as_strided costs ~3 us): the view straight on the memory
        # of the array owning it
        root = a.base if a.base is not None else a
        if type(a) is np.ndarray and type(root) is np.ndarray and root.base is None and \
                root.flags.c_contiguous and all(x >= 0 for x in strides):
            off = sum(b * x for b, x in zip(base, st))
            if root is not a:
                off += a.__array_interface__["data"][0] - root.__array_interface__["data"][0]
            if off >= 0:
                v = np.ndarray(shape, a.dtype, root, off, strides)
                if not (write and a.flags.writeable):
                    v.flags.writeable = False
                return v
        v0 = a[tuple(slice(b, b + s) for b, s in zip(base, shp))]
        return as_strided(v0, shape, strides, writeable=write)

    def indices(self) -> Any:
        return np.ndindex(*self.bs)


class _Log:
    """Stands in for `Machine.record` during a batched run: accesses are replayed per task
    (or block) afterwards, in program order."""

    __slots__ = ("items",)

    def __init__(self) -> None:
        self.items: list = []

    def record(self, a: Any, buf: Any, origin: Any, lo: Any, ext: Any, write: bool, site: int,
               *rest: Any) -> None:
        self.items.append((a, buf, origin, lo, ext, write, site, rest))


# --- the batched compiler ---------------------------------------------------------------


class BatchCompiler(FnCompiler):
    """Compiles a region for batched execution under a `Plan`; uniform parts compile
    exactly as block-by-block (FnCompiler), the varying parts to batched closures."""

    def __init__(self, machine: Any, func: Any, plan: Plan, st: BatchState):
        super().__init__(machine, func)
        self.plan = plan
        self.st = st
        self.in_region = True

    def vary(self, e: Any) -> bool:
        pv = self.plan.varying
        if isinstance(e, Var):
            return e.name in pv
        if isinstance(e, ListExpr):
            return any(self.vary(i) for i in e.items)
        if isinstance(e, (list, tuple)):
            return any(self.vary(i) for i in e)
        if isinstance(e, Call):
            if e.op == "get_block_idx":
                return BLOCK in pv
            if e.op in WINDOW_WRITES:
                return False
            return any(self.vary(a) for a in e.args)
        return False

    def call(self, e: Call, target: str | None = None) -> Callable:
        op = e.op
        if op in WINDOW_READS or op in WINDOW_WRITES:
            a = dict(zip(get(op).params, e.args))
            if op in WINDOW_READS:
                src_n, shape_n, off_n = WINDOW_READS[op]
                if self.vary(a[off_n]):
                    return self._guard(self.bwindow(e, a[src_n], a[shape_n], a[off_n], op), e)
            else:
                tgt_n, src_n, off_n = WINDOW_WRITES[op]
                src = a[src_n] if src_n in a else a.get("tile_")
                if self.vary(src) or self.vary(a[off_n]):
                    return self._guard(self.bwrite(e, a[tgt_n], src, a[off_n], op), e)
            return super().call(e, target)
        if op == "get_block_idx" and BLOCK in self.plan.varying:
            return self._guard(self.bscalar(e, None), e)
        if not any(self.vary(x) for x in e.args):
            return super().call(e, target)
        if op in SCALAR_AFFINE or op in SCALAR_DIV:
            return self._guard(self.bscalar(e, _SCALAR[op]), e)
        if op in ELEMENTWISE:
            return self._guard(self.bop(e), e)
        raise AssertionError(f"batch plan admitted {op}")  # pragma: no cover

    # -- scalars ---------------------------------------------------------------------

    def bscalar(self, e: Call, fn: Callable) -> Callable:
        m = self.m
        argfns = [self.expr(a) for a in e.args]
        opdef = get(e.op)
        acct = self._accountant(e, opdef, list(range(len(e.args)))) if m.trace_on else None
        st = self.st

        def run(env: dict) -> Any:
            args = [f(env) for f in argfns]
            r = fn(args, st) if e.op != "get_block_idx" else st.blk
            if type(r) is not Aff:
                r = st.materialize(r)
            if acct is not None and m.cur is not None:
                acct(args, 0)
            return r

        return run

    # -- ops -------------------------------------------------------------------------

    def bop(self, e: Call) -> Callable:
        m = self.m
        opdef = get(e.op)
        impl = opdef.impl
        names = opdef.params
        public = [i for i, p in enumerate(names) if not p.startswith("_") and i < len(e.args)]
        argfns = [self.expr(e.args[i]) for i in public]
        ranks = [len(e.args[i].type.shape) if isinstance(getattr(e.args[i], "type", None),
                                                          ShapedType) else -1 for i in public]
        shaped = [k for k, r in enumerate(ranks) if r >= 0]
        t = e.type
        npdt = t.dtype.np
        static = t.static_shape()
        rank = len(t.shape)
        acct = self._accountant(e, opdef, public) if m.trace_on else None
        st = self.st
        nd_t = np.ndarray

        def run(env: dict) -> Any:
            args = [f(env) for f in argfns]
            for k in shaped:
                if type(args[k]) is not nd_t:
                    raise Fallback("a tagged or non-array operand")
            r = impl(*args)
            if type(r) is not nd_t:
                raise Fallback("a tagged result")
            if r.dtype != npdt:
                r = r.astype(npdt)
            nb = st.nb
            if static is None or r.shape[-rank:] != static or r.ndim not in (rank, rank + nb):
                raise Fallback("unexpected result shape")
            if acct is not None and m.cur is not None:
                z = (0,) * nb
                acct([a[z] if k in shaped and a.ndim == ranks[k] + nb else a
                      for k, a in enumerate(args)], r[z] if r.ndim == rank + nb else r)
            return r

        return run

    # -- windows ---------------------------------------------------------------------

    def bwindow(self, e: Call, src: Any, shape: Any, offset: Any, opname: str) -> Callable:
        from pypto.sim.intrinsics import _mte2_cost, _note_mte

        m = self.m
        src_f = self.expr(src)
        off_f = self.expr(offset)
        _, shp = self.const(shape)
        shp = tuple(int(d) for d in shp)
        out_static = e.type.static_shape() if isinstance(e.type, ShapedType) else None
        st = self.st
        tracing = m.trace_on
        site_key = (e.span, opname)
        # A window of a tensor this region never writes (and which overlaps no written
        # argument, checked at launch) can stay a view: no batched op writes in place.
        p = self.plan.alias.get(src.name) if isinstance(src, Var) else None
        copy = p is None or p in self.plan.written

        def run(env: dict) -> Any:
            a = src_f(env)
            if type(a) is not np.ndarray:
                raise Fallback("a tagged source")
            offs = off_f(env)
            if len(offs) != a.ndim or len(shp) != a.ndim:
                raise Fallback("rank mismatch")
            w = st.window(a, offs, shp, False)
            nb = st.nb
            if w is None:  # offsets not affine: gather block by block
                w = np.empty(st.bs + shp, dtype=a.dtype)
                for idx in st.indices():
                    lo = _lo_at(offs, idx)
                    if any(o < 0 or o + s > d for o, s, d in zip(lo, shp, a.shape)):
                        raise Fallback("out of bounds")
                    w[idx] = a[tuple(slice(o, o + s) for o, s in zip(lo, shp))]
            elif copy:
                w = w.copy()
            if out_static is not None and w.shape[nb:] != out_static:
                if math.prod(out_static) != math.prod(shp):
                    raise Fallback("reshape")
                w = w.reshape(w.shape[:nb] + out_static)
            if tracing and m.cur is not None:
                buf, origin = m.locate(a)
                nbytes = math.prod(shp) * a.itemsize
                if buf is not None:
                    st.log.append((a, buf, origin, list(offs), shp, False, m.trace.site(*site_key),
                                   ()))
                    _note_mte(m, "gm_read", nbytes, _mte2_cost(m, a, list(shp), nbytes))
                else:
                    m.bc["vector"] += m.platform.vector_issue_cycles + nbytes / \
                        m.platform.vector_bpc
            return w

        return run

    def _fused(self, source: Any, shp: tuple) -> Callable | None:
        """When the written value is an elementwise op computing in its own dtype (a
        numpy ufunc over float32/float64 arrays and Python scalars), compute it straight
        into the destination windows: the same values as computing it and copying them
        in, without the temporary (untraced runs only; `None`: no such op)."""
        if not isinstance(source, Call) or source.op not in FUSE or not self.vary(source):
            return None
        ufunc, n = FUSE[source.op]
        if len(source.args) < n or not all(_nullish(x) for x in source.args[n:]):
            return None
        ranks = {len(a.type.shape) for a in source.args[:n]
                 if isinstance(getattr(a, "type", None), ShapedType)}
        if len(ranks) > 1:  # e.g. a row vector of another rank: the impl reshapes it
            return None
        t = source.type
        if not isinstance(t, ShapedType) or t.valid_shape is not None:
            return None
        npdt = np.dtype(t.dtype.np)
        if npdt.kind != "f" or npdt.itemsize < 4 or t.static_shape() != shp:
            return None
        argfns = [self.expr(a) for a in source.args[:n]]
        st = self.st
        srank = len(shp)
        nd_t = np.ndarray
        gen = np.generic

        def fused(env: dict, tgt: Any, off_f: Callable) -> bool:
            if tgt.dtype != npdt:
                return False
            args = [f(env) for f in argfns]
            shapes = []
            for a in args:
                ta = type(a)
                if ta is nd_t:
                    if a.dtype != npdt:
                        return False
                    shapes.append(a.shape)
                elif ta is not float and ta is not int and not (isinstance(a, gen) and
                                                                a.dtype == npdt):
                    return False
            if not shapes:
                return False
            bsh = np.broadcast_shapes(*shapes)
            if bsh[-srank:] != shp or len(bsh) not in (srank, srank + st.nb):
                return False
            offs = off_f(env)
            if len(offs) != tgt.ndim:
                return False
            view = st.window(tgt, offs, shp, True)
            if view is None:
                return False
            ufunc(*args, out=view)
            if st.wlog is not None:
                st.wlog.append((tgt, list(offs), shp, None))
            return True

        return fused

    def bwrite(self, e: Call, target: Any, source: Any, offset: Any, opname: str) -> Callable:
        from pypto.sim.intrinsics import _is_cube, _mte2_cost, _note_mte

        m = self.m
        tgt_f = self.expr(target)
        src_f = self.expr(source)
        off_f = self.expr(offset)
        shp = tuple(source.type.static_shape())
        srank = len(shp)
        st = self.st
        tracing = m.trace_on
        site_key = (e.span, opname)
        from_cube = isinstance(source, Var) and source.name in self.cube_vars or \
            (isinstance(source, Call) and _is_cube(source))
        fused = None if tracing else self._fused(source, shp)

        def run(env: dict) -> Any:
            tgt = tgt_f(env)
            if fused is not None and fused(env, tgt, off_f):
                return tgt
            src = src_f(env)
            if type(tgt) is not np.ndarray or not isinstance(src, np.ndarray) or \
                    type(src) is not np.ndarray:
                raise Fallback("a tagged value")
            offs = off_f(env)
            nb = st.nb
            if len(offs) != tgt.ndim or src.shape[-srank:] != shp or \
                    src.ndim not in (srank, srank + nb):
                raise Fallback("rank mismatch")
            view = st.window(tgt, offs, shp, True)
            if view is not None:
                view[...] = src
                if st.wlog is not None:
                    st.wlog.append((tgt, list(offs), shp, None))
            else:
                sb = src.ndim == srank + nb
                los = []
                for idx in st.indices():
                    lo = _lo_at(offs, idx)
                    if any(o < 0 or o + s > d for o, s, d in zip(lo, shp, tgt.shape)):
                        raise Fallback("out of bounds")
                    los.append(lo)
                if len(set(los)) != len(los):
                    raise Fallback("blocks write the same window")
                for idx, lo in zip(st.indices(), los):
                    part = src[tuple(i if n > 1 else 0 for i, n in zip(idx, src.shape))] \
                        if sb else src
                    tgt[tuple(slice(o, o + s) for o, s in zip(lo, shp))] = part
                if st.wlog is not None:
                    st.wlog.append((tgt, None, shp, los))
            if tracing:
                buf, origin = m.locate(tgt)
                if buf is not None:
                    st.log.append((tgt, buf, origin, list(offs), shp, True,
                                   m.trace.site(*site_key), ()))
                    if m.cur is not None:
                        nbytes = math.prod(shp) * tgt.itemsize
                        _note_mte(m, "gm_write", nbytes, _mte2_cost(m, tgt, list(shp), nbytes))
                        if from_cube:
                            p = m.platform
                            rows = math.prod(shp[:-1]) if len(shp) > 1 else 1
                            row_bytes = (shp[-1] if shp else 1) * src.itemsize
                            m.bc["fix"] += p.fix_fixed_cycles + rows * max(p.fix_row_floor,
                                                                           row_bytes / p.fix_bpc)
                            m.cur.bytes["l0c_drain"] += math.prod(shp) * src.itemsize
            return tgt

        return run


# Elementwise ops a batched window write may compute in place (`BatchCompiler._fused`):
# op -> (numpy ufunc of its impl, number of leading operands it takes). Only used for
# float32 / float64 operands of the op's own dtype, where the impl is exactly the ufunc.
FUSE = {
    "add": (np.add, 2), "sub": (np.subtract, 2), "mul": (np.multiply, 2),
    "div": (np.true_divide, 2), "maximum": (np.maximum, 2), "minimum": (np.minimum, 2),
    "adds": (np.add, 2), "subs": (np.subtract, 2), "muls": (np.multiply, 2),
    "divs": (np.divide, 2), "maximums": (np.maximum, 2), "minimums": (np.minimum, 2),
    "neg": (np.negative, 1), "abs": (np.abs, 1), "exp": (np.exp, 1),
    **{f"{k}_expand_{o}": (f, 2) for k in ("row", "col")
       for o, f in (("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                    ("div", np.true_divide), ("max", np.maximum), ("min", np.minimum))},
}


def _nullish(x: Any) -> bool:
    from pypto.ir.nodes import Attr

    return x is None or x is False or (isinstance(x, (Attr, Const)) and not x.value)


class _NeedArray(Exception):
    pass


def _mat(v: Any, st: BatchState | None) -> Any:
    if st is None:
        raise _NeedArray()
    return st.materialize(v)


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _sadd(args: list, st: BatchState | None) -> Any:
    a, b = args
    if type(a) is Aff and type(b) is Aff:
        return Aff(a.base + b.base, tuple(x + y for x, y in zip(a.d, b.d)))
    if type(a) is Aff and _is_int(b):
        return Aff(a.base + int(b), a.d)
    if type(b) is Aff and _is_int(a):
        return Aff(int(a) + b.base, b.d)
    return _mat(a, st) + _mat(b, st)


def _ssub(args: list, st: BatchState | None) -> Any:
    a, b = args
    if type(b) is Aff:
        return _sadd([a, Aff(-b.base, tuple(-x for x in b.d))], st)
    if _is_int(b) and type(a) is Aff:
        return Aff(a.base - int(b), a.d)
    return _mat(a, st) - _mat(b, st)


def _smul(args: list, st: BatchState | None) -> Any:
    a, b = args
    if type(a) is Aff and _is_int(b):
        return Aff(a.base * int(b), tuple(x * int(b) for x in a.d))
    if type(b) is Aff and _is_int(a):
        return Aff(int(a) * b.base, tuple(x * int(a) for x in b.d))
    return _mat(a, st) * _mat(b, st)


_SCALAR = {"scalar.add": _sadd, "scalar.sub": _ssub, "scalar.mul": _smul,
           "scalar.floordiv": lambda args, st: np.floor_divide(_mat(args[0], st), args[1]),
           "scalar.mod": lambda args, st: np.mod(_mat(args[0], st), args[1])}


# --- preparing and running a batch -------------------------------------------------------


class _Entry:
    __slots__ = ("plan", "cf", "st")

    def __init__(self, plan: Plan, cf: Any, st: BatchState):
        self.plan = plan
        self.cf = cf
        self.st = st


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
    names = [p[0] for p in cf.params]
    varying = {n for n, a in zip(names, args) if type(a) is Aff}
    if spmd:
        varying.add(BLOCK)
    entry = _entry(m, cf, frozenset(varying))
    if entry is None:
        return None
    plan = entry.plan
    deltas = {n: a.d for n, a in zip(names, args) if type(a) is Aff}
    if spmd:
        deltas[BLOCK] = (1,)
    if not plan.separated(deltas, bs):
        return None
    tensors = [(n, a) for n, a in zip(names, args) if isinstance(a, np.ndarray)]
    for n, a in tensors:
        if n in plan.written:
            if type(a) is not np.ndarray or not a.flags.writeable:
                return None
            for n2, b in tensors:
                if n2 != n and (b is a or np.may_share_memory(a, b)):
                    return None
    return entry


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
    st.set(bs, spmd)
    names = [p[0] for p in entry.cf.params]
    snaps = _snapshot(entry, names, args)
    ctx = m.ctx
    saved = (m.cur, m.bc, m.block, m.region, ctx.in_region, ctx.block_idx, ctx.block_num,
             ctx.task_id, m.work_mult, m.work)
    proto = bc = log = None
    had_record = "record" in m.__dict__
    prev_record = m.__dict__.get("record")
    if m.trace_on:
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
    names = [p[0] for p in cf.params]
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
    t0 = time.perf_counter()
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
    names = [p[0] for p in cf.params]
    kept = []
    flush = []
    plan = entry.plan
    for item in m.pending:
        a = item[0]
        params = [n for n, x in zip(names, args) if isinstance(x, np.ndarray) and
                  (x is a or np.may_share_memory(x, a))]
        if not params:
            continue
        if len(params) == 1 and all(x is a for n, x in zip(names, args) if n in params) and \
                _write_only(m, cf, plan, params[0]):
            kept.append(item)
        else:
            flush.append(a)
    if flush:
        m.flush_pending(flush)
    return kept


def _write_only(m: Any, cf: Any, plan: Plan, param: str) -> bool:
    cache = m.__dict__.setdefault("_write_only", {})
    key = (cf.name, id(plan), param)
    r = cache.get(key)
    if r is None:
        r = cache[key] = write_only(cf.func, plan.alias, param)
    return r


def _fill_unwritten(m: Any, kept: list, wlog: list, st: BatchState) -> None:
    """After a batched run: the deferred fills of `kept`, only where the run wrote
    nothing (nothing when its windows cover the whole buffer)."""
    from pypto.sim.machine import _strided_like

    for item in kept:
        a, seed = item
        mine = [w for w in wlog if w[0] is a or np.may_share_memory(w[0], a)]
        m.pending = [p for p in m.pending if p is not item]
        if all(w[0] is a for w in mine) and _covers(a, mine, st):
            continue
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


def _covers(a: np.ndarray, writes: list, st: BatchState) -> bool:
    """Do these batched window writes (each a regular tiling of boxes) cover `a`?"""
    try:
        key = (a.shape, st.bs) + tuple(
            (tuple((o.base, o.d) if type(o) is Aff else int(o) for o in offs), shp)
            for _t, offs, shp, los in writes if los is None)
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
    outer_inits = [fc.expr(i) for i in levels[0][0].inits]
    sp = launch.span
    hint = info.get("name_hint") or launch.func
    info["_label"] = f"'{hint}' ({sp.file}:{sp.line})" if sp is not None and sp.known \
        else f"'{hint}'"
    name = launch.func
    nl = len(levels)
    level_names = [([v.name for v in lv.iter_args], [v.name for v in lv.results])
                   for lv, _ in levels]

    def loop(env: dict) -> Any:
        r = batched(env)
        if r is _SEQ:
            if m.pending:  # block by block: every deferred fill happens first
                m.flush_pending()
            return seq(env)
        return r

    def batched(env: dict) -> Any:
        if not m.batch_on or m.cur is not None or m.interleaver is not None:
            return _SEQ
        ranges = []
        for f0, f1, f2 in bounds:
            a, b, c = int(f0(env)), int(f1(env)), int(f2(env))
            if c == 0:
                return _SEQ
            ranges.append((a, max(0, -((a - b) // c)), c))
        bs = tuple(n for _, n, _ in ranges)
        B = math.prod(bs)
        if B < 2:
            return _SEQ
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
        carried = [f(env) for f in outer_inits]
        cv = dict(zip(inner_iters, carried))
        args = [f(env, lv, cv) for f in argk]
        if any(x is None for x in args):
            return _SEQ
        r = launch_loop(m, name, args, bs, info, launch.span, pre, carries)
        if r is None:
            return _SEQ
        rets, tid = r
        for k, (a, n, c) in enumerate(ranges):
            env[loop_vars[k]] = a + (n - 1) * c
        for iters, results in level_names:
            for i, (it, res) in enumerate(zip(iters, results)):
                env[it] = carried[i]
                env[res] = carried[i]
        if targets is not None:
            for t, x in zip(targets[:-1], rets):
                env[t] = x
            env[targets[-1]] = tid
        return None

    m._nest_fors.add(id(s))
    return loop


_SEQ = object()  # loop_nest: run the loop block by block


def _arg_fn(fc: Any, a: Any, loop_vars: list, iters: list) -> Callable | None:
    if isinstance(a, Var):
        n = a.name
        if n in loop_vars:
            return lambda env, lv, cv: lv[n]
        if n in iters:
            return lambda env, lv, cv: cv[n]
        f = fc.expr(a, tolerant=True)
        return lambda env, lv, cv: f(env)
    if isinstance(a, Call) and a.op in SCALAR_AFFINE:
        fs = [_arg_fn(fc, x, loop_vars, iters) for x in a.args]
        if any(f is None for f in fs):
            return None
        op = _SCALAR[a.op]

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
