"""Calls in a kernel body: registry ops (`pl.add`), kernels and inline bodies (through
the program builder), language constructs in expression position (through the
construct table), and Python functions folded on compile-time arguments."""
from __future__ import annotations

import ast
import builtins
import inspect
from typing import Any, cast

from pypto.errors import (
    DynamicShapeError,
    InvalidOperationError,
    PyptoSyntaxError,
    PyptoTypeError,
    UnsupportedFeatureError,
)
from pypto.frontend.dispatch import CALL_CONSTRUCTS, expression, lookup
from pypto.frontend.opcall import call_op
from pypto.frontend.values import contains_ir, fold, is_ir, is_static
from pypto.ir.dtypes import DType
from pypto.ir.nodes import FunctionKind
from pypto.ir.types import TensorType
from pypto.language import dsl
from pypto.language.dsl import Construct
from pypto.language.kernels import FunctionDef, KernelFunction
from pypto.language.ops import OpStub
from pypto.language.typing import DynVar, TensorView, TileView
from pypto.ops.facts import Role
from pypto.ops.registry import get


def call_args(p: Any, node: ast.Call) -> tuple[list, dict, list, dict]:
    """(args, kwargs, arg nodes, keyword nodes) of a call, `*list` and `**dict` expanded."""
    args: list = []
    arg_nodes: list[ast.expr] = []
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


@expression(ast.Call)
def visit_call(p: Any, node: ast.Call) -> Any:
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr == "bind_dynamic":
        return _bind_dynamic(p, node)
    callee = p.visit_expr(func)
    if isinstance(callee, Construct):
        return construct_call(p, callee, node)
    args, kwargs, arg_nodes, kw_nodes = call_args(p, node)
    if isinstance(callee, OpStub):
        _check_shape_args(p, callee, args, kwargs, arg_nodes, kw_nodes, node)
        return call_op(p, callee.op, args, kwargs, node, arg_nodes, kw_nodes,
                       public=callee.public_name)
    if isinstance(callee, (KernelFunction, FunctionDef)):
        return p.builder.call_function(p, callee, args, kwargs, node)
    if callee in (TileView, TensorView):  # an annotation's view: its valid extents may be
        return callee(*args, **kwargs)  # run-time scalars of the kernel (a dynamic valid shape)
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
    spelling = opdef.spelling(stub.public_name)
    i = spelling.index_of(pname)
    public = spelling.from_rule.get(pname)
    if i is None or public is None:
        return
    positional = spelling.signature.parameters[public].kind in (
        inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if positional and i < len(args):
        value, vnode = args[i], arg_nodes[i]
    elif public in kwargs:
        value, vnode = kwargs[public], kw_nodes.get(public, node)
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
    left: ast.expr = node
    while isinstance(left, ast.BinOp):
        left = left.left
    return is_static(p, left)


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


def _bind_dynamic(p: Any, node: ast.Call) -> None:
    base = p.visit_expr(cast(ast.Attribute, node.func).value)  # visit_call checked it
    args = [p.visit_expr(a) for a in node.args]
    if p.kind not in (FunctionKind.ORCHESTRATION, FunctionKind.HOST) or not is_ir(base) or \
            len(args) != 2:
        raise p.error(PyptoSyntaxError, "x.bind_dynamic(axis, DYN) is only valid on a parameter "
                      "of the @pl.jit entry", node)
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


def construct_call(p: Any, construct: Construct, node: ast.Call) -> Any:
    """A `pl` construct called in expression position, through CALL_CONSTRUCTS."""
    handler = lookup(CALL_CONSTRUCTS, construct)
    if handler is None:
        where = {dsl.yield_: "as `outs = pl.yield_(...)` at the end of a loop or if arm",
                 dsl.cond: "as the first statement of a pl.while_ body",
                 dsl.spmd_submit: "as `outs..., tid = pl.spmd_submit(kernel, ...)`",
                 dsl.submit: "as `outs..., tid = pl.submit(self.kernel, ...)`"}.get(
            construct, "as a loop iterator or a with-scope")
        raise p.error(PyptoSyntaxError, f"{construct.name}(...) can only be used {where}", node,
                      hint=_USAGE.get(construct.name))
    return handler(p, node)


_USAGE = {
    "pl.range": "write `for i in pl.range(n):`",
    "pl.parallel": "write `for i in pl.parallel(n):`",
    "pl.unroll": "write `for i in pl.unroll(N):`",
    "pl.pipeline": "write `for i in pl.pipeline(0, n, TILE, stage=2):`",
    "pl.spmd": "write `for b in pl.spmd(n):` or `with pl.spmd(n):`",
    "pl.while_": "write `for (a,) in pl.while_(init_values=(a0,)):`",
    "pl.at": "write `with pl.at(level=pl.Level.CORE_GROUP, name_hint=...):`",
    "pl.yield_": "write `outs = pl.yield_(...)` as the last statement of the loop or if arm",
    "pl.cond": "write `pl.cond(<condition>)` as the first statement of a pl.while_ body",
    "pl.spmd_submit": "write `outs..., tid = pl.spmd_submit(kernel, *args, core_num=N)`",
    "pl.submit": "write `outs..., tid = pl.submit(self.kernel, *args)`",
}
