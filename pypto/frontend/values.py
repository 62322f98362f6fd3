"""Values while parsing: a kernel expression evaluates either to an IR `Expr` (a
run-time value) or to a Python object (a compile-time value: a number, a module, a
dtype, a kernel). These helpers tell the two apart, make literals, and fold
compile-time expressions by running Python on them."""
from __future__ import annotations

import ast
import operator
from typing import Any

import numpy as np

from pypto.errors import PyptoTypeError, UserError
from pypto.frontend.resolve import MISSING
from pypto.ir import dtypes
from pypto.ir.nodes import Attr, Const, Expr, literal
from pypto.ir.span import Span
from pypto.ir.types import ScalarType
from pypto.language.typing import DimExpr

INDEX = ScalarType(dtypes.INDEX)

BINOPS = {ast.Add: ("+", operator.add), ast.Sub: ("-", operator.sub),
          ast.Mult: ("*", operator.mul), ast.Div: ("/", operator.truediv),
          ast.FloorDiv: ("//", operator.floordiv), ast.Mod: ("%", operator.mod),
          ast.LShift: ("<<", operator.lshift), ast.RShift: (">>", operator.rshift),
          ast.Pow: ("**", operator.pow), ast.BitAnd: ("&", operator.and_),
          ast.BitOr: ("|", operator.or_), ast.BitXor: ("^", operator.xor),
          ast.MatMult: ("@", operator.matmul)}
CMPOPS = {ast.Eq: ("==", operator.eq), ast.NotEq: ("!=", operator.ne),
          ast.Lt: ("<", operator.lt), ast.LtE: ("<=", operator.le),
          ast.Gt: (">", operator.gt), ast.GtE: (">=", operator.ge),
          ast.Is: ("is", operator.is_), ast.IsNot: ("is not", operator.is_not),
          ast.In: ("in", lambda a, b: a in b), ast.NotIn: ("not in", lambda a, b: a not in b)}


def const(value: Any, span: Span | None = None) -> Const:
    """A Python number as an IR literal: ints are INDEX, floats FP32, bools BOOL."""
    return literal(value, span)


def is_number(v: Any) -> bool:
    return isinstance(v, (bool, int, float, np.integer, np.floating))


def is_ir(v: Any) -> bool:
    return isinstance(v, Expr) and not isinstance(v, Attr)


def contains_ir(v: Any) -> bool:
    if isinstance(v, (list, tuple)):
        return any(contains_ir(i) for i in v)
    return is_ir(v)


# Compile-time folding stops at results this large: `10 ** 10 ** 10`, `1 << 10**12` or
# `[0] * 10**12` in a kernel is a mistake, and Python would spin or exhaust memory on it.
_FOLD_MAX_BITS = 1 << 16
_FOLD_MAX_ITEMS = 1 << 22


def _fold_too_big(fn: Any, args: tuple) -> str | None:
    ints = len(args) == 2 and all(isinstance(a, int) for a in args)
    if fn is operator.pow and ints:
        base, exp = args
        if exp > 0 and abs(base) > 1 and exp * (abs(base).bit_length() - 1) > _FOLD_MAX_BITS:
            return f"about {exp * (abs(base).bit_length() - 1):,} bits"
    elif fn is operator.lshift and ints and args[0] != 0 and args[1] > _FOLD_MAX_BITS:
        return f"about {args[1]:,} bits"
    elif fn is operator.mul and len(args) == 2:
        seq, n = (args if isinstance(args[1], int) else args[::-1])
        if isinstance(seq, (list, tuple, str, bytes)) and isinstance(n, int) and \
                len(seq) * n > _FOLD_MAX_ITEMS:
            return f"{len(seq) * n:,} items"
    elif fn is list and len(args) == 1 and isinstance(args[0], range) and \
            len(args[0]) > _FOLD_MAX_ITEMS:
        return f"{len(args[0]):,} items"
    return None


def fold(p: Any, node: ast.AST, fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Run Python on compile-time values; a Python error is the user's, located."""
    try:
        size = _fold_too_big(fn, args)
    except OverflowError:
        size = "more items than fit in memory"
    if size is not None:
        raise p.error(PyptoTypeError, f"evaluating '{_short(node)}' at compile time would "
                      f"produce {size}", node,
                      hint="this expression has only compile-time operands, so Python would "
                           "evaluate it while compiling; check the sizes involved")
    try:
        return fn(*args, **kwargs)
    except UserError as exc:
        if exc.span is None:  # a pl helper's own error (pl.split(...)): here
            exc.span = p.span(node)
        raise
    except Exception as exc:  # noqa: BLE001 - the user's Python raised
        raise p.error(PyptoTypeError, f"evaluating '{ast.unparse(node)}' at compile time raised "
                      f"{type(exc).__name__}: {exc}", node,
                      hint="this expression has only compile-time operands, so Python evaluates "
                           "it while compiling") from None


def _short(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 60 else text[:57] + "..."


def is_static(p: Any, node: ast.expr) -> bool:
    """True when every name in `node` is a compile-time value (no side effects to fear)."""
    for leaf in ast.walk(node):
        if isinstance(leaf, ast.Name):
            value = p.env[leaf.id] if leaf.id in p.env else p.py.lookup(leaf.id)
            if value is MISSING or is_ir(value) or isinstance(value, DimExpr):
                return False
    return True


def dim_value(p: Any, value: Any, node: ast.AST) -> Any:
    """A pl.dynamic symbol used as a loop bound or block count reads the run-time extent
    it names."""
    return p.to_ir(value, node) if isinstance(value, DimExpr) else value
