"""Both branches of a predicated condition writing the same window: one write (issue 17).

`if row >= 0: y[t, :] = table[row, :]  else: y[t, :] = zeros` predicated
(`pypto.sim.batch.predicate`) writes twice through a boolean index over the batch axes,
each branch its blocks' windows, and gathers every block's row, taken or not, into a
temporary first. Yet every block writes the same window whichever branch it takes, so
the two writes are one write of the per-block choice: the branch that takes most blocks
(or whose value goes straight into the destination, `gathers.rows_into`) writes all
windows, the other overwrites its own blocks' windows through one boolean index.

When that is equal to block by block, decided statically (`merge_sites`): each branch
ends (before its yield) in a window write by the same op into the same tensor parameter
with structurally equal offsets and extent; the offsets mention nothing either branch
assigns (so they are one value per block, whichever branch computes them); nothing else
in either branch mentions that tensor (no branch reads what the other, or the first of
the two writes, wrote); the write results are yielded at the same position and used
nowhere else; and the two branches assign and mention disjoint names (the values of the
first branch's write are taken after the second branch ran). At run time the branches
run as predicated, their two writes recorded instead of made (`BatchState.merge`, only
for the writes `merge_sites` chose, only when no outer condition holds: under one the
blocks outside it must not be written); then `write_merged` makes them. The blocks of
the first write that do not take its branch are given values computed from clipped
reads (`predicate.clip`): written, then overwritten by the second write before anything
reads them. Anything unexpected (a window outside the tensor, a tagged value) makes the
two writes as the predicated path does.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pypto.ir.equal import structural_equal
from pypto.ir.nodes import Assign, Call, If, Var, Yield
from pypto.ir.transform import walk
from pypto.ops.registry import get
from pypto.sim.batch.predicate import clip, masked_write
from pypto.sim.batch.state import BatchState, Fallback, store_windows

# one recorded write: (into, gathers, site, shp, target, offsets, fused operands,
# source thunk, the mask of its branch)
Record = tuple


def _final_write(body: tuple) -> tuple[Assign, Call, Yield | None] | None:
    stmts = list(body)
    y = stmts.pop() if stmts and isinstance(stmts[-1], Yield) else None
    if not stmts or not isinstance(stmts[-1], Assign):
        return None
    s = stmts[-1]
    e = s.value
    if len(s.targets) != 1 or not isinstance(e, Call):
        return None
    try:
        op = get(e.op)
    except KeyError:
        return None
    if op.window_write is None or op.window_read is not None:
        return None
    return s, e, y


def _names(nodes: Any) -> tuple[set, set]:
    """(names mentioned, names assigned) in `nodes`."""
    seen: set = set()
    assigned: set = set()
    for n in walk(tuple(nodes) if isinstance(nodes, list) else nodes):
        if isinstance(n, Var):
            seen.add(n.name)
        elif isinstance(n, Assign):
            assigned.update(t.name for t in n.targets)
    return seen, assigned


def merge_sites(s: If, alias: dict, vary: Callable[[Any], bool]) -> tuple[Call, Call] | None:
    """The two window-write calls of `s`'s branches that may run as one write (see the
    module docstring), or None."""
    t, o = _final_write(s.then_body), _final_write(s.else_body)
    if t is None or o is None:
        return None
    (st, et, yt), (so, eo, yo) = t, o
    if et.op != eo.op or len(et.args) != len(eo.args):
        return None
    wr = get(et.op).window_write
    assert wr is not None
    a, b = dict(zip(get(et.op).params, et.args)), dict(zip(get(eo.op).params, eo.args))
    tgt = a[wr.tensor]
    if not isinstance(tgt, Var) or tgt.name not in alias or vary(tgt):
        return None
    for k in a:  # (the same tensor, offsets and extent: all but the value written)
        if k != wr.source and not structural_equal(a[k], b.get(k)):
            return None
    src_t, src_o = a[wr.source], b[wr.source]
    ty, tyo = getattr(src_t, "type", None), getattr(src_o, "type", None)
    try:
        shp, shpo = ty.static_shape(), tyo.static_shape()  # type: ignore[union-attr]
    except AttributeError:
        return None
    if shp is None or shp != shpo:
        return None
    if not (vary(src_t) or vary(a[wr.offset])) or not (vary(src_o) or vary(a[wr.offset])):
        return None  # (a uniform write is not a batched write core)
    seen_t, asg_t = _names(s.then_body)
    seen_o, asg_o = _names(s.else_body)
    if asg_t & seen_o or asg_o & seen_t:
        return None
    off_names, _ = _names(a[wr.offset])
    if off_names & (asg_t | asg_o):
        return None
    param = alias[tgt.name]
    rt, ro = st.targets[0].name, so.targets[0].name
    for body, last, res in ((s.then_body, st, rt), (s.else_body, so, ro)):
        for stmt in body:
            if stmt is last:
                rest = [x for k, x in a.items() if k != wr.tensor] if body is s.then_body \
                    else [x for k, x in b.items() if k != wr.tensor]
                names, _ = _names(rest)
            elif isinstance(stmt, Yield):
                names = {n.name for n in walk(stmt) if isinstance(n, Var) and n.name != res}
            else:
                names, _ = _names(stmt)
            if any(alias.get(n) == param or n == res for n in names):
                return None
    vt = [v.name if isinstance(v, Var) else None for v in yt.values] if yt else []
    vo = [v.name if isinstance(v, Var) else None for v in yo.values] if yo else []
    if (rt in vt or ro in vo) and (rt not in vt or ro not in vo or vt.index(rt) != vo.index(ro)):
        return None
    return et, eo


def write_merged(st: BatchState, recs: list) -> None:
    """Make the two writes `recs` (one per branch, recorded by the write cores under
    `st.merge`) as one: see the module docstring. `st.pred` is None here."""
    if len(recs) != 2:
        raise Fallback("a condition's writes ran unexpectedly")
    a, b = recs
    # (first: the one whose value goes into the destination, else the one of more blocks)
    if (a[0] is None) != (b[0] is None):
        first, second = (a, b) if a[0] is not None else (b, a)
    else:
        first, second = (a, b) if np.count_nonzero(a[8]) >= np.count_nonzero(b[8]) else (b, a)
    into, gathers, site, shp, tgt, offs, fargs, src_of, pred = first
    if second[4] is not tgt or type(tgt) is not np.ndarray:
        _apart(st, recs)
        return
    done = False
    if into is not None:
        if gathers:  # (the rows of the other blocks moved inside the table: unused)
            st.pred = pred
            fargs = [fargs[0], clip(st, list(fargs[1]), shp, fargs[0].shape)] \
                if type(fargs[0]) is np.ndarray and len(fargs[1]) == fargs[0].ndim else None
            st.pred = None
        done = fargs is not None and into(st, tgt, fargs, offs)
    nb, srank = st.nb, len(shp)
    try:
        view = st.window_at(site, tgt, offs, shp, True)
    except Fallback:
        view = None
    if view is None or view.shape[:nb] != st.bs or len(offs) != tgt.ndim:
        if done:  # (cannot happen: `into` wrote through this very view)
            raise Fallback("a merged write lost its windows")
        _apart(st, recs)
        return
    if not done:
        st.pred = pred
        src = src_of()
        st.pred = None
        if type(src) is not np.ndarray or src.shape[-srank:] != shp or \
                src.ndim not in (srank, srank + nb):
            raise Fallback("a tagged value or another rank under a condition")
        # (logged as all windows: the second write's are among them)
        store_windows(st, view, src, tgt, offs, shp)
    mask = second[8]
    st.pred = mask
    src = second[7]()
    st.pred = None
    if type(src) is not np.ndarray or src.shape[-srank:] != shp or \
            src.ndim not in (srank, srank + nb):
        raise Fallback("a tagged value or another rank under a condition")
    # (the undo copy and the fill's log of the first write cover these windows)
    if src.ndim == srank:
        view[mask] = src
    else:
        view[mask] = (src if src.shape == view.shape else np.broadcast_to(src, view.shape))[mask]


def _apart(st: BatchState, recs: list) -> None:
    """The two writes one after the other, each its blocks' (the predicated path)."""
    for _into, _g, site, shp, tgt, offs, _f, src_of, pred in recs:
        st.pred = pred
        try:
            masked_write(st, site, tgt, offs, src_of(), shp)
        finally:
            st.pred = None


__all__ = ["merge_sites", "write_merged"]
