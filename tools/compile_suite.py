"""Compile every @pl.jit entry of a list of pypto-lib kernel files (no simulation).

Usage: python tools/compile_suite.py CHECKOUT LISTFILE [--verbose]

Each file is imported as a module with its directory first on sys.path (kernel
files import sibling modules such as `config`), `golden` resolving to
`pypto.golden` when it exists. Prints one line per file and a summary.
"""
from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path


def compile_file(path: Path) -> tuple[str, str]:
    from pypto.ir.nodes import FunctionKind
    from pypto.language.jit import JITFunction

    saved_path = list(sys.path)
    saved_mods = set(sys.modules)
    sys.path.insert(0, str(path.parent))
    try:
        spec = importlib.util.spec_from_file_location(f"_suite_{path.stem}", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        entries = [v for v in vars(mod).values() if isinstance(v, JITFunction)
                   and v.kind in (FunctionKind.ORCHESTRATION, FunctionKind.HOST)
                   and getattr(v.fn, "__module__", None) == mod.__name__]
        if not entries:
            return "skip", "no @pl.jit entry"
        for e in entries:
            e.compile()
        return "ok", ", ".join(e.__name__ for e in entries)
    except Exception as exc:  # noqa: BLE001 - report and continue
        return "FAIL", f"{type(exc).__name__}: {exc}"
    finally:
        sys.path[:] = saved_path
        for m in set(sys.modules) - saved_mods:
            if not m.startswith(("pypto", "numpy", "ml_dtypes", "torch")):
                del sys.modules[m]


def main() -> int:
    root = Path(sys.argv[1])
    files = [line.strip() for line in Path(sys.argv[2]).read_text().splitlines() if line.strip()]
    verbose = "--verbose" in sys.argv
    try:
        import pypto.golden as golden
        sys.modules.setdefault("golden", golden)
    except ImportError:
        pass
    ok = 0
    for rel in files:
        t0 = time.perf_counter()
        status, info = compile_file(root / rel)
        ok += status == "ok"
        first = info if verbose else info.splitlines()[0][:300] if info else ""
        print(f"{status:4} {time.perf_counter() - t0:6.2f}s {rel}: {first}")
    print(f"{ok}/{len(files)} compiled")
    return 0


if __name__ == "__main__":
    sys.exit(main())
