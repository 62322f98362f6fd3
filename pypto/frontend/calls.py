"""Calls: ops from the registry, kernels and inline bodies, and the language
constructs that appear in expression position (`pl.const`, `pl.spmd_submit`…)."""
from __future__ import annotations

import ast
import builtins
import inspect
from typing import Any

from pypto.errors import (DynamicShapeError, InvalidOperationError, PyptoSyntaxError,
                          PyptoTypeError, ScopeError, UnsupportedFeatureError)
from pypto.frontend.expressions import contains_ir, fold, is_ir
from pypto.ir import dtypes
from pypto.ir.nodes import Call, Const, Expr, FunctionKind
from pypto.ir.types import ScalarType, ShapedType, TensorType
from pypto.language import dsl
from pypto.language.dsl import Construct
from pypto.language.jit import FunctionDef, JITFunction
from pypto.language.ops import OpStub
from pypto.ops.facts import Role
from pypto.ops.registry import OpError, Unit, get


class SelfProgram:
    """What `self` means inside a `@pl.program` method: access to sibling functions."""

    def __init__(self, program: Any):
        self.program = program

    def member(self, p: Any, name: str, node: ast.AST) -> Any:
        fdef = self.program.functions.get(name)
        if fdef is None:
            raise p.error(InvalidOperationError, f"program {self.program.__name__} has no "
                          f"function '{name}'", node)
        return fdef


def _args(p: Any, node: ast.Call) -> tuple[list, dict, list, dict]:
    args, arg_nodes = [], []
    for a in node.args:
        if isinstance(a, ast.Starred):
            v = p.visit_expr(a.value)
            if not isinstance(v, (list, tuple)):
                raise p.error(UnsupportedFeatureError, "only compile-time lists can be unpacked "
                              "into a call", a, hint="pass the values as separate arguments")
            args.extend(v)
            arg_nodes.extend([a] * len(v))
        else:
            args.append(p.visit_expr(a))
            arg_nodes.append(a)
    kwargs, kw_nodes = {}, {}
    for kw in node.keywords:
        if kw.arg is None:
            v = p.visit_expr(kw.value)
            if not isinstance(v, dict):
                raise p.error(UnsupportedFeatureError, "only compile-time dicts can be unpacked "
                              "into a call", kw, hint="pass the values as keyword arguments")
            kwargs.update(v)
            continue
        kwargs[kw.arg] = p.visit_expr(kw.value)
        kw_nodes[kw.arg] = kw.value
    return args, kwargs, arg_nodes, kw_nodes


def visit_call(p: Any, node: ast.Call) -> Any:
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr == "bind_dynamic":
        return _bind_dynamic(p, node)
    callee = p.visit_expr(func)
    if isinstance(callee, Construct):
        from pypto.frontend.constructs import construct_call

        return construct_call(p, callee, node)
    args, kwargs, arg_nodes, kw_nodes = _args(p, node)
    if isinstance(callee, OpStub):
        _check_shape_args(p, callee, args, kwargs, arg_nodes, kw_nodes, node)
        return call_op(p, callee.op, args, kwargs, node, arg_nodes, kw_nodes,
                       public=callee.public_name)
    if isinstance(callee, (JITFunction, FunctionDef)):
        return p.builder.call_function(p, callee, args, kwargs, node)
    if callable(callee):
        if contains_ir(args) or contains_ir(list(kwargs.values())):
            name = getattr(callee, "__name__", repr(callee))
            hint = _BUILTIN_HINTS.get(name) if callee is getattr(builtins, name, None) else None
            raise p.error(UnsupportedFeatureError, f"'{name}' is a Python function; it cannot "
                          "take run-time kernel values", node,
                          hint=hint or "only pl ops and @pl.jit.inline functions operate on "
                                       "kernel values; Python functions may only compute "
                                       "compile-time constants")
        return fold(p, node, callee, *args, **kwargs)
    from pypto.ir.dtypes import DType

    hint = ("a dtype is not a function: convert with pl.cast(x, target_type=...) or make a typed "
            "literal with pl.const(value, dtype)") if isinstance(callee, DType) else None
    raise p.error(InvalidOperationError, f"'{ast.unparse(func)}' is not callable", node,
                  hint=hint)


def _check_shape_args(p: Any, stub: OpStub, args: list, kwargs: dict, arg_nodes: list,
                      kw_nodes: dict, node: ast.AST) -> None:
    """The dynamic-shape rules on shape lists: tile shapes in a region are static, and a
    `pl.create_tensor` shape holds named values, not composites led by a constant."""
    # the parameter holding the shape of the buffer the op makes (its registry
    # `shape_param`); inside a region that buffer is an on-chip tile, so the shape is a
    # tiling constant
    opdef = get(stub.op)
    pname = opdef.shape_param
    if pname is None:
        return
    params = list(opdef.params)
    i = params.index(pname)
    if i < len(args):
        value, vnode = args[i], arg_nodes[i]
    elif pname in kwargs:
        value, vnode = kwargs[pname], kw_nodes.get(pname, node)
    else:
        return
    if not isinstance(value, (list, tuple)):
        return
    elts = vnode.elts if isinstance(vnode, (ast.List, ast.Tuple)) and \
        len(vnode.elts) == len(value) else [vnode] * len(value)
    if p.in_region:
        for v, enode in zip(value, elts):
            if contains_ir(v):
                raise p.error(DynamicShapeError, f"{stub.public_name}: this {pname} entry is a "
                              "run-time value; inside a region the buffer is an on-chip tile "
                              "and its shape is a tiling constant that must be known at compile "
                              "time", enode,
                              hint="use a compile-time tile size and mark the valid part with "
                                   "valid_shape=[...]")
    if opdef.role is Role.ALLOC_TENSOR:
        for v, enode in zip(value, elts):
            if contains_ir(v) and isinstance(enode, ast.BinOp) and _leads_static(p, enode):
                raise p.error(DynamicShapeError, "a composite run-time expression in a "
                              "pl.create_tensor shape must be computed into a named local "
                              "first", enode,
                              hint=f"write `n = {ast.unparse(enode)}` on the line before and "
                                   f"pass n in the shape")


def _leads_static(p: Any, node: ast.BinOp) -> bool:
    """True when the leftmost operand of an arithmetic chain is a compile-time value
    (`C * s`), the form the dynamic-shape rules forbid in a create_tensor shape."""
    from pypto.frontend.slicing import _is_static

    left: ast.expr = node
    while isinstance(left, ast.BinOp):
        left = left.left
    return _is_static(p, left)


_BUILTIN_HINTS = {
    "min": "use pl.min(a, b) for scalars or pl.minimum(a, b) for tensors",
    "max": "use pl.max(a, b) for scalars or pl.maximum(a, b) for tensors",
    "abs": "use pl.abs(x)",
    "len": "read a dim with x.shape[axis] or pl.tensor.dim(x, axis)",
    "print": "use pl.static_print(...) to print types at compile time",
    "int": "use pl.cast(x, target_type=pl.INT32)",
    "float": "use pl.cast(x, target_type=pl.FP32)",
    "pow": "multiply explicitly, or use pl.exp / pl.log",
}


def call_op(p: Any, op_name: str, args: list, kwargs: dict, node: ast.AST,
            arg_nodes: list | None = None, kw_nodes: dict | None = None,
            public: str | None = None) -> Expr:
    """Bind arguments to the op's signature, run its type rule, build the Call."""
    opdef = get(op_name)
    public = public or (opdef.names[0] if opdef.names else op_name)
    ir_args = [p.to_ir(a, (arg_nodes or [])[i] if arg_nodes and i < len(arg_nodes) else node)
               for i, a in enumerate(args)]
    ir_kwargs = {k: p.to_ir(v, (kw_nodes or {}).get(k, node)) for k, v in kwargs.items()}
    try:
        bound = opdef.signature.bind(*ir_args, **ir_kwargs)
    except TypeError as exc:
        raise _bind_error(p, public, opdef.signature, exc, node, arg_nodes) from None
    bound.apply_defaults()
    try:
        result_type = opdef.type_rule(**bound.arguments)
    except OpError as exc:
        where = _arg_node(opdef, exc.arg, arg_nodes, kw_nodes) or node
        raise p.error(InvalidOperationError, f"{public}: {exc.message}", where,
                      hint=exc.hint or f"signature: {public}{opdef.signature}") from None
    values = tuple(p.to_ir(v, node) for v in bound.arguments.values())
    # Scalar arithmetic (pl.cast(0, pl.INT32), pl.max(a, b)) is control-plane work even
    # when the op's tensor form is vector work.
    scalar = isinstance(result_type, ScalarType) and not any(
        is_ir(v) and isinstance(v.type, ShapedType) for v in values)
    _check_placement(p, opdef, public, node, scalar)
    # A unified op whose tile form is a different IR op (pl.cmp on tiles -> tile.cmp).
    resolve = opdef.extra.get("resolve")
    if resolve is not None:
        op_name = resolve(result_type) or op_name
    return Call(op_name, values, (), result_type, p.span(node))


def _bind_error(p: Any, public: str, sig: inspect.Signature, exc: TypeError, node: ast.AST,
                arg_nodes: list | None) -> Any:
    """A located error for arguments that do not fit an op's signature: an unknown
    keyword points at that keyword, surplus positionals at the first extra one."""
    import difflib
    import re

    msg = str(exc)
    where: ast.AST = node
    hint = f"signature: {public}{sig}"
    m = re.search(r"unexpected keyword argument '(\w+)'", msg)
    if m and isinstance(node, ast.Call):
        bad = m.group(1)
        where = next((k for k in node.keywords if k.arg == bad), node)
        close = difflib.get_close_matches(bad, list(sig.parameters), n=1, cutoff=0.6)
        msg = f"{public}() got an unexpected keyword argument '{bad}'"
        if close:
            hint = f"did you mean {close[0]}=? signature: {public}{sig}"
    elif "too many positional arguments" in msg:
        npos = sum(1 for q in sig.parameters.values()
                   if q.kind in (q.POSITIONAL_ONLY, q.POSITIONAL_OR_KEYWORD))
        if arg_nodes and npos < len(arg_nodes):
            where = arg_nodes[npos]
        msg = f"{public}() takes at most {npos} positional arguments"
    else:
        msg = f"{public}(): {msg}"
    return p.error(InvalidOperationError, msg, where, hint=hint)


def _arg_node(opdef: Any, arg: str | None, arg_nodes: list | None,
              kw_nodes: dict | None) -> ast.AST | None:
    if arg is None:
        return None
    if kw_nodes and arg in kw_nodes:
        return kw_nodes[arg]
    params = list(opdef.params)
    if arg in params and arg_nodes:
        i = params.index(arg)
        if i < len(arg_nodes):
            return arg_nodes[i]
    return None


def _check_placement(p: Any, opdef: Any, public: str, node: ast.AST,
                     scalar: bool = False) -> None:
    if p.in_region and opdef.orch_only:
        raise p.error(ScopeError, f"{public} is control-plane work and cannot run inside an "
                      "InCore region", node, hint="move it before the pl.at / pl.spmd block")
    compute = opdef.unit in (Unit.VECTOR, Unit.CUBE) and not scalar
    if compute and not p.in_region and p.kind in (FunctionKind.ORCHESTRATION,
                                                  FunctionKind.HOST, FunctionKind.OPAQUE):
        raise p.error(ScopeError, f"{public} is a compute op and cannot run in orchestration "
                      "code", node,
                      hint="wrap it in `with pl.at(level=pl.Level.CORE_GROUP, name_hint=...):` "
                           "or a pl.spmd block")


def _bind_dynamic(p: Any, node: ast.Call) -> None:
    base = p.visit_expr(node.func.value)
    args = [p.visit_expr(a) for a in node.args]
    if p.kind is not FunctionKind.ORCHESTRATION or not is_ir(base) or len(args) != 2:
        raise p.error(PyptoSyntaxError, "x.bind_dynamic(axis, DYN) is only valid on a parameter "
                      "of the @pl.jit entry", node)
    from pypto.language.typing import DynVar

    axis, dyn = args
    if not isinstance(axis, int) or not isinstance(dyn, DynVar):
        raise p.error(PyptoSyntaxError, "bind_dynamic takes (axis: int, dyn: pl.dynamic symbol)",
                      node)
    shape = getattr(base.type, "shape", None)
    if shape is None or not isinstance(base.type, TensorType):
        raise p.error(PyptoTypeError, f"bind_dynamic needs a pl.Tensor parameter; "
                      f"'{getattr(base, 'name', '?')}' is {base.type}", node)
    if not -len(shape) <= axis < len(shape):
        raise p.error(PyptoTypeError, f"axis {axis} is out of range for {base.type}", node)
    p.bound_dynamic.add((base.name, axis % len(shape)))
    p.bind_dynamic_calls.append((base.name, axis % len(shape), dyn.name, p.span(node)))
    return None


def const_call(p: Any, node: ast.Call) -> Const:
    args = [p.visit_expr(a) for a in node.args]
    kwargs = {k.arg: p.visit_expr(k.value) for k in node.keywords}
    try:
        sig = inspect.signature(lambda value, dtype: None).bind(*args, **kwargs)
    except TypeError as exc:
        raise p.error(PyptoSyntaxError, f"pl.const(): {exc}", node) from None
    value, dtype = sig.arguments["value"], sig.arguments["dtype"]
    if contains_ir(value) or not isinstance(dtype, dtypes.DType):
        raise p.error(PyptoSyntaxError, "pl.const(value, dtype) takes a literal and a pl dtype",
                      node)
    v = float(value) if dtype.is_float() else int(value) if dtype.is_int() else bool(value)
    return Const(v, ScalarType(dtype), p.span(node))


__all__ = ["visit_call", "call_op", "SelfProgram", "const_call", "dsl"]
