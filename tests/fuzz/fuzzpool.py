"""The watched worker pool: cases run in worker processes with a soft (SIGALRM) and a
hard (kill) time limit and a memory cap; a worker that dies is replaced."""
from __future__ import annotations

import os
import signal
import tempfile
import time
from collections.abc import Iterable
from typing import Any

from fuzzlib import HARD_TIMEOUT, Case, Outcome, _on_alarm, _tail, init_worker, run_case

# --- the watched worker pool --------------------------------------------------------------------


def _worker_loop(conn: Any, workdir: str, run: bool) -> None:
    init_worker()
    while True:
        try:
            case = conn.recv()
        except EOFError:
            return
        if case is None:
            return
        try:
            out = run_case(case, workdir, run)
        except BaseException as exc:  # noqa: BLE001 - report, never die silently
            out = Outcome(case.id, "crash", case.origin, case.desc, type(exc).__name__,
                          str(exc), detail=_tail(exc), expect=case.expect,
                          expect_line=case.line)
        conn.send(out)


class _Worker:
    def __init__(self, ctx: Any, workdir: str, run: bool):
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_loop, args=(child, workdir, run), daemon=True)
        self.proc.start()
        child.close()
        self.case: Case | None = None
        self.t0 = 0.0

    def give(self, case: Case) -> None:
        self.case, self.t0 = case, time.monotonic()
        self.conn.send(case)

    def kill(self) -> None:
        try:
            self.proc.kill()
        except Exception:  # noqa: BLE001
            pass
        self.proc.join(timeout=5)
        self.conn.close()


def run_cases(cases: Iterable[Case], workers: int | None = None, run: bool = True,
              progress: Any = None) -> list[Outcome]:
    """Run every case in watched worker processes (`workers=0`: in this process)."""
    cases = list(cases)
    with tempfile.TemporaryDirectory(prefix="pypto-fuzz-") as workdir:
        if workers == 0:
            init_worker_inline = signal.getsignal(signal.SIGALRM) if hasattr(signal, "SIGALRM") \
                else None
            try:
                if hasattr(signal, "SIGALRM"):
                    signal.signal(signal.SIGALRM, _on_alarm)
                return [run_case(c, workdir, run) for c in cases]
            finally:
                if init_worker_inline is not None:
                    signal.signal(signal.SIGALRM, init_worker_inline)
        return _run_pool(cases, workdir, workers or max(1, min(4, os.cpu_count() or 1)), run,
                         progress)


def _run_pool(cases: list[Case], workdir: str, n: int, run: bool, progress: Any
              ) -> list[Outcome]:
    import multiprocessing as mp
    from multiprocessing.connection import wait

    method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
    ctx = mp.get_context(method)
    todo = list(reversed(cases))
    results: dict[str, Outcome] = {}
    pool = [_Worker(ctx, workdir, run) for _ in range(min(n, len(cases)) or 1)]
    try:
        while todo or any(w.case is not None for w in pool):
            for w in pool:
                if w.case is None and todo:
                    w.give(todo.pop())
            busy = [w for w in pool if w.case is not None]
            ready = wait([w.conn for w in busy] + [w.proc.sentinel for w in busy], timeout=0.5)
            now = time.monotonic()
            for i, w in enumerate(pool):
                if w.case is None:
                    continue
                c = w.case
                if w.conn in ready:
                    try:
                        out = w.conn.recv()
                    except (EOFError, OSError):
                        out = None
                    if out is not None:
                        results[c.id] = out
                        w.case = None
                        if progress:
                            progress(out)
                        continue
                if not w.proc.is_alive() or w.proc.sentinel in ready or \
                        now - w.t0 > HARD_TIMEOUT:
                    if now - w.t0 <= HARD_TIMEOUT:
                        w.proc.join(timeout=2)  # it exited (or closed its pipe): reap it
                    alive = w.proc.is_alive()
                    w.kill()
                    kind = "timeout" if alive else "died"
                    code = w.proc.exitcode
                    results[c.id] = Outcome(
                        c.id, kind, c.origin, c.desc, message=(
                            f"killed after {HARD_TIMEOUT}s" if alive else
                            f"worker exit code {code}"), expect=c.expect, expect_line=c.line)
                    if progress:
                        progress(results[c.id])
                    pool[i] = _Worker(ctx, workdir, run)
    finally:
        for w in pool:
            try:
                w.conn.send(None)
            except Exception:  # noqa: BLE001
                pass
        for w in pool:
            w.proc.join(timeout=2)
            if w.proc.is_alive():
                w.kill()
    return [results[c.id] for c in cases]
