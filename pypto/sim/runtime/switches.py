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
  thread too. The short path of a call sets the state `np.errstate(all="ignore")` would
  set, itself (`fp_ignore` / `fp_restore`: the context variable numpy keeps it in, set
  to the object errstate makes from the current one - remembered while the current one
  stays the same): `np.errstate`'s Python layers cost ~8 us a call with the caches a
  kernel's data leave. A numpy without that variable gets `np.errstate` itself.
"""
from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

try:  # (numpy >= 2: the error state is a context variable of "extobj" capsules)
    from numpy._core._ufunc_config import (  # type: ignore[attr-defined]
        _extobj_contextvar as _FP_STATE,
    )
    from numpy._core.umath import _make_extobj
except ImportError:  # pragma: no cover - another numpy: np.errstate itself
    _FP_STATE = None


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


# ((the last state seen, the "ignore" state made from it),): errstate's extobj keeps
# the current one's buffer size and error callback, so it is made from the current one;
# one pair in one slot, replaced whole (threads never see a torn pair)
_IGNORING: list = [None]


# (for the short path of a call, `pypto.sim.runtime.direct`, which inlines `fp_ignore`)
FP_STATE, IGNORING = _FP_STATE, _IGNORING


def fp_ignore() -> Any:
    """Ignore floating-point errors in this thread, as `np.errstate(all="ignore")`
    entered; the token to give `fp_restore`."""
    if _FP_STATE is None:  # pragma: no cover
        e = np.errstate(all="ignore")
        e.__enter__()
        return e
    cur = _FP_STATE.get()
    pair = _IGNORING[0]
    if pair is None or pair[0] is not cur:
        pair = _IGNORING[0] = (cur, _make_extobj(all="ignore"))
    return _FP_STATE.set(pair[1])


def fp_restore(token: Any) -> None:
    """Back to the floating-point error state before `fp_ignore` gave `token`."""
    if _FP_STATE is None:  # pragma: no cover
        token.__exit__(None, None, None)
        return
    _FP_STATE.reset(token)


__all__ = ["fp_ignore", "fp_restore", "gc_paused", "pause_gc", "resume_gc"]
