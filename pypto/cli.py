"""`pypto-sim KERNEL.py [ARGS...]`: run a pypto-lib kernel file on the simulator.
`pypto-sim [OPTIONS] TARGET...`: run many (a directory, a list file, globs) as Dask
tasks, or sweep one file's tiling constants (`pypto.scale.command`).

One file runs unmodified, exactly as `python KERNEL.py ARGS...` would run its
`__main__` block, with three differences:

* `import golden` (and `golden.spec` / `golden.runner` / `golden.validation`)
  resolves to `pypto.golden`, so the file's `run_jit` drives the simulator;
* when the file declares a `-p/--platform` option and no platform is given, the
  simulator platform `a2a3sim` is passed (the files default to the `a2a3` device,
  and their `choices=` still accept `a2a3sim`); an explicit hardware platform is
  mapped to its simulator twin by the harness with a one-line notice. The platform
  decides what fresh device memory holds, by the L2 guide's rule: NaN / garbage on
  `a2a3sim`, so a golden that asserts zeros over an unwritten `pl.Out` region fails
  with the diagnosis; zeros on `a2a3` / `a5` ("often zero"), where a pass that rests
  on them is reported (see `pypto.golden.sim_options.fresh_memory`);
* torch, when the file uses it, runs with PYPTO_GOLDEN_NUM_THREADS threads
  (default 2 here).

The exit status is the file's own (`raise SystemExit(1)` on a failed check), except
that a file which defines no kernel, or never runs one, says so and exits 3: nothing
was simulated - however it ends with status 0 (its end, `sys.exit(0)`, `os._exit(0)`),
since a pass must mean that a kernel ran. `--timeout S` runs the file in a child
process that is killed after S seconds (exit 124).

The runtime's DFX flags `--enable-dep-gen`, `--enable-pmu [N]`, `--enable-chip-swimlane
[N]`, `--enable-dump-args [N]`, `--enable-scope-stats` and `--dump-passes` are the
file's own when its parser declares them; otherwise pypto-sim takes them out of the
file's arguments and gives them to every harness run of the file (docs/dfx.md).
"""
from __future__ import annotations

import contextlib
import json
import os
import runpy
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pypto
from pypto.dfx.knobs import ENV_OVERRIDES, split_cli_flags
from pypto.errors import PyptoError
from pypto.golden.record import RECORD_ENV, runs_emitted
from pypto.language.jit import JITFunction, ProgramDef
from pypto.scale import command
from pypto.scale.pyptolib import (  # noqa: F401 - re-exported: the CLI's helpers
    DEFAULT_SIM_PLATFORM,
    configure_torch_threads,
    file_argv,
    install_golden_alias,
    library_root,
)
from pypto.scale.watchdog import mark_started, watch_parent_from_env


def _exit_code(exc: SystemExit) -> int:
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _user_traceback(err: BaseException, path: Path) -> str:
    """The traceback frames outside the pypto package, then the rendered diagnostic."""
    pkg = str(Path(pypto.__file__).resolve().parent)
    frames = [f for f in traceback.extract_tb(err.__traceback__)
              if not str(Path(f.filename).resolve()).startswith(pkg)
              and "runpy" not in f.filename and "<frozen" not in f.filename]
    lines = ["Traceback (kernel-side frames only):\n"] + traceback.format_list(frames)
    return "".join(lines) + f"{type(err).__module__}.{type(err).__name__}: {err}"



NOTHING_SIMULATED = 3  # exit status of a file that defines no kernel or never runs one


def _kernels(namespace: dict) -> dict:
    """The kernel objects (`@pl.jit` entry functions, `@pl.program` classes) a file's
    namespace holds, by name."""
    return {k: v for k, v in namespace.items() if isinstance(v, (JITFunction, ProgramDef))}


def _compiled_any(kernels: dict) -> bool:
    # a kernel that ran was compiled first; its specialisations are cached on it
    return any(getattr(k, "_cache", None)
               for k in kernels.values())


def _record(kind: str, reason: str) -> None:
    """A line for a supervising corpus run (pypto.scale.runfile), as the harness writes."""
    path = os.environ.get(RECORD_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"verdict": "fail", "kind": kind, "reason": reason}) + "\n")


def _nothing_simulated(path: Path, namespace: dict) -> str:
    """Why the finished file simulated nothing, or "" when it ran a kernel."""
    kernels = _kernels(namespace)
    if runs_emitted() or _compiled_any(kernels):
        return ""
    if not kernels:
        return (f"{path} defines no kernel (no @pl.jit function or @pl.program class) and "
                "runs none: nothing was simulated")
    names = ", ".join(sorted(kernels))
    return (f"{path} defines {names} but never runs a kernel (no call, no run_jit / run; "
            "is the work under `if __name__ == '__main__':`?): nothing was simulated")


def _dfx_flags(path: Path, args: list[str]) -> tuple[list[str], str | None]:
    """The DFX flags (`--enable-pmu [N]`, ...) the file does not take itself, out of its
    args, as the harness's $PYPTO_SIM_DFX value (None: there are none)."""
    try:
        source = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        source = ""
    rest, taken = split_cli_flags(args, source)
    if not taken["runtime"] and not taken["compile"]:
        return rest, None
    return rest, json.dumps(taken)


def _ran_nothing(path: Path, namespace: dict) -> bool:
    """Say so (stderr, and the record for a supervising run) when the file simulated
    nothing; True then."""
    why = _nothing_simulated(path, namespace)
    if why:
        print(f"pypto-sim: {why}", file=sys.stderr)
        sys.stderr.flush()
        _record("nothing-simulated", why)
    return bool(why)


def _file_namespace(err: BaseException, path: Path) -> dict:
    """The file's module namespace, from the innermost traceback frame of its code."""
    namespace: dict = {}
    tb = err.__traceback__
    while tb is not None:
        if Path(tb.tb_frame.f_code.co_filename) == path:
            namespace = tb.tb_frame.f_globals
        tb = tb.tb_next
    return namespace


@contextlib.contextmanager
def _exit_checked(path: Path) -> Iterator[None]:
    """`os._exit(0)` from the file ends the process at once: while the file runs, an
    exit with 0 first checks that it simulated something (as `sys.exit(0)` and falling
    off the end do), else exits NOTHING_SIMULATED. (pypto-sim stands in for the
    interpreter here, as it does for `import golden`.)"""
    real = os._exit

    def checked_exit(status: int) -> NoReturn:
        main = sys.modules.get("__main__")  # runpy's module of the file while it runs
        if status == 0 and _ran_nothing(path, vars(main) if main is not None else {}):
            status = NOTHING_SIMULATED
        real(status)

    os._exit = checked_exit
    try:
        yield
    finally:
        os._exit = real


def run_path(path: Path, args: list[str]) -> int:
    """Run one kernel file in this process, as `python FILE ARGS` would (see above).
    Exit status 0 - from `sys.exit(0)`, `os._exit(0)` or the file's end alike - is
    given only when it simulated something: a pass must mean a kernel ran; otherwise
    NOTHING_SIMULATED, said on stderr."""
    path = path.resolve()
    install_golden_alias()
    configure_torch_threads()
    try:
        args, dfx = _dfx_flags(path, args)
    except ValueError as err:
        print(f"pypto-sim: {err}", file=sys.stderr)
        return 2
    saved_env = os.environ.get(ENV_OVERRIDES)
    if dfx is not None:
        os.environ[ENV_OVERRIDES] = dfx
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = file_argv(path, args)
    sys.path.insert(0, str(path.parent))
    root = library_root(path.parent)
    if root is not None and str(root) not in sys.path:
        sys.path.append(str(root))
    mark_started(pypto.__version__)  # a supervising runner's timeout counts from here
    try:
        with _exit_checked(path):
            namespace = runpy.run_path(str(path), run_name="__main__")
    except SystemExit as exc:
        code = _exit_code(exc)
        if code == 0 and _ran_nothing(path, _file_namespace(exc, path)):
            return NOTHING_SIMULATED
        return code
    except KeyboardInterrupt:
        return 130
    except PyptoError as err:
        # A kernel or simulation fault is the user's: show the located diagnostic and
        # the kernel file's own frames, not the compiler's and the simulator's.
        print(_user_traceback(err, path), file=sys.stderr)
        _record("exception", f"{type(err).__name__}: {str(err).splitlines()[0]}")
        return 1
    except BaseException as err:  # noqa: BLE001 - report like the interpreter would
        traceback.print_exc()
        _record("exception", f"{type(err).__name__}: {err}".splitlines()[0])
        return 1
    finally:
        sys.argv = saved_argv
        sys.path[:] = saved_path
        if saved_env is None:
            os.environ.pop(ENV_OVERRIDES, None)
        else:
            os.environ[ENV_OVERRIDES] = saved_env
    return NOTHING_SIMULATED if _ran_nothing(path, namespace) else 0


def main(argv: list[str] | None = None) -> int:
    watch_parent_from_env()  # a corpus runner's child: end with the runner
    return command.main(list(sys.argv[1:] if argv is None else argv), run_path)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
