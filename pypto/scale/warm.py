"""The runner's side of warm starts (`pypto.zygote`): one zygote per runner thread,
started on first use; a file runs warm when the zygote preloaded everything the file
would import anyway, else cold (`runfile` starts `python -m pypto.cli FILE` itself).

torch is preloaded when it is installed, so a file runs warm only if it mentions torch
(every pypto-lib kernel file imports it for its specs and golden): a file that never
imports torch runs cold, in a process where torch is not loaded, as it would be.
"""
from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from pypto.scale.watchdog import STARTUP_GRACE

_local = threading.local()
STARTUP_TIMEOUT = 120.0  # seconds a zygote may take to import its modules


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


def kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class Zygote:
    """A preloaded process forking children on request (see `pypto.zygote`)."""

    def __init__(self) -> None:
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "pypto.zygote", str(req_r), str(rep_w)],
                pass_fds=(req_r, rep_w), stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True)
        finally:
            os.close(req_r)
            os.close(rep_w)
        self.req = os.fdopen(req_w, "w", encoding="utf-8", buffering=1)
        self.rep = os.fdopen(rep_r, "r", encoding="utf-8")
        ready = self._message(STARTUP_TIMEOUT)
        if ready is None or "ready" not in ready:
            self.close()
            raise OSError("the zygote did not start")
        self.loaded: list[str] = ready["ready"]

    def _message(self, timeout: float | None) -> dict | None:
        """The zygote's next message, or None after `timeout` seconds (None: wait)."""
        if timeout is not None:
            ready, _, _ = select.select([self.rep], [], [], max(0.0, timeout))
            if not ready:
                return None
        line = self.rep.readline()
        if not line:
            raise OSError("the zygote ended")
        return json.loads(line)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        try:
            self.req.close()
        except OSError:
            pass
        kill_group(self.proc.pid)
        self.proc.wait()

    def run(self, argv: list[str], cwd: Path, env: dict, out: Path, timeout: float | None,
            limit: int | None, started: Path | None) -> tuple[int, int, str, float] | None:
        """Run one file as a forked child: (exit code, peak RSS bytes, why it was killed
        or "", CPU seconds), as `runfile._wait` gives for a cold child; None when the
        zygote is gone before the fork (the caller starts the file cold)."""
        try:
            self.req.write(json.dumps({"argv": argv, "cwd": str(cwd), "env": env,
                                       "out": str(out)}) + "\n")
            forked = self._message(STARTUP_TIMEOUT)
        except (OSError, ValueError):
            return None
        if forked is None or "pid" not in forked:
            return None
        pid = forked["pid"]
        t0 = time.monotonic()
        deadline = None if timeout is None else t0 + timeout + (STARTUP_GRACE if started
                                                                else 0)
        pause, why = 0.01, ""
        try:
            while True:
                done = self._message(pause)
                if done is not None:
                    break
                if started is not None and timeout is not None and started.exists():
                    deadline, started = time.monotonic() + timeout, None
                if deadline is not None and time.monotonic() > deadline:
                    why = "timeout"
                elif limit is not None and (resident_bytes(pid) or 0) > limit:
                    why = "memory"
                if why:
                    kill_group(pid)
                    done = self._message(None)
                    break
                pause = min(pause * 1.5, 0.2)
        except OSError:  # the zygote died under its child (the machine's OOM killer)
            kill_group(pid)
            return -signal.SIGKILL, 0, why, 0.0
        except BaseException:
            kill_group(pid)  # Ctrl-C, or the task cancelled: leave nothing behind
            raise
        assert done is not None
        scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes there, KiB here
        return (os.waitstatus_to_exitcode(done["status"]), done["maxrss"] * scale, why,
                done["cpu"])


def _mentions_torch(path: str) -> bool:
    try:
        return b"torch" in Path(path).read_bytes()
    except OSError:
        return False


def zygote_for(path: str) -> Zygote | None:
    """This thread's zygote when `path` may run warm (see the module docstring), started
    on first use; None: run it cold."""
    if os.environ.get("PYPTO_SIM_COLD", "").strip() not in ("", "0"):
        return None
    z = getattr(_local, "zygote", None)
    if z is not None and not z.alive():
        z = None
    if z is None:
        if getattr(_local, "failed", False):
            return None
        try:
            z = _local.zygote = Zygote()
        except OSError:
            _local.failed = True  # (no fork on this platform, a broken install): cold
            return None
    if "torch" in z.loaded and not _mentions_torch(path):
        return None
    return z


__all__ = ["Zygote", "kill_group", "resident_bytes", "zygote_for"]
