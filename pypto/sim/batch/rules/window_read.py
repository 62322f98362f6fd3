"""Window reads (`Family.WINDOW_READ`: slice, load): all blocks' windows at once.

* At offsets that differ per block (`bwindow`): one strided view of all blocks'
  windows (a fancy index where the offsets are not affine); a copy unless the tensor
  is one the region never writes. A valid shape or clamp makes partial tiles
  (`masks.Masked`, `read_partial`; traced, each block's valid part is its
  access); under a condition the blocks not taking the branch read inside the tensor
  (`predicate.clip`: what they read is never used).
* Of a value that differs per block (`bstack_window`), at uniform offsets: each
  iteration's own tensor of a batched loop body (a `body.Stack` parameter) or a value
  of the region - the same window of every block's, one slice past the batch axes; a
  window of an on-chip tile is a view of its storage, no copy and no cost, as block by
  block (`intrinsics.windows`). Whole windows only.

Admission notes the window's access (the footprint proof of `footprints.Plan`) for
every window, uniform or not.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from pypto.ir.nodes import Call, ListExpr, Var
from pypto.ir.types import ShapedType, TileType
from pypto.ops.facts import Family
from pypto.ops.registry import OpDef, get
from pypto.sim.batch import mask_windows, masks
from pypto.sim.batch.codegen import Core
from pypto.sim.batch.footprints import Access
from pypto.sim.batch.frame import BatchFrame
from pypto.sim.batch.mask_windows import after, leading_whole, pad_outside
from pypto.sim.batch.masks import Masked, _at, _per_block, uniform
from pypto.sim.batch.predicate import clip
from pypto.sim.batch.rules.rule import Analysis, Lowering, Rule
from pypto.sim.batch.scalars import const_ints
from pypto.sim.batch.state import (
    BatchState,
    Fallback,
    NotBatchable,
    Partial,
    StackRead,
    gather_index,
)
from pypto.sim.device.fill import fill_outside, pad_scalar
from pypto.sim.engine.intrinsics.common import SiteId, falsy_const
from pypto.sim.engine.values import Env, pad_mode
from pypto.sim.trace.costs import gm_cycles, note_gm, note_onchip_copy

# -- admission ---------------------------------------------------------------------------


def admit(an: Analysis, e: Call, op: OpDef, a: dict, vargs: list | None) -> bool:
    rd = op.window_read
    assert rd is not None
    src = a[rd.tensor]
    if an.is_var(src):
        return _stack_window(an, e, src, a, [a.get(n) for n in
                                             ("valid_shape", "clamp", "pad_value")])
    an.opaque(src, False, e.op)
    if isinstance(getattr(src, "type", None), TileType):
        raise NotBatchable("window of an on-chip tile (a view of its storage)")
    an.is_var(a[rd.shape])
    voff = an.is_var(a[rd.offset])
    t = an.resolve(src)
    shape = const_ints(a[rd.shape])
    # a valid shape, clamp or pad: batched only while every block's window is whole and
    # inside the tensor (checked per run: `state.Partial` otherwise)
    valid = a.get("valid_shape")
    vvalid = an.is_var(valid) or an.is_var(a.get("clamp"))
    extras = [valid, a.get("clamp"), a.get("pad_value")]
    if (voff or vvalid) and any(not falsy_const(x) for x in extras):
        if shape is None:
            raise NotBatchable("varying window of a dynamic shape with a valid shape, clamp "
                               "or pad")
        if not (falsy_const(valid) or isinstance(valid, ListExpr)):
            raise NotBatchable("varying window with a computed valid shape")
    if t is not None:
        an.accesses.append(Access(t, an.offsets(a[rd.offset]), shape, False))
    # (a partial tile is a `masks.Masked` value: each block's valid part)
    return voff or vvalid


def _stack_window(an: Analysis, e: Call, src: Any, a: dict, extras: list) -> bool:
    """A window at uniform offsets of a varying tensor: of a parameter that is each
    iteration's own tensor (a fresh result of an earlier launch of a batched loop body,
    `body.Stack`) or of a value of the region (a named one or an op's result), whole
    windows only; the result varies. A window of an on-chip tile is a view of the
    tile's storage (`intrinsics.windows`): admitted while nothing writes into it in
    place (`tile_views`)."""
    rd = get(e.op).window_read
    assert rd is not None
    p = an.resolve(src)
    if (p is not None and p not in an.varying) or \
            not isinstance(src, (Var, Call)) or an.view_of(src) is not None:
        raise NotBatchable("window of a varying value")
    if p is not None and not isinstance(src, Var):
        raise NotBatchable("window of a varying tensor written in the same expression")
    if an.is_var(a[rd.offset]) or any(not falsy_const(x) for x in extras) or \
            const_ints(a[rd.shape]) is None or not an.valid_ok(e.type):
        raise NotBatchable("window of a varying tensor at varying offsets or with a "
                           "valid shape")
    if isinstance(getattr(src, "type", None), TileType) and \
            not an.valid_ok(getattr(src, "type", None)):
        raise NotBatchable("window of a partially valid varying tile")
    return True


# -- the cores ---------------------------------------------------------------------------


def core(lo: Lowering, e: Call) -> Core | None:
    op = get(e.op)
    rd = op.window_read
    assert rd is not None
    a = dict(zip(op.params, e.args))
    valid, clamp = a.get("valid_shape"), a.get("clamp")
    if lo.vary(a[rd.tensor]):
        return bstack_window(lo, e, a[rd.tensor], a[rd.shape], a[rd.offset])
    if lo.vary(a[rd.offset]) or lo.vary(valid) or lo.vary(clamp):
        return bwindow(lo, e, a[rd.tensor], a[rd.shape], a[rd.offset], e.op, valid, clamp,
                       a.get("pad_value"))
    return None


def bwindow(lo: Lowering, e: Call, src: Any, shape: Any, offset: Any, opname: str,
            valid: Any = None, clamp: Any = None, pad: Any = None) -> Core:
    """A window read at varying offsets: all blocks' windows as one strided view. With a
    valid shape or clamp, partial tiles are `masks.Masked` (`read_partial`; traced,
    each block's valid part is its access)."""
    _, shp_v = lo.const(shape)
    shp = tuple(int(d) for d in shp_v)
    out_static = e.type.static_shape() if isinstance(e.type, ShapedType) else None
    tracing = lo.settings.trace
    platform = lo.settings.platform
    sid = SiteId(e.span, opname)
    # A window of a tensor this region never writes (and which overlaps no written
    # argument, checked at launch) can stay a view: no batched op writes in place.
    p = lo.plan.alias.get(src.name) if isinstance(src, Var) else None
    copy = p is None or p in lo.plan.written
    site: list = [None]

    guarded = not (falsy_const(valid) and falsy_const(clamp))
    valid_f = lo.expr(valid) if guarded and not falsy_const(valid) else None
    clamp_f = lo.expr(clamp) if guarded and not falsy_const(clamp) else None
    # the pad of a partial tile, as block by block (`intrinsics.windows`)
    ok, padv = lo.const(pad) if pad is not None else (True, None)
    pad_of = (pad_mode(padv) if ok else None) or lo.settings.config.padding

    def core(f: BatchFrame, a: Any, offs: list, env: Env | None = None) -> Any:
        st = f.batch
        if type(a) is not np.ndarray:
            masks.refuse(st, a)
            raise Fallback("a tagged source")
        if len(offs) != a.ndim or len(shp) != a.ndim:
            raise Fallback("rank mismatch")
        if guarded:
            if env is None or st.pred is not None:
                raise Fallback("a window with a valid shape outside a closure or under a "
                               "condition")
            vals = valid_f(env) if valid_f is not None else None
            clamped = bool(clamp_f(env)) if clamp_f is not None else False
            if vals is not None and (not isinstance(vals, (list, tuple)) or
                                     len(vals) != len(shp)):
                raise Fallback("a valid shape of another rank")
            m = read_partial(st, a, offs, shp, vals, clamped,
                                  pad_scalar(a.dtype, pad_of))
            if m is not None:
                if out_static is not None and out_static != shp:
                    masks.refuse(st, m)
                if tracing and f.rec is not None:  # (the valid parts are the accesses)
                    mask_windows.charge(f, mask_windows.extents(st, m, shp),
                                        lambda ext: note(f, a, offs, ext))
                return m
        nb = st.nb
        try:
            w = st.window_at(site, a, offs, shp, False)
            if w is None:  # offsets not affine: a gather (one fancy index for all blocks)
                w = a[gather_index(st, offs, shp, a.shape)]
            elif copy:
                w = w.copy()
        except Fallback:
            if st.pred is None:
                raise
            # under a condition: the blocks not taking the branch read anywhere inside
            w = a[gather_index(st, clip(st, offs, shp, a.shape), shp, a.shape)]
        if out_static is not None and w.shape[nb:] != out_static:
            if math.prod(out_static) != math.prod(shp):
                raise Fallback("reshape")
            w = w.reshape(w.shape[:nb] + out_static)
        if tracing and f.rec is not None:
            note(f, a, offs, shp)
        return w

    def note(f: BatchFrame, a: np.ndarray, offs: list, ext: tuple) -> None:
        """The trace's access and cost of all blocks' reads of extent `ext`."""
        run = f.run
        st = f.batch
        rec = f.rec
        assert rec is not None
        buf, origin = run.memory.locate(a)
        nbytes = math.prod(ext) * a.itemsize
        if buf is not None and st.log is not None and run.trace is not None:
            st.log.append((a, buf, origin, list(offs), ext, False, sid, ()))
            note_gm(rec, f.costs, "gm_read", nbytes, gm_cycles(platform, a, list(ext), nbytes))
        else:
            note_onchip_copy(platform, f.costs, nbytes)

    return Core("window", core, [src, offset])


def bstack_window(lo: Lowering, e: Call, src: Any, shape: Any, offset: Any) -> Core:
    """A window at uniform offsets of a tensor each iteration has its own of (a
    `body.Stack` parameter) or of a varying value of the region: the same window of
    every block's, one slice past the batch axes. The trace records a read of a Stack as
    a read of that iteration's tensor (`StackRead`: the replay finds the array the
    iteration's task was passed), a window of a tensor of the region as an on-chip copy;
    a window of an on-chip tile is a view of its storage, no copy and no cost, as block
    by block (`intrinsics.windows`)."""
    _, shp_v = lo.const(shape)
    shp = tuple(int(d) for d in shp_v)
    out_static = e.type.static_shape() if isinstance(e.type, ShapedType) else None
    tracing = lo.settings.trace
    platform = lo.settings.platform
    sid = SiteId(e.span, e.op)
    param = stack_param(lo, src) if isinstance(src, Var) else None
    of_tile = isinstance(getattr(src, "type", None), TileType)

    rank = len(shp)

    def core(f: BatchFrame, a: Any, offs: list, env: Env | None = None) -> Any:
        st = f.batch
        nb = st.nb
        if type(a) is not np.ndarray or a.ndim not in (rank, rank + nb) or \
                len(offs) != rank or (param is not None and a.ndim != rank + nb):
            raise Fallback("a window of a varying tensor of another rank")
        offs = [int(o) for o in offs]
        lead = a.ndim - rank
        if any(o < 0 or o + d > n for o, d, n in zip(offs, shp, a.shape[lead:])):
            raise Fallback("a window past its tensor")
        w = a[(slice(None),) * lead + tuple(slice(o, o + d) for o, d in zip(offs, shp))]
        if of_tile:
            if out_static is not None and w.shape[lead:] != out_static:
                raise Fallback("reshape")
            return w
        w = w.copy()
        if out_static is not None and w.shape[lead:] != out_static:
            raise Fallback("reshape")
        rec = f.rec
        if tracing and rec is not None:
            nbytes = math.prod(shp) * a.itemsize
            if param is None:  # a tile of the region: an on-chip copy
                note_onchip_copy(platform, f.costs, nbytes)
            elif st.log is not None and f.run.trace is not None:
                st.log.append((param, None, None, offs, shp, False, sid, ()))
                note_gm(rec, f.costs, "gm_read", nbytes,
                        gm_cycles(platform, a[(0,) * nb], list(shp), nbytes))
        return w

    return Core("window", core, [src, offset])


def stack_param(lo: Lowering, e: Var) -> StackRead | None:
    """The parameter (a `body.Stack`) the varying tensor `e` is; None for a tensor of the
    region."""
    name = lo.plan.alias.get(e.name)
    if name is None:
        return None
    return StackRead([p.var.name for p in lo.func.params].index(name))


# -- partial tiles ---------------------------------------------------------------------


def read_partial(st: BatchState, a: np.ndarray, offs: list, shp: tuple, valid: Any, clamp: bool,
         pad: Any) -> Masked | None:
    """All blocks' windows `offs + shp` of `a` with valid shape `valid` (entries per
    block) and `clamp`, as block by block reads each: None when every block's tile is
    whole (the caller's strided view), else a `Masked`. Raises Fallback where block by
    block faults (a valid part outside the tensor: the rerun reports it)."""
    if not clamp and valid is not None and all(type(v) is int for v in valid):
        return _read_uniform(st, a, offs, shp, tuple(min(s, v) for s, v in zip(shp, valid)),
                             pad)
    bs = st.bs
    los = [_per_block(st, o) for o in offs]
    ext: list = []
    short: np.ndarray = np.zeros(bs, dtype=bool)
    for ax, s in enumerate(shp):
        e: Any = s
        if valid is not None:
            v = _per_block(st, valid[ax])
            e = min(s, v) if type(v) is int else np.minimum(v, s)
        lo = los[ax]
        d = a.shape[ax]
        if clamp:
            e = np.maximum(0, np.minimum(e, d - np.asarray(lo)))
        if type(e) is int and type(lo) is int:  # (a whole axis at one offset: no numpy)
            if lo < 0 or lo + e > d or e < 0:
                raise Fallback("out of bounds")
            if e < s:
                short |= True
        else:
            lo = np.asarray(lo)
            if (lo < 0).any() or (lo + e > d).any() or np.any(np.asarray(e) < 0):
                raise Fallback("out of bounds")
            short |= np.asarray(e) < s
        ext.append(e)
    if not short.any():
        return None
    if st.split:
        # whole tiles first (a loop's short last tile): they run batched without masks,
        # the rest batched with them (`runtime.launch._split`)
        rows = np.asarray(short.reshape(bs[0], -1).any(axis=1))
        if not rows[0]:
            raise Partial(short.copy())
    partial = [tuple(int(i) for i in idx) for idx in zip(*np.nonzero(short))]
    tags = {idx: tuple(_at(e, idx) for e in ext) for idx in partial}
    out = np.empty(bs + tuple(shp), dtype=a.dtype)
    inside = np.ones(bs, dtype=bool)
    for lo, s, d in zip(los, shp, a.shape):
        inside &= np.asarray(lo) + s <= d
    k = leading_whole(bs, [tuple(int(i) for i in idx) for idx in zip(*np.nonzero(~inside))])
    if k:  # the blocks whose whole window is inside the tensor: one strided view
        sub = st if k == bs[0] else BatchState((k,) + bs[1:], False, False, False)
        view = sub.window(a, offs, shp, False)
        if view is None:
            k = 0
        else:
            out[:k] = view
    for idx in after(bs, k):
        e = tags.get(idx, shp)
        origin = [_at(x, idx) for x in los]
        out[idx][tuple(slice(0, x) for x in e)] = \
            a[tuple(slice(o, o + x) for o, x in zip(origin, e))]
    for idx, e in tags.items():
        fill_outside(out[idx], e, pad)
    return Masked(out, tags)


def _read_uniform(st: BatchState, a: np.ndarray, offs: list, shp: tuple, ext: tuple,
                  pad: Any) -> Masked | None:
    """`read` of a valid shape that is the same in every block (no clamp): each block's
    valid part `ext` copied into its tile, the rest the pad value."""
    if ext == shp:
        return None
    if any(e < 0 for e in ext):
        raise Fallback("a negative valid extent")
    nb = st.nb
    view = st.window(a, offs, ext, False)  # (bounds-checked: Fallback past the tensor)
    if view is None:  # offsets not affine: a gather
        view = a[gather_index(st, offs, ext, a.shape)]
    out = np.empty(view.shape[:nb] + shp, dtype=a.dtype)
    out[(Ellipsis,) + tuple(slice(0, e) for e in ext)] = view
    pad_outside(out, nb, ext, pad)
    return uniform(out, ext)


RULE = Rule(Family.WINDOW_READ, admit, core, always=True)

__all__ = ["RULE", "bstack_window", "bwindow", "stack_param"]
