"""Deferred fills around a batched launch loop.

A fresh `pl.Out` buffer is filled with residue (or zeros) before anything can look at
it. When the first top-level statement of the entry mentioning it is a batched launch
loop nest, and the region only ever uses it as the target of window writes
(`write_only`), the fill waits until after the batched run and covers only what the
run did not write: nothing when its windows tile the whole buffer (`covers`), else
the complement of a written-mask. Anything else flushes the fill first.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from pypto.ir.nodes import (
    Assign,
    Break,
    Call,
    CallFunc,
    Continue,
    Eval,
    For,
    Function,
    GetItem,
    If,
    ListExpr,
    Return,
    Scope,
    Var,
    While,
    Yield,
)
from pypto.ops.registry import get
from pypto.sim.batch.state import Aff, BatchState, WindowWrite
from pypto.sim.device.memory import DeviceMemory, PendingFill
from pypto.sim.device.views import strided_like


class _Read(Exception):
    pass


def write_only(func: Function, alias: dict[str, str], param: str) -> bool:
    """True when the region never reads tensor parameter `param`: every value aliasing it
    (`alias`: value name -> parameter, from the plan) is only the target of window writes
    (assemble / store), handed on through assignments, loop carries or returned.
    Conservative: anything else is a read."""

    def mine(e: Any) -> bool:
        return isinstance(e, Var) and alias.get(e.name) == param

    def val(e: Any) -> bool:  # does `e` evaluate to (an alias of) param? raises on a read
        if isinstance(e, Var):
            return mine(e)
        if isinstance(e, Call):
            op = get(e.op)
            names = op.params
            w = op.window_write
            tgt = w.tensor if w is not None else None
            res = False
            for n, a in zip(names, e.args):
                if n == tgt:
                    res = val(a)
                elif val(a):
                    raise _Read()
            if len(e.args) > len(names) or any(val(v) for _, v in e.kwargs):
                raise _Read()
            return res
        if isinstance(e, ListExpr):
            if any(val(i) for i in e.items):
                raise _Read()
            return False
        if isinstance(e, GetItem):
            if val(e.value):
                raise _Read()
            return False
        if isinstance(e, CallFunc):
            raise _Read()
        if isinstance(e, (list, tuple)) and any(val(i) for i in e):
            raise _Read()
        return False

    def flows(value: Any, target: Any) -> None:
        if val(value) and not (isinstance(target, Var) and mine(target)):
            raise _Read()

    def body(stmts: Any, carries: tuple | None) -> None:
        for s in stmts:
            if isinstance(s, Assign):
                if val(s.value) and not (len(s.targets) == 1 and mine(s.targets[0])):
                    raise _Read()
            elif isinstance(s, Eval):
                val(s.expr)
            elif isinstance(s, For):
                for e in (s.start, s.stop, s.step):
                    if val(e):
                        raise _Read()
                loop(s)
            elif isinstance(s, While):
                if val(s.cond):
                    raise _Read()
                loop(s)
            elif isinstance(s, If):
                if val(s.cond):
                    raise _Read()
                # (a branch's yield flows into the if's results)
                body(s.then_body, tuple(s.results))
                body(s.else_body, tuple(s.results))
            elif isinstance(s, Scope):
                body(s.body, carries)
            elif isinstance(s, Yield):
                for i, v in enumerate(s.values):
                    flows(v, carries[i] if carries is not None and i < len(carries) else None)
            elif isinstance(s, Return):
                for v in s.values:
                    val(v)
            elif not isinstance(s, (Break, Continue)):
                raise _Read()

    def loop(s: For | While) -> None:
        for it, init, res in zip(s.iter_args, s.inits, s.results):
            flows(init, it)
            if mine(it) and not mine(res):
                raise _Read()
        body(s.body, tuple(s.iter_args))

    try:
        body(func.body, None)
    except (_Read, KeyError):
        return False
    return True


def fill_unwritten(memory: DeviceMemory, kept: list[PendingFill], wlog: list[WindowWrite],
                   st: BatchState, memo: list) -> None:
    """After a batched run: the deferred fills of `kept`, only where the run wrote
    nothing (nothing when its windows cover the whole buffer). `memo` (one item, owned
    by the batched region) remembers the last coverage answer."""
    wlog = _merged_masks(wlog)
    for item in kept:
        a = item.array
        mine = [w for w in wlog if w[0] is a or np.may_share_memory(w[0], a)]
        if all(w[0] is a for w in mine) and _covers_memo(a, mine, st, memo):
            memory.pending = [p for p in memory.pending if p is not item]
            continue
        box = union_box(a, mine) if all(w[0] is a for w in mine) else None
        if box is not None:  # (e.g. all but a short last tile: the rest is one slab)
            memory.fill_outside_box(item, *box)
            continue
        written = np.zeros(a.shape, dtype=np.bool_)
        for tgt, offs, shp, los, wst in mine:
            wv = written if tgt is a else strided_like(written, tgt, a)
            if los is None or isinstance(los, np.ndarray):
                view = wst.window(wv, offs, shp, True)
                assert view is not None
                if los is None:
                    view[...] = True
                else:  # (a masked write: the blocks of the mask only, `predicate`)
                    np.copyto(view, True, where=los.reshape(los.shape + (1,) * len(shp)))
            else:
                for lo in los:
                    wv[tuple(slice(o, o + s) for o, s in zip(lo, shp))] = True
        memory.fill_unwritten(item, written)


def _merged_masks(wlog: list[WindowWrite]) -> list[WindowWrite]:
    """`wlog` with the masked writes (`predicate.masked_write`) of the same windows taken
    together: the two branches of a condition write complementary blocks' windows,
    which together are the unmasked write (and its coverage is the memoised one)."""
    if not any(isinstance(w[3], np.ndarray) for w in wlog):
        return wlog
    out: list = []
    masks: dict[tuple, int] = {}  # (target, extent, batch state) -> its entry in out
    for w in wlog:
        tgt, offs, shp, los, wst = w
        if not isinstance(los, np.ndarray):
            out.append(w)
            continue
        key = (id(tgt), shp, id(wst))
        k = masks.get(key)
        try:
            same = k is not None and out[k][1] == offs
        except ValueError:  # (an array offset)
            same = False
        if k is not None and same:
            m = out[k][3] | los
            out[k] = (tgt, offs, shp, None if m.all() else m, wst)
        else:
            masks[key] = len(out)
            out.append(w)
    return out


def _covers_memo(a: np.ndarray, writes: list[WindowWrite], st: BatchState, memo: list) -> bool:
    """`covers`, remembering the last answer: the same shape, batch shape and writes
    (offsets compared by value; the loop-variable Affs are the same objects call after
    call) give the same answer without hashing them."""
    sig = [(offs, shp, wst.bs) for _t, offs, shp, los, wst in writes if los is None]
    last = memo[0]
    if last is not None and len(sig) == len(writes):
        try:
            if last[0] == a.shape and last[1] == st.bs and last[2] == sig:
                return bool(last[3])
        except ValueError:  # an array offset
            pass
    r = covers(a, writes, st)
    memo[0] = (a.shape, st.bs, sig, r) if len(sig) == len(writes) else None
    return r


_COVERS: dict[tuple, bool] = {}


def covers(a: np.ndarray, writes: list[WindowWrite], st: BatchState) -> bool:
    """Do these batched window writes (each a regular tiling of boxes) cover `a`?"""
    try:
        # (offsets are ints or Aff, both hashable by value; an array offset raises)
        key = (a.shape, st.bs, *[(*offs, shp, wst.bs) for _t, offs, shp, los, wst in writes
                                 if los is None])
    except TypeError:
        return False
    r = _COVERS.get(key)
    if r is None:
        if len(_COVERS) > 4096:
            _COVERS.clear()
        r = _COVERS[key] = _covers_uncached(a, writes, st)
    return r


def _covers_uncached(a: np.ndarray, writes: list[WindowWrite], st: BatchState) -> bool:
    box = union_box(a, writes)
    return box is not None and all(lo == 0 for lo in box[0]) and box[1] == a.shape


_UNIONS: dict[tuple, tuple | None] = {}


def union_box(a: np.ndarray, writes: list[WindowWrite]) -> tuple | None:
    """(lo, hi) when these batched window writes (each a regular tiling of boxes) tile
    exactly one box of `a`, without overlaps; else None. Memoised by the writes'
    offsets, extents and batch shapes (ints and `Aff`s compare by value)."""
    try:
        key = (a.shape, *[(*offs, shp, wst.bs) for _t, offs, shp, los, wst in writes
                          if los is None])
        if len(key) != len(writes) + 1:
            return None
        if key in _UNIONS:
            return _UNIONS[key]
    except TypeError:  # (an array offset)
        return _union_box(a, writes)
    if len(_UNIONS) > 4096:
        _UNIONS.clear()
    box = _UNIONS[key] = _union_box(a, writes)
    return box


def _union_box(a: np.ndarray, writes: list[WindowWrite]) -> tuple | None:
    boxes = set()
    for _tgt, offs, shp, los, wst in writes:
        if los is not None:
            return None
        lo = []
        hi = []
        for ax, o in enumerate(offs):
            b = o.base if type(o) is Aff else int(o)
            lo.append(b)
            hi.append(b + shp[ax])
        # per array axis, the (step, count) of the batch axes moving it: they tile it
        # without gaps when, smallest step first, each step is the span of the smaller
        # ones (one window, then a mixed radix: a region loop run as an axis inside a
        # launch loop moves the same axis as the launch loop)
        moves: dict[int, list] = {}
        for k, n in enumerate(wst.bs):
            if n <= 1:
                continue
            axes = [ax for ax, o in enumerate(offs) if type(o) is Aff and o.d[k]]
            if len(axes) != 1:
                return None
            moves.setdefault(axes[0], []).append((offs[axes[0]].d[k], n))
        for ax, steps in moves.items():
            span = shp[ax]
            for d, n in sorted(steps, key=lambda m: abs(m[0])):
                if abs(d) != span:
                    return None
                span *= n
                if d > 0:
                    hi[ax] += d * (n - 1)
                else:
                    lo[ax] += d * (n - 1)
        boxes.add((tuple(lo), tuple(hi)))
    if not boxes or len(boxes) > 256:
        return None
    box_list = list(boxes)
    vol = 0
    for i, (lo_i, hi_i) in enumerate(box_list):
        if any(lo_ < 0 or hi_ > d for lo_, hi_, d in zip(lo_i, hi_i, a.shape)):
            return None
        vol += math.prod(hi_ - lo_ for lo_, hi_ in zip(lo_i, hi_i))
        for lo2, hi2 in box_list[:i]:
            if all(lo_ < h2 and l2 < hi_ for lo_, hi_, l2, h2 in zip(lo_i, hi_i, lo2, hi2)):
                return None
    first = tuple(min(b[0][ax] for b in box_list) for ax in range(a.ndim))
    end = tuple(max(b[1][ax] for b in box_list) for ax in range(a.ndim))
    return (first, end) if vol == math.prod(h - x for x, h in zip(first, end)) else None


__all__ = ["covers", "fill_unwritten", "write_only"]
