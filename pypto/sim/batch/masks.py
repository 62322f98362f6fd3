"""Partial tiles inside a batch: each block's valid extents carried beside the data.

Block by block, a window read with a valid shape short of the window (the last tile of
a `valid_shape=[pl.min(T, n - r), ...]` loop, a clamped window at the end of a tensor)
is a `ValidArray`: the valid part copied, the rest of the tile the pad value, the valid
extents as its tag. What each op then does with the tag is numpy's and the impl's:

* an elementwise ufunc op computes every element; its result is tagged like the first
  tagged operand (numpy wraps the result in that operand's class), with that operand's
  valid shape when the shapes are equal and with none otherwise;
* a row / column reduction reduces only the valid part along its axis; its result
  keeps the other extents (and is untagged when they are whole);
* an op whose type declares a valid shape tags a result the impl left untagged with
  it (`FnCompiler._typed_valid`);
* a window write writes the valid part only.

A `Masked` value is a batched tile of which some blocks are such partial tiles: the
data of all blocks (computed as block by block computes each), and per block whether it
is tagged and its valid extents. The functions here apply the rules above to all blocks
at once; every other op meeting a `Masked` operand stops the batch with `Partial`, and
the launch splits as before (the whole tiles batched, the rest block by block).
Untraced runs only: a traced batch applies the same costs to every task, and the bytes a
partial tile moves differ.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from pypto.ir.types import ShapedType
from pypto.ops.registry import get
from pypto.sim.batch.state import BatchState, Fallback, Partial
from pypto.sim.device.fill import fill_outside
from pypto.sim.engine.intrinsics.common import falsy_const


class Masked:
    """A batched tile some of whose blocks are partial (see the module docstring):
    `data` (batch axes, then the tile's) and `tags`, for the blocks that are a
    `ValidArray` block by block (by block index): their valid extents, or None when the
    tag carries none. A block not in `tags` is a plain, whole tile. (Partial tiles are
    few - a loop's last tiles - so each op looks at them one by one.)"""

    __slots__ = ("data", "tags")

    def __init__(self, data: np.ndarray, tags: dict):
        self.data = data
        self.tags = tags


def _cell(a: np.ndarray, idx: tuple) -> tuple:
    """`idx` into the batch axes of `a`, which may have extent 1 (broadcast)."""
    return tuple(i if n > 1 else 0 for i, n in zip(idx, a.shape))


def partial_blocks(bs: tuple, v: Masked) -> np.ndarray:
    """The blocks of `v` that are partial tiles (a bool array over the batch axes)."""
    m = np.zeros(bs, dtype=bool)
    for idx in v.tags:
        m[idx] = True
    return m


def refuse(st: BatchState, args: Any) -> None:
    """Stop the batch (`Partial`, naming the partial blocks) when a `Masked` value meets an
    op the rules here do not cover."""
    for a in args if isinstance(args, (list, tuple)) else (args,):
        if type(a) is Masked:
            raise Partial(partial_blocks(st.bs, a))


def _per_block(st: BatchState, v: Any) -> Any:
    """`v` (an int, an `Aff` or a per-block array) as an int or an int64 array."""
    if type(v) is int:
        return v
    return np.asarray(st.materialize(v), dtype=np.int64)


def _at(v: Any, idx: tuple) -> int:
    return v if type(v) is int else int(v[_cell(v, idx)] if v.ndim else v)


def _leading_whole(bs: tuple, short: list) -> int:
    """How many leading iterations of batch axis 0 have no block in `short`."""
    return min((idx[0] for idx in short), default=bs[0])


def _after(bs: tuple, k: int) -> Any:
    """The block indices from iteration `k` of batch axis 0 on."""
    for idx in np.ndindex(*((bs[0] - k,) + bs[1:])):
        yield (idx[0] + k,) + idx[1:]


def read(st: BatchState, a: np.ndarray, offs: list, shp: tuple, valid: Any, clamp: bool,
         pad: Any) -> Masked | None:
    """All blocks' windows `offs + shp` of `a` with valid shape `valid` (entries per
    block) and `clamp`, as block by block reads each: None when every block's tile is
    whole (the caller's strided view), else a `Masked`. Raises Fallback where block by
    block faults (a valid part outside the tensor: the rerun reports it)."""
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
    k = _leading_whole(bs, [tuple(int(i) for i in idx) for idx in zip(*np.nonzero(~inside))])
    if k:  # the blocks whose whole window is inside the tensor: one strided view
        sub = st if k == bs[0] else BatchState((k,) + bs[1:], False, False, False)
        view = sub.window(a, offs, shp, False)
        if view is None:
            k = 0
        else:
            out[:k] = view
    for idx in _after(bs, k):
        e = tags.get(idx, shp)
        origin = [_at(x, idx) for x in los]
        out[idx][tuple(slice(0, x) for x in e)] = \
            a[tuple(slice(o, o + x) for o, x in zip(origin, e))]
    for idx, e in tags.items():
        fill_outside(out[idx], e, pad)
    return Masked(out, tags)


def elementwise(args: list, n: int, r: np.ndarray, rank: int) -> Any:
    """The tags of an elementwise ufunc op's result `r` (over operands `args[:n]`): per
    block, the first tagged operand's, its valid shape when its tile shape is the
    result's."""
    shape = r.shape[-rank:]
    tags: dict = {}
    for a in reversed(args[:n]):
        if type(a) is Masked:
            same = a.data.shape[-rank:] == shape
            for idx, v in a.tags.items():
                tags[idx] = v if same else None
    return Masked(r, tags) if tags else r


def reduce(impl: Callable, x: Masked, axis: int, rank: int) -> Any:
    """A row / column reduction (`impl` on plain arrays) of a `Masked` tile: each block
    reduces its valid part along `axis` (all of it when that extent is 0 or whole, as
    `ops.reduce._valid_part`), and keeps its other extents."""
    data = x.data
    full = data.shape[axis]
    ax = rank + axis  # the tile axis
    r = impl(data)
    shape = r.shape[-rank:]
    parts: dict[int, Any] = {}
    tags = {}
    for idx, v in x.tags.items():
        if v is None:
            continue  # (no valid shape: reduced whole, untagged)
        n = v[ax]
        if 0 < n < full:
            rv = parts.get(n)
            if rv is None:
                cut = [slice(None)] * data.ndim
                cut[axis] = slice(0, n)
                rv = parts[n] = impl(data[tuple(cut)])
            r[_cell(r, idx)] = rv[_cell(rv, idx)]
        kept = v[:ax] + (1,) + v[ax + 1:]
        if kept != shape:
            tags[idx] = kept
    return Masked(r, tags) if tags else r


def declared(st: BatchState, r: Any, valid: list, rank: int) -> Any:
    """`FnCompiler._typed_valid` for all blocks: a result without a valid shape of its own
    takes the one its type declares (`valid`, entries per block), when short of it."""
    data = r.data if type(r) is Masked else r
    shape = data.shape[-rank:]
    if type(r) is Masked and len(r.tags) == math.prod(st.bs) and \
            all(t is not None for t in r.tags.values()):
        return r  # (every block carries a valid shape of its own)
    vals = [_per_block(st, x) for x in valid]
    short = _short_blocks(st, vals, shape)
    if not short:
        return r
    tags = dict(r.tags) if type(r) is Masked else {}
    for idx in short:
        if tags.get(idx) is None:  # (untagged, or a tag without a valid shape)
            tags[idx] = tuple(min(_at(v, idx), s) for v, s in zip(vals, shape))
    return Masked(data, tags)


def _short_blocks(st: BatchState, vals: list, shape: tuple) -> list:
    """The blocks where a valid shape `vals` (entries per block) is short of `shape`:
    remembered per run for the same values (each op of a region declares the same)."""
    key = tuple(id(v) for v in vals) + shape
    memo = st.shorts
    hit = memo.get(key)
    if hit is not None and all(x is v for x, v in zip(hit[0], vals)):
        return hit[1]
    less: Any = None
    for v, s in zip(vals, shape):
        if type(v) is int:
            if v < s:
                less = True
        else:
            m = v < s
            if m.any():
                less = m if less is None else less | m
    if less is None:
        out: list = []
    else:
        full = np.broadcast_to(np.asarray(less), st.bs)
        out = [tuple(int(i) for i in idx) for idx in zip(*np.nonzero(full))]
    memo[key] = (list(vals), out)  # (holding the values keeps their ids theirs)
    return out


def write(st: BatchState, tgt: np.ndarray, offs: list, src: Masked, shp: tuple) -> None:
    """Write each block's valid part of `src` into its window `offs` of `tgt` (block by
    block: the valid part only, checked against the tensor; a fault raises Fallback and
    the rerun reports it). Logs undo copies and deferred-fill boxes like any write."""
    bs = st.bs
    los = [_per_block(st, o) for o in offs]
    exts = {idx: v for idx, v in src.tags.items() if v is not None and v != shp}
    data = np.broadcast_to(src.data, bs + tuple(shp))
    k = _leading_whole(bs, list(exts))
    scalar = BatchState((), False, False, False)
    if k:  # the leading whole tiles: one strided view (bounds-checked there)
        sub = st if k == bs[0] else BatchState((k,) + bs[1:], False, False, False)
        view = sub.window(tgt, offs, shp, True)
        if view is None:
            k = 0
        else:
            if st.undo is not None:
                st.undo.append((view, view.copy()))
            view[...] = data[:k]
            if st.wlog is not None:
                st.wlog.append((tgt, list(offs), shp, None, sub))
    for idx in _after(bs, k):
        e = exts.get(idx, shp)
        lo = [_at(x, idx) for x in los]
        if any(o < 0 or o + x > d for o, x, d in zip(lo, e, tgt.shape)):
            raise Fallback("out of bounds")
        box = tuple(slice(o, o + x) for o, x in zip(lo, e))
        if st.undo is not None:
            st.undo.append((tgt[box], tgt[box].copy()))
        tgt[box] = data[idx][tuple(slice(0, x) for x in e)]
        if st.wlog is not None:
            st.wlog.append((tgt, lo, tuple(e), None, scalar))


def kind_of(e: Any) -> tuple | None:
    """("elementwise", arity) or ("reduce", axis) when the op of call `e` is one the
    rules here cover (its impl is its registry ufunc, or a reduction with it), else None."""
    uf = get(e.op).ufunc
    if uf is None:
        return None
    if uf.reduce_axis is not None:
        return ("reduce", uf.reduce_axis)
    n = uf.arity
    ranks = {len(a.type.shape) for a in e.args[:n]
             if isinstance(getattr(a, "type", None), ShapedType)}
    if len(e.args) < n or not all(falsy_const(x) for x in e.args[n:]) or len(ranks) != 1:
        return None  # (a vector of another rank is reshaped by the impl)
    return ("elementwise", n)


def apply(st: BatchState, kind: tuple | None, compute: Callable[[list], np.ndarray],
          args: list, valid: list | None, rank: int) -> Any:
    """An op of `kind` (`kind_of`) with `Masked` operands: `compute` gives its result on
    plain arrays (the data); the result's tags follow the rules of the module docstring.
    Any other op, or integers (whose division is not the bare ufunc), stops the batch."""
    if kind is None or any(type(a) is Masked and a.data.dtype.kind != "f" for a in args):
        refuse(st, args)
    assert kind is not None
    if kind[0] == "elementwise":
        r = elementwise(args, kind[1],
                        compute([a.data if type(a) is Masked else a for a in args]), rank)
    else:
        x = args[0]
        if type(x) is not Masked or any(type(a) is Masked for a in args[1:]):
            refuse(st, args)
        r = reduce(lambda d: compute([d] + list(args[1:])), x, kind[1], rank)
    return declared(st, r, valid, rank) if valid else r


def lift(v: Masked, rank: int, nb: int, n: int) -> Masked:
    """`v` in the batch with one more axis in front, `n` long (`loop_axis`)."""
    data = v.data.reshape((1,) + v.data.shape) if v.data.ndim == rank + nb else v.data
    return Masked(data, {(k,) + idx: t for idx, t in v.tags.items() for k in range(n)})


__all__ = ["Masked", "apply", "declared", "elementwise", "kind_of", "lift", "partial_blocks",
           "read", "reduce", "refuse", "write"]
