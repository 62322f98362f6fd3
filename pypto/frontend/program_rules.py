"""Rules of one call inside a program that the real parser enforces while it builds the
program: the dynamic dims a call binds, and the names of external functions.

An external `@pl.function` (defined outside the `@pl.program` class and called from a
method) becomes a function of the program under its own name, so it may not share the
name of a method, nor of another external function.
"""
from __future__ import annotations

import ast
from typing import Any

from pypto.errors import PyptoSyntaxError
from pypto.ir.nodes import DynDim
from pypto.ir.types import ShapedType


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
    name = fn.__name__
    program = p.self_object.program if p.self_object is not None else None
    if program is not None and name in program.functions:
        raise p.error(PyptoSyntaxError, f"external function '{name}' conflicts with program "
                      f"function '{name}' of {program.__name__}", node,
                      hint="rename one of them: both would be the program's function "
                           f"'{name}'")
    seen = externals.setdefault(name, fn)
    if seen is not fn:
        raise p.error(PyptoSyntaxError, f"Conflicting external functions named '{name}': "
                      "two different functions of that name are called from this program",
                      node, hint="give the external functions distinct names")


__all__ = ["bind_dims", "check_external"]
