"""Interleaved execution of the blocks of one SPMD task that meet at `pl.system.syncall`.

Each block runs in its own thread, but only one thread runs at a time: a block
runs until it reaches the barrier (or finishes), then hands the turn to the next
block in index order. When every block has arrived, the phase completes and the
blocks resume in index order again. The schedule is therefore deterministic (the
same as running the phases round-robin), and a block that finishes while others
wait at a barrier is reported as the deadlock it would be on hardware.
"""
from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable
from typing import Any

from pypto.errors import SimulationError
from pypto.ir.span import Span


class _Abort(BaseException):
    """Unwinds a waiting block thread after another block failed."""


class Interleaver:
    """Runs `run_block(b)` for the `n` blocks of one launch, each in its own thread, one
    thread at a time (see the module docstring). Each block has its own task frame; the
    frames share this interleaver, whose `phase` counts the barriers passed."""

    def __init__(self, n: int, run_block: Callable[[int], Any], describe: Callable[[], str]):
        self.n = n
        self.run_block = run_block
        self.describe = describe
        self.cv = threading.Condition()
        self.turn = 0
        self.arrived: set[int] = set()
        self.done: set[int] = set()
        self.phase = 0
        self.error: BaseException | None = None
        self.aborted = False
        self.results: list = [None] * n
        self.barrier_site: Span | None = None
        self.running: int | None = None  # the block running kernel code, if any
        self._local = threading.local()

    # -- the driver (main thread) ------------------------------------------------------

    def run(self) -> list:
        threads = [threading.Thread(target=self._main, args=(b,), daemon=True,
                                    name=f"pypto-sim-block-{b}") for b in range(self.n)]
        for t in threads:
            t.start()
        try:
            with self.cv:
                while len(self.done) < self.n and not self.aborted:
                    self.cv.wait()
        except BaseException:  # Ctrl-C (the driver is the thread signals reach)
            self._stop(threads)
            raise
        for t in threads:
            t.join()
        if self.error is not None:
            raise self.error
        return self.results

    def _stop(self, threads: list[threading.Thread]) -> None:
        """Unwind every block thread: the waiting ones see `aborted`; the one running
        kernel code gets `_Abort` raised in it at its next bytecode (a thread cannot be
        stopped otherwise), so no block outlives the interrupted call."""
        with self.cv:
            self.aborted = True
            running = self.running
            self.cv.notify_all()
            if running is not None:
                t = threads[running]
                if t.is_alive() and t.ident is not None:
                    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(t.ident),
                                                               ctypes.py_object(_Abort))
        for t in threads:
            t.join(timeout=10.0)

    # -- block threads -----------------------------------------------------------------

    def _wait_turn(self, b: int) -> None:
        while self.turn != b and not self.aborted:
            self.cv.wait()
        if self.aborted:
            raise _Abort()
        self.running = b  # (under the lock) b runs kernel code until it takes it again

    def _next_runnable(self, after: int) -> int | None:
        for k in range(1, self.n + 1):
            c = (after + k) % self.n
            if c not in self.done and c not in self.arrived:
                return c
        return None

    def _main(self, b: int) -> None:
        try:
            self._block(b)
        except _Abort:  # the stop of an interrupted call, arriving late
            pass

    def _block(self, b: int) -> None:
        self._local.block = b
        try:
            with self.cv:
                self._wait_turn(b)
            self.results[b] = self.run_block(b)
            with self.cv:
                self.running = None
                self.done.add(b)
                if self.arrived:
                    waiting = ", ".join(str(x) for x in sorted(self.arrived))
                    raise SimulationError(
                        f"deadlock: block {b} of {self.describe()} finished without reaching "
                        f"pl.system.syncall, while block(s) {waiting} wait at it "
                        f"(barrier phase {self.phase}); on hardware this launch hangs",
                        self.barrier_site, block=b,
                        hint="every block of the launch must execute the same number of "
                             "syncall barriers (check conditions around the barrier)")
                nxt = self._next_runnable(b)
                if nxt is not None:
                    self.turn = nxt
                self.cv.notify_all()
        except _Abort:
            return
        except BaseException as exc:  # noqa: BLE001 - forwarded to the driver
            with self.cv:
                if self.error is None:
                    self.error = exc
                self.aborted = True
                self.done.add(b)
                self.cv.notify_all()

    def barrier(self, span: Span | None = None) -> None:
        """Called by the running block when it executes syncall."""
        b = self._local.block
        with self.cv:
            self.running = None
            if self.barrier_site is None:
                self.barrier_site = span
            if self.done:
                finished = ", ".join(str(x) for x in sorted(self.done))
                raise SimulationError(
                    f"deadlock: block {b} of {self.describe()} waits at pl.system.syncall but "
                    f"block(s) {finished} already finished without reaching it; on hardware "
                    "this launch hangs", span, block=b,
                    hint="every block of the launch must execute the same number of syncall "
                         "barriers")
            self.arrived.add(b)
            if len(self.arrived) == self.n:
                self.arrived.clear()
                self.phase += 1
                self.turn = 0
            else:
                nxt = self._next_runnable(b)
                self.turn = nxt if nxt is not None else 0
            self.cv.notify_all()
            self._wait_turn(b)
