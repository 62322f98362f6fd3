"""What a corpus run hears from its Dask cluster between results: which file runs on
which worker since when, the workers that left, and the files that ran more than once.

Each task announces its start at the scheduler (`cluster.announce`, one event per
attempt under the run's own topic) and the scheduler announces every worker it removes
(its "all" topic); the client is subscribed to both (`cluster.subscribe`), so nothing
is polled to know this, and a file started twice - its first worker died under it - is
known as such, not guessed from timings.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable

Note = Callable[[str], None]


class Tracker:
    """Starts, worker departures and finishes of one run's files (by index)."""

    def __init__(self, labels: list[str], note: Note):
        self.labels = labels
        self.note = note
        self.lock = threading.Lock()  # the handlers run in the client's event-loop thread
        self.starts: dict[int, list[tuple[str, float]]] = {}  # i -> [(worker, since)]
        self.finished: set[int] = set()
        self.lost: list[str] = []  # workers that left while the run went on

    def started(self, msg: dict) -> None:
        """A task's start event ({"i", "worker"})."""
        i, worker = int(msg["i"]), str(msg["worker"])
        with self.lock:
            runs = self.starts.setdefault(i, [])
            runs.append((worker, time.monotonic()))
            again = len(runs) > 1
        if again:
            self.note(f"pypto-sim: {self.labels[i]} started again, on {worker} "
                      f"(run {len(runs)})")

    def worker_event(self, msg: dict) -> None:
        """An event of the scheduler's "all" topic: a removed worker is noted with the
        files it was running, which the scheduler hands to another worker."""
        if msg.get("action") != "remove-worker":
            return
        worker = str(msg.get("worker", "?"))
        with self.lock:
            self.lost.append(worker)
            running = [self.labels[i] for i, runs in self.starts.items()
                       if i not in self.finished and runs[-1][0] == worker]
        how = "left" if msg.get("expected") else "died"
        held = f" while running {', '.join(running)}: the scheduler runs it again" \
            if running else ""
        self.note(f"pypto-sim: worker {worker} {how}{held}")

    def finish(self, i: int, result: dict) -> None:
        """Mark file `i` done; a file that started more than once says so in `result`
        ("attempts": the workers it started on, in order)."""
        with self.lock:
            self.finished.add(i)
            workers = [w for w, _ in self.starts.get(i, [])]
        if len(workers) > 1:
            result["attempts"] = workers
            dead = [w for w in workers[:-1] if w in self.lost]
            why = f" (worker {', '.join(dead)} died running it)" if dead else ""
            note = f"ran {len(workers)} times{why}"
            result["reason"] = f"{result['reason']}; {note}" if result["reason"] else note

    def running(self) -> list[tuple[int, str, float]]:
        """(index, worker, seconds) of the files running now, longest first."""
        now = time.monotonic()
        with self.lock:
            rows = [(i, runs[-1][0], now - runs[-1][1]) for i, runs in self.starts.items()
                    if i not in self.finished]
        return sorted(rows, key=lambda row: -row[2])

    def status_line(self, submitted: int) -> str:
        """One line: the files running (with their time and worker), waiting, done."""
        rows = self.running()
        shown = ", ".join(f"{self.labels[i]} {s:.0f} s on {w}" for i, w, s in rows[:4])
        more = f", and {len(rows) - 4} more" if len(rows) > 4 else ""
        with self.lock:
            done = len(self.finished)
        waiting = submitted - done - len(rows)
        return (f"pypto-sim: {len(rows)} running" + (f" ({shown}{more})" if rows else "")
                + f", {max(waiting, 0)} waiting, {done} done")

    def ran_again(self) -> list[str]:
        """The labels of the finished files that ran more than once."""
        with self.lock:
            return [self.labels[i] for i, runs in sorted(self.starts.items())
                    if len(runs) > 1 and i in self.finished]
