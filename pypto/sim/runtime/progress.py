"""Progress of long runs: a run that takes more than a moment says how far it got.

Every run is watched by one monitor thread (started with the first run, asleep in
between): once a run has taken `delay` seconds (2 by default) its progress hook is
called with a `Progress` snapshot every `every` seconds, and once more, with
`done=True`, when the run ends. The hook is called from the monitor thread (the final
call from the run's own thread); a run pays nothing for being watched but registering
itself (one tuple in a dict, taken out when it ends), and a run shorter than `delay` is
never reported.

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
        # (a multi-card run's world counts its ranks' work but has no one limit to quote)
        limit = f" of at most {self.max_work:,}" if self.max_work > 0 else ""
        return (f"pypto-sim: {self.program} {state} ({self.seconds:.1f} s, {self.tasks:,} "
                f"tasks, {self.work:,}{limit} loop iterations and blocks)")


Hook = Callable[[Progress], Any]


class Watched(Protocol):
    """What the monitor reads of a run (`pypto.sim.machine.run.Run`, or the world's
    counters of a multi-card run)."""

    @property
    def work(self) -> int: ...

    @property
    def next_tid(self) -> int: ...


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
    __slots__ = ("default", "delay", "every", "hooking")

    def __init__(self) -> None:
        off = os.environ.get("PYPTO_SIM_PROGRESS", "1").strip() in ("0", "off", "no")
        self.default: Hook | None = None if off else terminal_progress
        self.delay = 2.0
        self.every = 0.5
        # (what a run registers)
        self.hooking: tuple[Hook | None, float, float] = (self.default, self.delay, self.every)


class _Local(threading.local):
    """Per thread: the (hook, delay, every) of the `on_progress` blocks it is in."""

    stack: list = []  # noqa: RUF012 - replaced per thread by on_progress, never mutated


_SETTINGS = _Settings()
_LOCAL = _Local()


_RUN_NUMBERS = itertools.count(1)

# What `watch` registers, one tuple per run: (the run, its name, (hook, delay, every), its
# start). The monitor makes a `_Watch` of it only when the run has taken `delay` seconds:
# a short run costs one tuple and two dict operations (sim speed, issue 17).
Entry = tuple


class _Watch:
    """One run being reported on (made by the monitor at its first report)."""

    __slots__ = ("count", "done", "every", "hook", "lock", "name", "next_at", "number", "run",
                 "t0")

    def __init__(self, run: Watched, name: str, hook: Hook, t0: float, every: float):
        self.run = run
        self.number = next(_RUN_NUMBERS)
        self.name = name
        self.hook: Hook | None = hook
        self.t0 = t0
        self.next_at = t0
        self.every = every
        self.count = 0
        self.done = False
        # held while reporting; the run's end takes it too, so no report comes after the
        # last and a slow hook only holds up its own run's end
        self.lock = threading.Lock()

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
        self.active: dict[int, Entry] = {}  # id(entry) -> entry, the runs in progress
        # id(entry) -> its _Watch, the runs reported on. The monitor puts a run's watch
        # here before it looks whether the run is still active; `unwatch` takes the entry
        # out of `active` before it looks here. So either the monitor sees the run ended
        # (and drops the watch unreported), or `unwatch` finds the watch (and ends it
        # under its lock): a run that was never reported ends with two dict operations.
        self.reported: dict[int, _Watch] = {}
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
        active, reported = self.active, self.reported
        while True:
            # idle, it looks every 0.5 s (a run is first reported after 2 s by default);
            # a run asking for a report sooner wakes it (idle is raised before looking,
            # so a run starting meanwhile is seen)
            self.idle = True
            if not active:
                self.wake.wait(0.5)
            self.wake.clear()
            self.idle = False
            time.sleep(0.05)
            now = time.perf_counter()
            for key, e in list(active.items()):
                w = reported.get(key)
                if w is None:
                    run, name, (hook, delay, every), t0 = e
                    if now < t0 + delay or hook is None:
                        continue
                    w = _Watch(run, name, hook, t0, every)
                    reported[key] = w
                    if active.get(key) is not e:  # it ended meanwhile: never reported
                        reported.pop(key, None)
                        continue
                if now >= w.next_at:
                    with w.lock:
                        if not w.done:
                            w.report(now)
                    w.next_at = now + w.every

    def after_fork(self) -> None:
        self.__init__()  # type: ignore[misc]


_MONITOR = _Monitor()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_MONITOR.after_fork)

# (for the short path of a call, `pypto.sim.runtime.direct`, which inlines `watch` and
# `unwatch` in their common case; a fork re-initialises the monitor in place)
LOCAL, MONITOR, SETTINGS = _LOCAL, _MONITOR, _SETTINGS


def watch(run: Watched, name: str) -> Entry | None:
    """Start watching `run` (None when this thread's runs are not reported): the token
    to give `unwatch` when it ends."""
    stack = _LOCAL.stack
    hooking = stack[-1] if stack else _SETTINGS.hooking
    if hooking[0] is None:
        return None
    e = (run, name, hooking, time.perf_counter())
    monitor = _MONITOR
    monitor.active[id(e)] = e
    if monitor.thread is None:
        monitor.ensure()
    elif hooking[1] < 0.5 and monitor.idle:
        monitor.wake.set()
    return e


def unwatch(e: Entry | None, failed: bool) -> None:
    """The run `watch` gave `e` for ended: its last report, if it was reported at all."""
    if e is None:
        return
    key = id(e)
    monitor = _MONITOR
    monitor.active.pop(key, None)
    w = monitor.reported.get(key)  # (after the pop: see `_Monitor.reported`)
    if w is None:
        return
    monitor.reported.pop(key, None)
    w.done = True  # (before taking the lock: a report waiting for it sees the end)
    with w.lock:
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
    _SETTINGS.hooking = (hook, _SETTINGS.delay, _SETTINGS.every)


def get_progress() -> Hook | None:
    """The process-wide default hook (`terminal_progress` unless `set_progress` or
    `PYPTO_SIM_PROGRESS=0` changed it)."""
    return _SETTINGS.default


__all__ = ["Progress", "get_progress", "on_progress", "set_progress", "terminal_progress",
           "unwatch", "watch"]
