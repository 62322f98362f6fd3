"""`pypto-sim [OPTIONS] TARGET...`: a corpus run from the command line, once its
arguments are checked (`command.run_corpus`).

Every file given is in the report, whatever ends the run: a file without a result is
`not-run`, with why - the run was interrupted (SIGINT, SIGTERM), or it lost its cluster
(the scheduler went, or no worker came). The JSON document is rewritten as each file
finishes, every file listed ("state": "running" until the end), so a reader of a run
still going, or killed, sees the same shape.
"""
from __future__ import annotations

import importlib.metadata
import signal
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from pypto.scale import conformance, report
from pypto.scale.cluster import (
    ScaleError,
    dashboard_link,
    describe,
    open_client,
    quiet_client_logs,
)
from pypto.scale.corpus import CorpusFile
from pypto.scale.runfile import FileOptions, file_result

CLUSTER_LOST = 4
"""Exit status of a run that lost its Dask scheduler, or had no worker for
--wait-workers seconds: some files have no result (they are `not-run`)."""


def installed_version() -> str | None:
    """The pypto-lab distribution installed where pypto-sim runs (each file's own
    process reports the version it ran with: `runfile`)."""
    try:
        return importlib.metadata.version("pypto-lab")
    except importlib.metadata.PackageNotFoundError:
        return None


@dataclass
class CorpusPlan:
    """A checked corpus invocation."""

    files: list[CorpusFile]
    opts: FileOptions
    json_path: Path | None = None
    html_path: Path | None = None
    quiet: bool = False
    serial: bool = False
    scheduler: str | None = None  # None: a LocalCluster of `workers`
    workers: int | None = None
    wait_workers: float = 60.0
    status_every: float | None = 30.0
    run: str = field(default_factory=lambda: uuid.uuid4().hex[:12])


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM during the run."""

    def __init__(self, name: str = "SIGINT"):
        super().__init__(name)
        self.name = name


@contextmanager
def _terminate_interrupts() -> Iterator[None]:
    """SIGTERM interrupts the run as Ctrl-C does (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_term(signum: int, frame: FrameType | None) -> None:
        raise Interrupted("SIGTERM")

    old = signal.signal(signal.SIGTERM, on_term)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


class _Results:
    """The run's results by file index; the document with every file listed."""

    def __init__(self, plan: CorpusPlan, out: Callable[[str], None]):
        self.plan, self.out = plan, out
        self.by: dict[int, dict] = {}
        self.cluster: dict = {}
        self.started, self.t0 = time.time(), time.perf_counter()
        self.options = {k: v for k, v in plan.opts.__dict__.items() if k != "stream"}

    def add(self, i: int, r: dict) -> None:
        self.by[i] = r
        if not self.plan.quiet:
            self.out(report.progress_line(r, len(self.by), len(self.plan.files)))
        if self.plan.json_path:
            report.write_json(self.plan.json_path, self.document("running"))

    def final(self, why: str = "no result yet (the run is going on)") -> list[dict]:
        """Every file: its result, or `not-run` with `why`."""
        return [self.by.get(i) or file_result(f, "not-run", why)
                for i, f in enumerate(self.plan.files)]

    def document(self, state: str, why: str = "no result yet (the run is going on)"
                 ) -> dict:
        doc = report.document(self.final(why), self.started, time.perf_counter() - self.t0,
                              self.cluster, self.options)
        doc.update(state=state, version=installed_version())
        return doc


def _connect_line(plan: CorpusPlan, cluster: dict) -> str:
    return (f"pypto-sim: {len(plan.files)} files on {cluster['workers']} Dask worker(s) "
            f"({cluster['kind']}, {cluster['scheduler']})")


def _dashboard_line(client: Any, local: bool) -> str:
    link = dashboard_link(client)
    if link:
        return f"pypto-sim: dashboard {link}"
    if local:
        return "pypto-sim: no dashboard (Dask's needs bokeh: pip install bokeh)"
    return "pypto-sim: the scheduler runs no dashboard"


def _on_dask(plan: CorpusPlan, results: _Results) -> None:
    local = plan.scheduler is None
    with open_client(plan.scheduler, plan.workers, plan.opts.memory_limit) as client:
        results.cluster.update(kind="local" if local else "scheduler", **describe(client))
        results.out(_connect_line(plan, results.cluster))
        results.out(_dashboard_line(client, local))
        results.cluster["dashboard"] = dashboard_link(client) or None
        tracker = None
        try:
            tracker = conformance.run_dask(
                plan.files, plan.opts, client, results.add, run=plan.run, note=results.out,
                wait_workers=plan.wait_workers,
                status_every=None if plan.quiet else plan.status_every)
        except conformance.ClusterLost:
            quiet_client_logs()  # (closing the client cancels its reconnecting: tracebacks)
            raise
        finally:
            if tracker is not None:
                results.cluster.update(workers_lost=tracker.lost, ran_again=tracker.ran_again())


def _finish(plan: CorpusPlan, results: _Results, state: str, why: str) -> list[dict]:
    seconds = time.perf_counter() - results.t0
    doc = results.document(state, why)
    if plan.json_path:
        report.write_json(plan.json_path, doc)
    if plan.html_path:
        report.write_html(plan.html_path, doc)
    final = doc["files"]
    tail = "" if state == "finished" else f" ({state})"
    results.out(report.summary_line(final, seconds, results.cluster) + tail)
    return final


def execute(plan: CorpusPlan, out: Callable[[str], None]) -> int:
    """Run `plan`; the exit status (0 all pass or skip, 1 a file did not, 4 the
    cluster was lost, 130 / 143 interrupted)."""
    results = _Results(plan, out)
    state, why, code = "finished", "", 0
    try:
        with _terminate_interrupts():
            if plan.serial:
                results.cluster.update(kind="serial")
                out(f"pypto-sim: {len(plan.files)} files, one after another")
                conformance.run_serial(plan.files, plan.opts, results.add, plan.run)
            else:
                _on_dask(plan, results)
    except ScaleError as err:
        print(f"pypto-sim: {err}", file=sys.stderr)
        return 2
    except conformance.ClusterLost as err:
        missing = len(plan.files) - len(results.by)
        print(f"pypto-sim: {err}: {missing} of {len(plan.files)} files have no result",
              file=sys.stderr)
        state, why, code = "cluster lost", f"no result: {err}", CLUSTER_LOST
    except KeyboardInterrupt as err:
        name = err.name if isinstance(err, Interrupted) else "SIGINT"
        state, why = "interrupted", f"no result: the run was interrupted ({name})"
        code = 128 + signal.Signals[name].value
    final = _finish(plan, results, state, why)
    if code:
        return code
    return 0 if report.all_good(final) else 1
