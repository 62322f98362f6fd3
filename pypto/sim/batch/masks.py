"""Partial tiles inside a batch: each block's valid extents carried beside the data.

Block by block, a window read with a valid shape short of the window (the last tile of
a `valid_shape=[pl.min(T, n - r), ...]` loop, a clamped window at the end of a tensor,
an 8-row window of which one row is valid) is a `ValidArray`: the valid part copied,
the rest of the tile the pad value, the valid extents as its tag (`set_validshape`
tags a value the same way). What each op then does with the tag is numpy's and the
impl's:

* an elementwise ufunc op computes every element; its result is tagged like the first
  tagged operand (numpy wraps the result in that operand's class), with that operand's
  valid shape when the shapes are equal and with none otherwise;
* a row / column reduction reduces only the valid part along its axis; its result
  keeps the other extents (and is untagged when they are whole);
* an op whose type declares a valid shape tags a result the impl left untagged with
  it (`FnCompiler._typed_valid`);
* a window write writes the valid part only.

A `Masked` value is a batched tile of which some blocks are such tagged tiles: the data
of all blocks (computed as block by block computes each), and per block whether it is
tagged and its valid extents - or, when every block carries the same tag (a valid shape
that is a constant or a uniform value: every block moves the same bytes), that one tag
(`every`). A uniform `ValidArray` operand (a window of a weight read at the same offsets
in every block) counts as tagged that way in every block. The functions here apply the
rules above to all blocks at once; windows and writes are `mask_windows`, the other ops
with a rule (`set_validshape`, `reshape`, `transpose`, `fillpad`) `rules`. Every
other op meeting a `Masked` operand stops the batch with `Partial`, and the launch
splits as before (the whole tiles batched, the rest block by block).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from pypto.ir.nodes import Const
from pypto.ir.types import ShapedType, Type
from pypto.ops.numeric import ValidArray
from pypto.sim.batch.state import BatchState, Partial

BY_BLOCK: Any = object()  # `Masked.every` when the blocks' tags differ (see `tags`)


class Masked:
    """A batched tile some of whose blocks are tagged (see the module docstring):
    `data` (batch axes, then the tile's) and either `every`, the tag of every block (a
    tuple of valid extents, or None for a tag without a valid shape), or, when `every`
    is BY_BLOCK, `tags`: for the blocks that are a `ValidArray` block by block (by block
    index), their valid extents or None. A block not in `tags` is a plain, whole tile.
    (Per-block partial tiles are few - a loop's last tiles - so each op looks at them one
    by one.)"""

    __slots__ = ("data", "every", "tags")

    def __init__(self, data: np.ndarray, tags: dict, every: Any = BY_BLOCK):
        self.data = data
        self.tags = tags
        self.every = every

    def by_block(self, bs: tuple) -> dict:
        """The tags per block (every block's, for a tag that is the same in all)."""
        if self.every is BY_BLOCK:
            return self.tags
        return {idx: self.every for idx in np.ndindex(*bs)}


def uniform(data: np.ndarray, tag: tuple | None) -> Masked:
    """`data` with the same tag in every block."""
    return Masked(data, {}, tag)


def tagged(a: Any) -> bool:
    """Is `a` a tagged operand (a `Masked` value, or a uniform `ValidArray`)?"""
    return type(a) is Masked or type(a) is ValidArray


def as_masked(a: Any) -> Any:
    """A uniform `ValidArray` as a `Masked` of the same tag in every block (others as
    they are)."""
    if type(a) is ValidArray:
        return uniform(a.view(np.ndarray), a.valid)
    return a


def declares_valid(t: Type | None) -> bool:
    """Does the type `t` declare a valid shape that may be short of its shape?"""
    if not isinstance(t, ShapedType) or t.valid_shape is None:
        return False
    return not all(v == d or (isinstance(v, Const) and v.value == d)
                   for v, d in zip(t.valid_shape, t.shape))


def relanked_shape(shp: tuple, rank: int) -> tuple | None:
    """The shape a value of shape `shp` is written with into a rank-`rank` tensor (as
    `engine.intrinsics.writes` takes it: leading unit axes dropped, or added), or None."""
    extra = len(shp) - rank
    if extra < 0:
        return (1,) * -extra + shp
    if all(d == 1 for d in shp[:extra]):
        return shp[extra:]
    return None


def written_extent(t: Type | None) -> tuple | None:
    """The extents a write of a value of type `t` may write at most, when its type
    declares a constant valid shape short of its static shape (its valid part; at run
    time the write checks that no block writes more), else its static shape (None when
    it has none)."""
    if not isinstance(t, ShapedType):
        return None
    shape = t.static_shape()
    if shape is None or t.valid_shape is None:
        return shape
    out = []
    for v, d in zip(t.valid_shape, shape):
        if isinstance(v, Const):
            v = v.value
        out.append(max(1, min(v, d)) if type(v) is int else d)
    return tuple(out)


def _cell(a: np.ndarray, idx: tuple) -> tuple:
    """`idx` into the batch axes of `a`, which may have extent 1 (broadcast)."""
    return tuple(i if n > 1 else 0 for i, n in zip(idx, a.shape))


def partial_blocks(bs: tuple, v: Masked) -> np.ndarray:
    """The blocks of `v` that are tagged (a bool array over the batch axes)."""
    if v.every is not BY_BLOCK:
        return np.ones(bs, dtype=bool)
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


def declared(st: BatchState, r: Any, valid: list, rank: int) -> Any:
    """`FnCompiler._typed_valid` for all blocks: a result without a valid shape of its own
    takes the one its type declares (`valid`, entries per block), when it differs from
    the shape (clipped to it; a clipped one that is whole leaves the result untagged)."""
    data = r.data if type(r) is Masked else r
    shape = data.shape[-rank:]
    if type(r) is Masked and r.every is not BY_BLOCK:
        if r.every is not None:
            return r  # (every block carries a valid shape of its own)
        r = None  # (a tag without a valid shape: as untagged, but for a whole one)
    elif type(r) is Masked and len(r.tags) == math.prod(st.bs) and \
            all(t is not None for t in r.tags.values()):
        return r
    if all(type(x) is int for x in valid):  # the same in every block
        v = tuple(valid)
        if len(v) != rank or v == shape:
            return r if r is not None else uniform(data, None)
        m = tuple(min(a, b) for a, b in zip(v, shape))
        if m == shape:  # (`with_valid` of a whole shape: untagged)
            if type(r) is not Masked:
                return data
            tags = {idx: t for idx, t in r.tags.items() if t is not None}
            return Masked(data, tags) if tags else data
        if type(r) is not Masked:
            return uniform(data, m)
        return Masked(data, {idx: (t if t is not None else m)
                             for idx in np.ndindex(*st.bs)
                             for t in (r.tags.get(idx, m),)})
    if r is None:
        r = uniform(data, None)
    vals = [_per_block(st, x) for x in valid]
    short = _short_blocks(st, vals, shape)
    tags = r.by_block(st.bs) if type(r) is Masked else {}
    if not short and not any(t is None for t in tags.values()):
        return r
    tags = dict(tags)
    for idx in short:
        if tags.get(idx) is None:  # (untagged, or a tag without a valid shape)
            tags[idx] = tuple(min(_at(v, idx), s) for v, s in zip(vals, shape))
    for idx in [i for i, t in tags.items() if t is None]:
        v = tuple(_at(x, idx) for x in vals)
        if v != shape:  # (not short, so clipped whole: untagged)
            del tags[idx]
    return Masked(data, tags) if tags else data


def whole_in_all(st: BatchState, valid: list, shape: tuple) -> bool:
    """Is the valid shape `valid` (entries per block) whole in every block of the batch
    (so `declared` leaves an untagged result untagged)?"""
    if len(valid) != len(shape):
        return False
    if all(type(v) is int for v in valid):
        return all(v >= s for v, s in zip(valid, shape))
    return not _short_blocks(st, [_per_block(st, x) for x in valid], shape)


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


def lift(v: Masked, rank: int, nb: int, n: int) -> Masked:
    """`v` in the batch with one more axis in front, `n` long (`loop_axis`)."""
    data = v.data.reshape((1,) + v.data.shape) if v.data.ndim == rank + nb else v.data
    if v.every is not BY_BLOCK:
        return uniform(data, v.every)
    return Masked(data, {(k,) + idx: t for idx, t in v.tags.items() for k in range(n)})


__all__ = [
    "BY_BLOCK",
    "Masked",
    "as_masked",
    "declared",
    "declares_valid",
    "lift",
    "partial_blocks",
    "refuse",
    "relanked_shape",
    "tagged",
    "uniform",
    "whole_in_all",
    "written_extent",
]
