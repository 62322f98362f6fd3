"""The processes of one running file, and the limits it runs under.

A file runs in a session of its own (its process is the session's leader), so
everything it starts - a helper process, a pool of workers, their children - is in
that session unless it leaves it on purpose. The memory limit counts the whole
session (a helper holding 1.5 GB under a 512 MiB limit is over it), the timeout and
the memory limit kill the whole session, and its peak is the largest resident total
seen (or the file process's own peak from `wait4`, when larger).
"""
from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

from pypto.scale.watchdog import STARTUP_GRACE

SCAN_EVERY = 0.5
"""Seconds between two scans of /proc for the session's other processes (a scan costs
a few ms; the file's own process is read on every poll)."""


def resident_bytes(pid: int) -> int | None:
    """Resident bytes of a live process (Linux /proc; elsewhere None: no limit)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def session_members(sid: int) -> list[int]:
    """The pids of session `sid` (Linux /proc; elsewhere [])."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    found = []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                data = fh.read()
        except OSError:
            continue  # ended meanwhile
        # after "pid (comm) ": state ppid pgrp session ... (comm may hold spaces)
        fields = data[data.rfind(b")") + 2:].split()
        if len(fields) > 3 and int(fields[3]) == sid:
            found.append(int(name))
    return found


def kill_session(sid: int) -> None:
    """SIGKILL the process group `sid` and every other process of session `sid`."""
    for pid in [sid, *session_members(sid)]:
        try:
            if pid == sid:
                os.killpg(sid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


class Limits:
    """The timeout, memory limit and go-on check of one running file, whose process
    (`pid`, set once it is started; the leader of its session) the waiter polls.

    `timeout` counts from when `started` appears (the child's file began to run); a
    child that never gets there is given STARTUP_GRACE more seconds. Without `started`,
    from the first check. `wanted()` False means nobody will read the result (the task
    was cancelled, the worker is closing): the file is stopped."""

    def __init__(self, timeout: float | None, limit: int | None,
                 started: Path | None = None, wanted: Callable[[], bool] | None = None):
        self.pid = 0
        self.timeout, self.limit = timeout, limit
        self.started, self.wanted = started, wanted
        self.deadline: float | None = None
        self.peak = 0  # the largest resident total of the session seen
        self.helpers = 0  # other processes holding memory in the session at the peak
        self._others: list[int] = []
        self._scanned = 0.0

    def start(self, pid: int) -> Limits:
        """Watch `pid` from now."""
        self.pid = pid
        if self.timeout is not None:
            self.deadline = time.monotonic() + self.timeout + \
                (STARTUP_GRACE if self.started else 0)
        return self

    def _resident(self) -> int:
        now = time.monotonic()
        if now - self._scanned >= SCAN_EVERY:
            self._scanned = now
            self._others = [p for p in session_members(self.pid) if p != self.pid]
        total = resident_bytes(self.pid) or 0
        others = [resident_bytes(p) or 0 for p in self._others]
        total += sum(others)
        if total > self.peak:
            self.peak, self.helpers = total, sum(1 for b in others if b)
        return total

    def check(self) -> str:
        """Why the file must be stopped now ("timeout", "memory", "abandoned"), or ""."""
        if self.started is not None and self.timeout is not None and self.started.exists():
            self.deadline, self.started = time.monotonic() + self.timeout, None
        if self.deadline is not None and time.monotonic() > self.deadline:
            return "timeout"
        if self.limit is not None and self._resident() > self.limit:
            return "memory"
        if self.wanted is not None and not self.wanted():
            return "abandoned"
        return ""


__all__ = ["Limits", "kill_session", "resident_bytes", "session_members"]
