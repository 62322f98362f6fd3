"""Where the work runs: a Dask client on a LocalCluster, or on a team's own cluster.

This module is the one place that imports `dask.distributed`, and only when a client
is opened (the `[scale]` extra: `pip install 'pypto-lab[scale]'`).

The local default needs no configuration: N worker processes (default: one per
core, at most one per file) with one thread each, so each worker runs one file at a
time, and a memory limit per worker (default: the machine's memory divided among
them). `--scheduler tcp://HOST:PORT` uses an existing cluster instead; its workers
need pypto-lab (and torch, for pypto-lib files) installed the same way, and the files'
paths must exist on them (a shared checkout).
"""
from __future__ import annotations

import contextlib
import logging
import os
import re
from collections.abc import Iterator
from typing import Any

_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9,
          "gb": 10**9, "t": 10**12, "tb": 10**12, "kib": 2**10, "mib": 2**20, "gib": 2**30,
          "tib": 2**40}


class ScaleError(RuntimeError):
    """A cluster that cannot be had (no Dask, no scheduler there, a bad size)."""


def parse_bytes(text: str) -> int:
    """'4GiB', '512MB', '2e9' -> bytes."""
    m = re.fullmatch(r"\s*([0-9.eE+]+)\s*([a-zA-Z]*)\s*", str(text))
    unit = m.group(2).lower() if m else None
    if m is None or unit not in _UNITS:
        raise ScaleError(f"not a size: {text!r} (e.g. 4GiB, 512MB, 2e9)")
    try:
        return int(float(m.group(1)) * _UNITS[unit])
    except ValueError:
        raise ScaleError(f"not a size: {text!r} (e.g. 4GiB, 512MB, 2e9)") from None


def _distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise ScaleError("running on Dask needs the [scale] extra: "
                         "pip install 'pypto-lab[scale]' (or run with --serial)") from None
    return distributed


def default_workers(files: int | None = None) -> int:
    n = os.cpu_count() or 1
    return max(1, min(n, files)) if files else n


def machine_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 * 2**30


@contextlib.contextmanager
def open_client(scheduler: str | None = None, workers: int | None = None,
                memory_limit: int | None = None, timeout: float = 30.0) -> Iterator[Any]:
    """A `distributed.Client`: on `scheduler` when given, else on a fresh LocalCluster
    (closed again on exit)."""
    dd = _distributed()
    if scheduler:
        try:
            client = dd.Client(scheduler, timeout=timeout)
        except OSError as err:
            raise ScaleError(f"no Dask scheduler answers at {scheduler}: {err}") from None
        try:
            yield client
        finally:
            client.close()
        return
    n = workers or default_workers()
    limit = memory_limit or machine_memory() // n
    cluster = dd.LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                              memory_limit=limit, dashboard_address=None,
                              silence_logs=logging.ERROR)
    try:
        with dd.Client(cluster) as client:
            yield client
    finally:
        cluster.close()


def describe(client: Any) -> dict:
    """What the client runs on: scheduler address, workers, threads, memory per worker."""
    info = client.scheduler_info()
    ws = info.get("workers", {})
    return {"scheduler": info.get("address") or getattr(client.scheduler, "address", ""),
            "workers": len(ws),
            "threads": sum(w.get("nthreads", 1) for w in ws.values()),
            "memory_limit": sorted({w.get("memory_limit") for w in ws.values()} - {None})}


def _this_worker() -> Any:
    """The Dask worker running the calling task, or None (not on a worker)."""
    try:
        return _distributed().get_worker()
    except (ScaleError, ValueError):
        return None


def as_completed(futures: list) -> Any:
    return _distributed().as_completed(futures)


def default_client() -> Any:
    """The client made earlier in this process (`distributed.Client()`), or None."""
    try:
        return _distributed().default_client()
    except (ScaleError, ValueError):
        return None


def worker_memory_share() -> int | None:
    """On a Dask worker: its memory limit divided among its threads (None elsewhere)."""
    w = _this_worker()
    if w is None:
        return None
    limit = getattr(getattr(w, "memory_manager", None), "memory_limit", None)
    return int(limit / max(1, w.state.nthreads)) if limit else None


def worker_address() -> str:
    w = _this_worker()
    return w.address if w is not None else ""
