"""Generic traversal of the frozen IR: visitors that read and mutators that rebuild.

`Mutator` rebuilds a node only when one of its children changed, so untouched
subtrees are shared between a pass's input and output.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

from pypto.ir.nodes import Expr, Function, Param, Program, Stmt
from pypto.ir.types import ShapedType, TupleType, Type


class Mutator:
    """Override `visit_<ClassName>` for the nodes you change; the rest are rebuilt
    from their visited children."""

    def visit(self, node: Any) -> Any:
        if isinstance(node, (Expr, Stmt, Function, Param, Program)):
            method = getattr(self, "visit_" + type(node).__name__, None)
            if method is not None:
                return method(node)
            return self.generic(node)
        if isinstance(node, tuple):
            return self.visit_tuple(node)
        if isinstance(node, Type):
            return self.visit_type(node)
        return node

    def visit_tuple(self, items: tuple) -> tuple:
        out = []
        changed = False
        for item in items:
            new = self.visit(item)
            if isinstance(new, list):  # a statement expanded into several
                out.extend(new)
                changed = True
            else:
                out.append(new)
                changed = changed or new is not item
        return tuple(out) if changed else items

    def visit_type(self, t: Type) -> Type:
        if isinstance(t, ShapedType):
            shape = self.visit_tuple(t.shape)
            valid = self.visit_tuple(t.valid_shape) if t.valid_shape is not None else None
            if shape is not t.shape or valid is not t.valid_shape:
                return dataclasses.replace(t, shape=shape, valid_shape=valid)
            return t
        if isinstance(t, TupleType):
            items = self.visit_tuple(t.items)
            return t if items is t.items else TupleType(items)
        return t

    def generic(self, node: Any) -> Any:
        changes = {}
        for f in dataclasses.fields(node):
            if f.name == "span":
                continue
            old = getattr(node, f.name)
            new = self.visit(old)
            if new is not old:
                changes[f.name] = new
        return dataclasses.replace(node, **changes) if changes else node


def walk(node: Any) -> Iterator[Any]:
    """Every IR node (statements and expressions) under `node`, pre-order."""
    stack = [node]
    while stack:
        n: Any = stack.pop()
        if isinstance(n, tuple):
            stack.extend(reversed(n))
            continue
        if not isinstance(n, (Expr, Stmt, Function, Param, Program)):
            continue
        yield n
        # every concrete node class is a dataclass (the bases Expr / Stmt are not)
        kids = [getattr(n, f.name) for f in dataclasses.fields(n)  # type: ignore[arg-type]
                if f.name not in ("span", "type")]
        stack.extend(reversed(kids))


def substitute(node: Any, fn: Callable[[Any], Any]) -> Any:
    """Replace every expression `e` for which `fn(e)` returns a node."""

    class _Sub(Mutator):
        def visit(self, n: Any) -> Any:
            if isinstance(n, Expr):
                r = fn(n)
                if r is not None:
                    return r
            return super().visit(n)

    return _Sub().visit(node)


BODY_FIELDS = {"For": ("body",), "While": ("body",), "If": ("then_body", "else_body"),
               "Scope": ("body",)}


def map_bodies(stmt: Any, fn: Callable[[tuple], tuple]) -> Any:
    """Apply `fn` to each statement list nested directly in `stmt` (loop and branch
    bodies, scope bodies); other statements are returned unchanged."""
    fields = BODY_FIELDS.get(type(stmt).__name__)
    if not fields:
        return stmt
    changes = {}
    for name in fields:
        old = getattr(stmt, name)
        new = fn(old)
        if new is not old:
            changes[name] = new
    return dataclasses.replace(stmt, **changes) if changes else stmt
