"""One-sided transfers of one rank: it reads or writes a box of a peer's window with no
action by the peer (`pld.tile.remote_load` / `remote_store`, `pld.tensor.put` / `get`).

A box outside the window faults, naming the rank, the peer, the window and the indices.
`put` / `get` stream through a staging tile of `chunk_rows x chunk_cols` over the
transfer viewed as [rows, cols] (the leading axes flattened), chunk after chunk, as the
hardware does; `pipeline=True` overlaps the chunks through two staging tiles, which
moves the same bytes in the same order.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from pypto.ops.numeric import plain, valid_shape, with_valid
from pypto.sim.cluster.windows import Located, box, check_box

if TYPE_CHECKING:
    from pypto.sim.cluster.world import World


def _atomic(atomic: Any) -> bool:
    return int(atomic or 0) == 1


def _add_into(dst: np.ndarray, src: np.ndarray) -> None:
    """`dst += src` in the destination's dtype, as an atomic-add store lands."""
    if dst.dtype.kind in "iu":
        dst[...] = (dst.astype(np.int64) + src.astype(np.int64)).astype(dst.dtype)
    else:
        dst[...] = (dst.astype(np.float64) + src.astype(np.float64)).astype(dst.dtype)


class Transfers:
    """The one-sided transfers of one rank (a part of its `RankComm`)."""

    def __init__(self, world: World, rank: int):
        self.world = world
        self.rank = rank

    def _remote(self, ctx: Any, target: Any, peer: Any, lo: tuple, hi: tuple, what: str
                ) -> tuple[Located, np.ndarray, int]:
        """The peer's view of `target` after checking the box [lo, hi) lies in it."""
        at = self.world.windows.locate(target)
        if at is None:
            raise ctx.fault(f"{what}: the target is not a window (pld.window)", ctx.span)
        p = int(peer)
        why = check_box(lo, hi, target.shape)
        if why is not None:
            raise ctx.fault(
                f"remote access outside the window: rank {self.rank} {what} reaches "
                f"[{', '.join(f'{a}:{b}' for a, b in zip(lo, hi))}] of the window "
                f"'{at.buffer.name}' of rank {p}, which is {list(target.shape)} ({why})",
                ctx.span, tensor=at.buffer.name, indices=[list(lo), list(hi)],
                hint="keep the box inside the window view, or give valid_shape= for a "
                     "ragged tail")
        return at, self.world.peer_view(ctx, target, at, p, what), p

    def remote_load(self, ctx: Any, target: Any, peer: Any, offsets: Any, shape: Any,
                    valid: Any) -> np.ndarray:
        what = "pld.tile.remote_load"
        full = [int(s) for s in shape]
        part = [min(int(v), s) for v, s in zip(valid, full)] if valid is not None else full
        lo, hi = box(offsets, part)
        at, view, p = self._remote(ctx, target, peer, lo, hi, what)
        out = np.zeros(full, dtype=target.dtype)
        out[tuple(slice(0, n) for n in part)] = view[tuple(slice(a, b) for a, b in zip(lo, hi))]
        self.world.access(ctx, self.rank, at, p, lo, hi, False, False, what, a=target)
        return with_valid(out, part if valid is not None else None)

    def remote_store(self, ctx: Any, src: Any, target: Any, peer: Any, offsets: Any,
                     atomic: Any, what: str = "pld.remote_store") -> None:
        data = np.asarray(plain(src))
        part = valid_shape(src)
        if data.ndim > target.ndim:  # leading unit axes of a tile pushed into a window
            data = data.reshape(data.shape[data.ndim - target.ndim:])
            part = part[len(part) - target.ndim:]
        lead = target.ndim - data.ndim
        data = data.reshape((1,) * lead + data.shape)
        part = (1,) * lead + tuple(part)
        lo, hi = box(offsets, part)
        at, view, p = self._remote(ctx, target, peer, lo, hi, what)
        dst = view[tuple(slice(a, b) for a, b in zip(lo, hi))]
        src_box = data[tuple(slice(0, n) for n in part)]
        if _atomic(atomic):
            _add_into(dst, src_box)
        else:
            dst[...] = src_box.astype(dst.dtype, copy=False)
        self.world.access(ctx, self.rank, at, p, lo, hi, True, _atomic(atomic), what,
                          a=target)

    # -- bulk transfers ------------------------------------------------------------

    def _region(self, dst: np.ndarray, src: np.ndarray, dst_offsets: Any, src_offsets: Any,
                shape: Any) -> tuple[tuple, tuple, tuple, tuple]:
        if shape is None:
            return (0,) * dst.ndim, tuple(dst.shape), (0,) * src.ndim, tuple(src.shape)
        ext = [int(s) for s in shape]
        d_ext = ext[len(ext) - dst.ndim:] if len(ext) >= dst.ndim else \
            [1] * (dst.ndim - len(ext)) + ext
        s_ext = ext[len(ext) - src.ndim:] if len(ext) >= src.ndim else \
            [1] * (src.ndim - len(ext)) + ext
        dlo, dhi = box(dst_offsets, d_ext)
        slo, shi = box(src_offsets, s_ext)
        return dlo, dhi, slo, shi

    def _bulk(self, ctx: Any, what: str, remote: np.ndarray, local: np.ndarray, peer: Any,
              rlo: tuple, rhi: tuple, llo: tuple, lhi: tuple, push: bool, atomic: bool,
              chunk_rows: Any, chunk_cols: Any) -> None:
        at, view, p = self._remote(ctx, remote, peer, rlo, rhi, what)
        why = check_box(llo, lhi, local.shape)
        if why is not None:
            where = ", ".join(f"{a}:{b}" for a, b in zip(llo, lhi))
            raise ctx.fault(f"{what}: the local box [{where}] is outside the "
                            f"{list(local.shape)} tensor ({why})", ctx.span)
        rbox = view[tuple(slice(a, b) for a, b in zip(rlo, rhi))]
        lbox = local[tuple(slice(a, b) for a, b in zip(llo, lhi))]
        if rbox.size != lbox.size:
            raise ctx.fault(f"{what}: the two boxes hold {rbox.size} and {lbox.size} elements",
                            ctx.span)
        src, dst = (lbox, rbox) if push else (rbox, lbox)
        src2, dst2 = _as_rows(src), _as_rows(dst)
        rows, cols = src2.shape
        cr = min(int(chunk_rows or 0) or rows, rows) or 1
        cc = min(int(chunk_cols or 0) or cols, cols) or 1
        for r0 in range(0, rows, cr):
            for c0 in range(0, cols, cc):
                piece = np.array(src2[r0:r0 + cr, c0:c0 + cc])  # the staging tile
                out = dst2[r0:r0 + cr, c0:c0 + cc]
                if atomic:
                    _add_into(out, piece)
                else:
                    out[...] = piece.astype(out.dtype, copy=False)
        if not np.shares_memory(dst2, dst):  # a copy was made to flatten: write it back
            dst[...] = dst2.reshape(dst.shape)
        self.world.access(ctx, self.rank, at, p, rlo, rhi, push, atomic, what, a=remote)

    def put(self, ctx: Any, dst: Any, peer: Any, src: Any, dst_offsets: Any,
            src_offsets: Any, shape: Any, atomic: Any, chunk_rows: Any, chunk_cols: Any,
            pipeline: Any, what: str = "pld.tensor.put") -> None:
        dlo, dhi, slo, shi = self._region(dst, src, dst_offsets, src_offsets, shape)
        self._bulk(ctx, what, dst, plain(src), peer, dlo, dhi, slo, shi, True,
                   _atomic(atomic), chunk_rows, chunk_cols)

    def get(self, ctx: Any, dst: Any, peer: Any, src: Any, dst_offsets: Any,
            src_offsets: Any, shape: Any, chunk_rows: Any, chunk_cols: Any,
            pipeline: Any, what: str = "pld.tensor.get") -> None:
        dlo, dhi, slo, shi = self._region(dst, src, dst_offsets, src_offsets, shape)
        self._bulk(ctx, what, src, plain(dst), peer, slo, shi, dlo, dhi, False,
                   False, chunk_rows, chunk_cols)


def _as_rows(a: np.ndarray) -> np.ndarray:
    """`a` as [rows, cols] (the leading axes flattened), a view when numpy can make one."""
    cols = a.shape[-1] if a.ndim else 1
    rows = math.prod(a.shape[:-1]) if a.ndim > 1 else 1
    return a.reshape(rows, cols)


__all__ = ["Transfers"]
