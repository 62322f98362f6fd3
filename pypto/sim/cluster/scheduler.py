"""The ranks of a multi-card run, stepped one at a time.

Each rank runs in a thread of its own, but only the rank holding the turn runs: it goes
on until it finishes a dispatch, finishes, or blocks (a `pld.system.wait` whose condition
does not hold yet), then hands the turn to the next rank, in rank order after it, that can
run - one that is not blocked, or whose condition another rank has since made true.
Handing the turn on at every dispatch is the runtime's rule: every rank is a worker that
runs its dispatches one at a time, in program order (simpler `docs/scheduler.md`: "each
worker FIFO progresses independently"; pypto's per-rank comm ordering token), while the
other workers run theirs - a rank does not race through dispatches its peers have not
started. Nothing else orders ranks: the runtime tracks no write-after-read edge, so a
dispatch that overwrites a window a peer's earlier dispatch reads is ordered only by
signals (the `window` check reports it when none does). The schedule is a
function of the program and its inputs alone, so a run gives the same outputs and the
same trace every time, and a wait blocks only its own rank.

When no rank can run and some have not finished, the ranks are deadlocked: the
scheduler asks `deadlock` for the error (it names each rank's wait) and every rank
thread unwinds.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


class _Abort(BaseException):
    """Unwinds a parked rank thread after another rank failed or the ranks deadlocked."""


class Blocked:
    """Why a rank waits: `ready()` says when it may go on; `what` describes the wait."""

    __slots__ = ("ready", "what")

    def __init__(self, ready: Callable[[], bool], what: Any):
        self.ready = ready
        self.what = what


class RankScheduler:
    """Runs `run_rank(r)` for ranks 0..n-1, one thread each, one at a time."""

    def __init__(self, n: int, run_rank: Callable[[int], None],
                 deadlock: Callable[[dict[int, Blocked], set[int]], BaseException]):
        self.n = n
        self.run_rank = run_rank
        self.deadlock = deadlock
        self.cv = threading.Condition()
        self.turn = 0
        self.done: set[int] = set()
        self.blocked: dict[int, Blocked] = {}
        self.error: BaseException | None = None
        self.aborted = False
        self.switches = 0  # times the turn passed between ranks (a determinism witness)
        self._local = threading.local()

    # -- the driver ------------------------------------------------------------------

    def run(self) -> None:
        threads = [threading.Thread(target=self._main, args=(r,), daemon=True,
                                    name=f"pypto-sim-rank-{r}") for r in range(self.n)]
        for t in threads:
            t.start()
        with self.cv:
            while len(self.done) < self.n and not self.aborted:
                self.cv.wait()
        for t in threads:
            t.join()
        if self.error is not None:
            raise self.error

    @property
    def rank(self) -> int:
        """The rank whose thread calls this."""
        return self._local.rank

    # -- rank threads ----------------------------------------------------------------

    def _main(self, r: int) -> None:
        self._local.rank = r
        try:
            with self.cv:
                self._wait_turn(r)
            self.run_rank(r)
            with self.cv:
                self.done.add(r)
                self._pass_turn(r)
        except _Abort:
            return
        except BaseException as exc:  # noqa: BLE001 - forwarded to the driver
            self._fail(r, exc)

    def _fail(self, r: int, exc: BaseException) -> None:
        with self.cv:
            if self.error is None:
                self.error = exc
            self.aborted = True
            self.done.add(r)
            self.cv.notify_all()

    def _wait_turn(self, r: int) -> None:
        while self.turn != r and not self.aborted:
            self.cv.wait()
        if self.aborted:
            raise _Abort()

    def _next(self, after: int) -> int | None:
        for k in range(1, self.n + 1):
            c = (after + k) % self.n
            if c in self.done:
                continue
            b = self.blocked.get(c)
            if b is None or b.ready():
                return c
        return None

    def _pass_turn(self, r: int) -> None:
        """(Holding the lock.) Rank `r` stops running: the next runnable rank goes on."""
        nxt = self._next(r)
        if nxt is None:
            if len(self.done) < self.n:
                self.error = self.deadlock(dict(self.blocked), set(self.done))
                self.aborted = True
        else:
            if nxt != r:
                self.switches += 1
            self.turn = nxt
        self.cv.notify_all()

    def yield_turn(self) -> None:
        """The running rank has finished a dispatch: the next runnable rank (in rank order
        after it) runs its own next step before this rank starts its next dispatch. Each
        rank is a worker running one dispatch at a time while the others run theirs, so no
        rank runs ahead of the others through dispatches they have not reached."""
        r = self._local.rank
        with self.cv:
            self._pass_turn(r)
            self._wait_turn(r)

    def block(self, ready: Callable[[], bool], what: Any) -> None:
        """The running rank waits until `ready()`; the other ranks run meanwhile."""
        if ready():
            return
        r = self._local.rank
        with self.cv:
            self.blocked[r] = Blocked(ready, what)
            self.turn = -1
            self._pass_turn(r)
            try:
                self._wait_turn(r)
            finally:
                self.blocked.pop(r, None)


__all__ = ["Blocked", "RankScheduler"]
