"""How an impl reaches the simulated ranks' runtime."""
from __future__ import annotations

from typing import Any


class NotOnRanks(RuntimeError):
    """A cross-rank op executed outside a multi-card run."""


def comm(ctx: Any) -> Any:
    """The communication runtime of the executing run (`ctx.run.comm`): the host's in a
    `@pl.jit.host` function, the rank's in a kernel it dispatched."""
    c = getattr(getattr(ctx, "run", None), "comm", None)
    if c is None:
        raise NotOnRanks("this pld op runs only on simulated ranks: launch the kernel from a "
                         "@pl.jit.host function (`for r in pl.range(pld.world_size()): "
                         "chip(..., device=r)`)")
    return c
