"""An Opaque function with no region of its own is a self-contained compute kernel.

The L2 guide's Form B: "Opaque for a self-contained compute kernel". The real parser
accepts such a function with tensor compute ops at its top level, and its compiler
lowers the body as one kernel. So when an Opaque function opens no region (no `with`
scope, no `pl.spmd`, no `pl.submit`) and launches no other function of its program
(`self.f(...)`), its body runs as one implicit `pl.at` region named after it; its
trailing `return` stays outside, as after an explicit region. An Opaque function that
does any of those is orchestration code around its regions, as before.
"""
from __future__ import annotations

import ast
from typing import Any

from pypto.ir.nodes import Scope, ScopeKind

_SCOPE_CALLS = ("spmd", "spmd_submit", "submit", "at", "incore", "scope")


def self_contained(tree: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """No region scope, no launch through `self`, at most one `return` (the last)."""
    body = tree.body
    returns = [n for n in ast.walk(tree) if isinstance(n, ast.Return)]
    if returns and (len(returns) > 1 or returns[0] is not body[-1]):
        return False
    for node in ast.walk(tree):
        if isinstance(node, (ast.With, ast.AsyncWith)):
            return False
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and (
                node.value.id == "self" or (node.value.id == "pl" and node.attr in _SCOPE_CALLS)):
            return False
    return True


def parse_as_region(p: Any, tree: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> None:
    """Parse `tree`'s body as one region (all but a trailing `return`)."""
    body = list(tree.body)
    tail = [body.pop()] if body and isinstance(body[-1], ast.Return) else []
    p.region_stack.append("opaque")
    try:
        with p.block() as inner:
            p.visit_body(body)
    finally:
        p.region_stack.pop()
    attrs = (("level", "CORE_GROUP"), ("name_hint", name))
    p.emit(Scope(ScopeKind.INCORE, tuple(inner), attrs, None, p.span(tree)))
    p.visit_body(tail)
