"""Row gathers written straight into their destination windows.

A region copying rows of a table at per-block rows (`y[t0 + k, :] = table[row, :]`,
`row` read from a tensor) gathers all blocks' rows with one fancy index into a
temporary, then copies the temporary into the destination windows. When those windows,
taken in the order of their strides, are one contiguous block of whole rows of the
target, `np.take(..., out=)` puts the rows there directly: the same elements, half the
memory traffic (the temporary of a batch is the size of all its windows, far more than
a cache holds). Untraced runs only, like `ufuncs.fused`.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pypto.ir.nodes import Call, Const, ListExpr, Var
from pypto.ir.types import ShapedType
from pypto.ops.registry import get
from pypto.sim.batch.state import BatchState, Fallback
from pypto.sim.engine.intrinsics.common import falsy_const

Into = Callable[[BatchState, Any, list, list], bool]

# the reductions themselves (sim speed: `ndarray.min` goes through two Python frames)
_min, _max = np.minimum.reduce, np.maximum.reduce


def rows_into(source: Call, shp: tuple, read_only: Callable[[Any], bool]
              ) -> tuple[Into, list] | None:
    """When the value written into windows of extent `shp` is a plain window read of a
    tensor the region never writes (`read_only`), `(f, operands)`: `f(st, target,
    [tensor, offsets], write offsets)` gathers the rows into the destination and says
    whether it could (else the write runs as usual)."""
    try:
        op = get(source.op)
    except KeyError:
        return None
    rd = op.window_read
    if rd is None or op.window_write is not None:
        return None
    a = dict(zip(op.params, source.args))
    src, offset = a[rd.tensor], a[rd.offset]
    if any(not falsy_const(a.get(n)) for n in ("valid_shape", "clamp", "pad_value",
                                                 "drop_dims")):
        return None
    t = source.type
    if not isinstance(src, Var) or not read_only(src) or not isinstance(offset, ListExpr) or \
            not all(isinstance(i, (Var, Const)) for i in offset.items) or \
            not isinstance(t, ShapedType) or t.static_shape() != shp:
        return None
    site: list = [None]
    geometry: list = [None]  # (strides, shape, lead, perm, contiguous, row order)

    def gather_rows_into(st: BatchState, tgt: Any, ops: list, offs: list) -> bool:
        table, roffs = ops
        if type(table) is not np.ndarray or type(tgt) is not np.ndarray or \
                table.dtype != tgt.dtype or len(roffs) != table.ndim or \
                table.ndim != len(shp) or len(offs) != tgt.ndim:
            return False
        rows = roffs[0]
        if type(rows) is not np.ndarray or rows.dtype.kind not in "iu":
            return False  # (affine offsets: the window is a view, nothing to gather)
        for o, s, d in zip(roffs[1:], shp[1:], table.shape[1:]):
            if type(o) is not int or o != 0 or s != d:
                return False  # not whole rows
        nb = st.nb
        s0 = shp[0]
        if rows.size:
            if rows.dtype == np.int64:  # (negative rows are huge as unsigned: one pass)
                if int(_max(rows.view(np.uint64), None)) + s0 > table.shape[0]:
                    raise Fallback("out of bounds")  # (block by block reports it)
            elif int(_min(rows, None)) < 0 or int(_max(rows, None)) + s0 > table.shape[0]:
                raise Fallback("out of bounds")
        view = st.window_at(site, tgt, offs, shp, True)
        if view is None or view.shape[:nb] != st.bs:
            return False
        # the batch axes and the window's first, by stride: one C-contiguous block?
        # (decided once per geometry: the same windows call after call)
        g = geometry[0]
        if g is None or g[0] != view.strides or g[1] != view.shape:
            lead = sorted(range(nb + 1), key=lambda ax: -view.strides[ax])
            perm = lead + list(range(nb + 1, view.ndim))
            ok = view.transpose(perm).flags.c_contiguous
            g = geometry[0] = (view.strides, view.shape, lead, perm, ok,
                               [ax for ax in lead if ax != nb])
        _s, _sh, lead, perm, ok, order = g
        if not ok:
            return False
        dest = view.transpose(perm)
        if rows.shape != st.bs:
            rows = np.broadcast_to(rows, st.bs)
        if s0 == 1:  # (one row per window: the rows themselves, in destination order)
            flat = rows.transpose(order).reshape(-1)
        else:
            flat = (rows[..., None] + np.arange(s0)).transpose(lead).reshape(-1)
        if st.undo is not None:
            st.undo.append((view, view.copy()))
        # (mode "clip": the rows were checked above, and "raise" buffers `out`)
        table.take(flat, axis=0, out=dest.reshape((-1,) + table.shape[1:]), mode="clip")
        if st.wlog is not None:
            st.wlog.append((tgt, list(offs), shp, None, st))
        return True

    return gather_rows_into, [src, offset]


__all__ = ["rows_into"]
