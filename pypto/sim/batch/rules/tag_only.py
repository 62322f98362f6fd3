"""The ops that move a valid-shape tag rather than compute through it (`Family.TAG_ONLY`),
by their `TagRule`. Block by block (`pypto.ops`):

* `SET` - `set_validshape(x, r, c)` is `x`'s data tagged (r, c), untagged when that is
  its whole shape (`with_valid`); the extents may differ per block;
* `TRANSPOSE` - `transpose` swaps the two axes into a fresh contiguous array: never
  tagged;
* `PAD` - `fillpad` copies the tile with every element outside its valid part set to
  the pad value: never tagged.

Admitted on static tile shapes (set_validshape on 2-D tiles), with uniform transpose
axes and pad. Each core charges the op's cost once for all blocks (the costs of these
ops depend on the tile's shape only; set_validshape is metadata and charges nothing,
`intrinsics.alloc`).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pypto.ir.nodes import Call
from pypto.ir.types import ShapedType
from pypto.ops.facts import Family, TagRule
from pypto.ops.padding import _runtime_pad, pad_scalar
from pypto.ops.registry import OpDef, get
from pypto.sim.batch.codegen import Core
from pypto.sim.batch.frame import BatchFrame
from pypto.sim.batch.mask_windows import pad_outside
from pypto.sim.batch.masks import (
    BY_BLOCK,
    Masked,
    _at,
    _per_block,
    as_masked,
    tagged,
    uniform,
)
from pypto.sim.batch.rules.rule import Analysis, Lowering, Rule, public_operands
from pypto.sim.batch.state import BatchState, Fallback, NotBatchable


def drops_tag(op: OpDef) -> bool:
    """Does `op` always make an untagged result, whatever its operands carry?"""
    return op.batch is not None and op.batch.tag_rule in (TagRule.TRANSPOSE, TagRule.PAD)


def admit(an: Analysis, e: Call, op: OpDef, a: dict, vargs: list | None) -> bool:
    """Static tile shapes; set_validshape of a 2-D tile; transpose's axes and fillpad's
    pad the same in every block."""
    assert vargs is not None and op.batch is not None
    t = getattr(e.args[0], "type", None) if e.args else None
    if not isinstance(e.type, ShapedType) or e.type.static_shape() is None or \
            not isinstance(t, ShapedType) or t.static_shape() is None or \
            (len(t.shape) != 2 if op.batch.tag_rule is TagRule.SET else any(vargs[1:])):
        raise NotBatchable(f"varying operand of {e.op}")
    return True


def _first(a: Any, rank: int, nb: int) -> Any:
    """Block 0's value of `a` (for the cost of one block: it depends on shapes only)."""
    if type(a) is Masked:
        a = a.data
    if isinstance(a, np.ndarray) and a.ndim == rank + nb:
        return a[(0,) * nb]
    return a


def core(lo: Lowering, e: Call) -> Core | None:
    opdef = get(e.op)
    assert opdef.batch is not None
    rule = opdef.batch.tag_rule
    t = e.type
    assert isinstance(t, ShapedType)
    static = t.static_shape()
    assert static is not None
    rank = len(static)
    npdt = t.dtype.np
    public = public_operands(opdef, e)
    acct = lo.accountant(e, opdef, public) if lo.settings.trace and \
        rule is not TagRule.SET else None
    fn: Callable
    if rule is TagRule.SET:
        fn = _set_valid
    elif rule is TagRule.TRANSPOSE:
        axes = [lo.const(x) for x in e.args[1:3]]
        if not all(ok for ok, _ in axes):
            raise AssertionError("batch plan admitted a transpose of varying axes")
        a, b = (int(x) % rank for _, x in axes)
        fn = _transposer(a, b, rank)
    else:
        ok, pad = lo.const(e.args[1]) if len(e.args) > 1 else (True, None)
        if not ok:
            raise AssertionError("batch plan admitted a fillpad of a varying pad")
        fn = _filler("zero" if pad is None else _runtime_pad(pad), rank)

    def core(f: BatchFrame, args: list) -> Any:
        st = f.batch
        r = fn(st, args)
        data = r.data if type(r) is Masked else r
        if data.shape[-rank:] != static or data.dtype != npdt:
            raise Fallback("unexpected result")
        if acct is not None and f.rec is not None:
            nb = st.nb
            acct(f.rec, f.costs, [_first(x, rank, nb) for x in args], _first(r, rank, nb))
        return r

    return Core("args", core, [e.args[i] for i in public])


def _set_valid(st: BatchState, args: list) -> Any:
    """`with_valid(plain(x), (rows, cols))` in every block (`intrinsics.alloc`: a valid
    shape outside the tile faults there, so here it gives the batch up)."""
    x, rows, cols = args[:3]
    data = as_masked(x).data if tagged(x) else x
    if not isinstance(data, np.ndarray) or data.ndim < 2:
        raise Fallback("set_validshape of a non-tile")
    shape = data.shape[-2:]
    if type(rows) is int and type(cols) is int:
        v = (rows, cols)
        if not (0 <= rows <= shape[0] and 0 <= cols <= shape[1]):
            raise Fallback("a valid shape outside the tile")
        return data if v == shape else uniform(data, v)
    vals = [_per_block(st, rows), _per_block(st, cols)]
    if any(np.any(np.asarray(x) < 0) or np.any(np.asarray(x) > s)
           for x, s in zip(vals, shape)):
        raise Fallback("a valid shape outside the tile")
    tags = {}
    for idx in np.ndindex(*st.bs):
        v = (_at(vals[0], idx), _at(vals[1], idx))
        if v != shape:
            tags[idx] = v
    return Masked(data, tags) if tags else data


def _transposer(a: int, b: int, rank: int) -> Callable[[BatchState, list], Any]:
    def run(st: BatchState, args: list) -> Any:
        x = args[0]
        data = as_masked(x).data if tagged(x) else x
        if type(data) is not np.ndarray or data.ndim not in (rank, rank + st.nb):
            raise Fallback("a transpose of another rank")
        lead = data.ndim - rank
        return np.ascontiguousarray(np.swapaxes(data, lead + a, lead + b))

    return run


def _filler(kind: str, rank: int) -> Callable[[BatchState, list], Any]:
    def run(st: BatchState, args: list) -> Any:
        x = args[0]
        if not tagged(x):
            if type(x) is not np.ndarray:
                raise Fallback("fillpad of a non-array")
            return np.array(x, copy=True)
        m = as_masked(x)
        data = m.data
        if m.every is BY_BLOCK:  # (each block's own tile, to pad its own way)
            data = np.broadcast_to(data, st.bs + data.shape[data.ndim - rank:])
        out = np.array(data, copy=True)
        fill = pad_scalar(out.dtype, kind)
        nb = out.ndim - rank
        if m.every is not BY_BLOCK:
            if m.every is not None:
                pad_outside(out, nb, tuple(min(int(v), s) for v, s in
                                           zip(m.every, out.shape[nb:])), fill)
            return out
        for idx, v in m.tags.items():
            if v is not None:
                pad_outside(out[idx], 0, tuple(min(int(x), s) for x, s in
                                               zip(v, out.shape[nb:])), fill)
        return out

    return run


RULE = Rule(Family.TAG_ONLY, admit, core)

__all__ = ["RULE", "drops_tag"]
