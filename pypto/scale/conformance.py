"""Run a corpus of kernel files: each file one Dask task (or one after another with
`serial=True`), results streamed back as they finish.

Nothing is lost when a worker dies mid-run: the scheduler hands the file it was running
to another worker (a retry); a file whose workers keep dying (Dask's
`distributed.scheduler.allowed-failures`, 3 by default) comes back as "killed", and
every other file's result is kept. A file's own crash or out-of-memory kill happens in
its child process (`runfile`), so the worker survives it and reports "killed".
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from pypto.scale.cluster import as_completed, worker_address, worker_memory_share
from pypto.scale.corpus import CorpusFile
from pypto.scale.runfile import FileOptions, file_result, run_file

OnResult = Callable[[dict, int, int], None]  # (result, done so far, total)


def run_on_worker(f: CorpusFile, opts: FileOptions) -> dict:
    """The Dask task: `run_file`, with the worker's memory share as the limit when the
    run names none, and the worker's address in the result."""
    if opts.memory_limit is None:
        share = worker_memory_share()
        if share:
            opts = FileOptions(**{**asdict(opts), "memory_limit": share})
    result = run_file(f, opts)
    result["worker"] = worker_address()
    return result


def _lost(f: CorpusFile, err: BaseException, seconds: float) -> dict:
    name = type(err).__name__
    if name == "KilledWorker":
        reason = ("every worker that ran it died (killed, or out of memory) until Dask "
                  "gave up on it")
        return file_result(f, "killed", reason, seconds)
    return file_result(f, "fail", f"the task failed on its worker: {name}: {err}", seconds)


def run_serial(files: list[CorpusFile], opts: FileOptions,
               on_result: OnResult | None = None) -> list[dict]:
    """One file after another, each in its own process (no Dask)."""
    results = []
    for f in files:
        r = run_file(f, opts)
        results.append(r)
        if on_result:
            on_result(r, len(results), len(files))
    return results


def run_dask(files: list[CorpusFile], opts: FileOptions, client: Any,
             on_result: OnResult | None = None) -> list[dict]:
    """Every file as a task on `client`; results in the order of `files`."""
    done: dict[int, dict] = {}
    futures = {}
    for i, f in enumerate(files):
        if f.skip:
            done[i] = run_file(f, opts)
            continue
        fut = client.submit(run_on_worker, f, opts, key=f"pypto-sim-{i}-{f.label}",
                            pure=False, priority=len(files) - i)
        futures[fut] = i
    total = len(files)
    for r in done.values():
        if on_result:
            on_result(r, len(done), total)
    t0 = time.perf_counter()
    try:
        for fut in as_completed(list(futures)):
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
            done[i] = r
            fut.release()
            if on_result:
                on_result(r, len(done), total)
    finally:
        pending = [f for f in futures if not f.done()]
        if pending:
            client.cancel(pending)
    return [done[i] for i in range(total)]
