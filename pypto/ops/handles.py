"""Ops whose results are opaque handles (`HandleType`): allocations and the asynchronous
GM->L2 prefetch family.

* `pl.tile.alloc` / `pl.tensor.alloc` declare a memory allocation and return its `pl.Ptr`
  (the real toolchain prints them after memory planning, so printed IR that carries them
  reads back). The simulator gives every value its own storage, so an allocation holds
  no data: its handle records the space and the size.
* `pl.prefetch.*` warms L2 with a GM region: `make_context()` -> `async_prefetch(src, ctx)`
  (an event) -> `session(ctx)` -> `wait(event, session)` (a BOOL done flag). A prefetch
  changes no tensor value, so a kernel computes the same with or without it; the
  simulator checks the handles are used as the protocol says and that `src` is a flat
  contiguous logical-1-D region, as the real verifier does.
"""
from __future__ import annotations

from typing import Any

from pypto.ir import dtypes
from pypto.ir.record import record
from pypto.ir.types import HandleType, MemorySpace, ScalarType, TensorType
from pypto.ops.registry import OpError, Unit, defop
from pypto.ops.rules import is_static, py_value, type_of

PTR = HandleType("Ptr")
CONTEXT = HandleType("PrefetchAsyncContext")
EVENT = HandleType("AsyncEvent")
SESSION = HandleType("AsyncSession")


@record(eq=False, slots=False)
class Allocation:
    """The value of a `pl.Ptr` in the simulator: which space, how many bytes."""

    memory_space: MemorySpace
    size: int


# --- allocations ----------------------------------------------------------------------


def _alloc_rule(memory_space, size):
    if not isinstance(py_value(memory_space), MemorySpace):
        raise OpError(f"memory_space must be a pl.MemorySpace (pl.Mem.Vec, ...), got "
                      f"{py_value(memory_space)!r}", arg="memory_space")
    t = type_of(size)
    if not is_static(size) and isinstance(t, ScalarType):
        if not t.dtype.is_int():
            raise OpError(f"size is a byte count: an integer, got {t}", arg="size")
    else:
        n = py_value(size)
        if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
            raise OpError(f"size is a byte count and must be a positive integer, got {n!r}",
                          arg="size")
    return PTR


def _tile_alloc(memory_space, size, *, pinned=False):
    """Declare an on-chip allocation of `size` bytes in `memory_space`; returns its
    `pl.Ptr` (`pinned`: an author-placed `pl.MemRef` the planners keep apart)."""
    return _alloc_rule(memory_space, size)


def _tensor_alloc(memory_space, size):
    """Declare an allocation of `size` bytes in `memory_space`; returns its `pl.Ptr`."""
    return _alloc_rule(memory_space, size)


defop("tile.alloc", unit=Unit.META,
      impl=lambda memory_space, size, pinned=False: Allocation(memory_space, int(size)),
      names=("pl.tile.alloc",))(_tile_alloc)
defop("tensor.alloc", unit=Unit.META,
      impl=lambda memory_space, size: Allocation(memory_space, int(size)),
      names=("pl.tensor.alloc",))(_tensor_alloc)


# --- asynchronous prefetch ------------------------------------------------------------


class PrefetchContext:
    """A prefetch context: the events started on it and its session."""

    __slots__ = ("events", "session")

    def __init__(self) -> None:
        self.events: list[PrefetchEvent] = []
        self.session = PrefetchSession(self)


@record(eq=False, slots=False)
class PrefetchEvent:
    context: PrefetchContext
    nbytes: int


@record(eq=False, slots=False)
class PrefetchSession:
    context: PrefetchContext


def _handle(x: Any, want: HandleType, arg: str, producer: str) -> None:
    if type_of(x) != want:
        raise OpError(f"expects {arg} to be a {want.name} (the result of {producer}), got "
                      f"{type_of(x) or py_value(x)!r}", arg=arg)


def _make_context():
    """A prefetch context whose SDMA workspace the runtime provides."""
    return CONTEXT


def _async_prefetch(src, ctx):
    """Start pulling the GM region `src` into L2 (a flat contiguous logical-1-D tensor:
    static, every dim but the last 1); returns the completion event. No value changes."""
    t = type_of(src)
    if not isinstance(t, TensorType):
        raise OpError(f"src must be a GM tensor (a prefetch reads global memory), got {t}",
                      arg="src")
    if t.rank == 0:
        raise OpError("src must have rank >= 1", arg="src")
    for i, d in enumerate(t.shape):
        if not isinstance(d, int):
            raise OpError(f"src needs a fully static shape (axis {i} is dynamic): a prefetch "
                          "moves a compile-time byte extent", arg="src")
        if i < t.rank - 1 and d != 1:
            raise OpError(f"src must be a flat contiguous logical 1D GM region (every axis but "
                          f"the last 1), but axis {i} is {d}", arg="src",
                          hint="reshape the tensor to [N] or [1, ..., N] before prefetching")
    _handle(ctx, CONTEXT, "ctx", "pl.prefetch.make_context()")
    return EVENT


def _session(ctx):
    """The asynchronous session of a prefetch context (the second operand of `wait`)."""
    _handle(ctx, CONTEXT, "ctx", "pl.prefetch.make_context()")
    return SESSION


def _wait(event, session):
    """Wait until `event` has landed within `session`; a BOOL done flag."""
    _handle(event, EVENT, "event", "pl.prefetch.async_prefetch(...)")
    _handle(session, SESSION, "session", "pl.prefetch.session(ctx)")
    return ScalarType(dtypes.BOOL)


def _async_prefetch_impl(src, ctx):
    ev = PrefetchEvent(ctx, int(src.nbytes))
    ctx.events.append(ev)
    return ev


def _wait_impl(event, session, *, ctx):
    if event.context is not session.context:
        raise ctx.fault("pl.prefetch.wait: the event was started on another prefetch context "
                        "than the session's; it never completes within this session", ctx.span,
                        hint="wait with pl.prefetch.session(c) of the context c the event was "
                             "started on")
    return True


defop("prefetch.make_context", unit=Unit.META, impl=PrefetchContext,
      names=("pl.prefetch.make_context",))(_make_context)
defop("prefetch.async_prefetch", unit=Unit.META, impl=_async_prefetch_impl,
      names=("pl.prefetch.async_prefetch",))(_async_prefetch)
defop("prefetch.session", unit=Unit.META, impl=lambda ctx: ctx.session,
      names=("pl.prefetch.session",))(_session)
defop("prefetch.wait", unit=Unit.META, impl=_wait_impl, wants_ctx=True,
      names=("pl.prefetch.wait",))(_wait)
