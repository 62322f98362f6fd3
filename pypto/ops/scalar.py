"""Scalar arithmetic (the scalar pipe): what Python operators on scalars mean in a kernel.

Operands must be of one numeric category (int with int, float with float); the
narrower operand is widened. Comparisons yield BOOL. `and`/`or` do not
short-circuit.
"""
from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from pypto.ir import dtypes
from pypto.ir.types import ScalarType
from pypto.ops.facts import Batch, Family
from pypto.ops.intdiv import scalar_quotient, scalar_remainder
from pypto.ops.registry import OpError, Unit, defop
from pypto.ops.rules import scalar_dtype, scalar_like, type_of


def _operand(x: Any, arg: str):
    if not scalar_like(x) and not isinstance(type_of(x), ScalarType):
        raise OpError(f"Python operators apply to scalars only; '{arg}' is {type_of(x)}", arg=arg,
                      hint="use the pl op (pl.add, pl.mul, pl.maximum, …) on tensors and tiles")
    return scalar_dtype(x)


def _arith_rule(symbol: str, *, int_only: bool = False, float_result: bool = False):
    def rule(lhs, rhs):
        a, b = _operand(lhs, "lhs"), _operand(rhs, "rhs")
        if a.is_float() != b.is_float() and dtypes.TASK_ID not in (a, b):
            raise OpError(f"'{symbol}' mixes an integer and a float scalar ({a!r} {symbol} {b!r})",
                          arg="rhs", hint="pl.cast one operand so both have the same kind")
        if int_only and a.is_float():
            raise OpError(f"'{symbol}' needs integer operands, got {a!r}", arg="lhs")
        return ScalarType(dtypes.promote(a, b))

    return rule


def _truediv(a: Any, b: Any) -> Any:
    return scalar_quotient(a, b, floor=False)


def _py_floordiv(a: Any, b: Any) -> Any:
    return scalar_quotient(a, b, floor=True)


# By zero, each has the one defined result of `pypto.ops.intdiv` (IEEE for floats).
_ARITH: dict[str, tuple[str, Callable, dict]] = {
    "add": ("+", operator.add, {}),
    "sub": ("-", operator.sub, {}),
    "mul": ("*", operator.mul, {}),
    "truediv": ("/", _truediv, {}),
    "floordiv": ("//", _py_floordiv, {"int_only": False}),
    "mod": ("%", scalar_remainder, {}),
    "lshift": ("<<", operator.lshift, {"int_only": True}),
    "rshift": (">>", operator.rshift, {"int_only": True}),
}

SYMBOL_TO_OP: dict[str, str] = {}
_INDEX = Batch(Family.INDEX_SCALAR)  # (index arithmetic on the block index: `Aff`)
_COMPARE = Batch(Family.COMPARE)

for _name, (_sym, _fn, _kw) in _ARITH.items():
    _r = _arith_rule(_sym, **_kw)

    def _sig(lhs, rhs, _r=_r):
        return _r(lhs, rhs)

    _sig.__doc__ = f"Scalar `lhs {_sym} rhs`."
    defop(f"scalar.{_name}", unit=Unit.SCALAR, impl=_fn, names=(), symbol=_sym,
          divisor="rhs" if _sym in ("/", "//", "%") else None,
          batch=_INDEX if _sym in ("+", "-", "*", "//", "%") else None)(_sig)
    SYMBOL_TO_OP[_sym] = f"scalar.{_name}"


def _cmp_rule(lhs, rhs):
    _operand(lhs, "lhs")
    _operand(rhs, "rhs")
    return ScalarType(dtypes.BOOL)


for _name, _sym, _fn in (("eq", "==", operator.eq), ("ne", "!=", operator.ne),
                         ("lt", "<", operator.lt), ("le", "<=", operator.le),
                         ("gt", ">", operator.gt), ("ge", ">=", operator.ge)):
    def _csig(lhs, rhs):
        return _cmp_rule(lhs, rhs)

    _csig.__doc__ = f"Scalar comparison `lhs {_sym} rhs` (BOOL)."
    defop(f"scalar.{_name}", unit=Unit.SCALAR, impl=lambda a, b, _fn=_fn: bool(_fn(a, b)),
          names=(), symbol=_sym, batch=_COMPARE)(_csig)
    SYMBOL_TO_OP[_sym] = f"scalar.{_name}"


def _bool_rule(lhs, rhs):
    _operand(lhs, "lhs")
    _operand(rhs, "rhs")
    return ScalarType(dtypes.BOOL)


def _and_rule(lhs, rhs):
    """Scalar `lhs and rhs` (BOOL; both sides are evaluated)."""
    return _bool_rule(lhs, rhs)


def _or_rule(lhs, rhs):
    """Scalar `lhs or rhs` (BOOL; both sides are evaluated)."""
    return _bool_rule(lhs, rhs)


defop("scalar.and", unit=Unit.SCALAR, impl=lambda a, b: bool(a) and bool(b), names=(),
      symbol="and", batch=_COMPARE)(_and_rule)
defop("scalar.or", unit=Unit.SCALAR, impl=lambda a, b: bool(a) or bool(b), names=(),
      symbol="or", batch=_COMPARE)(_or_rule)


def _unary_rule(x):
    return ScalarType(_operand(x, "x"))


def _neg_rule(x):
    """Scalar `-x`."""
    return _unary_rule(x)


def _invert_rule(x):
    """Scalar bitwise `~x`."""
    return _unary_rule(x)


defop("scalar.neg", unit=Unit.SCALAR, impl=operator.neg, names=(), symbol="-")(_neg_rule)
defop("scalar.invert", unit=Unit.SCALAR, impl=operator.invert, names=(),
      symbol="~")(_invert_rule)


def _not_rule(x):
    """Scalar `not x` (BOOL)."""
    _operand(x, "x")
    return ScalarType(dtypes.BOOL)


defop("scalar.not", unit=Unit.SCALAR, impl=lambda x: not x, names=(), symbol="not",
      batch=_COMPARE)(_not_rule)


def _minmax(lhs, rhs):
    """Scalar min/max (not a reduction: use row_max/col_max on tiles)."""
    t = type_of(lhs)
    if t is not None and not isinstance(t, ScalarType):
        raise OpError(f"pl.max/pl.min take scalars, got {t}", arg="lhs",
                      hint="for a reduction use pl.row_max / pl.col_max (or row_min / col_min)")
    return _arith_rule("max")(lhs, rhs)


defop("max", unit=Unit.SCALAR, impl=lambda lhs, rhs: max(lhs, rhs),
      names=("pl.max", "pl.tile.max"), batch=Batch(Family.PER_BLOCK, int_array=np.maximum))(_minmax)
defop("min", unit=Unit.SCALAR, impl=lambda lhs, rhs: min(lhs, rhs),
      names=("pl.min", "pl.tile.min"), batch=Batch(Family.PER_BLOCK, int_array=np.minimum))(_minmax)
