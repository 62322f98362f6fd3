"""The `pypto-sim` command line: one file in this process, many as Dask tasks, or a
tile-size sweep of one file. `pypto.cli` hands every invocation here."""
from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pypto.scale.cluster import ScaleError, default_workers, parse_bytes, scheduler_address
from pypto.scale.corpus import CorpusError, CorpusFile, collect
from pypto.scale.corpus_cli import CorpusPlan, execute
from pypto.scale.runfile import FileOptions, run_file
from pypto.scale.sweep_cli import run_sweep_command

USAGE = """usage: pypto-sim KERNEL.py [ARGS...]
       pypto-sim [OPTIONS] TARGET... [ARGS...] [-- ARGS...]
       pypto-sim --sweep NAME=V1,V2,... [--sweep ...] [OPTIONS] KERNEL.py

Run a pypto-lib kernel file on the pypto-lab simulator: `import golden` resolves to
pypto.golden, `-p a2a3sim` is added when the file takes a platform and none is given.
ARGS go to the file's own argument parser (try: pypto-sim KERNEL.py --help).
On a2a3sim memory nothing wrote reads as NaN / garbage (a golden expecting zeros there
fails, with the region and the fixes); `-p a2a3` reads it as zeros, as the device
often does, and reports a pass that rests on them.
A file that defines no kernel or never runs one exits 3 (nothing was simulated).

Many files - TARGET is a file, a directory (every .py under it), a glob or @LIST (one
path or glob a line) - run as Dask tasks, each file in its own process as pypto-lib's
CI runs it; per file: pass / diagnosed / fail / timeout / killed / skip / not-run,
the reason, wall time and peak memory. Exit status: 0 every file passes (or is
skipped), 1 one does not, 4 the Dask cluster was lost (its scheduler went, or no worker
came for --wait-workers seconds: the files without a result are not-run), 130 / 143
interrupted (SIGINT / SIGTERM; the report still lists every file).

options (anywhere before `--`; other arguments after the files go to each file):
  --workers N         local Dask cluster of N worker processes (default: one per core)
  --memory-limit SIZE per worker, e.g. 4GiB; a file above it (its own process and the
                      ones it starts) is killed (default: the machine's memory shared
                      among the workers)
  --scheduler ADDR    run on an existing Dask cluster: tcp://HOST:PORT (or HOST:PORT,
                      tls://, ws://, wss://, ucx://), e.g. tcp://10.0.0.5:8786
  --wait-workers S    give up when the cluster has had no worker for S s (default 60)
  --status-every S    a line of the running files every S s (default 30; 0: none)
  --serial            no Dask: one file after another (each still in its own process)
  --timeout S         per file, in seconds (many files: default 900; one file: none)
  --json OUT          write the results as JSON (rewritten as files finish)
  --html OUT          write an HTML report
  --list FILE         add the paths / globs listed in FILE (repeatable)
  --root DIR          list entries and globs are relative to DIR (default: .)
  --threads N         PYPTO_GOLDEN_NUM_THREADS for each file (default 2)
  --checks C          simulator checks (PYPTO_SIM_CHECKS), e.g. oob or none
  --uninit zero|residue  fresh pl.Out memory (PYPTO_SIM_UNINIT), over the platform's
  -q, --quiet         no line per finished file, only the summary
sweep (pypto.scale.sweep; module-level constants of KERNEL.py, see docs/scale.md):
  --sweep NAME=V,...  a tiling constant and its values (repeat for a grid)
  --kernel NAME, --specs NAME, --golden NAME   what to run (default: the file's one
                      @pl.jit kernel, build_tensor_specs, its one golden_* function)
"""

_VALUED = {"--workers", "--scheduler", "--memory-limit", "--timeout", "--json", "--html",
           "--root", "--list", "--checks", "--uninit", "--threads", "--sweep", "--kernel",
           "--specs", "--golden", "--wait-workers", "--status-every"}
_FLAGS = {"--serial": "--serial", "-q": "--quiet", "--quiet": "--quiet"}
_REPEATED = {"--list", "--sweep"}
_MANY = {"--workers", "--scheduler", "--serial", "--json", "--html", "--list",
         "--memory-limit", "--root", "--quiet", "--threads", "--checks", "--uninit",
         "--wait-workers", "--status-every"}
DEFAULT_CORPUS_TIMEOUT = 900.0
TIMED_OUT = 124  # as timeout(1)


class UsageError(ValueError):
    pass


@dataclass
class Invocation:
    options: dict = field(default_factory=dict)
    targets: list = field(default_factory=list)
    file_args: list = field(default_factory=list)

    def get(self, name: str, default=None):
        return self.options.get(name, default)


def _is_target(arg: str, root: str | None = None) -> bool:
    return arg.startswith("@") or any(c in arg for c in "*?[") or Path(arg).exists() \
        or (root is not None and (Path(root) / arg).exists())


def parse(argv: list[str]) -> Invocation:
    """pypto-sim's own options are taken wherever they stand before `--`; the leading
    run of paths are the targets; everything else goes to each file's own parser."""
    inv, i = Invocation(), 0
    while i < len(argv):
        arg = argv[i]
        name, eq, value = arg.partition("=")
        if arg == "--":
            inv.file_args += argv[i + 1:]
            break
        if name in _FLAGS and not eq:
            inv.options[_FLAGS[name]] = True
        elif name in _VALUED:
            if not eq:
                i += 1
                if i == len(argv):
                    raise UsageError(f"{name} needs a value")
                value = argv[i]
            if name in _REPEATED:
                inv.options.setdefault(name, []).append(value)
            else:
                inv.options[name] = value
        elif not inv.targets and arg.startswith("-"):
            raise UsageError(f"unknown option {arg} (a file's own options go after it)")
        elif not inv.file_args and (not inv.targets or _is_target(arg, inv.get("--root"))) \
                and not arg.startswith("-"):
            inv.targets.append(arg)
        else:
            inv.file_args.append(arg)
        i += 1
    return inv


def _number(inv: Invocation, name: str, kind: type, default=None):
    raw = inv.get(name)
    if raw is None:
        return default
    try:
        value = kind(raw)
    except ValueError:
        value = None
    if value is None or value <= 0:
        raise UsageError(f"{name} takes a positive {'integer' if kind is int else 'number'}, "
                         f"got {raw!r}")
    return value


def file_options(inv: Invocation, timeout_default: float | None) -> FileOptions:
    uninit = inv.get("--uninit")
    if uninit not in (None, "residue", "zero"):
        raise UsageError(f"--uninit takes residue or zero, got {uninit!r}")
    limit = inv.get("--memory-limit")
    try:
        limit = parse_bytes(limit) if limit is not None else None
    except ScaleError as err:
        raise UsageError(f"--memory-limit: {err}") from None
    return FileOptions(args=tuple(inv.file_args),
                       timeout=_number(inv, "--timeout", float, timeout_default),
                       memory_limit=limit, threads=_number(inv, "--threads", int, 2),
                       checks=inv.get("--checks"), uninit=uninit)


def run_one_with_timeout(path: Path, opts: FileOptions) -> int:
    """One file in a child process (its output streams through), killed past the timeout."""
    f = CorpusFile(str(path.resolve()), str(path))
    r = run_file(f, FileOptions(**{**opts.__dict__, "stream": True}))
    if r["status"] == "timeout":
        print(f"pypto-sim: {path}: {r['reason']} (--timeout)", file=sys.stderr)
        return TIMED_OUT
    if r["status"] == "killed":
        print(f"pypto-sim: {path}: {r['reason']}", file=sys.stderr)
        return 137
    return r["exit_code"]


def _all_skipped(files: list) -> str:
    shown = "; ".join(f"{f.label} ({f.skip})" for f in files[:5])
    more = f"; and {len(files) - 5} more" if len(files) > 5 else ""
    return (f"{len(files)} file(s) given, none runnable: {shown}{more}: "
            "nothing was simulated")


def _scheduler(inv: Invocation) -> str | None:
    """--scheduler's address, checked (None: not given; "" is a usage error)."""
    given = inv.options.get("--scheduler")
    if given is None:
        return None
    try:
        return scheduler_address(given)
    except ScaleError as err:
        raise UsageError(str(err)) from None


def run_corpus(inv: Invocation, out: Callable[[str], None]) -> int:
    scheduler = _scheduler(inv)
    if scheduler is not None and (inv.get("--workers") or inv.get("--serial")):
        raise UsageError("--scheduler runs on that cluster's workers: drop --workers/--serial")
    if inv.get("--serial") and inv.get("--workers"):
        raise UsageError("--serial runs without Dask workers: drop --workers")
    try:
        files = collect(inv.targets, inv.get("--root"), inv.get("--list", []))
    except CorpusError as err:
        print(f"pypto-sim: {err}", file=sys.stderr)
        return 2
    if not files:
        raise UsageError("no files given")
    if all(f.skip for f in files):
        print(f"pypto-sim: {_all_skipped(files)}", file=sys.stderr)
        return 3
    workers = _number(inv, "--workers", int, None)
    if scheduler is None:
        workers = workers or default_workers(sum(1 for f in files if not f.skip))
    every = inv.get("--status-every")
    plan = CorpusPlan(
        files, file_options(inv, DEFAULT_CORPUS_TIMEOUT),
        json_path=Path(inv.get("--json")) if inv.get("--json") else None,
        html_path=Path(inv.get("--html")) if inv.get("--html") else None,
        quiet=inv.get("--quiet", False), serial=inv.get("--serial", False),
        scheduler=scheduler, workers=workers,
        wait_workers=_number(inv, "--wait-workers", float, 60.0),
        status_every=None if every in ("0", "none") else
        _number(inv, "--status-every", float, 30.0))
    return execute(plan, out)


def main(argv: list[str], run_path: Callable[[Path, list[str]], int]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, end="")
        return 0 if argv else 2
    try:
        inv = parse(argv)
        if not inv.targets and not inv.get("--list"):
            raise UsageError("no file given")
        sweep_only = [o for o in ("--kernel", "--specs", "--golden") if inv.get(o)]
        if sweep_only and not inv.get("--sweep"):
            raise UsageError(f"{', '.join(sweep_only)} only go with --sweep")
        if inv.get("--sweep"):
            return run_sweep_command(inv, lambda s: print(s, flush=True))
        first = Path(inv.targets[0] if inv.targets else "")
        single = len(inv.targets) == 1 and not first.is_dir() and not (_MANY & set(inv.options))
        if single and not _is_target(inv.targets[0]):
            print(f"pypto-sim: no such file or directory: {first}", file=sys.stderr)
            return 2
        if single and first.is_file():
            if inv.get("--timeout") is None:
                return run_path(first, inv.file_args)
            return run_one_with_timeout(first, file_options(inv, None))
        return run_corpus(inv, lambda s: print(s, flush=True))
    except UsageError as err:
        print(f"pypto-sim: {err}\n(pypto-sim --help for usage)", file=sys.stderr)
        return 2
