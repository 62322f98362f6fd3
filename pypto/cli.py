"""`pypto-sim KERNEL.py [ARGS...]`: run a pypto-lib kernel file on the simulator.

The file runs unmodified, exactly as `python KERNEL.py ARGS...` would run its
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
  on them is reported (see `pypto.golden.runner.fresh_memory`);
* torch, when the file uses it, runs with PYPTO_GOLDEN_NUM_THREADS threads
  (default 2 here).

The exit status is the file's own (`raise SystemExit(1)` on a failed check).
"""
from __future__ import annotations

import importlib.abc
import importlib.util
import os
import re
import runpy
import sys
import traceback
from pathlib import Path

import pypto
import pypto.golden
import pypto.golden.runner
import pypto.golden.spec
import pypto.golden.validation
from pypto.errors import PyptoError
from pypto.golden._interop import parse_thread_count

USAGE = """usage: pypto-sim KERNEL.py [ARGS...]

Run a pypto-lib kernel file on the pypto-lab simulator: `import golden` resolves to
pypto.golden, `-p a2a3sim` is added when the file takes a platform and none is given.
ARGS go to the file's own argument parser (try: pypto-sim KERNEL.py --help).
On a2a3sim memory nothing wrote reads as NaN / garbage (a golden expecting zeros there
fails, with the region and the fixes); `-p a2a3` reads it as zeros, as the device
often does, and reports a pass that rests on them.
"""

DEFAULT_SIM_PLATFORM = "a2a3sim"
_PLATFORM_OPT = re.compile(r"""add_argument\(\s*(['"])(-p|--platform)\1""")


def install_golden_alias() -> None:
    """Make `import golden[.spec|.runner|.validation]` load pypto.golden."""
    sys.modules["golden"] = pypto.golden
    for sub in ("spec", "runner", "validation"):
        sys.modules[f"golden.{sub}"] = sys.modules[f"pypto.golden.{sub}"]


class _TorchThreadsOnImport(importlib.abc.MetaPathFinder):
    """Set torch's thread count right after torch is first imported."""

    def __init__(self, threads: int):
        self.threads = threads

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec("torch")
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        original = loader.exec_module
        threads = self.threads

        def exec_module(module):
            original(module)
            module.set_num_threads(threads)

        loader.exec_module = exec_module
        return spec


def configure_torch_threads(default: int = 2) -> None:
    os.environ.setdefault("PYPTO_GOLDEN_NUM_THREADS", str(default))
    n = parse_thread_count(os.environ["PYPTO_GOLDEN_NUM_THREADS"])
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(n)
    elif importlib.util.find_spec("torch") is not None:
        sys.meta_path.insert(0, _TorchThreadsOnImport(n))


def _gives_platform(args: list[str]) -> bool:
    for a in args:
        if a in ("-p", "--platform") or a.startswith("--platform="):
            return True
        if a.startswith("-p") and not a.startswith("--") and len(a) > 2:
            return True
    return False


def file_argv(path: Path, args: list[str]) -> list[str]:
    """The file's sys.argv: its own args, plus a simulator platform when it takes one."""
    try:
        source = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        source = ""
    match = _PLATFORM_OPT.search(source)
    if match and not _gives_platform(args):
        args = [match.group(2), DEFAULT_SIM_PLATFORM, *args]
    return [str(path), *args]


def _library_root(start: Path) -> Path | None:
    """The pypto-lib checkout holding `start` (a directory with golden/ and models/)."""
    for d in (start, *start.parents):
        if (d / "golden" / "__init__.py").is_file() and (d / "models").is_dir():
            return d
    return None


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


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, end="")
        return 0 if argv else 2
    path = Path(argv[0])
    if not path.is_file():
        print(f"pypto-sim: no such file: {path}", file=sys.stderr)
        return 2
    path = path.resolve()
    install_golden_alias()
    configure_torch_threads()
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = file_argv(path, argv[1:])
    sys.path.insert(0, str(path.parent))
    root = _library_root(path.parent)
    if root is not None and str(root) not in sys.path:
        sys.path.append(str(root))
    try:
        runpy.run_path(str(path), run_name="__main__")
        return 0
    except SystemExit as exc:
        return _exit_code(exc)
    except KeyboardInterrupt:
        return 130
    except PyptoError as err:
        # A kernel or simulation fault is the user's: show the located diagnostic and
        # the kernel file's own frames, not the compiler's and the simulator's.
        print(_user_traceback(err, path), file=sys.stderr)
        return 1
    except BaseException:  # noqa: BLE001 - report like the interpreter would
        traceback.print_exc()
        return 1
    finally:
        sys.argv = saved_argv
        sys.path[:] = saved_path


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
