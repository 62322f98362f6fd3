"""Fast paths of batched ops whose impl is a numpy ufunc (the op's registry `ufunc`
fact), all giving the same bits as the impl:

* `direct`: call the ufunc (or its reduce) without the impl's dispatch;
* `reuse`: compute into an operand that dies at this op (no new array);
* `fused`: compute a written value straight into the destination windows (no
  temporary, no copy);
* `chunked_reduction`: a row reduction of an inline elementwise op
  (`row_sum(pl.mul(t, t))`) computed a slice of the batch at a time, so that the
  elementwise temporary stays in the cache between its two passes.

Each applies only to float32 / float64 operands of the op's own dtype (where the impl
is exactly the ufunc) and gives None / False when the run-time values are of another
kind, so the caller falls back to the impl. A valid shape in the result's type does not
matter: batched data are plain arrays (whole tiles, or the data of a `masks.Masked`,
whose tags the masks follow), and the ufunc computes every element as the impl does.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from pypto.ir.nodes import Assign, Call, Function, Var
from pypto.ir.transform import walk
from pypto.ir.types import ShapedType
from pypto.ops.facts import Ufunc
from pypto.ops.registry import get
from pypto.sim.batch.state import BatchState
from pypto.sim.engine.intrinsics.common import falsy_const


def elementwise_ufunc(e: Call) -> Ufunc | None:
    """The elementwise ufunc the op of `e` is (its registry `ufunc`, not a reduction)."""
    uf = get(e.op).ufunc
    return uf if uf is not None and uf.reduce_axis is None else None


def _plain_float(npdt: DTypeLike) -> np.dtype | None:
    dt = np.dtype(npdt)
    return dt if dt.kind == "f" and dt.itemsize >= 4 else None


def _one_rank(args: tuple) -> bool:
    """Do the shaped operands share one rank? (a row vector of another rank is reshaped
    by the impl: not the bare ufunc)"""
    return len({len(a.type.shape) for a in args
                if isinstance(getattr(a, "type", None), ShapedType)}) == 1


def _operands_fit(args: list, n: int, dt: np.dtype, shapes: list | None) -> bool:
    """Are the first `n` run-time operands plain arrays / scalars of dtype `dt`?"""
    nd_t, gen = np.ndarray, np.generic
    if len(args) < n:
        return False
    for a in args[:n]:
        ta = type(a)
        if ta is nd_t:
            if a.dtype != dt:
                return False
            if shapes is not None:
                shapes.append(a.shape)
        elif ta is not float and ta is not int and not (isinstance(a, gen) and a.dtype == dt):
            return False
    return True


def direct(e: Call, npdt: DTypeLike) -> Callable[[list], Any] | None:
    """The ufunc (or its reduce) of `e` called without the impl's dispatch (sim speed:
    ~1-2 us per op), or None when `e` is not such an op."""
    dt = _plain_float(npdt)
    t = e.type
    if dt is None or not isinstance(t, ShapedType):
        return None
    nd_t = np.ndarray
    uf = get(e.op).ufunc
    if uf is not None and uf.reduce_axis is not None:
        red, axis = uf.fn.reduce, uf.reduce_axis

        def reduce(args: list) -> Any:
            x = args[0]
            if type(x) is not nd_t or x.dtype != dt:
                return None
            return red(x, axis=axis, keepdims=True)

        return reduce
    uf = elementwise_ufunc(e)
    if uf is None:
        return None
    ufunc, n = uf.fn, uf.arity
    if len(e.args) < n or not all(falsy_const(x) for x in e.args[n:]) or not _one_rank(e.args[:n]):
        return None

    def apply(args: list) -> Any:
        return ufunc(*args[:n]) if _operands_fit(args, n, dt, None) else None

    return apply


def reuse(e: Call, npdt: DTypeLike, static: tuple | None, dying: list[int]
          ) -> Callable[[list, int], Any] | None:
    """When operand(s) `dying` of this elementwise op are temporaries that die here (see
    `dying_operands`), `f(args, nb)` computes the ufunc into one of them (with `nb` batch
    axes): the same bits, no new array. Untraced runs only."""
    uf = elementwise_ufunc(e)
    t = e.type
    dt = _plain_float(npdt)
    if not dying or uf is None or dt is None or static is None or not isinstance(t, ShapedType):
        return None
    ufunc, n = uf.fn, uf.arity
    if len(e.args) < n or not all(falsy_const(x) for x in e.args[n:]) or not _one_rank(e.args[:n]):
        return None
    ks = [k for k in dying if k < n]
    if not ks:
        return None
    rank = len(static)
    nd_t = np.ndarray

    def into_dying(args: list, nb: int) -> Any:
        shapes: list = []
        if not _operands_fit(args, n, dt, shapes):
            return None
        for k in ks:
            o = args[k]
            if type(o) is nd_t and o.base is None and o.flags.owndata and \
                    o.flags.writeable and o.flags.c_contiguous and \
                    o.ndim == rank + nb and o.shape[-rank:] == static and \
                    broadcast_shape(shapes) == o.shape:
                ufunc(*args[:n], out=o)
                return o
        return None

    return into_dying


def fused(source: Call, shp: tuple) -> Callable[[BatchState, Any, list, list], bool] | None:
    """When the value written into windows of extent `shp` is an elementwise ufunc op,
    `f(st, target, operands, offsets)` computes it straight into the destination windows
    and says whether it could. Untraced runs only."""
    uf = elementwise_ufunc(source)
    if uf is None:
        return None
    ufunc, n = uf.fn, uf.arity
    t = source.type
    if len(source.args) < n or not all(falsy_const(x) for x in source.args[n:]):
        return None
    if len({len(a.type.shape) for a in source.args[:n]
            if isinstance(getattr(a, "type", None), ShapedType)}) > 1:
        return None  # e.g. a row vector of another rank: the impl reshapes it
    if not isinstance(t, ShapedType):
        return None
    npdt = _plain_float(t.dtype.np)
    if npdt is None or t.static_shape() != shp:
        return None
    srank = len(shp)
    site: list = [None]

    def into_windows(st: BatchState, tgt: Any, args: list, offs: list) -> bool:
        if tgt.dtype != npdt:
            return False
        shapes: list = []
        if not _operands_fit(args, len(args), npdt, shapes) or not shapes:
            return False
        bsh = broadcast_shape(shapes)
        if bsh[-srank:] != shp or len(bsh) not in (srank, srank + st.nb):
            return False
        if len(offs) != tgt.ndim:
            return False
        view = st.window_at(site, tgt, offs, shp, True)
        if view is None:
            return False
        if st.undo is not None:
            st.undo.append((view, view.copy()))
        ufunc(*args, out=view)
        if st.wlog is not None:
            st.wlog.append((tgt, list(offs), shp, None, st))
        return True

    return into_windows


# a chunked reduction: past this temporary (bytes, more than a core's L2 holds), its
# slices' temporaries of about CHUNK_BYTES each (Python calls cost less than the
# temporary's trips through memory)
CHUNK_OVER = 1 << 20
CHUNK_BYTES = 1 << 18


def chunked_reduction(e: Call, npdt: DTypeLike) -> Callable[[list, int, tuple], Any] | None:
    """When `e` is a row reduction (a ufunc's reduce over the last axis) of an inline
    elementwise ufunc op, both of float dtype `npdt`, `f(operands of the inner op, nb,
    batch shape)` computes it slice by slice along the first batch axis - the same
    elementwise values, each row reduced alone as before (a C-ordered row of the same
    layout, `out=` a slice of the result): the same bits - or gives None when the
    run-time operands do not fit (the caller computes the two ops as usual)."""
    uf = get(e.op).ufunc
    dt = _plain_float(npdt)
    t = e.type
    if uf is None or uf.reduce_axis != -1 or dt is None or not e.args or \
            not isinstance(t, ShapedType) or not all(falsy_const(x) for x in e.args[1:]):
        return None
    inner = e.args[0]
    iu = elementwise_ufunc(inner) if isinstance(inner, Call) else None
    it = getattr(inner, "type", None)
    if iu is None or len(inner.args) < iu.arity or \
            not all(falsy_const(x) for x in inner.args[iu.arity:]) or \
            not _one_rank(inner.args[:iu.arity]) or not isinstance(it, ShapedType) or \
            _plain_float(it.dtype.np) != dt or it.static_shape() is None:
        return None
    red, ufunc, n = uf.fn.reduce, iu.fn, iu.arity
    nd_t = np.ndarray

    def run(args: list, nb: int, bs: tuple) -> Any:
        shapes: list = []
        if nb == 0 or not _operands_fit(args, n, dt, shapes) or not shapes:
            return None
        full = broadcast_shape(shapes)
        rows = bs[0]
        per = math.prod(full[1:]) * dt.itemsize
        if len(full) <= nb or full[0] != rows or rows < 2 or per * rows <= CHUNK_OVER:
            return None
        step = max(1, CHUNK_BYTES // per)
        out = np.empty(full[:-1] + (1,), dt)
        rank = len(full)
        for lo in range(0, rows, step):
            part = [a[lo:lo + step] if type(a) is nd_t and a.ndim == rank and
                    a.shape[0] == rows else a for a in args[:n]]
            red(ufunc(*part), axis=-1, keepdims=True, out=out[lo:lo + step])
        return out

    return run


def dying_operands(func: Function) -> dict[int, list[int]]:
    """Temporaries that die at their only use: {id(call): [operand index]} for a Var
    assigned once, at the top level of the region body, from an elementwise ufunc op (a
    fresh array), and read exactly once, as a direct operand of the value of a later
    top-level assignment (so that use runs once per definition)."""
    counts: dict[str, int] = {}
    for n in walk(func.body):
        if isinstance(n, Var):
            counts[n.name] = counts.get(n.name, 0) + 1
    defs: set[str] = set()
    out: dict[int, list[int]] = {}
    for s in func.body:
        if not isinstance(s, Assign) or len(s.targets) != 1:
            continue
        v = s.value
        fuses = isinstance(v, Call) and elementwise_ufunc(v) is not None
        if isinstance(v, Call) and fuses:
            for k, a in enumerate(v.args):
                if isinstance(a, Var) and a.name in defs and counts.get(a.name) == 2:
                    out.setdefault(id(v), []).append(k)
        t = s.targets[0]
        if isinstance(t, Var) and fuses:
            defs.add(t.name)
    return out


_BROADCAST: dict[tuple, tuple] = {}


def broadcast_shape(shapes: list) -> tuple:
    """`np.broadcast_shapes(*shapes)`, memoised (sim speed: ~1.2 us of Python per call)."""
    key = tuple(shapes)
    r = _BROADCAST.get(key)
    if r is None:
        r = np.broadcast_shapes(*shapes)
        if len(_BROADCAST) > 4096:
            _BROADCAST.clear()
        _BROADCAST[key] = r
    return r


__all__ = [
    "CHUNK_BYTES",
    "CHUNK_OVER",
    "broadcast_shape",
    "chunked_reduction",
    "direct",
    "dying_operands",
    "elementwise_ufunc",
    "fused",
    "reuse",
]
