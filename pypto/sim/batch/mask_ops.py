"""The ops of a batch that move valid-shape tags rather than compute through them:
`set_validshape`, `reshape`, `transpose` and `fillpad` (the tag rules of elementwise
ops and reductions are `masks`).

Block by block (`pypto.ops`):

* `set_validshape(x, r, c)` is `x`'s data tagged (r, c) - untagged when that is its
  whole shape (`with_valid`); the extents may differ per block;
* `reshape` keeps a tag only when the shape does not change (numpy drops it, keeping
  the class: a tag without a valid shape);
* `transpose` swaps the two axes into a fresh contiguous array: never tagged;
* `fillpad` copies the tile with every element outside its valid part set to the pad
  value: never tagged.

`admits` is the plan's side (`plan._Analyzer.call`), `TaggedCores` the batched cores
(`compiler.BatchCompiler`); each core charges the op's cost once for all blocks (the
costs of these ops depend on the tile's shape only).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from pypto.ir.nodes import Call
from pypto.ir.types import ShapedType
from pypto.ops.facts import Family, Role, TagRule
from pypto.ops.padding import _runtime_pad, pad_scalar
from pypto.ops.registry import OpDef, get
from pypto.sim.batch.codegen import Core
from pypto.sim.batch.frame import BatchFrame
from pypto.sim.batch.mask_windows import charge, local_write, pad_outside
from pypto.sim.batch.masks import (
    BY_BLOCK,
    Masked,
    _at,
    _per_block,
    as_masked,
    tagged,
    uniform,
)
from pypto.sim.batch.state import BatchState, Fallback
from pypto.sim.trace.costs import note_onchip_copy


def ruled(opdef: OpDef) -> bool:
    """Is `opdef` one of the ops this module has rules for (`Family.TAG_ONLY`)?"""
    return opdef.batch is not None and opdef.batch.family is Family.TAG_ONLY


def admits(opdef: OpDef, e: Call, vargs: list) -> bool:
    """Does the batch have a rule for this call of an op of `ruled` (its varying
    operands `vargs`)? Static tile shapes; transpose's axes, fillpad's pad constant."""
    if not ruled(opdef) or not isinstance(e.type, ShapedType) or \
            e.type.static_shape() is None or not e.args:
        return False
    t = getattr(e.args[0], "type", None)
    if not isinstance(t, ShapedType) or t.static_shape() is None:
        return False
    if opdef.role is Role.SET_VALID:
        return len(t.shape) == 2
    return not any(vargs[1:])


def _first(a: Any, rank: int, nb: int) -> Any:
    """Block 0's value of `a` (for the cost of one block: it depends on shapes only)."""
    if type(a) is Masked:
        a = a.data
    if isinstance(a, np.ndarray) and a.ndim == rank + nb:
        return a[(0,) * nb]
    return a


class TaggedCores:
    """The batched cores of the ops of `ruled` (see the module docstring)."""

    # (provided by compiler.BatchCompiler)
    settings: Any
    accountant: Callable
    const: Callable

    def tagged_core(self, e: Call) -> Core | None:
        opdef = get(e.op)
        if not ruled(opdef):
            return None
        t = e.type
        assert isinstance(t, ShapedType)
        static = t.static_shape()
        assert static is not None
        rank = len(static)
        npdt = t.dtype.np
        public = [i for i, p in enumerate(opdef.params) if not p.startswith("_")
                  and i < len(e.args)]
        # (set_validshape is metadata: the intrinsic charges nothing, `intrinsics.alloc`)
        acct = self.accountant(e, opdef, public) if self.settings.trace and \
            opdef.role is not Role.SET_VALID else None
        fn: Callable
        if opdef.role is Role.SET_VALID:
            fn = _set_valid
        elif opdef.batch is not None and opdef.batch.tag_rule is TagRule.TRANSPOSE:
            axes = [self.const(x) for x in e.args[1:3]]
            if not all(ok for ok, _ in axes):
                raise AssertionError("batch plan admitted a transpose of varying axes")
            a, b = (int(x) % rank for _, x in axes)
            fn = _transposer(a, b, rank)
        else:
            ok, pad = self.const(e.args[1]) if len(e.args) > 1 else (True, None)
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

    def tagged_local(self, e: Call, plain: Core) -> Core:
        """`plain` (`OwnCores.blocal_write`'s core of the write `e` into a tile of the
        region) taking a tagged source too: its valid part per block
        (`mask_windows.local_write`), an on-chip copy of that many bytes."""
        w = get(e.op).window_write
        assert w is not None
        source = e.args[get(e.op).params.index(w.source)]
        shp = tuple(source.type.static_shape())
        fn = plain.fn
        tracing = self.settings.trace
        platform = self.settings.platform

        def core(f: BatchFrame, tgt: Any, offs: list, fargs: list, src_of: Callable) -> Any:
            src = src_of()
            if not tagged(src):
                return fn(f, tgt, offs, fargs, lambda: src)
            m = as_masked(src)
            r, groups = local_write(f.batch, tgt, offs, m, shp)
            if tracing and f.rec is not None:
                size = m.data.itemsize
                charge(f, groups, lambda ext: note_onchip_copy(platform, f.costs,
                                                               math.prod(ext) * size))
            return r

        return Core("write", core, plain.operands)


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


def reshaped(st: BatchState, x: Any, r: np.ndarray, rank: int) -> Any:
    """The tags of `r`, the reshape of the tagged `x` (data reshaped): kept when the tile
    shape is the same, else a tag without a valid shape in every tagged block."""
    m = as_masked(x)
    if m.data.shape[-rank:] == r.shape[-rank:] and m.data.ndim == r.ndim:
        return Masked(r, m.tags, m.every)
    if m.every is not BY_BLOCK:
        return uniform(r, None)
    return Masked(r, dict.fromkeys(m.tags))


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


__all__ = ["TaggedCores", "admits", "reshaped", "ruled"]
