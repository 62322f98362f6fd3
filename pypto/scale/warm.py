"""The runner's side of warm starts (`pypto.zygote`): one zygote per runner thread and
per run, started on first use; a file runs warm when the zygote preloaded everything the
file would import anyway, else cold (`runfile` starts `python -m pypto.cli FILE` itself).

torch is preloaded when it is installed, so a file runs warm only if it mentions torch
(every pypto-lib kernel file imports it for its specs and golden): a file that never
imports torch runs cold, in a process where torch is not loaded, as it would be.

A zygote holds the pypto it imported when it started. A Dask worker lives across runs
and across an upgrade of pypto-lab, so a zygote serves one run only (the run's token
comes with each file), and is restarted within a run when the package file it imported
changes on disk: every file of a run simulates with the pypto-lab a fresh process would
import, and reports its version.
"""
from __future__ import annotations

import functools
import importlib.util
import json
import os
import select
import signal
import subprocess
import sys
import threading
from pathlib import Path

from pypto.scale.procs import Limits, kill_session

_local = threading.local()
STARTUP_TIMEOUT = 120.0  # seconds a zygote may take to import its modules


def _stamp(path: str) -> tuple | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


class Zygote:
    """A preloaded process forking children on request (see `pypto.zygote`)."""

    def __init__(self, run: str = "") -> None:
        self.serves = run  # the run it serves (`zygote_for`)
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "pypto.zygote", str(req_r), str(rep_w)],
                # from "/", not the runner's directory (`-m` puts it first on sys.path,
                # and a checkout there would shadow the installed package)
                pass_fds=(req_r, rep_w), stdin=subprocess.DEVNULL, cwd="/",
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
        self.version: str = ready.get("version", "")
        self.package: str = ready.get("package", "")  # the pypto/__init__.py it imported
        self.stamp = _stamp(self.package)

    def stale(self) -> bool:
        """The package it imported changed on disk since (an upgrade, an edit)."""
        return self.package != "" and _stamp(self.package) != self.stamp

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
        kill_session(self.proc.pid)
        self.proc.wait()

    def run(self, argv: list[str], cwd: Path, env: dict, out: Path,
            watch: Limits) -> tuple[int, int, str, float] | None:
        """Run one file as a forked child under `watch`'s limits: (exit code, peak RSS
        bytes, why it was stopped or "", CPU seconds), as `runfile._wait` gives for a
        cold child; None when the zygote is gone before the fork (the caller starts the
        file cold)."""
        try:
            self.req.write(json.dumps({"argv": argv, "cwd": str(cwd), "env": env,
                                       "out": str(out)}) + "\n")
            forked = self._message(STARTUP_TIMEOUT)
        except (OSError, ValueError):
            return None
        if forked is None or "pid" not in forked:
            return None
        pid = forked["pid"]
        watch.start(pid)
        pause, why = 0.01, ""
        try:
            while True:
                done = self._message(pause)
                if done is not None:
                    break
                why = watch.check()
                if why:
                    kill_session(pid)
                    done = self._message(None)
                    break
                pause = min(pause * 1.5, 0.2)
        except OSError:  # the zygote died under its child (the machine's OOM killer)
            kill_session(pid)
            return -signal.SIGKILL, watch.peak, why, 0.0
        except BaseException:
            kill_session(pid)  # Ctrl-C, or the task cancelled: leave nothing behind
            raise
        assert done is not None
        scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes there, KiB here
        return (os.waitstatus_to_exitcode(done["status"]),
                max(done["maxrss"] * scale, watch.peak), why, done["cpu"])


def _mentions_torch(path: str) -> bool:
    try:
        return b"torch" in Path(path).read_bytes()
    except OSError:
        return False


@functools.cache
def _torch_installed() -> bool:
    return importlib.util.find_spec("torch") is not None


def zygote_for(path: str, run: str = "") -> Zygote | None:
    """This thread's zygote for `run` when `path` may run warm (see the module
    docstring), started on first use - a zygote of another run, or one whose package
    changed on disk, is replaced; None: run it cold."""
    if os.environ.get("PYPTO_SIM_COLD", "").strip() not in ("", "0"):
        return None
    if _torch_installed() and not _mentions_torch(path):
        return None  # it would run cold on the zygote's torch: do not start one for it
    z = getattr(_local, "zygote", None)
    if z is not None and (not z.alive() or z.serves != run or z.stale()):
        z.close()
        z = _local.zygote = None
    if z is None:
        if getattr(_local, "failed", False):
            return None
        try:
            z = _local.zygote = Zygote(run)
        except OSError:
            _local.failed = True  # (no fork on this platform, a broken install): cold
            return None
    if "torch" in z.loaded and not _mentions_torch(path):
        return None
    return z


__all__ = ["Zygote", "zygote_for"]
