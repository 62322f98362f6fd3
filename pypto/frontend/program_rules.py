"""Rules of one call inside a program that the real parser enforces while it builds the
program: the dynamic dims a call binds, and the names of external functions.

An external `@pl.function` (defined outside the `@pl.program` class and called from a
method) becomes a function of the program under its own name, so it may not share the
name of a method, nor of another external function. The real parser parses every method
when the class is decorated; here only what the entry reaches is parsed, so
`check_program_externals` reads the calls of every method for these name rules first.
"""
from __future__ import annotations

import ast
import inspect
from typing import Any

from pypto.errors import PyptoError, PyptoSyntaxError
from pypto.frontend.resolve import PythonScope
from pypto.frontend.source import get_source
from pypto.ir.nodes import DynDim
from pypto.ir.types import ShapedType
from pypto.language.kernels import FunctionDef


def bind_dims(p: Any, node: ast.arg, declared: Any, actual: Any,
               bound: dict[str, tuple[int, str]]) -> None:
    """A call binds each `pl.dynamic` dim of the callee's signature to one extent: two
    arguments giving the same dim different static extents conflict."""
    if not (isinstance(declared, ShapedType) and isinstance(actual, ShapedType)) or \
            len(declared.shape) != len(actual.shape):
        return
    for d, a in zip(declared.shape, actual.shape):
        if not (isinstance(d, DynDim) and isinstance(a, int)):
            continue
        prev = bound.setdefault(d.name, (a, node.arg))
        if prev[0] != a:
            raise p.error(PyptoSyntaxError, f"dynamic dim '{d.name}' has conflicting bindings "
                          f"in this call: {prev[0]} from argument '{prev[1]}' and {a} from "
                          f"'{node.arg}'", node,
                          hint=f"pass arguments whose '{d.name}' extents agree, or give the "
                               "parameters different pl.dynamic dims")

def check_external(p: Any, externals: dict[str, Any], fn: Any, node: ast.AST) -> None:
    """`fn`, an external function called from a method of the program `p` parses,
    must not take the name of a method or of another external function (`externals`:
    the ones called so far, by name)."""
    program = p.self_object.program if p.self_object is not None else None
    _name_rules(program, externals, fn, p.span(node))


def check_program_externals(program: Any) -> None:
    """The name rules of `check_external` over the calls of every method of the
    `@pl.program` `program`, reached from its entry or not."""
    externals: dict[str, Any] = {}
    for method in program.functions.values():
        try:
            src = get_source(method.fn)
        except PyptoError:
            continue  # no source to read: the parse of a reached method says so
        scope = PythonScope(method.fn)
        for node in ast.walk(src.tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            callee = scope.lookup(node.func.id)
            if isinstance(callee, FunctionDef) and not takes_self(callee.fn):
                _name_rules(program, externals, callee.fn, src.span(node))


def _name_rules(program: Any, externals: dict[str, Any], fn: Any, span: Any) -> None:
    name = fn.__name__
    if program is not None and name in program.functions:
        raise PyptoSyntaxError(f"external function '{name}' conflicts with program function "
                               f"'{name}' of {program.__name__}", span,
                               hint="rename one of them: both would be the program's "
                                    f"function '{name}'")
    seen = externals.setdefault(name, fn)
    if seen is not fn:
        raise PyptoSyntaxError(f"Conflicting external functions named '{name}': two "
                               "different functions of that name are called from this "
                               "program", span, hint="give the external functions distinct "
                                                     "names")


def takes_self(fn: Any) -> bool:
    """Is `fn` a method (its first parameter `self`), not an external function?"""
    try:
        params = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return True
    return bool(params) and params[0] == "self"


__all__ = ["bind_dims", "check_external", "check_program_externals", "takes_self"]
