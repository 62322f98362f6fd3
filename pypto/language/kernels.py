"""What the decorators make: the Python function, its kind and its options.

The parser reads these objects; it never runs them. `pypto.language.jit` builds on
them with what a user does with a kernel (compile it, run it on the simulator), so
the frontend, which sits below the toolchain, depends only on this module.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pypto.ir.nodes import FunctionKind

KIND_NAMES = {
    FunctionKind.ORCHESTRATION: "jit", FunctionKind.INLINE: "jit.inline",
    FunctionKind.INCORE: "jit.incore", FunctionKind.HOST: "jit.host",
    FunctionKind.OPAQUE: "jit.opaque",
}


class KernelFunction:
    """A function decorated with one of the `@pl.jit` forms (`JITFunction` adds the verbs)."""

    def __init__(self, fn: Callable, kind: FunctionKind, options: dict | None = None):
        self.fn = fn
        self.kind = kind
        self.options = dict(options or {})
        self.__name__ = fn.__name__
        self.__qualname__ = getattr(fn, "__qualname__", fn.__name__)
        self.__doc__ = fn.__doc__
        self.__module__ = getattr(fn, "__module__", None)
        self.__wrapped__ = fn
        self._cache: dict = {}

    def __repr__(self) -> str:
        return f"<pl.{KIND_NAMES.get(self.kind, 'jit')} {self.__qualname__}>"


class FunctionDef:
    """A method decorated with `@pl.function(type=...)` inside a `@pl.program` class."""

    def __init__(self, fn: Callable, type: Any, options: dict):
        self.fn = fn
        self.type = type
        self.options = options
        self.__name__ = fn.__name__

    def __call__(self, *args: Any, **kwargs: Any):
        raise TypeError(f"{self.__name__} is a @pl.function: call it from a function of the "
                        "same @pl.program as self." + self.__name__ + "(...)")
