"""Stand-ins for the real toolchain's internals, so its parser tests can be imported.

Those test modules name the real IR classes and parser internals at import time
(`-> ir.Function` annotations on helpers, `from pypto import DataType`,
`from pypto.language.parser.scope_manager import ScopeManager`). pypto-lab has its own
IR and parser, so these names do not exist here. While the parser suite runs, a name a
*test file* asks of a `pypto` module that lacks it, and a `pypto.*` module a test file
imports that does not exist, become inert stand-ins: classes with no behaviour, so
`isinstance(f, ir.Function)` is False and any use of one fails. They never reach our
own code (only lookups made from files under the checkout are answered), and a test
that touched one cannot count as a verbatim pass (`touched()`).
"""
from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types
from typing import Any

_touched: list[int] = [0]
_ROOT: list[str] = []  # the checkout whose files may see stand-ins


def touched() -> int:
    return _touched[0]


def is_stand_in(obj: object) -> bool:
    """A stand-in class or instance, or a module made by `_AbsentModules`."""
    if isinstance(obj, types.ModuleType):
        return getattr(obj, "__spec__", None) is not None and \
            isinstance(obj.__spec__.loader, _AbsentModules)
    return isinstance(obj, (_AbsentMeta, _Absent))


def reset() -> None:
    _touched[0] = 0


class _AbsentMeta(type):
    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        _touched[0] += 1
        return absent(f"{cls.__qualname__}.{name}")

    def __iter__(cls):
        _touched[0] += 1
        return iter(())


class _Absent(metaclass=_AbsentMeta):
    """An instance of a stand-in: every use of it is a dead end."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        _touched[0] += 1

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        _touched[0] += 1
        return absent(f"{type(self).__qualname__}().{name}")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        _touched[0] += 1
        return self


def absent(qualname: str) -> type:
    """A stand-in class for the real toolchain's `qualname`."""
    return _AbsentMeta(qualname.rsplit(".", 1)[-1], (_Absent,), {"__qualname__": qualname})


def _from_checkout(depth: int) -> bool:
    frame = sys._getframe(depth + 1)
    while frame is not None and frame.f_code.co_filename.startswith("<frozen importlib"):
        frame = frame.f_back
    return frame is not None and bool(_ROOT) and frame.f_code.co_filename.startswith(_ROOT[0])


def _module_getattr(module: types.ModuleType):
    def __getattr__(name: str) -> Any:
        if name.startswith("__") or not _from_checkout(1):
            raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}")
        _touched[0] += 1
        value = absent(f"{module.__name__}.{name}")
        return value

    return __getattr__


class _AbsentModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Creates a stand-in for a `pypto.*` module a checkout file imports and we lack."""

    def find_spec(self, fullname: str, path: Any, target: Any = None):
        if not fullname.startswith("pypto.") or not _from_checkout(1):
            return None
        for finder in sys.meta_path:
            if finder is self:
                continue
            find = getattr(finder, "find_spec", None)
            if find is not None and find(fullname, path, target) is not None:
                return None  # a real module: let it load
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec):
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        _touched[0] += 1
        module.__path__ = []
        module.__getattr__ = _module_getattr(module)


def install(checkout: str, modules: list[str]) -> None:
    """Answer missing names asked of `modules` (and missing `pypto.*` modules) from
    files under `checkout` with stand-ins."""
    _ROOT[:] = [checkout]
    for name in modules:
        mod = importlib.import_module(name)
        if "__getattr__" not in vars(mod):
            mod.__getattr__ = _module_getattr(mod)
    sys.meta_path.append(_AbsentModules())
