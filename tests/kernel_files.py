"""Import a test, example or benchmark file by path, as the tests that sweep every kernel
of the repository do: its own folder first on sys.path (kernel files import sibling
helpers), warnings silenced, each file once. None when the file cannot be imported on its
own (it needs a fixture or an optional dependency)."""
from __future__ import annotations

import importlib.util
import sys
import warnings
from pathlib import Path
from types import ModuleType


def load_file(path: Path, prefix: str) -> ModuleType | None:
    name = f"{prefix}_{path.parent.name}_{path.stem}"
    if name in sys.modules:
        return sys.modules[name]
    sys.path.insert(0, str(path.parent))
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            return None
        mod = importlib.util.module_from_spec(spec)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            spec.loader.exec_module(mod)
    except BaseException:  # noqa: BLE001 - a module that needs a fixture or optional dep
        return None
    finally:
        sys.path.remove(str(path.parent))
    sys.modules[name] = mod
    return mod
