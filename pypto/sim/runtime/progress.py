"""Progress of long runs: a run that takes more than a moment says how far it got.

Every run is watched by one monitor thread (started with the first run, asleep in
between): once a run has taken `delay` seconds (2 by default) its progress hook is
called with a `Progress` snapshot every `every` seconds, and once more, with
`done=True`, when the run ends. The hook is called from the monitor thread (the final
call from the run's own thread); a run pays nothing for being watched but registering
itself, and a run shorter than `delay` is never reported.

The hook of a run is the one in effect in the thread that starts it: `on_progress(hook)`
for the runs inside a `with` block (the workbench shows its bar this way), else the
process-wide default, `terminal_progress` (one line on stderr, redrawn in place on a
terminal), which `set_progress(None)` silences and `PYPTO_SIM_PROGRESS=0` turns off.
"""
from __future__ import annotations

import itertools
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class Progress:
    """How far one run got: a snapshot for a progress hook."""

    program: str  # the kernel's name
    seconds: float  # since the run started
    tasks: int  # tasks launched so far
    work: int  # loop iterations + blocks so far (what `SimConfig.max_work` limits)
    max_work: int
    count: int  # the how-many-th report of this run (1 = the first)
    done: bool = False  # the run ended (finished or failed)
    failed: bool = False  # it ended with an exception (a fault, Ctrl-C, ...)
    run: int = 0  # the same in every report of one run, another in other runs' reports

    def __str__(self) -> str:
        state = ("stopped" if self.failed else "finished") if self.done else "running"
        return (f"pypto-sim: {self.program} {state} ({self.seconds:.1f} s, {self.tasks:,} "
                f"tasks, {self.work:,} of at most {self.max_work:,} loop iterations and "
                "blocks)")


Hook = Callable[[Progress], Any]


class Watched(Protocol):
    """What the monitor reads of a run (`pypto.sim.machine.run.Run`)."""

    work: int
    next_tid: int


def terminal_progress(p: Progress) -> None:
    """The default hook: one line on stderr - redrawn in place on a terminal; elsewhere
    (logs, captured output) the first report, one every ~10 s, and the last."""
    stream = sys.stderr
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    if tty:
        stream.write("\r" + str(p).ljust(100) + ("\n" if p.done else ""))
    elif p.count == 1 or p.done or p.count % 20 == 0:
        stream.write(str(p) + "\n")
    else:
        return
    stream.flush()


class _Settings:
    __slots__ = ("default", "delay", "every")

    def __init__(self) -> None:
        off = os.environ.get("PYPTO_SIM_PROGRESS", "1").strip() in ("0", "off", "no")
        self.default: Hook | None = None if off else terminal_progress
        self.delay = 2.0
        self.every = 0.5


class _Local(threading.local):
    """Per thread: the (hook, delay, every) of the `on_progress` blocks it is in."""

    stack: list = []  # noqa: RUF012 - replaced per thread by on_progress, never mutated


_SETTINGS = _Settings()
_LOCAL = _Local()


# Held a moment to mark a run done or give it a lock of its own (its first report):
# the reports of a run and its end are serialised by that lock, so no report comes
# after the last, and a slow hook only holds up its own run's end.
_REPORTING = threading.Lock()


_RUN_NUMBERS = itertools.count(1)


class _Watch:
    """One run being watched."""

    __slots__ = ("count", "done", "every", "hook", "lock", "name", "next_at", "number", "run",
                 "t0")

    def __init__(self, run: Watched, name: str, hook: Hook, delay: float, every: float):
        self.run = run
        self.number = next(_RUN_NUMBERS)
        self.name = name
        self.hook: Hook | None = hook
        self.t0 = time.perf_counter()
        self.next_at = self.t0 + delay
        self.every = every
        self.count = 0
        self.done = False
        self.lock: threading.Lock | None = None  # made by its first report

    def report(self, now: float, done: bool = False, failed: bool = False) -> None:
        hook = self.hook
        if hook is None:
            return
        self.count += 1
        run = self.run
        p = Progress(self.name, now - self.t0, run.next_tid, run.work,
                     getattr(getattr(run, "settings", None), "max_work", 0), self.count,
                     done, failed, self.number)
        try:
            hook(p)
        except Exception:  # noqa: BLE001 - a broken hook must not break the run
            self.hook = None


class _Monitor:
    """The thread reporting on every watched run (see the module docstring)."""

    def __init__(self) -> None:
        self.active: dict[int, _Watch] = {}
        self.lock = threading.Lock()
        self.thread: threading.Thread | None = None
        self.idle = False  # asleep until a run starts (`wake`)
        self.wake = threading.Event()

    def ensure(self) -> None:
        with self.lock:
            if self.thread is None:
                self.thread = threading.Thread(target=self._loop, daemon=True,
                                               name="pypto-sim-progress")
                self.thread.start()

    def _loop(self) -> None:
        while True:
            # idle, it looks every 0.5 s (a run is first reported after 2 s by default);
            # a run asking for a report sooner wakes it (idle is raised before looking,
            # so a run starting meanwhile is seen)
            self.idle = True
            if not self.active:
                self.wake.wait(0.5)
            self.wake.clear()
            self.idle = False
            time.sleep(0.05)
            now = time.perf_counter()
            for w in list(self.active.values()):
                if now >= w.next_at:
                    with _REPORTING:
                        if w.done:
                            continue
                        if w.lock is None:
                            w.lock = threading.Lock()
                        lock = w.lock
                    with lock:
                        if not w.done:
                            w.report(now)
                    w.next_at = now + w.every

    def after_fork(self) -> None:
        self.__init__()  # type: ignore[misc]


_MONITOR = _Monitor()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_MONITOR.after_fork)


def watch(run: Watched, name: str) -> _Watch | None:
    """Start watching `run` (None when this thread's runs are not reported)."""
    stack = _LOCAL.stack
    if stack:
        hook, delay, every = stack[-1]
    else:
        hook, delay, every = _SETTINGS.default, _SETTINGS.delay, _SETTINGS.every
    if hook is None:
        return None
    w = _Watch(run, name, hook, delay, every)
    _MONITOR.active[id(w)] = w
    if _MONITOR.thread is None:
        _MONITOR.ensure()
    elif delay < 0.5 and _MONITOR.idle:
        _MONITOR.wake.set()
    return w


def unwatch(w: _Watch | None, failed: bool) -> None:
    """The run of `w` ended: its last report, if it was reported at all."""
    if w is None:
        return
    _MONITOR.active.pop(id(w), None)
    with _REPORTING:
        w.done = True
        lock = w.lock
    if lock is not None:  # it was reported (or is being reported right now)
        with lock:
            if w.count:
                w.report(time.perf_counter(), done=True, failed=failed)


@contextmanager
def on_progress(hook: Hook | None, *, delay: float = 2.0, every: float = 0.5
                ) -> Iterator[None]:
    """Report the runs this thread starts inside the block to `hook` (None: not at all),
    first after `delay` seconds, then every `every` seconds."""
    if "stack" not in _LOCAL.__dict__:
        _LOCAL.stack = []
    stack = _LOCAL.stack
    stack.append((hook, float(delay), float(every)))
    try:
        yield
    finally:
        stack.pop()


def set_progress(hook: Hook | None = terminal_progress, *, delay: float = 2.0,
                 every: float = 0.5) -> None:
    """The process-wide default hook (None: runs are not reported) and its timing."""
    _SETTINGS.default = hook
    _SETTINGS.delay = float(delay)
    _SETTINGS.every = float(every)


def get_progress() -> Hook | None:
    """The process-wide default hook (`terminal_progress` unless `set_progress` or
    `PYPTO_SIM_PROGRESS=0` changed it)."""
    return _SETTINGS.default


__all__ = ["Progress", "get_progress", "on_progress", "set_progress", "terminal_progress",
           "unwatch", "watch"]
