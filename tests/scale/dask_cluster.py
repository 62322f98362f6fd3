"""A real Dask cluster on 127.0.0.1 for the tests: `dask scheduler` and `dask worker`
processes, as a team would start them. Ports are chosen by the scheduler itself
(--port 0) and passed on through a scheduler file, so parallel runs cannot clash."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

# the interpreter running the tests, so the cluster imports what the tests import (a `dask`
# script found on PATH may belong to another environment, whose pypto unpickles differently)
DASK = [sys.executable, "-m", "dask"]


def _wait(predicate, what: str, timeout: float = 60.0) -> None:
    t0 = time.monotonic()
    while not predicate():
        if time.monotonic() - t0 > timeout:
            raise RuntimeError(f"Dask test cluster: {what} not up after {timeout:.0f} s")
        time.sleep(0.2)


class Cluster:
    """`dask scheduler` + N `dask worker --no-nanny` processes (a killed worker stays dead)."""

    def __init__(self, workdir: Path, workers: int = 2):
        pytest.importorskip("distributed", reason="the [scale] extra installs dask.distributed")
        self.dir = workdir
        self.file = workdir / "scheduler.json"
        with open(workdir / "scheduler.log", "wb") as log:  # the child keeps its own fd
            self.scheduler = subprocess.Popen(
                [*DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                 "--scheduler-file", str(self.file)], stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True)
        _wait(lambda: self.file.is_file() and self.file.stat().st_size > 0, "scheduler")
        self.address = json.loads(self.file.read_text())["address"]
        self.workers = [self._worker(i) for i in range(workers)]
        if workers:
            _wait(lambda: self.worker_count() == workers, f"{workers} workers")

    def _worker(self, i: int) -> subprocess.Popen:
        with open(self.dir / f"worker{i}.log", "wb") as log:
            return subprocess.Popen(
                [*DASK, "worker", "--scheduler-file", str(self.file), "--host", "127.0.0.1",
                 "--nthreads", "1", "--no-nanny", "--no-dashboard", "--memory-limit", "3GiB",
                 "--name", f"w{i}"], stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True)

    def worker_count(self) -> int:
        from distributed import Client

        with Client(self.address, timeout=10) as c:
            return len(c.scheduler_info()["workers"])

    def address_of(self, i: int) -> str:
        from distributed import Client

        with Client(self.address, timeout=10) as c:
            return next(a for a, w in c.scheduler_info()["workers"].items()
                        if w.get("name") == f"w{i}")

    def kill_scheduler(self) -> None:
        os.killpg(self.scheduler.pid, signal.SIGKILL)
        self.scheduler.wait()

    def kill_worker(self, i: int) -> None:
        os.killpg(self.workers[i].pid, signal.SIGKILL)
        self.workers[i].wait()

    def close(self) -> None:
        for p in [*self.workers, self.scheduler]:  # a test cluster needs no goodbye
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()
