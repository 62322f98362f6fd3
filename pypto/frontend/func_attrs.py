"""Function attributes given on the decorator: `@pl.function(attrs={...})`.

The deprecated decorator form and the body's `pl.func_attr({...})` fill the same
attributes; a key may be given by one of them only. A decorator is evaluated before
the function's parameters exist, so its values are plain data: a bool, int, float or
string, a `pl` enum member or dtype, a compile-time expression, or a list whose
elements are all call-site directions (`pl.adir.*`), or integers under the
`arg_direction_overrides` key. A type annotation (`pl.Tensor[...]`) is not a value.
"""
from __future__ import annotations

import ast
from enum import Enum
from typing import Any

from pypto.errors import PyptoSyntaxError
from pypto.ir import dtypes
from pypto.ir.nodes import Expr, Var
from pypto.ir.transform import walk
from pypto.language.enums import ArgDirection
from pypto.language.typing import (
    ArrayAnnotation,
    ScalarAnnotation,
    TensorAnnotation,
    TileAnnotation,
    TupleAnnotation,
)

_ANNOTATIONS = (TensorAnnotation, TileAnnotation, ScalarAnnotation, ArrayAnnotation,
                TupleAnnotation)
_INT_LIST_KEYS = ("arg_direction_overrides",)


def decorator_attrs(p: Any, tree: ast.AST, attrs: Any) -> dict[str, Any]:
    """The checked `attrs=` of the `@pl.function` decorating `tree`."""
    node = _attrs_node(tree)
    if not isinstance(attrs, dict):
        raise p.error(PyptoSyntaxError, f"`@pl.function(attrs=...)` must be a dict, got "
                      f"{type(attrs).__name__}", node,
                      hint='write attrs={"split": pl.SplitMode.UP_DOWN}, or better '
                           "pl.func_attr({...}) in the body")
    out: dict[str, Any] = {}
    for key, value in attrs.items():
        if not isinstance(key, str):
            raise p.error(PyptoSyntaxError, f"`@pl.function(attrs=...)` keys must be strings, "
                          f"got {key!r}", node, hint='use string keys, e.g. {"core_num": 8}')
        problem = _unsupported(key, value)
        if problem is not None:
            raise p.error(PyptoSyntaxError, problem, node,
                          hint="give a literal, a pl enum member or dtype; a value that names "
                               "a parameter belongs in pl.func_attr({...}) in the body")
        out[key] = value
    return out


def _unsupported(key: str, value: Any) -> str | None:
    """Why `value` cannot be the decorator attribute `key` (None: it can)."""
    if isinstance(value, _ANNOTATIONS):
        return (f"@pl.function attr '{key}' is an annotation-only {type(value).__name__}: "
                "a type, not a value")
    if isinstance(value, (bool, int, float, str, Enum, dtypes.DType)):
        return None
    if isinstance(value, (list, tuple)):
        if key in _INT_LIST_KEYS:
            ok = all(isinstance(v, int) and not isinstance(v, bool) for v in value)
            kind = "int"
        else:
            ok = all(isinstance(v, ArgDirection) for v in value)
            kind = "pl.adir direction"
        if not ok:
            return (f"Unsupported list element type for key: {key} (a list attr holds "
                    f"{kind} values)")
        return None
    if isinstance(value, Expr):  # a compile-time IR expression
        if any(isinstance(n, Var) for n in walk(value)):
            return (f"@pl.function attr '{key}' references a variable, which a decorator "
                    "attr cannot carry")
        return None
    return f"Unsupported attr type for key: {key} ({type(value).__name__})"


def _attrs_node(tree: ast.AST) -> ast.AST:
    """The `attrs=` value in the decorators of `tree` (else `tree`), for the location."""
    for dec in getattr(tree, "decorator_list", ()):
        for kw in getattr(dec, "keywords", ()):
            if kw.arg == "attrs":
                return kw.value
    return tree


__all__ = ["decorator_attrs"]
