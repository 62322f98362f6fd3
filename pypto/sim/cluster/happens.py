"""What orders the ranks: vector clocks carried by signals, and the window race check.

Each rank has a vector clock. A notify releases: the rank's clock ticks, and the signal
cell it lands in takes the join of its clock and the rank's (a credit counter collects
the clocks of every notify added into it). A wait that returns acquires: the rank's
clock joins the clock of the cell it read. So an access by rank A happens before an
access by rank B exactly when a chain of notify -> wait leads from after the first to
before the second - whatever order the scheduler happened to run them in.

With the "window" or "race" check every access of a window (by its owner, or by a peer
through a remote load / store / put / get) is logged with the accessing rank's clock and
the dispatch it ran in; after the run two accesses of one window by two ranks race when
their boxes overlap, one writes, they are not both atomic adds, and neither happens
before the other.

A race whose first access's dispatch ends before the second's starts, in the pace of
the runtime's workers, is ordered only by that pace (`by_timing`). The pace: every rank is
a worker running its dispatches one at a time; a dispatch takes one step, or lasts until
the notifies its waits needed were sent (each notify is stamped with the start of the
dispatch sending it); the ranks start together. The runtime tracks no write-after-read
edge (simpler `docs/war-anti-dependency.md`), so a rank overwriting a window in a later
host round than a peer's remote read of it is ordered by nothing but the workers keeping
pace. The simulator's ranks keep pace (`RankScheduler`), so the values come out as on a
device that does; the "race" check reports these races, the default "window" check only
the ones whose dispatches run side by side.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pypto.errors import SimulationError
from pypto.ir.span import Span


class Clocks:
    """The vector clocks of the ranks and of the signal cells."""

    def __init__(self, n: int):
        self.n = n
        self.now: list[tuple[int, ...]] = [tuple(1 if i == r else 0 for i in range(n))
                                           for r in range(n)]
        self.cells: dict[tuple, tuple[int, ...]] = {}
        # the pace (see the module docstring): per rank, the step its dispatch started
        # at and the latest step a wait of it had to wait for; per cell, the latest step
        # a notify into it was sent at
        self.started = [0] * n
        self.reached = [0] * n
        self.stamps: dict[tuple, int] = {}

    def begin_dispatch(self, r: int) -> int:
        """Rank `r` starts a dispatch where its previous one ended; returns the step."""
        self.started[r] = self.reached[r]
        return self.started[r]

    def end_dispatch(self, r: int) -> int:
        """Rank `r`'s dispatch has returned: one step after it started, or when the
        notifies it waited for were sent, whichever is later."""
        self.reached[r] = max(self.started[r] + 1, self.reached[r])
        return self.reached[r]

    def _tick(self, r: int) -> None:
        c = list(self.now[r])
        c[r] += 1
        self.now[r] = tuple(c)

    def release(self, r: int, cell: tuple) -> None:
        """Rank `r` notifies `cell`: the cell learns everything `r` did so far."""
        self._tick(r)
        old = self.cells.get(cell)
        mine = self.now[r]
        self.cells[cell] = mine if old is None else tuple(map(max, old, mine))
        self.stamps[cell] = max(self.stamps.get(cell, 0), self.started[r])
        self._tick(r)  # what r does next is not covered by this notify

    def acquire(self, r: int, cell: tuple) -> None:
        """Rank `r`'s wait on `cell` returned: it learns what the notifiers did."""
        got = self.cells.get(cell)
        if got is not None:
            self.now[r] = tuple(map(max, self.now[r], got))
        self.reached[r] = max(self.reached[r], self.stamps.get(cell, 0))
        self._tick(r)


@dataclass
class WindowAccess:
    """One access of one rank's copy of a window (a box in the window view's
    coordinates, which are the same on every rank)."""

    rank: int  # who accessed
    lo: tuple
    hi: tuple
    write: bool
    atomic: bool
    clock: tuple
    what: str  # "pl.store", "pld.tile.remote_store", ...
    span: Span | None
    dispatch: int = -1  # the world-wide number of the dispatch it ran in (World.dispatches)
    last_dispatch: int = -1  # of the last access merged into it (the same otherwise)

    def grow(self, lo: tuple, hi: tuple) -> bool:
        """Extend the box by [lo, hi) when the union is still a box."""
        if lo == self.lo and hi == self.hi:
            return True
        diff = [ax for ax in range(len(lo)) if (lo[ax], hi[ax]) != (self.lo[ax], self.hi[ax])]
        if len(diff) != 1:
            return False
        ax = diff[0]
        if hi[ax] < self.lo[ax] or lo[ax] > self.hi[ax]:
            return False
        self.lo = self.lo[:ax] + (min(lo[ax], self.lo[ax]),) + self.lo[ax + 1:]
        self.hi = self.hi[:ax] + (max(hi[ax], self.hi[ax]),) + self.hi[ax + 1:]
        return True


@dataclass(frozen=True)
class WindowRace:
    """Two unordered accesses of the same elements of one rank's window."""

    window: str
    owner: int  # the rank whose copy of the window they touch
    first: WindowAccess
    second: WindowAccess
    by_timing: bool = False  # the first's dispatch had finished before the second's began

    def text(self) -> str:
        a, b = self.first, self.second
        lo = tuple(max(x, y) for x, y in zip(a.lo, b.lo))
        hi = tuple(min(x, y) for x, y in zip(a.hi, b.hi))
        where = ", ".join(f"{x}:{y}" for x, y in zip(lo, hi))
        return (f"window '{self.window}' of rank {self.owner}, elements [{where}]: "
                f"rank {a.rank} {_verb(a)} with {a.what} at {_at(a.span)} and rank {b.rank} "
                f"{_verb(b)} with {b.what} at {_at(b.span)}, with no notify -> wait "
                f"between them" + (_BY_TIMING if self.by_timing else ""))


_BY_TIMING = ("; only the timing of the ranks' dispatches orders them (the first "
              "dispatch had finished before the second began, but the runtime tracks no "
              "write-after-read edge between ranks: on a device where the first rank lags "
              "the second overtakes it)")


def _verb(a: WindowAccess) -> str:
    return "adds" if a.atomic else "writes" if a.write else "reads"


def _at(span: Span | None) -> str:
    return f"{span.file}:{span.line}" if span is not None and span.known else "?"


class WindowRaceError(SimulationError):
    """Ranks touch the same window elements with nothing ordering them (checks="race")."""

    code = "S021"

    def __init__(self, races: list[WindowRace], result: Any = None):
        first = races[0]
        more = f" (and {len(races) - 1} more)" if len(races) > 1 else ""
        super().__init__(
            f"race between ranks on {first.text()}{more}", first.second.span,
            hint=("order the overwrite after the peer's read: the reader notifies after "
                  "its read, the writer waits for it before writing (or a barrier, "
                  "pld.tensor.barrier, between the read's round and the write's)")
            if first.by_timing and not first.first.write else
            "order the accesses: the writer notifies after its write "
                 "(pld.system.notify), the other rank waits for it (pld.system.wait) "
                 "before touching the elements",
            note="\n".join(r.text() for r in races[1:8]) or None)
        self.races = races
        self.result = result


class AccessLog:
    """The window accesses of one run, per (window, owning rank), in program order."""

    def __init__(self) -> None:
        self.by_window: dict[tuple[int, int], list[WindowAccess]] = {}
        self.names: dict[int, str] = {}

    def add(self, window: Any, owner: int, acc: WindowAccess) -> None:
        key = (window.index, owner)
        self.names[window.index] = window.name
        accs = self.by_window.setdefault(key, [])
        last = accs[-1] if accs else None
        if last is not None and last.rank == acc.rank and last.write == acc.write and \
                last.atomic == acc.atomic and last.clock == acc.clock and \
                last.what == acc.what and last.grow(acc.lo, acc.hi):
            # merged across the rank's dispatches: the box spans them all (a pair is then
            # ordered by pace only if the whole span is)
            last.last_dispatch = acc.dispatch
            return
        acc.last_dispatch = acc.dispatch
        accs.append(acc)

    def races(self, dispatches: list[list[int]], limit: int = 100) -> list[WindowRace]:
        """The racing pairs; `dispatches[d]` is dispatch d's [start, end] in the pace of
        the workers, which says whether a pair is ordered by that pace alone."""
        found: list[WindowRace] = []
        for (index, owner), accs in self.by_window.items():
            for i, a in enumerate(accs):
                for b in accs[i + 1:]:
                    if a.rank == b.rank or not (a.write or b.write) or (a.atomic and b.atomic):
                        continue
                    if not _overlap(a, b) or _before(a, b) or _before(b, a):
                        continue
                    timed = a.last_dispatch >= 0 and b.dispatch >= 0 and \
                        dispatches[a.last_dispatch][1] <= dispatches[b.dispatch][0]
                    found.append(WindowRace(self.names[index], owner, a, b, timed))
                    if len(found) >= limit:
                        return found
        return found


def _overlap(a: WindowAccess, b: WindowAccess) -> bool:
    return all(x0 < y1 and y0 < x1 for x0, x1, y0, y1 in zip(a.lo, a.hi, b.lo, b.hi))


def _before(a: WindowAccess, b: WindowAccess) -> bool:
    """Access `a` happens before access `b` (their ranks differ)."""
    return a.clock[a.rank] <= b.clock[a.rank]


__all__ = ["AccessLog", "Clocks", "WindowAccess", "WindowRace", "WindowRaceError"]
