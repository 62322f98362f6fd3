"""Calls of registry ops: bind the arguments to the op's signature, run its type
rule, check where it may run, build the IR `Call`. Python operators on run-time
scalars and reads of `pl.dynamic` extents become op calls here too."""
from __future__ import annotations

import ast
import difflib
import inspect
import re
from typing import Any

from pypto.errors import (
    DynamicShapeError,
    InvalidOperationError,
    PyptoSyntaxError,
    ScopeError,
    UnsupportedFeatureError,
)
from pypto.frontend.values import INDEX, is_ir
from pypto.ir.distributed import DistributedTensorType
from pypto.ir.nodes import Call, DynDim, Expr, FunctionKind
from pypto.ir.types import ScalarType, ShapedType, TensorType
from pypto.language.typing import DimExpr, DynVar
from pypto.ops.registry import OpError, get
from pypto.ops.scalar import SYMBOL_TO_OP

_TENSOR_OP_FOR = {"+": "pl.add", "-": "pl.sub", "*": "pl.mul", "/": "pl.div", "@": "pl.matmul",
                  "==": "pl.cmp", "<": "pl.cmp", ">": "pl.cmp"}


def call_op(p: Any, op_name: str, args: list, kwargs: dict, node: ast.AST,
            arg_nodes: list | None = None, kw_nodes: dict | None = None,
            public: str | None = None) -> Expr:
    """Bind arguments to the op's signature, run its type rule, check where the op may
    run, build the Call."""
    return bind_op(p, op_name, args, kwargs, node, arg_nodes, kw_nodes, public, placed=True)


def bind_op(p: Any, op_name: str, args: list, kwargs: dict, node: ast.AST,
            arg_nodes: list | None = None, kw_nodes: dict | None = None,
            public: str | None = None, placed: bool = False) -> Expr:
    """The Call of an op with these arguments: bound to its signature, typed by its rule.
    With `placed`, also the rules of where the op may run (orchestration or a region)."""
    opdef = get(op_name)
    public = public or (opdef.names[0] if opdef.names else op_name)
    spelling = opdef.spelling(public)
    supplied: dict = {}  # arguments the parser supplies, outside the public signature
    if opdef.extra.get("split_from_scope"):
        kwargs, supplied = _scope_split(p, public, args, kwargs, node)
    if opdef.extra.get("shape_from_annotation"):
        kwargs, supplied = _annotated_shape(p, spelling, kwargs, supplied, node)
    kwargs, supplied = _unspelled(p, opdef, spelling, kwargs, supplied)
    ir_args = [p.to_ir(a, (arg_nodes or [])[i] if arg_nodes and i < len(arg_nodes) else node)
               for i, a in enumerate(args)]
    ir_kwargs = {k: p.to_ir(v, (kw_nodes or {}).get(k, node)) for k, v in kwargs.items()}
    try:
        given = spelling.signature.bind(*ir_args, **ir_kwargs)
    except TypeError as exc:
        raise _bind_error(p, public, spelling.signature, exc, node, arg_nodes,
                          opdef.extra.get("bind_error", InvalidOperationError)) from None
    rule_args, rule_kwargs = spelling.rule_arguments(given)
    rule_kwargs.update({k: p.to_ir(v, node) for k, v in supplied.items()})
    try:
        bound = opdef.signature.bind(*rule_args, **rule_kwargs)
    except TypeError as exc:  # a *args spelling forwards what the rule may still refuse
        raise _bind_error(p, public, opdef.signature, exc, node, arg_nodes) from None
    bound.apply_defaults()
    try:
        result_type = opdef.type_rule(**bound.arguments)
    except OpError as exc:
        where = _arg_node(spelling, exc.arg, arg_nodes, kw_nodes) or node
        raise p.error(exc.error or InvalidOperationError, f"{public}: {exc.message}", where,
                      hint=exc.hint or f"signature: {public}{spelling.signature}") from None
    values = tuple(p.to_ir(v, node) for v in bound.arguments.values())
    # Scalar arithmetic (pl.cast(0, pl.INT32), pl.max(a, b)) is control-plane work even
    # when the op's tensor form is vector work.
    scalar = isinstance(result_type, ScalarType) and not any(
        is_ir(v) and isinstance(v.type, ShapedType) for v in values)
    if placed:
        _check_placement(p, opdef, public, node, scalar)
    # A unified op whose tile form is a different IR op (pl.cmp on tiles -> tile.cmp).
    resolve = opdef.extra.get("resolve")
    if resolve is not None:
        op_name = resolve(result_type) or op_name
    return Call(op_name, values, (), result_type, p.span(node))


def _unspelled(p: Any, opdef: Any, spelling: Any, kwargs: dict,
               supplied: dict) -> tuple[dict, dict]:
    """In the IR text form (`pl.parse`), rule arguments the public signature has no name
    for, which the printer writes as keywords (a `pl.tpop_from_aic`'s valid_shape, a
    `pl.rsqrt` whose tile form gave a scratch `tmp`), go to the rule as they are."""
    if not getattr(p, "ir_text", False):
        return kwargs, supplied
    hidden = {k: v for k, v in kwargs.items() if k not in spelling.signature.parameters
              and k in opdef.signature.parameters and k not in spelling.from_rule}
    if not hidden:
        return kwargs, supplied
    return ({k: v for k, v in kwargs.items() if k not in hidden}, {**supplied, **hidden})


def _scope_split(p: Any, public: str, args: list, kwargs: dict,
                 node: ast.AST) -> tuple[dict, dict]:
    """`split=` of pl.aiv_shard / pl.aic_gather: the enclosing pl.split_aiv loop's mode
    (the real parser's rules: no `mode=`, no distributed operand, and outside a region
    only the outlined tile form `pl.tile.aiv_shard(tile, split=N)`)."""
    modes = getattr(p, "split_modes", None)
    kwargs = dict(kwargs)
    given = kwargs.pop("split", None)
    if "mode" in kwargs:
        raise p.error(PyptoSyntaxError, f"{public} does not take a mode: it is the enclosing "
                      "pl.split_aiv loop's", node, hint="leave mode= out")
    operand = p.expr_type(p.to_ir(args[0], node)) if args else None
    if isinstance(operand, DistributedTensorType):
        raise p.error(PyptoSyntaxError, f"{public} does not take a distributed tensor: "
                      "the AIV split is within one card", node)
    if not modes:
        if given is None:
            raise p.error(PyptoSyntaxError, f"{public} must be used inside a `for aiv_id in "
                          "pl.split_aiv(2, mode=...)` loop, which supplies the split mode", node,
                          hint="open a pl.split_aiv region around the crossing")
        if isinstance(operand, TensorType):
            raise p.error(PyptoSyntaxError, f"{public}(x, split=...) outside a pl.split_aiv "
                          "region is the outlined form, which is tile-only; got a tensor",
                          node, hint="cross inside a `for aiv_id in pl.split_aiv(...)` loop")
        return kwargs, {"split": given}  # the text form of an outlined crossing names it
    mode = modes[-1]
    code = int(getattr(mode, "value", mode))
    if given is not None and int(getattr(given, "value", given)) != code:
        raise p.error(InvalidOperationError, f"{public}: split={given} differs from the "
                      f"enclosing pl.split_aiv region's mode ({code})", node,
                      hint="leave split out: the region supplies it")
    return kwargs, {"split": code}


def _annotated_shape(p: Any, spelling: Any, kwargs: dict, supplied: dict,
                     node: ast.AST) -> tuple[dict, dict]:
    """shape= / dtype= (and valid_shape=, when the annotation's pl.TileView gives one) of an
    op typed by its assignment's annotation, when not given; valid_shape, which the public
    signature does not name, goes to the rule directly."""
    declared = getattr(p, "annotated_call", None)
    if declared is None or declared[0] is not node or "shape" in kwargs or "dtype" in kwargs:
        return kwargs, supplied
    t = declared[1]
    if not isinstance(t, ShapedType):
        return kwargs, supplied
    out = {**kwargs, "shape": list(t.shape), "dtype": t.dtype}
    if t.valid_shape is not None and "valid_shape" not in kwargs:
        if "valid_shape" in spelling.signature.parameters:
            out["valid_shape"] = list(t.valid_shape)
        else:
            supplied = {**supplied, "valid_shape": list(t.valid_shape)}
    return out, supplied


def _bind_error(p: Any, public: str, sig: inspect.Signature, exc: TypeError, node: ast.AST,
                arg_nodes: list | None, error: type = InvalidOperationError) -> Any:
    """A located error for arguments that do not fit an op's signature: an unknown
    keyword points at that keyword, surplus positionals at the first extra one."""
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
    elif (m := re.search(r"missing a required (?:keyword-only )?argument: '(\w+)'", msg)) and \
            sig.parameters[m.group(1)].kind is inspect.Parameter.KEYWORD_ONLY:
        msg = f"{public} requires keyword argument '{m.group(1)}'"
    else:
        msg = f"{public}(): {msg}"
    return p.error(error, msg, where, hint=hint)


def _arg_node(spelling: Any, arg: str | None, arg_nodes: list | None,
              kw_nodes: dict | None) -> ast.AST | None:
    """The node of the argument a rule's error names (`arg`: a rule parameter)."""
    if arg is None:
        return None
    public = spelling.from_rule.get(arg)
    if public is None:
        return None
    if kw_nodes and public in kw_nodes:
        return kw_nodes[public]
    i = spelling.index_of(arg)
    if i is not None and arg_nodes and i < len(arg_nodes):
        return arg_nodes[i]
    return None


def _check_placement(p: Any, opdef: Any, public: str, node: ast.AST,
                     scalar: bool = False) -> None:
    """Control-plane work cannot run inside a region. The converse (core work in
    orchestration code) parses, as in the real parser: CheckPlacement warns at compile
    and refuses to run it (`pypto/passes/placement.py`)."""
    if p.in_region and opdef.orch_only:
        raise p.error(ScopeError, f"{public} is control-plane work and cannot run inside an "
                      "InCore region", node, hint="move it before the pl.at / pl.spmd block")


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
        return call_op(p, "tensor.dim", [param, axis], {}, node)
    return DynDim(dv.name, INDEX, p.span(node))


def host_dims(p: Any, values: tuple, node: ast.AST) -> tuple:
    """A @pl.program host orchestrator computes with its pl.dynamic extents (a window
    of `NR * SIZE * pl.FP32.get_byte()` bytes, as in the real pypto's multi-card tests),
    each read from the parameter that declares it. Kernel bodies keep the guide's rule
    (DynVar math there is an SSA hazard); so does a @pl.jit.host body."""
    if p.kind is not FunctionKind.HOST or p.self_object is None or p.annotating:
        return values
    return tuple(dynvar_value(p, v, node) if isinstance(v, DynVar) else v for v in values)


def composite_annotation(p: Any) -> bool:
    """A @pl.program function's parameter annotations may compose pl.dynamic symbols
    (`pl.Tensor[[M * 2, N], ...]`: a symbolic dim, as in the real parser and its tests),
    and so may the printed IR; the guide's rule against it is @pl.jit's (its SSA renamer)."""
    return p.annotating and (p.self_object is not None or p.ir_text)


def shape_dim(p: Any, value: Expr, axis: int, dim: Any, node: ast.AST) -> Any:
    if isinstance(dim, int):
        return dim
    return call_op(p, "tensor.dim", [value, axis], {}, node)


def scalar_binop(p: Any, sym: str, lhs: Any, rhs: Any, node: ast.AST) -> Expr:
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
