"""What the window rules share about partial tiles in a batch (`masks.Masked`): the
blocks grouped by the extent of their valid part, and the trace of their accesses. (The
reads and writes themselves are the rules': `rules.window_read.read_partial`,
`rules.window_write.write_partial` / `local_write_partial`.)

Block by block (`intrinsics.windows`, `intrinsics.writes`) a read with a valid shape
copies the valid part, fills the rest of the tile with the pad value and tags the tile;
a write of a tagged tile writes its valid part. The trace records the valid part as
the access, and the bytes it moves as its cost (a GM read / write, or an on-chip copy
into a tile of the region). So when every block's valid part has the same extent (a
constant valid shape: hc_pre's 8-row windows of one valid row), one logged access and
one cost hold for all blocks, as for a whole tile; when the extents differ (a loop's
short last tile), the blocks are grouped by extent and each group logs and pays its own
under a mask (`branch_trace.enter`: the replay records a group's access for its blocks
only, and the cycles are added per block), so every block's trace is its own.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from pypto.sim.batch.branch_trace import enter, leave
from pypto.sim.batch.masks import BY_BLOCK, Masked
from pypto.sim.batch.state import (
    BatchState,
    Fallback,
)

# (a block's valid extents) -> logs that access and adds its costs to the frame
Note = Callable[[tuple], None]


def extents(st: BatchState, m: Masked, shp: tuple) -> list[tuple[np.ndarray | None, tuple]]:
    """The blocks of `m` grouped by the extent of their valid part (a window of `shp`):
    [(mask over the batch axes, or None for all blocks, extent)]."""
    if m.every is not BY_BLOCK:
        return [(None, clipped(m.every, shp))]
    groups: dict[tuple, list] = {}
    for idx, v in m.tags.items():
        groups.setdefault(clipped(v, shp), []).append(idx)
    n = math.prod(st.bs)
    if sum(len(b) for b in groups.values()) < n:  # (the untagged blocks: whole)
        tagged = {idx for b in groups.values() for idx in b}
        groups.setdefault(shp, []).extend(idx for idx in np.ndindex(*st.bs)
                                          if idx not in tagged)
    if len(groups) == 1:
        return [(None, next(iter(groups)))]
    out: list[tuple[np.ndarray | None, tuple]] = []
    for ext, blocks in groups.items():
        mask = np.zeros(st.bs, dtype=bool)
        for idx in blocks:
            mask[idx] = True
        out.append((mask, ext))
    return out


def clipped(v: tuple | None, shp: tuple) -> tuple:
    return shp if v is None else tuple(min(int(x), s) for x, s in zip(v, shp))


def charge(f: Any, groups: list, note: Note) -> None:
    """Log and cost the access of each group of blocks (`extents`) for its blocks only."""
    if len(groups) == 1:
        note(groups[0][1])
        return
    st = f.batch
    if st.pred is not None:
        raise Fallback("partial tiles of several extents under a condition")
    for mask, ext in groups:
        saved = enter(f, st, mask)
        try:
            note(ext)
        finally:
            leave(f, st, mask, saved)


def pad_outside(out: np.ndarray, nb: int, ext: tuple, pad: Any) -> None:
    """`fill_outside` of every block's tile (after `nb` batch axes) at once."""
    for ax, e in enumerate(ext):
        if e < out.shape[nb + ax]:
            idx = [slice(None)] * (nb + len(ext))
            for prev in range(ax):
                idx[nb + prev] = slice(0, ext[prev])
            idx[nb + ax] = slice(e, None)
            out[tuple(idx)] = pad


def leading_whole(bs: tuple, short: list) -> int:
    """How many leading iterations of batch axis 0 have no block in `short`."""
    return min((idx[0] for idx in short), default=bs[0])


def after(bs: tuple, k: int) -> Any:
    """The block indices from iteration `k` of batch axis 0 on."""
    for idx in np.ndindex(*((bs[0] - k,) + bs[1:])):
        yield (idx[0] + k,) + idx[1:]


__all__ = ["after", "charge", "clipped", "extents", "leading_whole", "pad_outside"]
