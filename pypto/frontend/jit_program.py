"""What `self` means inside a `@pl.jit` body: the program the decorator assembles.

The real toolchain turns a `@pl.jit` entry into a multi-function program: the entry
plus every `@pl.jit.*` function its bodies call by bare name, followed transitively
(a `@pl.jit.host` entry also takes the `@pl.jit` chip orchestrators it dispatches). Its
bare calls become `self.<name>(...)`, so a body may write `self.<name>` itself:
pypto-lib's DeepSeek-V4 pro MoE passes `self.shared_routed` to `pl.spmd_submit`, with a
never-run `if False: shared_routed(...)` call so that the function joins the program.
`self.<name>` reaches exactly those functions; any other name is an error, as in the
real parser ("not defined in program").
"""
from __future__ import annotations

import ast
from typing import Any

from pypto.errors import UndefinedNameError
from pypto.frontend.resolve import MISSING, PythonScope
from pypto.frontend.source import get_source
from pypto.ir.nodes import FunctionKind
from pypto.language.kernels import KernelFunction

# the kinds a body may pull into its program; a host entry also takes orchestrators
_DEP_KINDS = frozenset({FunctionKind.INCORE, FunctionKind.INLINE, FunctionKind.OPAQUE})


class JitProgram:
    """The functions of the program a `@pl.jit` entry stands for, by name."""

    def __init__(self, entry: KernelFunction):
        self.entry = entry
        self._functions: dict[str, KernelFunction] | None = None

    def functions(self) -> dict[str, KernelFunction]:
        if self._functions is None:
            table = {self.entry.__name__: self.entry}
            seen = {id(self.entry.fn)}
            _discover(self.entry, table, seen)
            self._functions = table
        return self._functions

    def member(self, p: Any, name: str, node: ast.AST) -> KernelFunction:
        fn = self.functions().get(name)
        if fn is not None:
            return fn
        listed = ", ".join(sorted(self.functions()))
        found = p.py.lookup(name)
        if isinstance(found, KernelFunction):
            hint = (f"{name} is {found!r}, but no body of this program calls it by name, so "
                    f"it is not one of the program's functions ({listed}); call it by name "
                    f"somewhere in the program (pypto-lib writes `if False: {name}(...)`)")
        else:
            hint = (f"self.<name> reaches the program's functions: {listed} (the entry and the "
                    "@pl.jit.* functions its bodies call by name)")
        raise p.error(UndefinedNameError, f"function '{name}' is not defined in program "
                      f"{self.entry.__name__}", node, hint=hint)


def _discover(caller: KernelFunction, table: dict[str, KernelFunction], seen: set[int]) -> None:
    """Add the kernels `caller`'s body calls by bare name, then theirs (first call first)."""
    kinds = _DEP_KINDS | ({FunctionKind.ORCHESTRATION} if caller.kind is FunctionKind.HOST
                          else set())
    scope = PythonScope(caller.fn)
    for name in _called_names(get_source(caller.fn).tree):
        dep = scope.lookup(name)
        if dep is MISSING or not isinstance(dep, KernelFunction) or dep.kind not in kinds:
            continue
        table.setdefault(name, dep)
        if id(dep.fn) not in seen:
            seen.add(id(dep.fn))
            _discover(dep, table, seen)


def _called_names(tree: ast.AST) -> list[str]:
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id not in names:
            names.append(node.func.id)
    return names
