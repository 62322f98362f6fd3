"""The precision probe: an identity op the shadow run (`pypto.precision`) wraps around
every value it compares between the kernel and its float64 shadow.

No kernel can spell it (`public=False`): `pypto.precision.instrument` inserts it around
each value-producing op of a compiled program. In a run it hands its operand, with the
task frame it runs in and the number of the site it watches, to the sink installed by
`probing`, then returns the operand itself (not a copy: a view stays the view it was).
With no sink installed it is only the identity.

The sink is process-wide rather than a context variable because the simulator runs
blocks and ranks on threads of its own, which a context variable does not follow; one
probed run at a time per process (`probing` refuses a second).
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from pypto.ops.registry import Unit, defop
from pypto.ops.rules import int_arg, shaped

Sink = Callable[[Any, int, Any], None]  # (task frame, site number, value)

_SINK: list[Sink | None] = [None]
_LOCK = threading.Lock()


@contextmanager
def probing(sink: Sink) -> Iterator[None]:
    """Install `sink` for the probes of the runs made inside the block."""
    with _LOCK:
        if _SINK[0] is not None:
            raise RuntimeError("a probed run is already in progress in this process")
        _SINK[0] = sink
    try:
        yield
    finally:
        _SINK[0] = None


def _probe_impl(x: Any, site: Any, *, ctx: Any = None) -> Any:
    sink = _SINK[0]
    if sink is not None:
        sink(ctx, int(site), x)
    return x


def _probe(x, site):
    """The value `x` unchanged; a probed run hands it to its sink as site `site`."""
    int_arg(site, "site")
    return shaped(x, "x")


PROBE = defop("shadow.probe", unit=Unit.META, impl=_probe_impl, wants_ctx=True,
              public=False)(_probe)
