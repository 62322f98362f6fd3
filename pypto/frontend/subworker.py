"""Host SubWorkers: `@pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)`.

A SubWorker of a multi-card program is a Python callback its host orchestrator calls
(`self.inspect_result(out)`); the real runtime runs it in a forked host worker. As in
the real parser its body is not `pl` DSL: it is kept as Python source (the attribute
`python_body`), or, when it is only `...` (a docstring and a `pl.func_attr({...})`
prologue aside), the function is an abstract callback point whose implementation the
real runtime binds when the program is prepared (`requires_runtime_binding`). It takes
no `self`: it is self-contained. The simulator runs neither kind
(`passes/runnable.py`); the program compiles, and its text form says all of it.
"""
from __future__ import annotations

import ast
from typing import Any

from pypto.errors import PyptoSyntaxError, PyptoTypeError
from pypto.frontend.annotations import AnnotationError, to_type
from pypto.ir.nodes import Function, FunctionKind
from pypto.ir.types import TupleType

_Def = ast.FunctionDef | ast.AsyncFunctionDef


def is_func_attr(p: Any, stmt: ast.stmt) -> bool:
    """Is `stmt` a `pl.func_attr({...})` call statement?"""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return False
    try:
        return p.visit_expr(stmt.value.func) is p.lookup("pl", stmt).func_attr
    except Exception:  # noqa: BLE001 - any other call is simply not the prologue
        return False


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and \
        isinstance(stmt.value.value, str)


def is_abstract(p: Any, body: list[ast.stmt]) -> bool:
    """A body that is only `...` (docstrings and the pl.func_attr prologue aside)."""
    rest = [s for s in body if not _is_docstring(s) and not is_func_attr(p, s)]
    return len(rest) == 1 and isinstance(rest[0], ast.Expr) and \
        isinstance(rest[0].value, ast.Constant) and rest[0].value.value is ...


def check_no_self(p: Any, tree: _Def) -> None:
    if tree.args.args and tree.args.args[0].arg == "self":
        raise p.error(PyptoSyntaxError, f"SubWorker function '{tree.name}' must not declare "
                      "'self'; declare it as a self-contained function inside @pl.program.",
                      tree, hint="Remove the 'self' parameter from the SubWorker definition.")


def returns_of(p: Any, tree: _Def) -> tuple:
    """The declared return types (a SubWorker has no DSL body to infer them from)."""
    if tree.returns is None:
        return ()
    p.annotating = True
    try:
        ann = p.visit_expr(tree.returns)
    finally:
        p.annotating = False
    if ann is None:
        return ()
    try:
        t = to_type(ann)[0]
    except AnnotationError as exc:
        raise p.error(PyptoTypeError, f"return type: {exc.message}", tree.returns,
                      hint=exc.hint) from None
    return t.items if isinstance(t, TupleType) else (t,)


def subworker_attrs(p: Any, tree: _Def, level: str) -> tuple:
    """role/level, then what the body is: abstract, or its Python source."""
    if is_abstract(p, tree.body):
        body: tuple = (("requires_runtime_binding", True),)
    else:
        body = (("python_body", "\n".join(ast.unparse(s) for s in tree.body)),)
    for s in tree.body:  # the prologue's attributes, as for any function
        if is_func_attr(p, s):
            p.visit_stmt(s)
    return (("role", "SubWorker"), ("level", level)) + body


def subworker_function(p: Any, tree: _Def, name: str, params: tuple,
                       level: str, extra_attrs: tuple) -> Function:
    attrs = subworker_attrs(p, tree, level) + extra_attrs + tuple(p.func_attrs.items())
    return Function(name, params, (), FunctionKind.HOST, returns_of(p, tree), attrs,
                    span=p.span(tree))


__all__ = ["check_no_self", "is_abstract", "is_func_attr",
           "returns_of", "subworker_function"]
