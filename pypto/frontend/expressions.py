"""Expression handlers: each returns an IR `Expr` (run-time value) or a Python
object (compile-time value). Expressions whose leaves are all compile-time are
folded by Python itself, so module constants and imported config objects
behave exactly as in Python."""
from __future__ import annotations

import ast
import difflib
import operator
import types
from typing import Any

from pypto.errors import (
    DynamicShapeError,
    InvalidOperationError,
    PyptoSyntaxError,
    PyptoTypeError,
    UndefinedNameError,
    UnsupportedFeatureError,
    UserError,
)
from pypto.frontend.dispatch import expression
from pypto.frontend.jit_program import JitProgram
from pypto.frontend.opcall import (
    call_op,
    composite_annotation,
    host_dims,
    scalar_binop,
    shape_dim,
)
from pypto.frontend.values import BINOPS, CMPOPS, contains_ir, fold, is_ir
from pypto.ir.types import ShapedType
from pypto.language.dsl import Construct
from pypto.language.typing import DimExpr


class SelfProgram:
    """What `self` means inside a `@pl.program` method: access to sibling functions."""

    def __init__(self, program: Any):
        self.program = program

    def member(self, p: Any, name: str, node: ast.AST) -> Any:
        fdef = self.program.functions.get(name)
        if fdef is None:
            raise p.error(UndefinedNameError, f"program {self.program.__name__} has no "
                          f"function '{name}'", node)
        return fdef


@expression(ast.Name)
def _name(p: Any, node: ast.Name) -> Any:
    value = p.lookup(node.id, node)
    if node.id not in ("pl", "pld") and node.id not in p.env and _is_pypto_module(value):
        what = ("pypto.language is imported as" if _is_pl_module(value)
                else "the pypto package is reached through")
        raise p.error(PyptoSyntaxError, f"{what} '{node.id}'; kernels must spell the language "
                      "'pl'", node, hint="import pypto.language as pl")
    return value


def _is_pl_module(value: Any) -> bool:
    """`value` is the module `pypto.language` (recognised by name: the frontend sits below
    the `pl` front door and does not import it)."""
    return isinstance(value, types.ModuleType) and value.__name__ == "pypto.language"


def _is_pypto_module(value: Any) -> bool:
    if not isinstance(value, types.ModuleType):
        return False
    if value.__name__ == "pypto.language.distributed":
        return False  # `import pypto.language.distributed as pld` (any alias reads fine)
    return value.__name__ == "pypto" or value.__name__.startswith("pypto.language")


def _pl_namespace_name(base: Any) -> str | None:
    """'pl' for the language module, 'pl.tensor' for its op namespaces, else None."""
    if _is_pl_module(base):
        return "pl"
    name = getattr(base, "__name__", None)
    if isinstance(base, types.ModuleType) and name == "pypto.language.distributed":
        return "pld"
    if isinstance(base, types.SimpleNamespace) and isinstance(name, str) and \
            name.startswith(("pl.", "pld.")):
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
    if getattr(base, "__name__", "") == "pypto.language.arg_direction":
        members = ", ".join(f"pl.adir.{d.value}" for d in base.ArgDirection)
        return p.error(PyptoSyntaxError, f"unknown argument direction 'pl.adir.{attr}'", node,
                       hint=f"the directions are {members}")
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
        for sub in ("tensor", "tile", "system", "array"):
            if hasattr(getattr(base, sub), attr):
                hint = f"did you mean pl.{sub}.{attr}?"
                break
    if ns is not None:
        return p.error(InvalidOperationError, f"{ns} has no attribute '{attr}'", node, hint=hint)
    return p.error(PyptoTypeError, f"'{prefix}' ({type(base).__name__}) has no attribute "
                   f"'{attr}'", node, hint=hint)


@expression(ast.Constant)
def _constant(p: Any, node: ast.Constant) -> Any:
    return node.value


@expression(ast.Attribute)
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
    if isinstance(base, (SelfProgram, JitProgram)):
        return base.member(p, node.attr, node)
    try:
        present = hasattr(base, node.attr)
    except Exception:  # noqa: BLE001 - a property raised; fold reports it located
        present = True
    if not present:
        raise missing_attribute(p, base, node.attr, node)
    return fold(p, node, getattr, base, node.attr)


@expression(ast.BinOp)
def _binop(p: Any, node: ast.BinOp) -> Any:
    lhs = p.visit_expr(node.left)
    rhs = p.visit_expr(node.right)
    lhs, rhs = host_dims(p, (lhs, rhs), node)
    sym, fn = BINOPS[type(node.op)]
    if not contains_ir(lhs) and not contains_ir(rhs):
        if (isinstance(lhs, DimExpr) or isinstance(rhs, DimExpr)) and \
                not composite_annotation(p):
            raise p.error(DynamicShapeError, "arithmetic on pl.dynamic symbols is not allowed in "
                          "a kernel body", node,
                          hint="read each dim into a local with pl.tensor.dim(x, axis) and "
                               "compute with the locals (pl.dynamic names belong in annotations)")
        return fold(p, node, fn, lhs, rhs)
    return scalar_binop(p, sym, lhs, rhs, node)


@expression(ast.UnaryOp)
def _unaryop(p: Any, node: ast.UnaryOp) -> Any:
    v = p.visit_expr(node.operand)
    if not contains_ir(v):
        py = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_,
              ast.Invert: operator.invert}[type(node.op)]
        return fold(p, node, py, v)
    if isinstance(node.op, ast.UAdd):
        return v
    op = {ast.USub: "scalar.neg", ast.Not: "scalar.not", ast.Invert: "scalar.invert"}
    return call_op(p, op[type(node.op)], [v], {}, node)


@expression(ast.Compare)
def _compare(p: Any, node: ast.Compare) -> Any:
    lhs = p.visit_expr(node.left)
    if len(node.ops) != 1:
        rest = [p.visit_expr(c) for c in node.comparators]
        if not contains_ir(lhs) and not contains_ir(rest):
            vals = [lhs, *rest]
            return all(fold(p, node, CMPOPS[type(o)][1], a, b)
                       for o, a, b in zip(node.ops, vals, vals[1:]))
        raise p.error(PyptoSyntaxError, "chained comparisons are not supported on run-time "
                      "values", node, hint="split it: (a < b) and (b < c)")
    rhs = p.visit_expr(node.comparators[0])
    sym, fn = CMPOPS[type(node.ops[0])]
    if not contains_ir(lhs) and not contains_ir(rhs):
        return fold(p, node, fn, lhs, rhs)
    return scalar_binop(p, sym, lhs, rhs, node)


@expression(ast.BoolOp)
def _boolop(p: Any, node: ast.BoolOp) -> Any:
    values = [p.visit_expr(v) for v in node.values]
    if not contains_ir(values):
        out = values[0]
        for v in values[1:]:
            out = (out and v) if isinstance(node.op, ast.And) else (out or v)
        return out
    op = "scalar.and" if isinstance(node.op, ast.And) else "scalar.or"
    acc = values[0]
    for v in values[1:]:
        acc = call_op(p, op, [acc, v], {}, node)
    return acc


@expression(ast.IfExp)
def _ifexp(p: Any, node: ast.IfExp) -> Any:
    cond = p.visit_expr(node.test)
    if contains_ir(cond):
        raise p.error(UnsupportedFeatureError, "a conditional expression needs a compile-time "
                      "condition", node, hint="use an if/else statement for run-time choices")
    return p.visit_expr(node.body if cond else node.orelse)


@expression(ast.List, ast.Tuple)
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


@expression(ast.Dict)
def _dict(p: Any, node: ast.Dict) -> Any:
    keys = [p.visit_expr(k) if k is not None else None for k in node.keys]
    values = [p.visit_expr(v) for v in node.values]
    return dict(zip(keys, values))


@expression(ast.JoinedStr)
def _joined_str(p: Any, node: ast.JoinedStr) -> Any:
    parts = []
    for v in node.values:
        if isinstance(v, ast.Constant):
            parts.append(str(v.value))
        elif isinstance(v, ast.FormattedValue):
            val = p.visit_expr(v.value)
            if is_ir(val) and (v.conversion != -1 or v.format_spec):
                # a run-time value prints as its type: there is no value to convert or pad
                what = f"conversion (!{chr(v.conversion)})" if v.conversion != -1 else \
                    "format spec"
                raise p.error(UnsupportedFeatureError, f"an f-string {what} of the run-time "
                              f"value '{ast.unparse(v.value)}' is not supported: it prints as "
                              "its type", v, hint=f"write {{{ast.unparse(v.value)}}} alone")
            spec = ast.unparse(v.format_spec)[2:-1] if v.format_spec else ""
            parts.append(str(val.type) if is_ir(val) else format(val, spec))
    return "".join(parts)


@expression(ast.Starred)
def _starred(p: Any, node: ast.Starred) -> Any:
    raise p.error(UnsupportedFeatureError, "starred expressions are only allowed in calls and "
                  "list literals", node)


@expression(ast.Lambda)
def _lambda(p: Any, node: ast.Lambda) -> Any:
    raise p.error(UnsupportedFeatureError, "lambda expressions are not supported in a kernel",
                  node, hint="define helpers at module level as @pl.jit.inline functions")


def _deps_comprehensions(p: Any) -> set[int]:
    """The comprehensions of this function that a launch's `deps=` holds: the whole list
    (`deps=[t[i] for i in range(4)]`) or one entry of it (`deps=[a, [...]]`)."""
    if p.deps_comprehensions is None:
        tree = getattr(p.src, "tree", None)
        found: set[int] = set()
        for kw in ast.walk(tree) if tree is not None else ():
            if not (isinstance(kw, ast.keyword) and kw.arg == "deps"):
                continue
            entries = kw.value.elts if isinstance(kw.value, (ast.List, ast.Tuple)) else [kw.value]
            found |= {id(e) for e in entries if isinstance(e, ast.ListComp)}
        p.deps_comprehensions = found
    return p.deps_comprehensions


@expression(ast.ListComp, ast.GeneratorExp)
def _comprehension(p: Any, node: Any) -> Any:
    # The real parser reads a list comprehension only in `deps=`, where it is unrolled at
    # parse time (`deps=[t[i] for i in range(4)]`); anywhere else, bound to a name first
    # included, it is an unsupported expression there, and so it is here.
    if id(node) not in _deps_comprehensions(p):
        what = "list comprehension" if isinstance(node, ast.ListComp) else "generator expression"
        raise p.error(UnsupportedFeatureError, f"a {what} is supported only as (an entry of) "
                      "a launch's deps= list", node,
                      hint="write it inline, deps=[... for ... in range(n)], or spell the "
                           "values out")
    if isinstance(node, ast.ListComp) and len(node.generators) == 1:
        gen = node.generators[0]
        if isinstance(gen.iter, ast.Call) and isinstance(p.visit_expr(gen.iter.func), Construct):
            raise p.error(PyptoTypeError, f"a comprehension iterates a compile-time Python "
                          f"iterable, not the DSL loop '{ast.unparse(gen.iter.func)}'",
                          gen.iter, hint="write range(...) here, or a for loop in the kernel")
        iterable = p.visit_expr(gen.iter)
        if not contains_ir(iterable) and isinstance(gen.target, ast.Name):
            out = []
            saved = gen.target.id in p.env, p.env.get(gen.target.id)
            try:
                for item in fold(p, node, list, iterable):
                    p.env[gen.target.id] = item
                    if all(_static_filter(p, cond) for cond in gen.ifs):
                        out.append(p.visit_expr(node.elt))
            finally:
                if saved[0]:
                    p.env[gen.target.id] = saved[1]
                else:
                    p.env.pop(gen.target.id, None)
            return out
    raise p.error(UnsupportedFeatureError, "only simple list comprehensions over compile-time "
                  "iterables are supported", node)


def _static_filter(p: Any, cond: ast.expr) -> bool:
    """The value of a comprehension's `if` filter, which must be known while compiling."""
    value = p.visit_expr(cond)
    if contains_ir(value):
        raise p.error(PyptoTypeError, "this comprehension filter reads a run-time IR variable; "
                      "a comprehension is unrolled while compiling, so its filter must be a "
                      "compile-time condition", cond)
    return bool(value)


__all__ = ["SelfProgram", "missing_attribute"]
