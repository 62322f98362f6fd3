"""The parser's dispatch tables, filled by the handler modules as they are imported.

This is a leaf module (it imports nothing of pypto). The parser reads the two AST
tables at its choke points (`FunctionParser.visit_stmt` / `visit_expr`); the
handlers of the language's constructs are found through the construct tables. So
the parser imports no handler module and no handler module imports another one to
reach it: every handler module imports this one and registers, and importing the
`pypto.frontend` package imports every handler module once.

Every handler takes the `FunctionParser` first (`p`), then the AST node(s):

=================  ==============================  =============================================
table              key                             handler
=================  ==============================  =============================================
STATEMENTS         an `ast.stmt` class              `(p, node) -> None`
EXPRESSIONS        an `ast.expr` class              `(p, node) -> value` (IR `Expr` or Python)
CALL_CONSTRUCTS    a `pl` construct (`pl.const`)    `(p, call) -> value`
ASSIGN_CONSTRUCTS  a construct bound by `x = ...`   `(p, construct, target, call, stmt) -> None`
                   (`pl.yield_`, `pl.spmd_submit`)
LOOP_ITERATORS     a construct after `for ... in`   `(p, for_node) -> None`
                   (`pl.range`, `pl.spmd`, ...)
WITH_SCOPES        a construct after `with`         `(p, with_node, call, target) -> None`
                   (`pl.at`, `pl.spmd`, ...)
=================  ==============================  =============================================
"""
from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any, cast

Handler = Callable[..., Any]

STATEMENTS: dict[type, Handler] = {}
EXPRESSIONS: dict[type, Handler] = {}
CALL_CONSTRUCTS: dict[Any, Handler] = {}
ASSIGN_CONSTRUCTS: dict[Any, Handler] = {}
LOOP_ITERATORS: dict[Any, Handler] = {}
WITH_SCOPES: dict[Any, Handler] = {}


def _register(table: dict, keys: tuple) -> Callable[[Handler], Handler]:
    def add(handler: Handler) -> Handler:
        for key in keys:
            old = table.get(key)
            # Re-importing a handler module re-registers the same function; two
            # different functions claiming one key is a bug in the frontend.
            if old is not None and old.__qualname__ != handler.__qualname__:
                raise RuntimeError(f"{key!r} has two handlers: {old.__qualname__} and "
                                   f"{handler.__qualname__}")
            table[key] = handler
        return handler

    return add


def statement(*node_types: type) -> Callable[[Handler], Handler]:
    """Register the handler of these `ast.stmt` classes."""
    return _register(STATEMENTS, node_types)


def expression(*node_types: type) -> Callable[[Handler], Handler]:
    """Register the handler of these `ast.expr` classes."""
    return _register(EXPRESSIONS, node_types)


def call_construct(*constructs: Any) -> Callable[[Handler], Handler]:
    """Register the handler of `pl.X(...)` in expression or statement position."""
    return _register(CALL_CONSTRUCTS, constructs)


def assign_construct(*constructs: Any) -> Callable[[Handler], Handler]:
    """Register the handler of `targets = pl.X(...)` (results bound to names)."""
    return _register(ASSIGN_CONSTRUCTS, constructs)


def loop_iterator(*constructs: Any) -> Callable[[Handler], Handler]:
    """Register the handler of `for ... in pl.X(...):`."""
    return _register(LOOP_ITERATORS, constructs)


def with_scope(*constructs: Any) -> Callable[[Handler], Handler]:
    """Register the handler of `with pl.X(...) [as name]:`."""
    return _register(WITH_SCOPES, constructs)


def iterator_call(node: ast.For) -> ast.Call:
    """The `pl.X(...)` call a loop iterates, for a LOOP_ITERATORS handler (the loop
    statement's handler found the handler by that call's callee)."""
    return cast(ast.Call, node.iter)


def lookup(table: dict, key: Any) -> Handler | None:
    """The handler of `key`, or None, also for keys that cannot be hashed (a kernel may
    iterate or open anything; an unhashable value is simply not a construct)."""
    try:
        return table.get(key)
    except TypeError:
        return None
