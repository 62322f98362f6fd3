"""`HostComm`: what the pld ops of the `@pl.jit.host` function reach as `ctx.comm` -
window allocation and views, the world size, dispatches on ranks and the host
collectives (each a builtin queued on every rank)."""
from __future__ import annotations

import math
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from pypto.ir import dtypes
from pypto.ir.distributed import ReduceOp
from pypto.sim.cluster.windows import WindowBuffer, WindowError, WindowView
from pypto.sim.cluster.world import Dispatch, World, window_array

if TYPE_CHECKING:
    from pypto.sim.cluster.rank import RankComm
    from pypto.sim.machine.frame import TaskFrame


class HostComm:
    """The host side of a multi-card run (see the module docstring)."""

    def __init__(self, world: World):
        self.world = world
        self.commless = 0  # the dispatches without device= made so far

    def commless_device(self) -> int:
        """The rank of the next dispatch without device=: round-robin over the ranks in
        submit order, as the real runtime's `_resolve_chip_worker` hands them out."""
        rank = self.commless % self.world.size
        self.commless += 1
        return rank

    # -- windows -------------------------------------------------------------------------

    def world_size(self, ctx: Any) -> int:
        return self.world.size

    def alloc_window(self, ctx: Any, size: Any, dtype: Any, name: Any) -> WindowBuffer:
        if isinstance(size, (list, tuple)):
            dims = [int(d) for d in size]
            nbytes = math.prod(dims) * dtype.nbytes
        else:
            dims, nbytes = [], int(size)
        if nbytes <= 0 or any(d <= 0 for d in dims):
            raise ctx.fault(f"pld.alloc_window_buffer '{name}' asks for {nbytes} bytes "
                            f"({dims or size}); a window holds at least one element",
                            ctx.span)
        return self.world.windows.alloc(str(name), nbytes, ctx.span)

    def window(self, ctx: Any, buf: Any, shape: Any, dtype: Any) -> WindowView:
        if not isinstance(buf, WindowBuffer):
            raise ctx.fault("pld.window needs a window buffer (pld.alloc_window_buffer)",
                            ctx.span)
        view = WindowView(buf, tuple(int(d) for d in shape), dtype)
        try:
            self.world.windows.array(view, 0)  # checks it fits the buffer
        except WindowError as exc:
            raise ctx.fault(str(exc), ctx.span, tensor=buf.name) from None
        return view

    def comm_ctx(self, ctx: Any, dist_tensor: Any) -> Any:
        raise ctx.fault("pld.get_comm_ctx reads the rank of a kernel; the host has none",
                        ctx.span)

    # -- dispatch ------------------------------------------------------------------------

    def dispatch(self, ctx: Any, device: Any, func: str, args: list) -> None:
        r = int(device)
        if not 0 <= r < self.world.size:
            raise ctx.fault(
                f"device={r} dispatches {func} on a rank this run does not have: it runs on "
                f"{self.world.size} device(s) {list(self.world.device_ids)} (ranks 0.."
                f"{self.world.size - 1})", ctx.span,
                hint="loop over pl.range(pld.world_size()), or give more devices "
                     "(DistributedConfig(device_ids=[...]))")
        try:
            resolved = [window_array(self.world, a, r) for a in args]
        except WindowError as exc:
            raise ctx.fault(str(exc), ctx.span) from None
        self.world.queues[r].append(Dispatch(func, resolved, ctx.span))

    def before_launch(self, deps: Any) -> None:
        """(The host launches no task.)"""

    def local_access(self, fr: Any, buf: Any, lo: tuple, hi: tuple, write: bool,
                     atomic: bool, site: tuple | None) -> None:
        """(The host holds no window of its own.)"""

    def finish(self) -> None:
        """The host function returned: the ranks run what it dispatched."""
        self.world.run_ranks()

    def _builtin(self, ctx: Any, run: Any) -> None:
        for r in range(self.world.size):
            self.world.queues[r].append(Dispatch(None, [], ctx.span, partial(_on_rank, run, r)))

    def _arr(self, view: Any, r: int) -> np.ndarray:
        return self.world.windows.array(view, r) if isinstance(view, WindowView) else view

    def _signal(self, ctx: Any, signal: Any, name: str, lanes: int = 1) -> WindowView:
        if signal is not None:
            return signal
        n = self.world.size
        buf = self.world.windows.alloc(f"{name}.signal", n * lanes * 4, ctx.span)
        return WindowView(buf, (n, lanes), dtypes.INT32)

    # -- host collectives: one builtin dispatch per rank ---------------------------------

    def allreduce(self, ctx: Any, target: Any, signal: Any, op: Any, mode: Any,
                  core_num: Any) -> Any:
        sig = self._signal(ctx, signal, target.buffer.name, int(core_num))

        def run(comm: RankComm, fr: TaskFrame, r: int) -> None:
            fr.span = ctx.span
            comm.allreduce(fr, self._arr(target, r), self._arr(sig, r), ReduceOp(int(op)),
                           mode, core_num)
        self._builtin(ctx, run)
        return target

    def barrier(self, ctx: Any, signal: Any) -> Any:
        self._builtin(ctx, lambda comm, fr, r: comm.barrier(_at(fr, ctx), self._arr(signal, r)))
        return signal

    def broadcast(self, ctx: Any, target: Any, signal: Any, root: Any) -> Any:
        self._builtin(ctx, lambda comm, fr, r: comm.broadcast(
            _at(fr, ctx), self._arr(target, r), self._arr(signal, r), root))
        return target

    def allgather(self, ctx: Any, local: Any, target: Any, signal: Any) -> Any:
        self._builtin(ctx, lambda comm, fr, r: comm.allgather(
            _at(fr, ctx), self._arr(local, r), self._arr(target, r), self._arr(signal, r)))
        return target

    def reduce_scatter(self, ctx: Any, target: Any, signal: Any, op: Any) -> Any:
        self._builtin(ctx, lambda comm, fr, r: comm.reduce_scatter(
            _at(fr, ctx), self._arr(target, r), self._arr(signal, r), op))
        return target

    def all_to_all(self, ctx: Any, input: Any, target: Any, signal: Any) -> Any:
        self._builtin(ctx, lambda comm, fr, r: comm.all_to_all(
            _at(fr, ctx), self._arr(input, r), self._arr(target, r), self._arr(signal, r)))
        return target

    def all_to_all_v(self, ctx: Any, input: Any, target: Any, signal: Any, send_counts: Any,
                     recv_counts: Any) -> Any:
        self._builtin(ctx, lambda comm, fr, r: comm.all_to_all_v(
            _at(fr, ctx), self._arr(input, r), self._arr(target, r), self._arr(signal, r),
            self._arr(send_counts, r), self._arr(recv_counts, r)))
        return target

    def __getattr__(self, name: str) -> Any:
        if name in ("notify", "wait", "defer_wait", "remote_load", "remote_store", "put",
                    "get"):
            def device_only(ctx: Any, *args: Any) -> Any:
                raise ctx.fault(f"pld {name} runs on a rank (in a kernel), not in the "
                                "@pl.jit.host function", ctx.span)
            return device_only
        raise AttributeError(name)


def _at(fr: Any, ctx: Any) -> Any:
    fr.span = ctx.span
    return fr


__all__ = ["HostComm"]


def _on_rank(run: Any, rank: int, comm: Any, fr: Any) -> Any:
    """A host collective's step on one rank (bound per rank with functools.partial)."""
    return run(comm, fr, rank)
