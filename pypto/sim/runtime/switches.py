"""The process-wide switches a run flips, safe when several threads run at once.

* The cyclic garbage collector is paused while any run is in progress: a traced run
  allocates many small acyclic objects (records, accesses), and full collections over
  them made the cost per task grow with the number of tasks. The GC's switch belongs to
  the process, so the runs count themselves in and out under a lock: the first one in
  remembers whether the GC was on and pauses it, the last one out turns it back on.
  (Each run reading `gc.isenabled()` for itself could see the pause of another run that
  ends a moment later, and then leave the GC off for good.)
* numpy's floating-point error state is per thread: a run ignores fp errors in its own
  thread (`pypto.ops.numeric.quiet_fp`), and the flag telling op impls so is per
  thread too.
"""
from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class _GcPause:
    __slots__ = ("lock", "runs", "was_enabled")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.runs = 0  # runs in progress, in any thread
        self.was_enabled = False  # the GC's state before the first of them

    def enter(self) -> None:
        with self.lock:
            if self.runs == 0:
                self.was_enabled = gc.isenabled()
                gc.disable()
            self.runs += 1

    def leave(self) -> None:
        with self.lock:
            self.runs -= 1
            if self.runs == 0 and self.was_enabled:
                gc.enable()


_GC = _GcPause()


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC while the body runs (counted across threads)."""
    _GC.enter()
    try:
        yield
    finally:
        _GC.leave()


def pause_gc() -> None:
    """`gc_paused` without a context manager (the hot path of a call): pair it with
    `resume_gc` in a `finally`."""
    _GC.enter()


def resume_gc() -> None:
    _GC.leave()


__all__ = ["gc_paused", "pause_gc", "resume_gc"]
