"""Where a numpy view lies in the buffer it views: its root, its origin, its box.

Orchestration slices are numpy views of a global buffer; `root_of` finds the buffer's
array, `origin_of` the index of the window's first element, `strided_like` lays a
same-shaped companion array (a written-bitmap, a last-writer table) over the same
elements.

A window of a reshaped tensor (`y_flat = pl.reshape(y, [t, h * d])`, then
`y_flat[t0:t0 + 1, h0 * d:(h0 + 1) * d]`) is usually still a box of the buffer
(`y[t0:t0 + 1, h0:h0 + 1, 0:d]`). The trace records accesses as boxes; recording the
whole buffer for such a window would make every block of an SPMD task that writes
its own part through a reshape look like it overwrites the others. `view_box` finds
the exact box, or else the bounding box of the elements touched.
"""
from __future__ import annotations

import math

import numpy as np


def root_of(a: np.ndarray) -> np.ndarray:
    """The array that owns `a`'s memory (the end of its chain of bases)."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def origin_of(view: np.ndarray, root: np.ndarray) -> tuple | None:
    """The index of `view[0, ..., 0]` in `root` when `view` is a rectangular window of
    `root` with the same axis order; None when it is some other view (a reshape)."""
    if view is root:
        return (0,) * root.ndim
    if view.ndim != root.ndim or view.strides != root.strides:
        return None
    off = view.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    item = root.itemsize
    if off % item:
        return None
    flat = off // item
    if root.size == 0:
        return (0,) * root.ndim
    if not 0 <= flat < root.size:
        return None
    if not root.flags.c_contiguous:
        return None
    return tuple(int(i) for i in np.unravel_index(flat, root.shape))


def strided_like(target: np.ndarray, view: np.ndarray, root: np.ndarray) -> np.ndarray:
    """A view of `target` (same shape as `root`) laid over `view`'s elements of `root`."""
    item = root.itemsize
    off = (view.__array_interface__["data"][0] - root.__array_interface__["data"][0]) // item
    strides = tuple(s // item * target.itemsize for s in view.strides)
    flat = target.reshape(-1)[off:]
    return np.lib.stride_tricks.as_strided(flat, shape=view.shape, strides=strides)


def strided_geometry(view: np.ndarray, root: np.ndarray) -> tuple[int, tuple]:
    """Where `strided_like` lays `view` over a companion of `root`: the flat index of its
    first element and its strides, in elements of `root`."""
    item = root.itemsize
    off = (view.__array_interface__["data"][0] - root.__array_interface__["data"][0]) // item
    return off, tuple(s // item for s in view.strides)


def view_box(view: np.ndarray, root: np.ndarray, lo: tuple, ext: tuple) -> tuple:
    """(lo, hi) in `root`'s coordinates of the window `view[lo:lo + ext]`, where `view`
    shares `root`'s memory (`root` C-contiguous)."""
    return box_at(view_frame(view, root, ext), lo)


def view_frame(view: np.ndarray, root: np.ndarray, ext: tuple) -> tuple:
    """What `view_box` needs of `view` and `root` whatever the window's offsets: windows
    of one view at many offsets (a traced batched run's replay, block after block) pay
    for it once. (root's shape, its whole box, the view's first element and strides in
    elements, the window's runs, root's size), or (shape, whole box) when every window
    is `whole`."""
    shape = root.shape
    whole = ((0,) * root.ndim, shape)
    item = root.itemsize
    if view.itemsize != item or not root.flags.c_contiguous or root.size == 0:
        return shape, whole
    if any(int(e) <= 0 for e in ext):
        return shape, whole
    off = (view.__array_interface__["data"][0] - root.__array_interface__["data"][0])
    strides = view.strides
    if off % item or any(s % item for s in strides):
        return shape, whole
    runs = tuple((s // item, int(e)) for s, e in zip(strides, ext) if int(e) > 1)
    return shape, whole, off // item, tuple(s // item for s in strides), runs, root.size


def box_at(frame: tuple, lo: tuple) -> tuple:
    """The box of the window at offsets `lo` of a view described by `view_frame`."""
    if len(frame) == 2:
        return frame[1]
    shape, whole, first, strides, runs, size = frame
    start = first + sum(int(lo_) * s for lo_, s in zip(lo, strides))
    if not 0 <= start < size:
        return whole
    # the box depends on nothing else; a traced run asks for the same windows block
    # after block (~10 us each to derive)
    key = (start, runs, shape)
    box = _BOXES.get(key)
    if box is None:
        if len(_BOXES) >= _BOXES_MAX:
            _BOXES.clear()
        box = _BOXES[key] = _box_of(start, runs, shape, whole)
    return box


_BOXES: dict = {}  # (first element, runs, root shape) -> (lo, hi)
_BOXES_MAX = 1 << 16


def _box_of(start: int, runs: tuple, shape: tuple, whole: tuple) -> tuple:
    """The exact box of the elements `start + sum(i * stride)` over `runs`
    ((stride, extent) in elements) in a C-contiguous array of `shape`, else their
    bounding box, else `whole`."""
    size = math.prod(shape)
    box = _exact(start, runs, shape)
    if box is not None:
        return box
    # not a box: the bounding box of the first and last element of every run
    last = start + sum((e - 1) * s for s, e in runs if s > 0)
    first = start + sum((e - 1) * s for s, e in runs if s < 0)
    if not (first >= 0 and last < size):
        return whole
    # every element between two flat indices lies in this box (C order)
    a = _unravel(first, shape)
    b = _unravel(last, shape)
    k = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), len(shape))
    lo = tuple(a[:k]) + ((a[k],) if k < len(shape) else ()) + (0,) * max(0, len(shape) - k - 1)
    hi = tuple(x + 1 for x in a[:k]) + ((b[k] + 1,) if k < len(shape) else ()) + \
        tuple(shape[k + 1:])
    return lo, hi


def _exact(start: int, runs: tuple, shape: tuple) -> tuple | None:
    nd = len(shape)
    rstride = [1] * nd
    for j in range(nd - 2, -1, -1):
        rstride[j] = rstride[j + 1] * shape[j + 1]
    coord = _unravel(start, shape)
    lo = list(coord)
    hi = [c + 1 for c in coord]
    used = [False] * nd
    # merge view axes that are contiguous with each other into one run
    merged: list = []
    for s, e in sorted(runs, key=lambda r: -abs(r[0])):
        if s <= 0:
            return None
        if merged and merged[-1][0] == s * e:
            merged[-1] = (s, merged[-1][1] * e)
        else:
            merged.append((s, e))
    for s, e in merged:
        if s not in rstride:
            return None
        j = rstride.index(s)
        while True:
            if used[j]:
                return None
            used[j] = True
            if coord[j] + e <= shape[j]:
                hi[j] = coord[j] + e
                break
            # the run wraps into the next outer axis: only whole rows of axis j
            if coord[j] != 0 or e % shape[j] or j == 0:
                return None
            hi[j] = shape[j]
            e //= shape[j]
            j -= 1
    return tuple(lo), tuple(hi)


def _unravel(flat: int, shape: tuple) -> list:
    """np.unravel_index for one in-range flat index, in Python ints (~10x cheaper)."""
    coord = [0] * len(shape)
    for j in range(len(shape) - 1, -1, -1):
        flat, coord[j] = divmod(flat, shape[j])
    return coord


__all__ = ["origin_of", "root_of", "strided_like", "view_box"]
