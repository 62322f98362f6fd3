"""Values computed where they will be written (sim speed, untraced runs).

A region usually ends in a window write of an elementwise chain: `y[r, :] = e / s`
with `e = pl.exp(pl.row_expand_sub(t, mx))`, or `y[i, j] = pl.add(pl.mul(t, a), b)`.
Batched, every intermediate of the chain is an array the size of all blocks' tiles
(far more than a cache holds), and the final op (`ufuncs.fused`) then streams it into
the destination windows. When the intermediates are computed in the destination
windows themselves - each op of the chain in place over the previous one - the data
stay in one buffer and no temporary is made: the same ufunc calls on the same
operands, so the same bits.

This module finds, statically, the ops of a region whose result may live in the
windows a later top-level write fills (`placements`); `placed` is the run-time half.
An op is placed when:

* it is an elementwise ufunc op (`ufuncs.elementwise_ufunc`) of the write's float
  dtype whose result has the window's shape, feeding the write through a chain of
  such ops, each taking exactly one placed operand;
* it is an inline operand of the next op of the chain, or a name assigned once, at the
  top level of the region before the write, whose every use lies between its
  definition and the op consuming it in the chain (so nothing reads it once the next
  op has overwritten it);
* operands evaluated after a placed one read no placed value (it would already be
  overwritten);
* from the first placed op to the write, no statement mentions the written tensor
  (nothing else reads or writes those windows meanwhile), the write's offsets are
  known before the first placed op, and the write is a top-level statement (it runs
  whenever the placed ops ran: the region's control flow is uniform).

If a batch fails after an op was placed, its windows hold an intermediate: the
block-by-block rerun writes those same windows again (the write is unconditional), as
after any batched write that a later failure abandons; a region that also reads the
tensor restores it from its snapshot (`run.run_batched`), and a loop body of several
launches undoes the placed writes from its undo log like any other.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pypto.ir.nodes import Assign, Call, Const, Function, ListExpr, Var
from pypto.ir.transform import walk
from pypto.ir.types import ShapedType
from pypto.ops.registry import get
from pypto.sim.batch.state import BatchState, Fallback
from pypto.sim.batch.ufuncs import (
    _one_rank,
    _operands_fit,
    _plain_float,
    broadcast_shape,
    elementwise_ufunc,
)
from pypto.sim.engine.intrinsics.common import falsy_const

# A placement: (the write's target, its offsets (an IR list), the window's extent, the
# index of the operand holding the chain's previous placed value - None for the first
# op placed, the chain's innermost)
Placement = tuple


def _names(e: Any) -> set[str]:
    return {n.name for n in walk(e) if isinstance(n, Var)}


def _write_parts(s: Any, alias: dict[str, str]) -> tuple | None:
    """(target, source, offset) of a top-level window write of a region parameter."""
    if not isinstance(s, Assign) or len(s.targets) != 1 or not isinstance(s.value, Call):
        return None
    try:
        op = get(s.value.op)
    except KeyError:
        return None
    wr = op.window_write
    if wr is None or op.window_read is not None:
        return None
    a = dict(zip(op.params, s.value.args))
    tgt, src, off = a[wr.tensor], a[wr.source], a[wr.offset]
    if not isinstance(tgt, Var) or tgt.name not in alias or not isinstance(off, ListExpr):
        return None
    return tgt, src, off


def _eligible(e: Any, dtype: np.dtype | None, shp: tuple) -> bool:
    """Is `e` an elementwise ufunc op giving a `dtype` array of extent `shp`, exactly
    its ufunc (operands of one rank, no extra arguments: as `ufuncs.reuse`)?"""
    if not isinstance(e, Call):
        return False
    uf = elementwise_ufunc(e)
    if uf is None or len(e.args) < uf.arity or \
            not all(falsy_const(x) for x in e.args[uf.arity:]) or not _one_rank(e.args[:uf.arity]):
        return False
    t = e.type
    return isinstance(t, ShapedType) and t.static_shape() == shp and \
        dtype is not None and _plain_float(t.dtype.np) == dtype


def _fresh_reader(s: Any, name: str) -> bool:
    """Is statement `s` an assignment of a ufunc op (elementwise or a reduction: a fresh
    array) reading `name` only as a direct operand? (Anything else might keep a view of
    it, which the next op of the chain would overwrite.)"""
    if not isinstance(s, Assign) or not isinstance(s.value, Call):
        return False
    try:
        if get(s.value.op).ufunc is None:
            return False
    except KeyError:
        return False
    return all(name not in _names(a) or (isinstance(a, Var) and a.name == name)
               for a in s.value.args)


def placements(func: Function, alias: dict[str, str]) -> dict[int, Placement]:
    """{id(op call): its placement} for the ops of region `func` computed in the windows
    of a later write (see the module docstring); `alias` maps names to the region
    parameter they are."""
    body = list(func.body)
    assigned: dict[str, int] = {}
    defs: dict[str, int] = {}
    for i, s in enumerate(body):
        for n in walk(s):
            if isinstance(n, Assign):
                for t in n.targets:
                    assigned[t.name] = assigned.get(t.name, 0) + 1
        if isinstance(s, Assign) and len(s.targets) == 1:
            defs[s.targets[0].name] = i
    uses: dict[str, list[int]] = {}
    for i, s in enumerate(body):
        for n in walk(s.value if isinstance(s, Assign) else s):
            if isinstance(n, Var):
                uses.setdefault(n.name, []).append(i)
    out: dict[int, Placement] = {}
    for w, s in enumerate(body):
        parts = _write_parts(s, alias)
        if parts is None:
            continue
        tgt, src, off = parts
        t = src.type if isinstance(src, Call) else None
        static = t.static_shape() if isinstance(t, ShapedType) else None
        if not isinstance(t, ShapedType) or static is None:
            continue
        shp = tuple(static)
        dtype = _plain_float(t.dtype.np)
        if dtype is None or not _eligible(src, dtype, shp) or \
                not all(isinstance(i, (Var, Const)) for i in off.items):
            continue
        chain = _chain(src, w, body, defs, assigned, uses, dtype, shp)
        if not chain:
            continue
        # from the first placed op's statement to the write, the tensor is not mentioned
        # (but as the write's target) and the offsets are known before it
        param = alias[tgt.name]
        first = min((defs[n] for _, n, _own in chain if n is not None), default=w)
        seen = [n for k in range(first, w)
                for n in _names(body[k].value if isinstance(body[k], Assign) else body[k])]
        seen += [n for n in _names(src) | _names(off)]
        offs = _names(off)
        if any(alias.get(n) == param for n in seen) or \
                any(defs.get(n, -1) >= first or assigned.get(n, 0) > 1 for n in offs):
            continue
        for call, _name, own in chain:
            out[id(call)] = (tgt, off, shp, own)
    return out


def _chain(src: Call, w: int, body: list, defs: dict, assigned: dict, uses: dict,
           dtype: np.dtype, shp: tuple) -> list[tuple[Call, str | None, int | None]]:
    """The placed ops feeding the write's source `src` (statement `w`), outermost first:
    (the op call, the name it is assigned to or None inline, the index of its operand
    that is the next op of the chain - None for the last, innermost one)."""
    # (the op, the index of its placed operand, that operand's op, its name or None)
    steps: list[tuple[Call, int, Call, str | None]] = []
    cur, at = src, w
    while True:
        uf = elementwise_ufunc(cur)
        assert uf is not None
        nxt: tuple[int, Call, str | None] | None = None
        for k, a in enumerate(cur.args[:uf.arity]):
            if _eligible(a, dtype, shp):
                nxt = (k, a, None)
            elif isinstance(a, Var) and assigned.get(a.name) == 1 and a.name in defs:
                g = defs[a.name]
                v = body[g].value
                if g < at and _eligible(v, dtype, shp) and \
                        all(g < u <= at for u in uses.get(a.name, [])) and \
                        all(_fresh_reader(body[u], a.name) for u in uses[a.name] if u < at):
                    nxt = (k, v, a.name)
            if nxt is not None:
                break
        if nxt is None:
            break
        k, op, name = nxt
        steps.append((cur, k, op, name))
        if name is not None:
            at = defs[name]
        cur = op
    # every placed value lives in the same windows: no other operand of an op of the
    # chain may mention one (it would read them overwritten, or be read overwritten) -
    # but the named value the op itself takes (`row_expand_div(e, row_sum(e))`): all
    # operands are evaluated before the op writes, and until then the windows hold
    # exactly that value (a ufunc whose operand overlaps its output computes as if on a
    # copy); cut the chain before the first op where one does, until none does
    while steps:
        placed = {name for _, _, _, name in steps if name is not None}
        bad = next((i for i, (op, k, _, own) in enumerate(steps)
                    if any(_names(a) & (placed - {own}) for j, a in enumerate(op.args)
                           if j != k)), None)
        if bad is None:
            break
        steps = steps[:bad]
    return [(op, name, steps[i + 1][1] if i + 1 < len(steps) else None)
            for i, (_, _, op, name) in enumerate(steps)]


def placed(e: Call, npdt: np.dtype, own: int | None = None
           ) -> Callable[[BatchState, Any, list, list], Any] | None:
    """`f(st, target, offsets, operands)`: the elementwise op `e` computed straight into
    all blocks' windows of the write it feeds (its placement); the windows (a view), or
    None when the run-time values do not fit (then the op runs as usual). With `own`
    (an operand's index), only when that operand is those windows already: the op
    before it in the chain was placed (`tag_flow.guarded_places`: a chain whose write
    may meet a partial tile is placed whole or not at all)."""
    uf = elementwise_ufunc(e)
    t = e.type
    if uf is None or not isinstance(t, ShapedType):
        return None
    ufunc, n = uf.fn, uf.arity
    shp = tuple(t.static_shape() or ())
    site: list = [None]

    def into_place(st: BatchState, tgt: Any, offs: list, args: list) -> Any:
        if st.pred is not None or type(tgt) is not np.ndarray or tgt.dtype != npdt or \
                len(offs) != tgt.ndim:
            return None
        shapes: list = []
        if not _operands_fit(args, n, npdt, shapes) or not shapes or \
                broadcast_shape(shapes) != st.bs + shp:
            return None
        try:
            view = st.window_at(site, tgt, offs, shp, True)
        except Fallback:  # (a window past the tensor: the write itself decides)
            return None
        if view is None or view.shape != st.bs + shp:
            return None
        if own is not None:
            a = args[own]
            if type(a) is not np.ndarray or a.shape != view.shape or \
                    a.strides != view.strides or a.__array_interface__["data"][0] != \
                    view.__array_interface__["data"][0]:
                return None
        if st.undo is not None:
            st.undo.append((view, view.copy()))
        ufunc(*args[:n], out=view)
        return view

    return into_place


__all__ = ["Placement", "placed", "placements"]
