"""Run one kernel file the way pypto-lib's CI runs it, and say what happened.

Each file runs in a process of its own (`python -m pypto.cli FILE ARGS`, i.e.
`pypto-sim FILE ARGS`, ended when this process dies: `watchdog`) from a fresh scratch
directory, with PYPTO_GOLDEN_NUM_THREADS set, exactly as one `python FILE -p a2a3sim`
of pypto-lib's CI. A process of its own is what makes the rest possible on a long-lived
Dask worker: a timeout can always end it (its whole process group is killed; a thread
could not be stopped), its peak memory is the kernel's own (`wait4`'s rusage of that
child), a memory limit can be enforced on it, and a crash or an out-of-memory kill
takes the file down, not the worker.

The verdict comes from the harness's records (`pypto.golden.record`, one JSON line per
`run_jit` / `run`, plus the CLI's line for an exception or a file that simulated
nothing), never from the printed text. `run_file` is a plain function: the corpus
runner submits it as a Dask task, the serial mode calls it directly.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pypto.golden.record import RECORD_ENV
from pypto.scale import warm
from pypto.scale.corpus import CorpusFile
from pypto.scale.procs import Limits, kill_session
from pypto.scale.watchdog import PARENT_ENV, STARTED_ENV, started_version

STATUSES = ("pass", "diagnosed", "fail", "timeout", "killed", "skip", "not-run")
# "not-run": no result - the run was interrupted, or lost its cluster, before the file
# finished (`pypto.scale.command`)
_TAIL_LINES = 60


@dataclass(frozen=True)
class FileOptions:
    """How every file of a run is run."""

    args: tuple = ()  # appended to each file's command line (its own options)
    # seconds of wall time the file may run before it is killed, counted from the moment
    # it starts (after the child's own start-up: STARTED_ENV)
    timeout: float | None = 600.0
    memory_limit: int | None = None  # bytes of resident memory before it is killed
    threads: int = 2  # PYPTO_GOLDEN_NUM_THREADS (torch's threads in the golden)
    checks: str | None = None  # PYPTO_SIM_CHECKS, e.g. "oob" or "none"
    uninit: str | None = None  # PYPTO_SIM_UNINIT: "residue" runs device-strict
    stream: bool = False  # let the file's output through instead of capturing it
    warm: bool = True  # fork each file from a preloaded process (`zygote`) when it can




def _wait(proc: subprocess.Popen, watch: Limits) -> tuple[int, int, str, float]:
    """Wait for the child under `watch`'s limits: (exit code, peak resident bytes, why we
    stopped it or "", CPU seconds it used - user + system, its own children included
    when it waited for them: what the file costs whatever the machine's load)."""
    watch.start(proc.pid)
    pause, why = 0.01, ""
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        why = watch.check()
        if why:
            kill_session(proc.pid)
            _, status, usage = os.wait4(proc.pid, 0)
            break
        time.sleep(pause)
        pause = min(pause * 1.5, 0.2)
    proc.returncode = os.waitstatus_to_exitcode(status)
    scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes there, KiB here
    return (proc.returncode, max(usage.ru_maxrss * scale, watch.peak), why,
            usage.ru_utime + usage.ru_stime)


def _records(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    out = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue  # a line cut short by a kill
    return out


def _last_line(output: str, code: int) -> str:
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    return lines[-1] if lines else f"exit status {code}"


def classify(code: int, records: list[dict], output: str, why: str, opts: FileOptions,
             peak: int, helpers: str = "") -> tuple[str, str]:
    """(status, reason) of a finished child; `helpers` says what the peak counts beyond
    the file's own process (" with its 2 helper processes")."""
    if why == "timeout":
        return "timeout", f"no result after {opts.timeout:g} s: killed"
    if why == "memory":
        limit = opts.memory_limit or 0
        return "killed", (f"over the memory limit ({limit / 2**30:.2f} GiB, "
                          f"peak {peak / 2**30:.2f} GiB{helpers}): killed")
    if why == "abandoned":
        return "not-run", "stopped: its task was cancelled or its worker is closing"
    if code < 0:
        name = signal.Signals(-code).name if -code in signal.valid_signals() else str(-code)
        extra = " (out of memory?)" if -code == signal.SIGKILL else ""
        return "killed", f"the file's process died of {name}{extra}"
    failing = [r for r in records if r.get("verdict") != "pass"]
    if code == 0:
        notes = [r["reason"] for r in records if r.get("verdict") == "pass" and r.get("reason")]
        if failing:
            notes.append(f"exit status 0 although a run failed: {failing[0].get('reason')}")
        return "pass", "; ".join(dict.fromkeys(notes))
    if failing and all(r.get("verdict") == "diagnosed" for r in failing):
        return "diagnosed", "; ".join(dict.fromkeys(r["reason"] for r in failing))
    for r in failing:
        if r.get("verdict") == "fail":
            return "fail", r.get("reason") or _last_line(output, code)
    return "fail", _last_line(output, code)


def file_result(f: CorpusFile, status: str, reason: str, seconds: float = 0.0,
            peak: int | None = None, code: int | None = None, runs: list | None = None,
            output: str = "", cpu: float | None = None) -> dict:
    return {"file": f.label, "path": f.path, "status": status, "reason": reason,
            "seconds": round(seconds, 3),
            "cpu_seconds": None if cpu is None else round(cpu, 3),
            "peak_mb": None if peak is None else round(peak / 2**20, 1),
            "exit_code": code, "runs": runs or [], "host": socket.gethostname(),
            "pid": os.getpid(), "output": output}


def run_file(f: CorpusFile, opts: FileOptions = FileOptions(), run: str = "",
             wanted: Callable[[], bool] | None = None) -> dict:
    """Run one corpus file in its own process; a JSON-able result (see STATUSES).
    `run` names the run it belongs to (a warm start's zygote serves one run: `warm`);
    `wanted()` is asked while it runs, False stops it (`procs.Limits`)."""
    if f.skip:
        return file_result(f, "skip", f.skip)
    with tempfile.TemporaryDirectory(prefix="pypto-sim-") as scratch:
        work = Path(scratch) / "cwd"
        work.mkdir()
        record = Path(scratch) / "record.jsonl"
        env = dict(os.environ, PYTHONUNBUFFERED="1", PYPTO_GOLDEN_NUM_THREADS=str(opts.threads))
        env[RECORD_ENV] = str(record)
        env[PARENT_ENV] = str(os.getpid())
        started = Path(scratch) / "started"
        env[STARTED_ENV] = str(started)
        if opts.checks is not None:
            env["PYPTO_SIM_CHECKS"] = opts.checks
        if opts.uninit is not None:
            env["PYPTO_SIM_UNINIT"] = opts.uninit
        cmd = [sys.executable, "-m", "pypto.cli", f.path, *opts.args]
        out_path = Path(scratch) / "output.txt"
        t0 = time.perf_counter()
        watch = Limits(opts.timeout, opts.memory_limit, started, wanted)
        zygote = warm.zygote_for(f.path, run) if opts.warm and not opts.stream else None
        got = zygote.run([f.path, *opts.args], work, env, out_path, watch) \
            if zygote is not None else None
        if got is not None:
            code, peak, why, cpu = got
        else:
            with open(out_path, "wb") as out:
                proc = subprocess.Popen(cmd, cwd=work, env=env, stdin=subprocess.DEVNULL,
                                        start_new_session=True,
                                        stdout=None if opts.stream else out,
                                        stderr=None if opts.stream else subprocess.STDOUT)
                try:
                    code, peak, why, cpu = _wait(proc, watch)
                except BaseException:
                    kill_session(proc.pid)  # Ctrl-C, or the task cancelled: leave nothing
                    proc.wait()
                    raise
        seconds = time.perf_counter() - t0
        output = out_path.read_text(encoding="utf-8", errors="replace")
        runs = _records(record)
        version = started_version(started)
    helpers = "" if not watch.helpers else \
        f" with its {watch.helpers} helper process{'es' if watch.helpers > 1 else ''}"
    status, reason = classify(code, runs, output, why, opts, peak, helpers)
    tail = "" if status == "pass" else "\n".join(output.splitlines()[-_TAIL_LINES:])
    result = file_result(f, status, reason, seconds, peak, code, runs, tail, cpu)
    result["version"] = version  # the pypto-lab the file ran with (None: it never started)
    return result
