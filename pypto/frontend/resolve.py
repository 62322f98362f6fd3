"""Resolve names in a kernel body the way Python would: closure cells, then the locals
of the code that decorated the kernel (a `get_program()` whose locals appear only in
annotations), then the function's module globals, then builtins."""
from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

from pypto.language.kernels import decoration_scope

_MISSING = object()


class PythonScope:
    """The Python-level names visible to a function's body."""

    def __init__(self, fn: Callable | None, extra: dict | None = None):
        self.globals = getattr(fn, "__globals__", {})
        self.closure: dict[str, Any] = {}
        code = getattr(fn, "__code__", None)
        cells = getattr(fn, "__closure__", None) or ()
        if code is not None:
            for name, cell in zip(code.co_freevars, cells):
                try:
                    self.closure[name] = cell.cell_contents
                except ValueError:  # an empty cell: the name is assigned later in the outer fn
                    pass
        self.extra = extra or {}
        self.decorating = decoration_scope(fn) if fn is not None else []

    @classmethod
    def of_namespace(cls, names: dict) -> PythonScope:
        """The scope of code whose globals are `names` (text read by `pl.parse`)."""
        scope = cls(None)
        scope.globals = names
        return scope

    def lookup(self, name: str) -> Any:
        """The value of `name`, or `MISSING`."""
        for space in (self.extra, self.closure, *self.decorating, self.globals):
            if name in space:
                return space[name]
        return getattr(builtins, name, _MISSING)


MISSING = _MISSING
