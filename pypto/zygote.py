"""Warm starts: a process that has imported what every pypto-lib file imports, forking
one child per file.

A conformance run starts every file in a process of its own, as pypto-lib's CI runs
it. Most of a small file's cost is that start: the interpreter, numpy, torch and our
toolchain take ~2 s of CPU before the file's first line (74 tier-2 files: ~150 of
~440 CPU seconds). The zygote pays it once per runner: it imports them, then forks a
child per file; the child is a fresh process of its own (its own pid, session, memory,
output file, environment and working directory) that runs `pypto.cli.main([FILE,
ARGS...])` exactly as `python -m pypto.cli FILE ARGS` would, and reports through the
same harness records. What it inherits is the imported modules and nothing a file
could observe but timing: no kernel was compiled or run in the zygote, its random
generators are reseeded in the child (`random`, numpy's global state, and torch's
default generator when a fresh process would draw it anew: torch 2.13 seeds it from
the OS in every process, older releases start it at one fixed seed; an unseeded
pypto-lib input generator thus draws other inputs in each child, as it does cold),
and torch was imported
without running an op, so its thread pools start in the child. Python's hash seed is
the zygote's for all its children (a fresh process draws its own).

The runner talks to the zygote over two pipes, one JSON line per message:
{"ready", "version", "package"} once it has imported its modules, then per file:
request {"argv", "cwd", "env", "out"} -> {"pid"} at the fork, then {"pid", "status",
"maxrss", "cpu"} when the child has ended (the zygote is the child's parent, so it is
the one that can `wait4` it). The runner watches the child's memory and time through
/proc and kills its process group, as for a cold child.
"""
from __future__ import annotations

import atexit
import json
import os
import random
import sys
import traceback
from typing import Any

import pypto.cli as cli

# the seed torch releases before 2.x's OS-drawn default start their generator at
_TORCH_FIXED_SEED = 67280421310721

PRELOAD = ("numpy", "ml_dtypes", "torch", "pypto.language", "pypto.compile", "pypto.sim",
           "pypto.golden", "pypto.cli")


def _preload() -> list[str]:
    loaded = []
    for name in PRELOAD:
        try:
            __import__(name)
        except ImportError:
            continue  # (torch is optional: files that need it start cold)
        loaded.append(name)
    return loaded


def _child(req: dict[str, Any], fds: tuple[int, int]) -> None:
    """In the forked child: become the file's process, run it, never return."""
    code = 1
    try:
        os.setsid()
        for fd in fds:
            os.close(fd)
        null = os.open(os.devnull, os.O_RDONLY)
        out = os.open(req["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(null, 0)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.close(null)
        os.close(out)
        os.chdir(req["cwd"])
        os.environ.clear()
        os.environ.update(req["env"])  # (its PYPTO_SIM_PARENT names the runner: `watchdog`)
        sys.path[0] = os.getcwd()  # as `python -m` puts the working directory first
        random.seed()
        np = sys.modules.get("numpy")
        if np is not None:
            np.random.seed()
        torch = sys.modules.get("torch")
        if torch is not None and torch.initial_seed() != _TORCH_FIXED_SEED:
            torch.seed()  # (this torch seeds each process from the OS: so does the child)
        sys.argv = [cli.__file__, *req["argv"]]
        code = cli.main(list(req["argv"]))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # noqa: BLE001 - a fresh interpreter would print it and exit 1
        traceback.print_exc()
        code = 1
    try:
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code if isinstance(code, int) else 1)


def serve(req_fd: int, rep_fd: int) -> None:
    """The zygote's loop: one request at a time, until the runner closes the pipe."""
    loaded = _preload()
    reqs = os.fdopen(req_fd, "r", encoding="utf-8")
    reps = os.fdopen(rep_fd, "w", encoding="utf-8", buffering=1)
    pkg = sys.modules["pypto"]
    # what it serves: the runner restarts it when this file changes (`pypto.scale.warm`)
    reps.write(json.dumps({"ready": loaded, "version": pkg.__version__,
                           "package": pkg.__file__}) + "\n")
    for line in reqs:
        req = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(req, (req_fd, rep_fd))
        reps.write(json.dumps({"pid": pid}) + "\n")
        _, status, usage = os.wait4(pid, 0)
        reps.write(json.dumps({"pid": pid, "status": status, "maxrss": usage.ru_maxrss,
                               "cpu": usage.ru_utime + usage.ru_stime}) + "\n")


if __name__ == "__main__":  # python -m pypto.zygote REQ_FD REP_FD
    # no watchdog thread here (a fork copies no threads): the zygote ends when its
    # runner's request pipe closes, and a running child watches the runner itself
    serve(int(sys.argv[1]), int(sys.argv[2]))
