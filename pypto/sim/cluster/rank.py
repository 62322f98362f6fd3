"""`RankComm`: what the pld ops of a kernel running on one rank reach as `ctx.comm` - its
rank and group, its signals (`signals.Signals`), its one-sided transfers
(`rma.Transfers`) and its collectives (`collectives.Collectives`), three parts it holds
and whose ops it hands on."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pypto.sim.cluster.collectives import Collectives
from pypto.sim.cluster.rma import Transfers
from pypto.sim.cluster.signals import Signals, Wait

if TYPE_CHECKING:
    from pypto.sim.cluster.world import World
    from pypto.sim.machine.run import Run


@dataclass(frozen=True)
class CommContext:
    """`pld.get_comm_ctx(window)`: the rank running the kernel and the size of its group."""

    rank: int
    nranks: int


class RankComm:
    """The communication runtime of rank `rank` (see the module docstring)."""

    def __init__(self, world: World, rank: int, run: Run):
        self.world = world
        self.rank = rank
        self.run = run
        self.deferred: dict[int, list[Wait]] = {}  # task id -> its deferred conditions
        s = self.signals = Signals(world, rank, self.deferred)
        t = self.transfers = Transfers(world, rank)
        c = self.collectives = Collectives(world, rank, s, t)
        # the ops (`pypto.ops.distributed`: `ctx.comm.<op>(ctx, ...)`)
        self.notify, self.wait, self.defer_wait, self.complete = \
            s.notify, s.wait, s.defer_wait, s.complete
        self.remote_load, self.remote_store, self.put, self.get = \
            t.remote_load, t.remote_store, t.put, t.get
        self.barrier, self.allreduce, self.broadcast, self.allgather = \
            c.barrier, c.allreduce, c.broadcast, c.allgather
        self.reduce_scatter, self.all_to_all, self.all_to_all_v = \
            c.reduce_scatter, c.all_to_all, c.all_to_all_v

    def comm_ctx(self, ctx: Any, dist_tensor: Any) -> CommContext:
        if self.world.windows.locate(dist_tensor) is None:
            raise ctx.fault("pld.get_comm_ctx needs a window (pld.window); this tensor is "
                            "not one", ctx.span)
        return CommContext(self.rank, self.world.size)

    def _host_only(self, ctx: Any, what: str) -> Any:
        raise ctx.fault(f"{what} runs in the @pl.jit.host function, not on a rank", ctx.span)

    def alloc_window(self, ctx: Any, size: Any, dtype: Any, name: Any) -> Any:
        return self._host_only(ctx, "pld.alloc_window_buffer")

    def window(self, ctx: Any, buf: Any, shape: Any, dtype: Any) -> Any:
        return self._host_only(ctx, "pld.window")

    def world_size(self, ctx: Any) -> int:
        return self._host_only(ctx, "pld.world_size")

    def finish(self) -> None:
        """A dispatch's function returned: it completes when its deferred waits hold."""
        self.complete()

    def local_access(self, fr: Any, buf: Any, lo: tuple, hi: tuple, write: bool,
                     atomic: bool, site: tuple | None) -> None:
        """A traced access of this rank's own window `buf` by the op at `site` (its span
        and name: a pl.load, a pl.store, ...; None when the trace has no site for it)."""
        at = self.world.windows.locate(buf.array)
        if at is not None:
            span, op = site if site is not None else (None, "a local access")
            if site is not None and not op.startswith(("pl.", "pld.")):
                op = "pl." + op  # the trace keeps the registry's short name
            self.world.access(fr, self.rank, at, self.rank, lo, hi, write, atomic, op,
                              span=span, a=buf.array)

    def before_launch(self, deps: Any) -> None:
        """A task is about to start: the deferred completions it depends on must hold."""
        if self.deferred and deps:
            self.complete(deps)


__all__ = ["CommContext", "RankComm"]
