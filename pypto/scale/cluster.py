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
import importlib.util
import logging
import os
import re
import urllib.request
from collections.abc import Callable, Iterator
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


_SCHEMES = ("tcp", "tls", "ws", "wss", "ucx")
_EXAMPLE = "e.g. tcp://10.0.0.5:8786"


def scheduler_address(text: str) -> str:
    """A Dask scheduler address as `--scheduler` / `scheduler=` take it, checked before
    Dask sees it: `[tcp|tls|ws|wss|ucx]://HOST:PORT`, or `HOST:PORT` (tcp)."""
    given = text.strip()
    if not given:
        raise ScaleError(f"--scheduler takes the scheduler's address ({_EXAMPLE}), got ''")
    scheme, sep, rest = given.partition("://")
    if not sep:
        scheme, rest = "tcp", given
    if scheme in ("http", "https"):
        raise ScaleError(f"{text!r} is a web address (the dashboard's?); the scheduler's "
                         f"is tcp://HOST:PORT ({_EXAMPLE}, port 8786 by default)")
    if scheme not in _SCHEMES:
        raise ScaleError(f"{text!r}: not a Dask scheduler address ({_EXAMPLE})")
    host, colon, port = rest.rpartition(":")
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ScaleError(f"{text!r}: the scheduler's address is HOST:PORT with a port "
                         f"number ({_EXAMPLE})")
    return f"{scheme}://{rest}"


def has_dashboard_support() -> bool:
    """Dask's dashboard needs bokeh (not a dependency of the [scale] extra)."""
    return importlib.util.find_spec("bokeh") is not None


@contextlib.contextmanager
def open_client(scheduler: str | None = None, workers: int | None = None,
                memory_limit: int | None = None, timeout: float = 30.0) -> Iterator[Any]:
    """A `distributed.Client`: on `scheduler` when given, else on a fresh LocalCluster
    (closed again on exit; with a dashboard on 127.0.0.1 when bokeh is installed)."""
    dd = _distributed()
    if scheduler is not None:
        address = scheduler_address(scheduler)
        try:
            client = dd.Client(address, timeout=timeout)
        except OSError as err:
            raise ScaleError(f"no Dask scheduler answers at {address}: {err}") from None
        try:
            yield client
        finally:
            client.close()
        return
    n = workers or default_workers()
    limit = memory_limit or machine_memory() // n
    dashboard = "127.0.0.1:0" if has_dashboard_support() else None
    cluster = dd.LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                              memory_limit=limit, dashboard_address=dashboard,
                              silence_logs=logging.ERROR)
    try:
        with dd.Client(cluster) as client:
            yield client
    finally:
        cluster.close()


def dashboard_link(client: Any) -> str:
    """The link to the scheduler's dashboard, or "" when it serves none: a scheduler
    without bokeh (or started with --no-dashboard) still lists its web port, where the
    dashboard's page is then missing, so the page is asked for."""
    try:
        if not client.scheduler_info(n_workers=0).get("services", {}).get("dashboard"):
            return ""
        link = str(client.dashboard_link or "")
    except (OSError, KeyError, ValueError):
        return ""
    if not link.startswith(("http://", "https://")):
        return ""
    try:
        with urllib.request.urlopen(link, timeout=3) as page:
            return link if page.status == 200 else ""
    except (OSError, ValueError):
        return ""


def quiet_client_logs() -> None:
    """Silence the client's own error logs (with tracebacks) of a failure the caller
    reports itself: reconnecting to a scheduler that is gone."""
    logging.getLogger("distributed.client").setLevel(logging.CRITICAL)


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


def announce(topic: str, msg: dict) -> None:
    """On a Dask worker: log `msg` (with the worker's address) under `topic` at the
    scheduler, where the client subscribed to it (`subscribe`); elsewhere nothing."""
    w = _this_worker()
    if w is not None:
        w.log_event(topic, {**msg, "worker": w.address})


def subscribe(client: Any, topic: str, handler: Callable[[dict], None]) -> None:
    """Call `handler(msg)` for every event logged under `topic` (in the client's event
    loop thread)."""
    client.subscribe_topic(topic, lambda event: handler(event[1]))


def task_wanted() -> Callable[[], bool] | None:
    """On a Dask worker: whether the calling task's result is still wanted - False once
    the task is cancelled or the worker is closing (it lost its scheduler: a worker
    closes then, waiting up to 30 s for its running tasks). None elsewhere."""
    w = _this_worker()
    if w is None:
        return None
    from distributed.worker import thread_state

    key = getattr(thread_state, "key", None)

    def wanted() -> bool:
        if w.status.name not in ("running", "paused", "closing_gracefully"):
            return False
        ts = w.state.tasks.get(key)
        return ts is not None and ts.state not in ("cancelled", "released", "forgotten")

    return wanted
