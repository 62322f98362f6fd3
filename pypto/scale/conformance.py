"""Run a corpus of kernel files: each file one Dask task (or one after another with
`serial=True`), results handed on as they finish.

Every task key is unique to its run and its input: `pypto-sim-RUN-DIGEST`, RUN a token
drawn per run, DIGEST a hash of the file's path, its content and the run's options. Two
runs sharing a scheduler - two users, or a re-run with other options or an edited
file while the first still holds its tasks - never share a task (Dask hands a key it
knows its known result).

Nothing is lost when a worker dies mid-run: the scheduler hands the file it was running
to another worker (a retry; the report says the file ran twice and which worker died);
a file whose workers keep dying (Dask's `distributed.scheduler.allowed-failures`, 3 by
default) comes back as "killed", and every other file's result is kept. A file's own
crash or out-of-memory kill happens in its child process (`runfile`), so the worker
survives it and reports "killed".

What the run cannot survive is its cluster: a lost scheduler, or no worker for
`wait_workers` seconds. Then `ClusterLost` says which, and the files without a result
are the caller's to report; their running children stop within a poll (`runfile`'s
`wanted`: a worker that lost its scheduler closes).
"""
from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from pypto.scale.cluster import (
    announce,
    as_completed,
    subscribe,
    task_wanted,
    worker_address,
    worker_memory_share,
)
from pypto.scale.corpus import CorpusFile
from pypto.scale.runfile import FileOptions, file_result, run_file
from pypto.scale.tracker import Note, Tracker

OnResult = Callable[[int, dict], None]  # (index of the file, its result)
POLL = 1.0  # seconds between two looks at the scheduler while no result comes


class ClusterLost(RuntimeError):
    """The run cannot go on: its scheduler is gone, or it has had no worker for the
    allowed wait (the message says which, and where)."""


def task_key(f: CorpusFile, opts: FileOptions, run: str) -> str:
    """The Dask key of file `f` in run `run`: unique per run and per input."""
    h = hashlib.sha256(f.path.encode("utf-8") + b"\0")
    try:
        h.update(Path(f.path).read_bytes())
    except OSError:
        pass  # (the worker reports it unreadable)
    h.update(repr(sorted(asdict(opts).items())).encode("utf-8"))
    return f"pypto-sim-{run}-{h.hexdigest()[:16]}"


def run_on_worker(f: CorpusFile, opts: FileOptions, run: str = "", index: int = -1) -> dict:
    """The Dask task: `run_file`, with the worker's memory share as the limit when the
    run names none, its start announced under the run's topic, stopped when its result
    is no longer wanted, and the worker's address in the result."""
    if opts.memory_limit is None:
        share = worker_memory_share()
        if share:
            opts = FileOptions(**{**asdict(opts), "memory_limit": share})
    announce(f"pypto-sim-{run}", {"i": index})
    result = run_file(f, opts, run, task_wanted())
    result["worker"] = worker_address()
    return result


def _lost(f: CorpusFile, err: BaseException, seconds: float) -> dict:
    name = type(err).__name__
    if name == "KilledWorker":
        reason = ("every worker that ran it died (killed, or out of memory) until Dask "
                  "gave up on it")
        return file_result(f, "killed", reason, seconds)
    return file_result(f, "fail", f"the task failed on its worker: {name}: {err}", seconds)


def run_serial(files: list[CorpusFile], opts: FileOptions, on_result: OnResult,
               run: str = "") -> None:
    """One file after another, each in its own process (no Dask)."""
    for i, f in enumerate(files):
        on_result(i, run_file(f, opts, run))


def _workers(client: Any) -> int:
    return int(client.scheduler_info(n_workers=0).get("n_workers", 0))


class _Watch:
    """The run's view of its cluster between results: is the scheduler there, has it
    workers (warn once, give up after `wait` seconds without), and a status line of the
    running files every `every` seconds."""

    def __init__(self, client: Any, address: str, tracker: Tracker, note: Note,
                 submitted: int, wait: float, every: float | None):
        self.client, self.address, self.tracker, self.note = client, address, tracker, note
        self.submitted, self.wait, self.every = submitted, wait, every
        now = time.monotonic()
        self.next_look, self.next_status = now, now + (every or 0)
        self.workerless_since: float | None = None

    def lost(self) -> ClusterLost:
        return ClusterLost(f"lost the Dask scheduler at {self.address}")

    def look(self) -> None:
        if self.client.status != "running":
            raise self.lost()
        now = time.monotonic()
        if now < self.next_look:
            return
        self.next_look = now + POLL
        try:
            workers = _workers(self.client)
        except (OSError, TimeoutError):
            raise self.lost() from None
        if workers:
            self.workerless_since = None
        elif self.workerless_since is None:
            self.workerless_since = now
            self.note(f"pypto-sim: warning: the scheduler at {self.address} has no "
                      f"workers; waiting up to {self.wait:g} s for one (--wait-workers)")
        elif now - self.workerless_since > self.wait:
            raise ClusterLost(f"no Dask worker at the scheduler {self.address} for "
                              f"{self.wait:g} s")
        if self.every is not None and now >= self.next_status:
            self.next_status = now + self.every
            if self.tracker.running():
                self.note(self.tracker.status_line(self.submitted))


def run_dask(files: list[CorpusFile], opts: FileOptions, client: Any, on_result: OnResult,
             *, run: str, note: Note = print, wait_workers: float = 60.0,
             status_every: float | None = 30.0) -> Tracker:
    """Every file as a task on `client`, each result handed to `on_result` as it comes;
    raises ClusterLost (see the module docstring). The tracker it returns knows the
    workers that died and the files that ran more than once."""
    tracker = Tracker([f.label for f in files], note)
    subscribe(client, f"pypto-sim-{run}", tracker.started)
    subscribe(client, "all", tracker.worker_event)
    futures = {}
    for i, f in enumerate(files):
        if f.skip:
            on_result(i, run_file(f, opts))
            continue
        fut = client.submit(run_on_worker, f, opts, run, i, key=task_key(f, opts, run),
                            pure=False, priority=len(files) - i)
        futures[fut] = i
    watch = _Watch(client, client.scheduler.address, tracker, note, len(futures),
                   wait_workers, status_every)
    t0, left = time.perf_counter(), len(futures)
    completed = as_completed(list(futures))
    try:
        while left:
            if not completed.has_ready():
                watch.look()
                time.sleep(0.05)
                continue
            for fut in completed.next_batch(block=False):
                if fut.status == "cancelled":  # nobody here cancels: the scheduler went
                    raise watch.lost()
                i = futures[fut]
                if fut.status == "error":
                    r = _lost(files[i], fut.exception(), time.perf_counter() - t0)
                else:
                    # finished - or "lost": its result lived on a worker that died after
                    # the run, and the scheduler computes it again for the future we hold
                    try:
                        r = fut.result()
                    except Exception as err:  # noqa: BLE001 - whatever the worker raised
                        r = _lost(files[i], err, time.perf_counter() - t0)
                tracker.finish(i, r)
                on_result(i, r)
                fut.release()
                left -= 1
    finally:
        pending = [f for f in futures if not f.done()]
        if pending and client.status == "running":
            client.cancel(pending)  # their workers stop the files (`cluster.task_wanted`)
    return tracker
