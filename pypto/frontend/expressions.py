"""Expression handlers: each returns an IR `Expr` (run-time value) or a Python
object (compile-time value). Expressions whose leaves are all compile-time are
folded by Python itself, so module constants and imported config objects
behave exactly as in Python."""
from __future__ import annotations

import ast
import operator
from typing import Any

from pypto.errors import (DynamicShapeError, InvalidOperationError, PyptoSyntaxError,
                          PyptoTypeError, UnsupportedFeatureError, UserError)
from pypto.ir.nodes import Attr, Call, Const, DynDim, Expr, GetItem, ListExpr
from pypto.ir.types import ArrayType, ScalarType, ShapedType, TupleType
from pypto.language.typing import DimExpr, DynVar

_BINOPS = {ast.Add: ("+", operator.add), ast.Sub: ("-", operator.sub),
           ast.Mult: ("*", operator.mul), ast.Div: ("/", operator.truediv),
           ast.FloorDiv: ("//", operator.floordiv), ast.Mod: ("%", operator.mod),
           ast.LShift: ("<<", operator.lshift), ast.RShift: (">>", operator.rshift),
           ast.Pow: ("**", operator.pow), ast.BitAnd: ("&", operator.and_),
           ast.BitOr: ("|", operator.or_), ast.BitXor: ("^", operator.xor),
           ast.MatMult: ("@", operator.matmul)}
_CMPOPS = {ast.Eq: ("==", operator.eq), ast.NotEq: ("!=", operator.ne),
           ast.Lt: ("<", operator.lt), ast.LtE: ("<=", operator.le),
           ast.Gt: (">", operator.gt), ast.GtE: (">=", operator.ge),
           ast.Is: ("is", operator.is_), ast.IsNot: ("is not", operator.is_not),
           ast.In: ("in", lambda a, b: a in b), ast.NotIn: ("not in", lambda a, b: a not in b)}
_TENSOR_OP_FOR = {"+": "pl.add", "-": "pl.sub", "*": "pl.mul", "/": "pl.div", "@": "pl.matmul",
                  "==": "pl.cmp", "<": "pl.cmp", ">": "pl.cmp"}


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
    except UserError:
        raise
    except Exception as exc:  # noqa: BLE001 - the user's Python raised
        raise p.error(PyptoTypeError, f"evaluating '{ast.unparse(node)}' at compile time raised "
                      f"{type(exc).__name__}: {exc}", node,
                      hint="this expression has only compile-time operands, so Python evaluates "
                           "it while compiling") from None


def _short(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 60 else text[:57] + "..."


def dynvar_value(p: Any, dv: Any, node: ast.AST) -> Expr:
    """A DynVar used as a value in a body reads the runtime extent it names."""
    if not isinstance(dv, DynVar):
        raise p.error(DynamicShapeError, "arithmetic on pl.dynamic symbols is not allowed in a "
                      "kernel body", node,
                      hint="read each dim into a local with pl.tensor.dim(x, axis) and compute "
                           "with the locals")
    if dv.name in p.dyn_dims:
        p.dynvar_uses.append((dv.name, node))
        param, axis = p.dyn_dims[dv.name]
        from pypto.frontend.calls import call_op

        return call_op(p, "tensor.dim", [param, axis], {}, node)
    from pypto.frontend.parser import _INDEX

    return DynDim(dv.name, _INDEX, p.span(node))


def _name(p: Any, node: ast.Name) -> Any:
    value = p.lookup(node.id, node)
    if node.id != "pl" and node.id not in p.env and _is_pypto_module(value):
        what = ("pypto.language is imported as" if value is _pl_module()
                else "the pypto package is reached through")
        raise p.error(PyptoSyntaxError, f"{what} '{node.id}'; kernels must spell the language "
                      "'pl'", node, hint="import pypto.language as pl")
    return value


def _pl_module() -> Any:
    import pypto.language

    return pypto.language


def _is_pypto_module(value: Any) -> bool:
    import types

    return isinstance(value, types.ModuleType) and (
        value.__name__ == "pypto" or value.__name__.startswith("pypto.language"))


def _pl_namespace_name(base: Any) -> str | None:
    """'pl' for the language module, 'pl.tensor' for its op namespaces, else None."""
    if base is _pl_module():
        return "pl"
    name = getattr(base, "__name__", None)
    import types

    if isinstance(base, types.SimpleNamespace) and isinstance(name, str) and \
            name.startswith("pl."):
        return name
    return None


_NUMPY_NAMES = {
    "zeros": "use pl.full(shape, dtype=..., value=0.0)",
    "ones": "use pl.full(shape, dtype=..., value=1.0)",
    "empty": "use pl.create_tensor(shape, dtype=...)",
    "sum": "use pl.row_sum or pl.col_sum",
    "amax": "use pl.row_max or pl.col_max",
    "dot": "use pl.matmul",
    "where": "use pl.sel (with a mask from pl.cmp)",
    "concatenate": "use pl.concat",
}


def missing_attribute(p: Any, base: Any, attr: str, node: ast.AST) -> UserError:
    """A located error for `base.attr` that does not exist, with a did-you-mean hint."""
    import difflib

    ns = _pl_namespace_name(base)
    names = [n for n in dir(base) if not n.startswith("_")]
    close = difflib.get_close_matches(attr, names, n=1, cutoff=0.6)
    prefix = ns if ns is not None else ast.unparse(node.value) if isinstance(
        node, ast.Attribute) else "it"
    hint = f"did you mean {prefix}.{close[0]}?" if close else None
    if hint is None and ns == "pl" and attr in _NUMPY_NAMES:
        hint = _NUMPY_NAMES[attr]
    if hint is None and ns is None and 0 < len(names) <= 12:
        hint = f"{prefix} has: {', '.join(names)}"
    if ns == "pl":
        pl = _pl_module()
        for sub in ("tensor", "tile", "system", "array"):
            if hasattr(getattr(pl, sub), attr):
                hint = f"did you mean pl.{sub}.{attr}?"
                break
    if ns is not None:
        return p.error(InvalidOperationError, f"{ns} has no attribute '{attr}'", node, hint=hint)
    return p.error(PyptoTypeError, f"'{prefix}' ({type(base).__name__}) has no attribute "
                   f"'{attr}'", node, hint=hint)


def _constant(p: Any, node: ast.Constant) -> Any:
    return node.value


def _attribute(p: Any, node: ast.Attribute) -> Any:
    base = p.visit_expr(node.value)
    if is_ir(base):
        t = base.type
        if isinstance(t, ShapedType):
            if node.attr == "shape":
                return tuple(shape_dim(p, base, i, d, node) for i, d in enumerate(t.shape))
            if node.attr == "dtype":
                return t.dtype
            if node.attr == "ndim":
                return t.rank
        raise p.error(PyptoSyntaxError, f"a {t} value has no attribute '{node.attr}' in a kernel",
                      node, hint="tensors expose .shape and .dtype; use pl ops for the rest")
    from pypto.frontend.calls import SelfProgram

    if isinstance(base, SelfProgram):
        return base.member(p, node.attr, node)
    try:
        present = hasattr(base, node.attr)
    except Exception:  # noqa: BLE001 - a property raised; fold reports it located
        present = True
    if not present:
        raise missing_attribute(p, base, node.attr, node)
    return fold(p, node, getattr, base, node.attr)


def shape_dim(p: Any, value: Expr, axis: int, dim: Any, node: ast.AST) -> Any:
    if isinstance(dim, int):
        return dim
    from pypto.frontend.calls import call_op

    return call_op(p, "tensor.dim", [value, axis], {}, node)


def _binop(p: Any, node: ast.BinOp) -> Any:
    lhs = p.visit_expr(node.left)
    rhs = p.visit_expr(node.right)
    sym, fn = _BINOPS[type(node.op)]
    if not contains_ir(lhs) and not contains_ir(rhs):
        if isinstance(lhs, DimExpr) or isinstance(rhs, DimExpr):
            raise p.error(DynamicShapeError, "arithmetic on pl.dynamic symbols is not allowed in "
                          "a kernel body", node,
                          hint="read each dim into a local with pl.tensor.dim(x, axis) and "
                               "compute with the locals (pl.dynamic names belong in annotations)")
        return fold(p, node, fn, lhs, rhs)
    return scalar_binop(p, sym, lhs, rhs, node)


def scalar_binop(p: Any, sym: str, lhs: Any, rhs: Any, node: ast.AST) -> Expr:
    from pypto.frontend.calls import call_op
    from pypto.ops.scalar import SYMBOL_TO_OP

    for side in (lhs, rhs):
        if is_ir(side) and isinstance(side.type, ShapedType):
            alt = _TENSOR_OP_FOR.get(sym, "the matching pl op")
            raise p.error(UnsupportedFeatureError, f"Python operator '{sym}' does not apply to "
                          f"tensors or tiles ({side.type})", node,
                          hint=f"call {alt}(...) instead")
        if isinstance(side, DimExpr):
            raise p.error(DynamicShapeError, "arithmetic on pl.dynamic symbols is not allowed in "
                          "a kernel body", node,
                          hint="read each dim into a local with pl.tensor.dim(x, axis) and "
                               "compute with the locals")
    op = SYMBOL_TO_OP.get(sym)
    if op is None:
        raise p.error(UnsupportedFeatureError, f"operator '{sym}' is not supported on run-time "
                      "scalars", node, hint="kernels support + - * / // % << >> on scalars")
    return call_op(p, op, [lhs, rhs], {}, node)


def _unaryop(p: Any, node: ast.UnaryOp) -> Any:
    v = p.visit_expr(node.operand)
    if not contains_ir(v):
        py = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_,
              ast.Invert: operator.invert}[type(node.op)]
        return fold(p, node, py, v)
    from pypto.frontend.calls import call_op

    if isinstance(node.op, ast.UAdd):
        return v
    op = {ast.USub: "scalar.neg", ast.Not: "scalar.not", ast.Invert: "scalar.invert"}
    return call_op(p, op[type(node.op)], [v], {}, node)


def _compare(p: Any, node: ast.Compare) -> Any:
    lhs = p.visit_expr(node.left)
    if len(node.ops) != 1:
        rest = [p.visit_expr(c) for c in node.comparators]
        if not contains_ir(lhs) and not contains_ir(rest):
            vals = [lhs, *rest]
            return all(fold(p, node, _CMPOPS[type(o)][1], a, b)
                       for o, a, b in zip(node.ops, vals, vals[1:]))
        raise p.error(PyptoSyntaxError, "chained comparisons are not supported on run-time "
                      "values", node, hint="split it: (a < b) and (b < c)")
    rhs = p.visit_expr(node.comparators[0])
    sym, fn = _CMPOPS[type(node.ops[0])]
    if not contains_ir(lhs) and not contains_ir(rhs):
        return fold(p, node, fn, lhs, rhs)
    return scalar_binop(p, sym, lhs, rhs, node)


def _boolop(p: Any, node: ast.BoolOp) -> Any:
    values = [p.visit_expr(v) for v in node.values]
    if not contains_ir(values):
        out = values[0]
        for v in values[1:]:
            out = (out and v) if isinstance(node.op, ast.And) else (out or v)
        return out
    from pypto.frontend.calls import call_op

    op = "scalar.and" if isinstance(node.op, ast.And) else "scalar.or"
    acc = values[0]
    for v in values[1:]:
        acc = call_op(p, op, [acc, v], {}, node)
    return acc


def _ifexp(p: Any, node: ast.IfExp) -> Any:
    cond = p.visit_expr(node.test)
    if contains_ir(cond):
        raise p.error(UnsupportedFeatureError, "a conditional expression needs a compile-time "
                      "condition", node, hint="use an if/else statement for run-time choices")
    return p.visit_expr(node.body if cond else node.orelse)


def _list(p: Any, node: ast.List | ast.Tuple) -> Any:
    items = []
    for elt in node.elts:
        if isinstance(elt, ast.Starred):
            val = p.visit_expr(elt.value)
            if contains_ir(val) and not isinstance(val, (list, tuple)):
                raise p.error(UnsupportedFeatureError, "cannot unpack a run-time value", elt)
            items.extend(val)
        else:
            items.append(p.visit_expr(elt))
    return tuple(items) if isinstance(node, ast.Tuple) else list(items)


def _dict(p: Any, node: ast.Dict) -> Any:
    keys = [p.visit_expr(k) if k is not None else None for k in node.keys]
    values = [p.visit_expr(v) for v in node.values]
    return dict(zip(keys, values))


def _joined_str(p: Any, node: ast.JoinedStr) -> Any:
    parts = []
    for v in node.values:
        if isinstance(v, ast.Constant):
            parts.append(str(v.value))
        else:
            val = p.visit_expr(v.value)
            parts.append(str(val.type) if is_ir(val) else format(val, ast.unparse(v.format_spec)[2:-1]
                                                                 if v.format_spec else ""))
    return "".join(parts)


def _call(p: Any, node: ast.Call) -> Any:
    from pypto.frontend.calls import visit_call

    return visit_call(p, node)


def _subscript(p: Any, node: ast.Subscript) -> Any:
    base = p.visit_expr(node.value)
    if not is_ir(base):
        key = p.visit_expr(node.slice) if not isinstance(node.slice, ast.Slice) else \
            slice(*(p.visit_expr(x) if x is not None else None
                    for x in (node.slice.lower, node.slice.upper, node.slice.step)))
        if contains_ir(key) and isinstance(base, (list, tuple)):
            raise p.error(UnsupportedFeatureError, "indexing a compile-time list with a run-time "
                          "index", node, hint="use a pl.array for run-time indexing")
        return fold(p, node, operator.getitem, base, key)
    t = base.type
    if isinstance(t, ArrayType):
        from pypto.frontend.calls import call_op

        return call_op(p, "array.get_element", [base, p.visit_expr(node.slice)], {}, node)
    if isinstance(t, TupleType):
        idx = p.visit_expr(node.slice)
        if not isinstance(idx, int):
            raise p.error(PyptoSyntaxError, "a tuple is indexed by a constant integer", node)
        return GetItem(base, idx, t.items[idx], p.span(node))
    if isinstance(t, ShapedType):
        from pypto.frontend.slicing import read_subscript

        return read_subscript(p, base, node)
    raise p.error(InvalidOperationError, f"a {t} value cannot be subscripted", node)


def _starred(p: Any, node: ast.Starred) -> Any:
    raise p.error(UnsupportedFeatureError, "starred expressions are only allowed in calls and "
                  "list literals", node)


def _lambda(p: Any, node: ast.Lambda) -> Any:
    raise p.error(UnsupportedFeatureError, "lambda expressions are not supported in a kernel",
                  node, hint="define helpers at module level as @pl.jit.inline functions")


def _comprehension(p: Any, node: Any) -> Any:
    # Comprehensions over compile-time iterables fold in Python (e.g. deps=[t[i] for i in
    # range(4)] is unrolled at parse time by evaluating each element).
    if isinstance(node, (ast.ListComp, ast.GeneratorExp)) and len(node.generators) == 1:
        gen = node.generators[0]
        iterable = p.visit_expr(gen.iter)
        if not contains_ir(iterable) and isinstance(gen.target, ast.Name) and not gen.ifs:
            out = []
            saved = gen.target.id in p.env, p.env.get(gen.target.id)
            for item in fold(p, node, list, iterable):
                p.env[gen.target.id] = item
                out.append(p.visit_expr(node.elt))
            if saved[0]:
                p.env[gen.target.id] = saved[1]
            else:
                p.env.pop(gen.target.id, None)
            return out
    raise p.error(UnsupportedFeatureError, "only simple list comprehensions over compile-time "
                  "iterables are supported", node)


HANDLERS = {
    ast.Name: _name, ast.Constant: _constant, ast.Attribute: _attribute, ast.BinOp: _binop,
    ast.UnaryOp: _unaryop, ast.Compare: _compare, ast.BoolOp: _boolop, ast.IfExp: _ifexp,
    ast.List: _list, ast.Tuple: _list, ast.Dict: _dict, ast.JoinedStr: _joined_str,
    ast.Call: _call, ast.Subscript: _subscript, ast.Starred: _starred, ast.Lambda: _lambda,
    ast.ListComp: _comprehension, ast.GeneratorExp: _comprehension,
}

__all__ = ["HANDLERS", "is_ir", "contains_ir", "fold", "scalar_binop", "Const", "Call",
           "ListExpr", "ScalarType"]
