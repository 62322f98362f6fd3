"""The collectives of one rank, built from its primitives exactly as the toolchain lowers
them, on an INT32 signal window with the self-clearing credit barrier:

    barrier(g):  notify(+1) my cell on every peer; wait until my cell for every peer >= g
    epilogue:    add -N (the call's credits) to every peer's cell in my own window

`g` counts the barriers of this call from 1, so the signal is all zero again once every
rank has finished the call and the next call starts afresh. A mesh allreduce reduces
chunk by chunk (own chunk first, then every peer's in rank order) and barriers before
storing each chunk, so no peer still reads what it overwrites; a ring allreduce is a
reduce-scatter then an allgather around the ring, one segment per rank.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from pypto.ir.distributed import NotifyOp, ReduceOp, WaitCmp
from pypto.ops.numeric import plain

if TYPE_CHECKING:
    from pypto.sim.cluster.rma import Transfers
    from pypto.sim.cluster.signals import Signals
    from pypto.sim.cluster.world import World

MESH_CHUNK_BYTES = 16 * 1024  # an InCore mesh allreduce reduces 16 KiB at a time
_ADD = int(NotifyOp.AtomicAdd)
_GE = int(WaitCmp.Ge)


def _reduce(op: ReduceOp, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    wide = np.float32 if a.dtype.kind == "f" or a.dtype.kind == "V" else np.int64
    x, y = a.astype(wide), b.astype(wide)
    r = {ReduceOp.Sum: np.add, ReduceOp.Max: np.maximum, ReduceOp.Min: np.minimum,
         ReduceOp.Prod: np.multiply}[op](x, y)
    return r.astype(a.dtype)


class Collectives:
    """The collectives of one rank (a part of its `RankComm`), made of its signals and
    one-sided transfers."""

    def __init__(self, world: World, rank: int, signals: Signals, transfers: Transfers):
        self.world = world
        self.rank = rank
        self.notify, self.wait = signals.notify, signals.wait
        self.remote_load, self.put = transfers.remote_load, transfers.put

    # -- the credit barrier ----------------------------------------------------------

    def _credit_cell(self, signal: np.ndarray, of: int, lane: int = 0) -> list[int]:
        return [of] if signal.ndim == 1 else [of, lane]

    def _peers(self) -> list[int]:
        return [p for p in range(self.world.size) if p != self.rank]

    def _barrier(self, ctx: Any, signal: np.ndarray, g: int, lane: int = 0) -> None:
        for peer in self._peers():
            self.notify(ctx, signal, peer, self._credit_cell(signal, self.rank, lane), 1, _ADD)
        for src in self._peers():
            self.wait(ctx, signal, self._credit_cell(signal, src, lane), g, _GE)

    def _epilogue(self, ctx: Any, signal: np.ndarray, credits: int, lane: int = 0) -> None:
        for src in self._peers():
            cell = self._credit_cell(signal, src, lane)
            self.notify(ctx, signal, self.rank, cell, -credits, _ADD)

    # -- the collectives ---------------------------------------------------------------

    def barrier(self, ctx: Any, signal: Any) -> np.ndarray:
        self._barrier(ctx, signal, 1)
        self._epilogue(ctx, signal, 1)
        return signal

    def allreduce(self, ctx: Any, target: Any, signal: Any, op: Any, mode: Any,
                  core_num: Any) -> np.ndarray:
        op = ReduceOp(int(op))
        if signal is None:
            raise ctx.fault("pld.tensor.allreduce without a signal runs only as a host "
                            "collective", ctx.span)
        if str(mode) == "ring":
            return self._ring(ctx, target, signal, op)
        flat = target.reshape(-1)
        chunk = max(1, MESH_CHUNK_BYTES // flat.itemsize)
        starts = list(range(0, flat.size, chunk))
        g = 1
        self._barrier(ctx, signal, g)  # every rank has staged its data
        for c0 in starts:
            n = min(chunk, flat.size - c0)
            acc = np.array(flat[c0:c0 + n])
            for peer in self._peers():
                got = self.remote_load(ctx, flat.reshape(1, -1), peer, [0, c0], [1, n], None)
                acc = _reduce(op, acc, plain(got).reshape(-1))
            g += 1
            self._barrier(ctx, signal, g)  # every peer has read this chunk of mine
            flat[c0:c0 + n] = acc
        self._epilogue(ctx, signal, g)
        return target

    def _ring(self, ctx: Any, target: np.ndarray, signal: np.ndarray, op: ReduceOp
              ) -> np.ndarray:
        """Reduce-scatter then allgather: segment s ends reduced on rank s - 1, then
        travels around the ring. Row k of the signal carries round k's barriers."""
        n, me = self.world.size, self.rank
        flat = target.reshape(-1)
        row = flat.reshape(1, -1)
        bounds = [i * flat.size // n for i in range(n + 1)]
        pred = (me - 1) % n
        rounds = 2 * (n - 1)
        for k in range(rounds):
            s = (me - k - 1) % n if k < n - 1 else (me - (k - n + 1)) % n
            lo, hi = bounds[s], bounds[s + 1]
            self._ring_barrier(ctx, signal, k, 1)  # the predecessor's segment is ready
            got = plain(self.remote_load(ctx, row, pred, [0, lo], [1, max(hi - lo, 1)],
                                         [1, hi - lo])).reshape(-1)[:hi - lo]
            self._ring_barrier(ctx, signal, k, 2)  # the successor has read mine
            flat[lo:hi] = _reduce(op, flat[lo:hi], got) if k < n - 1 else got
        for k in range(rounds):
            for src in self._peers():
                self.notify(ctx, signal, me, [k, src], -2, _ADD)
        return target

    def _ring_barrier(self, ctx: Any, signal: np.ndarray, k: int, g: int) -> None:
        for peer in self._peers():
            self.notify(ctx, signal, peer, [k, self.rank], 1, _ADD)
        for src in self._peers():
            self.wait(ctx, signal, [k, src], g, _GE)

    def broadcast(self, ctx: Any, target: Any, signal: Any, root: Any) -> np.ndarray:
        root = int(root)
        if not 0 <= root < self.world.size:
            raise ctx.fault(f"pld.tensor.broadcast: root {root} is not a rank (0.."
                            f"{self.world.size - 1})", ctx.span)
        self._barrier(ctx, signal, 1)  # the root has staged its data
        if self.rank != root:
            got = self.remote_load(ctx, target, root, [0] * target.ndim, target.shape, None)
            self._barrier(ctx, signal, 2)  # everyone has read the root's data
            target[...] = plain(got)
        else:
            self._barrier(ctx, signal, 2)
        self._epilogue(ctx, signal, 2)
        return target

    def allgather(self, ctx: Any, local: Any, target: Any, signal: Any) -> np.ndarray:
        src = plain(local).reshape(1, -1)
        for d in range(self.world.size):
            self.put(ctx, target, d, src, [self.rank, 0], [0, 0], [1, src.shape[1]], 0, 0, 0,
                     False)
        self._barrier(ctx, signal, 1)
        self._epilogue(ctx, signal, 1)
        return target

    def reduce_scatter(self, ctx: Any, target: Any, signal: Any, op: Any) -> np.ndarray:
        op = ReduceOp(int(op))
        me = self.rank
        self._barrier(ctx, signal, 1)  # every rank has staged its chunks
        acc = np.array(target[me])
        for peer in self._peers():
            got = self.remote_load(ctx, target, peer, [me, 0], [1, target.shape[1]], None)
            acc = _reduce(op, acc, plain(got).reshape(acc.shape))
        self._barrier(ctx, signal, 2)  # every peer has read my chunks
        target[me] = acc
        self._epilogue(ctx, signal, 2)
        return target

    def all_to_all(self, ctx: Any, input: Any, target: Any, signal: Any) -> np.ndarray:
        src = plain(input)
        for d in range(self.world.size):
            self.put(ctx, target, d, src, [self.rank, 0], [d, 0], [1, target.shape[1]], 0, 0,
                     0, False)
        self._barrier(ctx, signal, 1)
        self._epilogue(ctx, signal, 1)
        return target

    def all_to_all_v(self, ctx: Any, input: Any, target: Any, signal: Any, send_counts: Any,
                     recv_counts: Any) -> np.ndarray:
        n = self.world.size
        cap = target.shape[0] // n
        src = plain(input)
        counts = plain(send_counts).reshape(-1)
        for d in range(n):
            self.put(ctx, target, d, src, [self.rank * cap, 0], [d * cap, 0],
                     [cap, target.shape[1]], 0, 0, 0, False)
            self.notify(ctx, recv_counts, d, [self.rank, 0], min(int(counts[d]), cap),
                        int(NotifyOp.Set))
        self._barrier(ctx, signal, 1)
        self._epilogue(ctx, signal, 1)
        return target


__all__ = ["MESH_CHUNK_BYTES", "Collectives"]
