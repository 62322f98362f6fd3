"""What a pypto-lib kernel file expects of its surroundings, so it runs unmodified:
`import golden` resolving to `pypto.golden`, a simulator platform on its command line,
torch's thread count, and its library's root on sys.path (`pypto-sim`, sweeps)."""
from __future__ import annotations

import importlib.abc
import importlib.util
import os
import re
import sys
from pathlib import Path

import pypto.golden
import pypto.golden.runner
import pypto.golden.spec
import pypto.golden.validation
from pypto.golden._interop import parse_thread_count

DEFAULT_SIM_PLATFORM = "a2a3sim"
_PLATFORM_OPT = re.compile(r"""add_argument\(\s*(['"])(-p|--platform)\1""")
_DEVICE_OPT = re.compile(r"""add_argument\(\s*(['"])(-d|--device)\1""")
# pypto-lib's CI borrows this many cards for a file and passes their ids as `-d`
_CI_DEVICES = re.compile(r"#\s*ci:\s*devices=(\d+)")


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
    return _gives_option(args, "-p", "--platform")


def _gives_option(args: list[str], short: str, long: str) -> bool:
    for a in args:
        if a in (short, long) or a.startswith(long + "="):
            return True
        if a.startswith(short) and not a.startswith("--") and len(a) > 2:
            return True
    return False


def file_argv(path: Path, args: list[str]) -> list[str]:
    """The file's sys.argv: its own args, plus a simulator platform when it takes one
    and the devices pypto-lib's CI would give it (`ci_devices`)."""
    try:
        source = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        source = ""
    args = [*ci_devices(source, args), *args]
    match = _PLATFORM_OPT.search(source)
    if match and not _gives_platform(args):
        args = [match.group(2), DEFAULT_SIM_PLATFORM, *args]
    return [str(path), *args]


def ci_devices(source: str, args: list[str]) -> list[str]:
    """`-d 0,1,..,N-1` for a file marked `# ci: devices=N` (N > 1) that takes a
    `-d/--device` option none of `args` gives: pypto-lib's CI passes the ids of the N
    cards it borrowed; on the simulator device i is simply rank i."""
    marked, option = _CI_DEVICES.search(source), _DEVICE_OPT.search(source)
    if marked is None or option is None or int(marked.group(1)) < 2 or _gives_option(
            args, "-d", "--device"):
        return []
    return [option.group(2), ",".join(str(i) for i in range(int(marked.group(1))))]


def library_root(start: Path) -> Path | None:
    """The pypto-lib checkout holding `start` (a directory with golden/ and models/)."""
    for d in (start, *start.parents):
        if (d / "golden" / "__init__.py").is_file() and (d / "models").is_dir():
            return d
    return None

