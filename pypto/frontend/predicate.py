"""Dispatch predicates: `pl.spmd_submit(..., predicate=(t[i, j] > 0))` and
`pl.spmd(n, predicate=...)`.

The runtime evaluates a predicate when the task is ready to dispatch: it reads one
element of an integer tensor in global memory and compares it with a constant. When
the comparison is false the task is retired without running on a core (its
dependents are released all the same, and its outputs keep what they held). So only
what that single comparison can express is accepted here: one element of a signed
8/16/32/64-bit tensor, located by one non-negative integer index per axis, compared
(==, !=, <, <=, >, >=) with an integer literal, in either order. The comparison is
kept as written, as an ordinary scalar compare over a `read`; it is evaluated at the
dispatch point, never as a statement of the orchestration.

If the tensor is the output of an earlier task in the same function, that task must be
in `deps=`; otherwise the scheduler may test the element before it was written.
"""
from __future__ import annotations

import ast
from typing import Any

from pypto.errors import PyptoSyntaxError, PyptoTypeError, UnsupportedFeatureError
from pypto.frontend.opcall import scalar_binop
from pypto.frontend.values import CMPOPS, is_ir
from pypto.ir import dtypes
from pypto.ir.nodes import Expr, Var
from pypto.ir.types import ArrayType, ScalarType, ShapedType, TensorType

_COMPARISONS = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)
_SIGNED = {dtypes.INT8, dtypes.INT16, dtypes.INT32, dtypes.INT64}
_HINT = "write predicate=(t[i, j] > 0): one tensor element compared with an integer literal"


def parse_predicate(p: Any, node: ast.expr, what: str, deps: tuple | None,
                    deps_accepted: bool) -> Expr:
    """The predicate expression `node` of `what` (`'pl.spmd_submit'`, `'pl.spmd()'`),
    checked; `deps` are the task's `deps=` entries (None: the form has none)."""
    if p.clusters and what == "pl.spmd()":
        raise p.error(PyptoSyntaxError, "`pl.spmd(..., predicate=(...))` cannot be nested "
                      "inside `pl.cluster()`: a pl.spmd inside a cluster runs as part of the "
                      "cluster's group and is not a task of its own, so the dispatch predicate "
                      "would be lost", node,
                      hint="use a standalone `with pl.spmd(..., predicate=...):` outside the "
                           "pl.cluster")
    if not isinstance(node, ast.Compare):
        value = p.visit_expr(node)
        got = value.type if is_ir(value) else type(value).__name__
        raise p.error(PyptoSyntaxError, f"'{what}' predicate must be a single comparison "
                      f"(==, !=, >, <, >=, <=); got {got}", node, hint=_HINT)
    if len(node.ops) != 1:
        raise p.error(PyptoSyntaxError, f"'{what}' predicate must be one comparison, not a "
                      "chain: the runtime evaluates a single comparison", node, hint=_HINT)
    op = node.ops[0]
    sym = CMPOPS.get(type(op), ("?",))[0]
    if not isinstance(op, _COMPARISONS):
        raise p.error(UnsupportedFeatureError, f"'{what}' predicate uses the comparison "
                      f"'{sym}', which the runtime does not evaluate", node, hint=_HINT)
    left, right = node.left, node.comparators[0]
    element = left if _parts(left) and _int_literal(right) is not None \
        else right if _parts(right) and _int_literal(left) is not None else None
    if element is None:
        for side in (left, right):
            value = p.visit_expr(side)
            if is_ir(value) and isinstance(value.type, ShapedType):
                raise p.error(PyptoSyntaxError, f"'{what}' predicate compares a whole "
                              f"{value.type}, not one element", side, hint=_HINT)
        raise p.error(PyptoSyntaxError, f"'{what}' predicate must compare one tensor element "
                      "(e.g. t[i]) with an integer literal: the runtime evaluates a single "
                      "element-against-constant comparison", node, hint=_HINT)
    tensor_node, items = _parts(element) or (element, [])
    tensor = _operand(p, tensor_node)
    _check_indices(p, element, items, tensor)
    read = p.visit_expr(element)
    literal = _int_literal(right if element is left else left)
    lhs, rhs = (read, literal) if element is left else (literal, read)
    cmp = scalar_binop(p, sym, lhs, rhs, node)
    _check_producer(p, what, tensor, deps or (), deps_accepted, node)
    return cmp


def _int_literal(node: ast.expr) -> int | None:
    """The integer a literal such as `3`, `-5` or `+5` writes, else None."""
    sign = 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        sign = -1 if isinstance(node.op, ast.USub) else 1
        node = node.operand
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return sign * node.value
    return None


def _parts(node: ast.expr) -> tuple[ast.expr, list] | None:
    """(tensor, indices) of an element read `t[i, j]` or `pl.read(t, [i, j])` (the
    printer's spelling), else None."""
    if isinstance(node, ast.Subscript):
        s = node.slice
        return node.value, list(s.elts) if isinstance(s, ast.Tuple) else [s]
    if isinstance(node, ast.Call) and ast.unparse(node.func) in _READS and \
            len(node.args) == 2 and isinstance(node.args[1], (ast.List, ast.Tuple)):
        return node.args[0], list(node.args[1].elts)
    return None


_READS = ("pl.read", "pl.tensor.read")


def _operand(p: Any, node: ast.expr) -> Any:
    tensor = p.visit_expr(node)
    t = tensor.type if is_ir(tensor) else type(tensor).__name__
    if not (is_ir(tensor) and isinstance(tensor.type, TensorType)):
        raise p.error(PyptoTypeError, f"a predicate's operand must be a tensor, got {t}",
                      node, hint=_HINT)
    dtype = tensor.type.dtype
    if dtype not in _SIGNED:
        raise p.error(PyptoTypeError, f"a predicate's operand must be a signed 8/16/32/64-bit "
                      f"integer tensor, got {dtype!r}: the runtime sign-extends the element it "
                      "reads, so an unsigned value with its top bit set would compare as "
                      "negative and silently flip the decision", node, hint=_HINT)
    return tensor


def _check_indices(p: Any, element: ast.expr, items: list, tensor: Any) -> None:
    for axis, item in enumerate(items):
        if isinstance(item, ast.Slice):
            raise p.error(PyptoSyntaxError, f"index {axis} of a predicate is a slice; a "
                          "predicate reads one element", item, hint=_HINT)
        lit = _int_literal(item)
        if lit is not None and lit < 0:
            raise p.error(PyptoTypeError, f"a predicate index must be non-negative, got {lit}: "
                          "the runtime keeps indices unsigned, so it would read far out of "
                          "bounds", item, hint=_HINT)
        value = p.visit_expr(item)
        if is_ir(value) and not isinstance(value.type, ScalarType):
            raise p.error(PyptoSyntaxError, f"index {axis} of a predicate must be a scalar, got "
                          f"{value.type}", item, hint=_HINT)
        ok = value.type.dtype.is_int() if is_ir(value) else \
            isinstance(value, int) and not isinstance(value, bool)
        if not ok:
            got = value.type if is_ir(value) else repr(value)
            raise p.error(PyptoTypeError, f"predicate indices must be integer scalars, got "
                          f"{got}", item, hint=_HINT)
    rank = len(tensor.type.shape)
    if len(items) != rank:
        cls = PyptoSyntaxError if len(items) < rank else PyptoTypeError
        raise p.error(cls, f"a predicate needs {rank} index(es) to locate one element of a "
                      f"rank-{rank} tensor, got {len(items)}", element, hint=_HINT)


def _check_producer(p: Any, what: str, tensor: Any, deps: tuple, deps_accepted: bool,
                    node: ast.AST) -> None:
    """The task that wrote the predicate's tensor (when this function launched it) must
    be one of `deps`."""
    if not isinstance(tensor, Var):
        return
    producer = p.task_outputs.get(tensor.uid)
    if producer is None or any(isinstance(d.type, ArrayType) for d in deps):
        return  # a parameter, or deps given as an array of TaskIds: nothing provable
    if any(d is producer for d in deps):
        return
    why = ("otherwise the scheduler may test the element before the producing task has "
           "written it")
    hint = (f"add the producer: deps=[{producer.name}]; {why}" if deps_accepted else
            f"this form does not accept deps=: bind the TaskId with `as tid` and write "
            f"`with pl.spmd(n, deps=[{producer.name}], predicate=...) as tid:`; {why}")
    raise p.error(PyptoSyntaxError, f"'{what}' predicate reads '{tensor.name}', which is "
                  f"produced by the task bound to '{producer.name}', but '{producer.name}' is "
                  "not in deps=", node, hint=hint)


def record_outputs(p: Any, outputs: Any, task: Var | None) -> None:
    """Remember that the values `outputs` were written by the task `task`."""
    if task is None:
        return
    for v in outputs:
        if isinstance(v, Var) and isinstance(v.type, ShapedType):
            p.task_outputs[v.uid] = task


__all__ = ["parse_predicate", "record_outputs"]
