"""A supervised `pypto-sim` child ends when its supervisor does.

The corpus runner starts each file as `python -m pypto.cli FILE` with PYPTO_SIM_PARENT
set to its own pid. When that Dask worker dies - killed, out of memory - the child
ends too, instead of simulating on as an orphan while the scheduler hands its file to
another worker.
"""
from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

PARENT_ENV = "PYPTO_SIM_PARENT"
STARTED_ENV = "PYPTO_SIM_STARTED"
"""A path the child creates once its own start-up (interpreter, `import pypto.cli`) is
over, right before the file runs: a file's timeout counts from then, so a loaded machine
that takes seconds to import does not spend the file's budget."""
STARTUP_GRACE = 60.0
"""Seconds a child may take to start (before its file runs) on top of the timeout."""


def mark_started(version: str = "") -> None:
    """Create the STARTED_ENV path, if set (once; removed from the environment so the
    file's own subprocesses do not inherit it), holding {"pid", "version"}: the
    pypto-lab this child runs the file with, for the report."""
    path = os.environ.pop(STARTED_ENV, "")
    if path:
        with open(path, "w", encoding="ascii") as fh:
            fh.write(json.dumps({"pid": os.getpid(), "version": version}))


def started_version(path: Path) -> str | None:
    """The version a child wrote at its start (`mark_started`), or None."""
    try:
        return str(json.loads(path.read_text(encoding="ascii"))["version"]) or None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def watch_parent_from_env(every: float = 0.5) -> None:
    """Start watching the pid in PYPTO_SIM_PARENT, if set (once; the variable is
    removed so the file's own subprocesses do not inherit it)."""
    parent = os.environ.pop(PARENT_ENV, "")
    if not parent.isdigit():
        return
    pid = int(parent)
    # a warm-started child's parent is the zygote that forked it, not the runner: it
    # watches the runner's pid itself
    direct = os.getppid() == pid

    def alive() -> bool:
        if direct:
            return os.getppid() == pid
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    def watch() -> None:
        while alive():
            time.sleep(every)
        os._exit(137)  # the supervisor is gone: nobody will read our result

    threading.Thread(target=watch, name="pypto-sim-parent-watch", daemon=True).start()
