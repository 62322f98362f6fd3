"""Row and column reductions (`Family.REDUCE`: row_sum / row_max / row_min, col_sum /
col_max / col_min): the reduction of the trailing axis its `Ufunc.reduce_axis` names,
for all blocks at once (`trailing`); a row reduction of an inline elementwise ufunc op
(`row_sum(pl.mul(t, t))`) slice by slice of the batch, so that the elementwise
temporary stays in the cache between its two passes (`chunked`, untraced:
`ufuncs.chunked_reduction`).

Partial tiles (`tags`, `reduced`): block by block a reduction reduces only the valid
part along its axis (all of it when that extent is 0 or whole, as
`ops.reduce._valid_part`) and keeps the other extents (untagged when they are whole).
Integer operands, and a tagged operand other than the reduced tile, give the batch up.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pypto.ir.nodes import Call
from pypto.ir.types import ShapedType
from pypto.ops.facts import Family
from pypto.ops.registry import OpDef, get
from pypto.sim.batch.codegen import Core
from pypto.sim.batch.frame import BatchFrame
from pypto.sim.batch.masks import (
    BY_BLOCK,
    Masked,
    _cell,
    as_masked,
    declares_valid,
    refuse,
    uniform,
)
from pypto.sim.batch.rules import trailing
from pypto.sim.batch.rules.rule import Analysis, Lowering, Rule
from pypto.sim.batch.state import BatchState, Fallback
from pypto.sim.batch.ufuncs import chunked_reduction


def tags(e: Call) -> trailing.Tags | None:
    """The partial-tile rule of the reduction `e` (see the module docstring); None for a
    reduction whose axis no `Ufunc` fact names (an impl replaced in a test, a new op): a
    tagged operand then gives the batch up, as for any op without a rule."""
    uf = get(e.op).ufunc
    if uf is None or uf.reduce_axis is None:
        return None
    axis = uf.reduce_axis

    def run(st: BatchState, compute: Any, args: list, rank: int) -> Any:
        trailing.refuse_ints(st, args)
        args = [as_masked(a) for a in args]
        x = args[0]
        if type(x) is not Masked or any(type(a) is Masked for a in args[1:]):
            refuse(st, args)
        return reduced(lambda d: compute([d] + list(args[1:])), x, axis, rank)

    return run


def _reduced_tag(v: tuple | None, ax: int, full: int, shape: tuple) -> tuple | None:
    """The tag of a reduction's result along tile axis `ax` (`ops.reduce._valid_part`)."""
    if v is None:
        return None
    v = tuple(min(int(x), s) for x, s in zip(v, shape[:ax] + (full,) + shape[ax + 1:]))
    kept = v[:ax] + (1,) + v[ax + 1:]
    return kept if kept != shape else None


def reduced(impl: Callable, x: Masked, axis: int, rank: int) -> Any:
    """A row / column reduction (`impl` on plain arrays) of a `Masked` tile: each block
    reduces its valid part along `axis` (all of it when that extent is 0 or whole, as
    `ops.reduce._valid_part`), and keeps its other extents."""
    data = x.data
    full = data.shape[axis]
    ax = rank + axis  # the tile axis

    def part(n: int) -> np.ndarray:
        cut = [slice(None)] * data.ndim
        cut[axis] = slice(0, n)
        return impl(data[tuple(cut)])

    if x.every is not BY_BLOCK:
        v = x.every
        n = min(int(v[ax]), full) if v is not None else full
        r = part(n) if 0 < n < full else impl(data)
        tag = _reduced_tag(v, ax, full, r.shape[-rank:])
        return uniform(r, tag) if tag is not None else r
    r = impl(data)
    shape = r.shape[-rank:]
    parts: dict[int, Any] = {}
    out = {}
    for idx, v in x.tags.items():
        if v is None:
            continue  # (no valid shape: reduced whole, untagged)
        n = min(int(v[ax]), full)
        if 0 < n < full:
            rv = parts.get(n)
            if rv is None:
                rv = parts[n] = part(n)
            r[_cell(r, idx)] = rv[_cell(rv, idx)]
        kept = _reduced_tag(v, ax, full, shape)
        if kept is not None:
            out[idx] = kept
    return Masked(r, out) if out else r


def admit(an: Analysis, e: Call, op: OpDef, a: dict, vargs: list | None) -> bool:
    assert vargs is not None
    return trailing.admit(an, e, op, vargs, tags(e))


def core(lo: Lowering, e: Call) -> Core | None:
    c = chunked(lo, e) if not lo.settings.trace else None
    return c if c is not None else trailing.core(lo, e, tags(e))


def chunked(lo: Lowering, e: Call) -> Core | None:
    """A row reduction of an inline elementwise op, slice by slice of the batch
    (`ufuncs.chunked_reduction`; untraced), or None. Its operands are the inner op's:
    when the run-time values do not fit, the two cores run as usual."""
    t = e.type
    if not isinstance(t, ShapedType) or declares_valid(t) or \
            declares_valid(getattr(e.args[0], "type", None) if e.args else None):
        return None  # (a result tagged by its type: the two ops as usual)
    run = chunked_reduction(e, t.dtype.np)
    if run is None:
        return None
    inner = e.args[0]
    ic, oc = lo.core(inner), trailing.core(lo, e, tags(e))
    rest = [lo.const(x) for x in oc.operands[1:]]  # (left at their defaults)
    if ic is None or ic.kind != "args" or not oc.operands or oc.operands[0] is not inner \
            or not all(ok for ok, _ in rest) or \
            any(a is not b for a, b in zip(ic.operands, inner.args)):
        return None  # (valid shapes or a placement among the operands)
    inner_fn, outer_fn = ic.fn, oc.fn
    defaults = [v for _, v in rest]
    static = t.static_shape()
    rank = len(t.shape)

    def core(f: BatchFrame, args: list) -> Any:
        st = f.batch
        r = run(args, st.nb, st.bs)
        if r is None:
            return outer_fn(f, [inner_fn(f, args), *defaults])
        if static is None or r.shape[-rank:] != static or r.ndim != rank + st.nb:
            raise Fallback("unexpected result shape")
        return r

    return Core("args", core, list(ic.operands))


RULE = Rule(Family.REDUCE, admit, core)

__all__ = ["RULE", "chunked", "reduced", "tags"]
