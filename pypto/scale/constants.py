"""Tiling constants: the module-level `NAME = <number>` assignments a kernel reads.

pypto-lib writes a kernel's tile sizes as module constants (`M_TILE = 64`) that the
kernel body, its type annotations and the spec builders read. A sweep point sets them
by rewriting those assignments in the module's source and running the module afresh,
so everything derived from them at module level (`N_TILES = N // N_TILE`) follows.
Lines keep their numbers, so diagnostics point at the real source lines.
"""
from __future__ import annotations

import ast
from typing import Any


class ConstantError(ValueError):
    """A swept name the source does not define as a module-level constant."""


def _literal(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
        and not isinstance(node.value, bool)


def module_constants(source: str) -> dict[str, list[ast.expr]]:
    """Module-level `NAME = <number>` (and `NAME: int = <number>`, and the unpacking
    `A, B = <number>, <number>`) assignments, by name: the value nodes, in source order."""
    found: dict[str, list[ast.expr]] = {}
    for stmt in ast.parse(source).body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            target, value = stmt.target, stmt.value
        else:
            continue
        for name, node in _pairs(target, value):
            if _literal(node):
                found.setdefault(name, []).append(node)
    return found


def _pairs(target: ast.expr, value: ast.expr) -> list[tuple[str, ast.expr]]:
    """(name, value node) of each name a plain or unpacking assignment binds; a name
    unpacked from anything but a same-length tuple or list literal binds nothing known
    (the element nodes are what a sweep rewrites)."""
    if isinstance(target, ast.Name):
        return [(target.id, value)]
    if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)) \
            and len(target.elts) == len(value.elts):
        return [p for t, v in zip(target.elts, value.elts) for p in _pairs(t, v)]
    return []


def _offsets(source: str) -> list[int]:
    starts, pos = [0], 0
    for line in source.splitlines(keepends=True):
        pos += len(line.encode("utf-8"))
        starts.append(pos)
    return starts


def with_constants(source: str, values: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """`source` with every module-level assignment of each name in `values` set to its
    value; returns the new source and the names it does not assign (the caller puts
    those in the module's namespace instead)."""
    found = module_constants(source)
    data = source.encode("utf-8")
    starts = _offsets(source)
    edits = []
    for name, value in values.items():
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise ConstantError(f"{name}={value!r}: a tiling constant takes a number")
        for node in found.get(name, ()):
            lo = starts[node.lineno - 1] + node.col_offset
            hi = starts[(node.end_lineno or node.lineno) - 1] + (node.end_col_offset or 0)
            pad = "\n" * ((node.end_lineno or node.lineno) - node.lineno)  # keep lines
            edits.append((lo, hi, (repr(value) + pad).encode("utf-8")))
    for lo, hi, text in sorted(edits, reverse=True):
        data = data[:lo] + text + data[hi:]
    missing = {n: v for n, v in values.items() if n not in found}
    return data.decode("utf-8"), missing


def harness_tolerances(source: str) -> dict[str, float]:
    """The literal rtol / atol the module passes to its `run_jit(...)` / `run(...)`
    call (a sweep checks each point as the file itself would)."""
    found: dict[str, float] = {}
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
        if name not in ("run_jit", "run"):
            continue
        for kw in node.keywords:
            if kw.arg in ("rtol", "atol") and _literal(kw.value):
                found.setdefault(kw.arg, float(ast.literal_eval(kw.value)))
    return found
