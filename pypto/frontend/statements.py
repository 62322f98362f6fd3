"""Statement handlers: assignments, loops, branches, `with` scopes, returns."""
from __future__ import annotations

import ast
from typing import Any

import numpy as np

from pypto.errors import (
    InvalidOperationError,
    PyptoSyntaxError,
    PyptoTypeError,
    UnsupportedFeatureError,
    UserError,
)
from pypto.frontend.annotations import AnnotationError, to_type
from pypto.frontend.dispatch import ASSIGN_CONSTRUCTS, lookup, statement
from pypto.frontend.opcall import scalar_binop
from pypto.frontend.slicing import write_subscript
from pypto.frontend.values import BINOPS, contains_ir, fold, is_ir
from pypto.ir import dtypes
from pypto.ir.nodes import Assign, Break, Continue, Eval, If, LoopKind, Return, Var
from pypto.ir.types import ScalarType, ShapedType, TupleType
from pypto.language import dsl
from pypto.language.kernels import KernelFunction


def assigned_names(body: list[ast.stmt]) -> set[str]:
    """Every plain name (re)bound anywhere in `body`, including subscript-assigned bases."""
    names: set[str] = set()
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, (ast.Assign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
                        names.add(t.value.id)
    return names


def plain_names(p: Any, nodes: list, what: str) -> list[ast.Name]:
    """`nodes` as the plain names they must be (loop targets, carried values, results)."""
    for n in nodes:
        if not isinstance(n, ast.Name):
            raise p.error(PyptoSyntaxError, f"{what} must be plain names", n,
                          hint="bind to a name, then write into the tensor in the body")
    return list(nodes)


def _construct_of(p: Any, node: ast.expr) -> Any:
    """The `pl` construct a call node invokes, without evaluating its arguments."""
    if isinstance(node, ast.Call):
        try:
            callee = p.visit_expr(node.func)
        except UserError:
            return None
        if isinstance(callee, dsl.Construct):
            return callee
    return None


# --- simple statements --------------------------------------------------------------


@statement(ast.Expr)
def _expr(p: Any, node: ast.Expr) -> None:
    if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
        return  # docstring or string comment
    p.statement_call = node.value  # a call whose value is discarded
    value = p.visit_expr(node.value)
    if is_ir(value):
        p.emit(Eval(value, p.span(node)))


@statement(ast.Pass)
def _pass(p: Any, node: ast.Pass) -> None:
    return None


@statement(ast.Assign)
def _assign(p: Any, node: ast.Assign) -> None:
    construct = _construct_of(p, node.value)
    bind_results = lookup(ASSIGN_CONSTRUCTS, construct)
    if bind_results is not None:
        if len(node.targets) != 1:
            raise p.error(PyptoSyntaxError, f"bind {construct.name} results to one target list",
                          node)
        bind_results(p, construct, node.targets[0], node.value, node)
        return
    value = p.visit_expr(node.value)
    if value is None and isinstance(node.value, ast.Call):
        _reject_void_inline(p, node.value)
    for target in node.targets:
        assign_target(p, target, value, node)


def _reject_void_inline(p: Any, call: ast.Call) -> None:
    """`y = helper(x)` where the inline helper returns nothing."""
    callee = p.visit_expr(call.func)
    if isinstance(callee, KernelFunction) and callee.fn.__name__ in p.builder.no_return:
        raise p.builder.no_return_error(p, callee.fn.__name__, call)


def assign_target(p: Any, target: ast.expr, value: Any, node: ast.AST) -> None:
    if isinstance(target, ast.Name):
        p.bind(target.id, value, target)
        return
    if isinstance(target, ast.Subscript):
        write_subscript(p, target, value, node)
        return
    if isinstance(target, (ast.Tuple, ast.List)):
        _unpack(p, target, value, node)
        return
    raise p.error(UnsupportedFeatureError, f"cannot assign to '{ast.unparse(target)}' in a "
                  "kernel", target, hint="assign to a plain name")


def _unpack(p: Any, target: ast.Tuple | ast.List, value: Any, node: ast.AST) -> None:
    names = target.elts
    if is_ir(value):
        t = value.type
        if not isinstance(t, TupleType):
            raise p.error(PyptoTypeError, f"cannot unpack a {t} value into {len(names)} names",
                          target, hint="only multi-value results (an inline helper returning "
                                       "several values, pl.spmd_submit) can be unpacked")
        if len(t.items) != len(names):
            raise p.error(PyptoTypeError, f"cannot unpack {len(t.items)} values into "
                          f"{len(names)} names", target)
        if not all(isinstance(n, ast.Name) for n in names):
            raise p.error(UnsupportedFeatureError, "tuple targets must be plain names", target)
        plain = [nm for nm in names if isinstance(nm, ast.Name)]
        out = tuple(Var(nm.id, it, span=p.span(nm)) for nm, it in zip(plain, t.items))
        p.emit(Assign(out, value, p.span(node)))
        for nm, var in zip(plain, out):
            p.env[nm.id] = var
        return
    if not isinstance(value, (list, tuple)):
        raise p.error(PyptoTypeError, f"cannot unpack {value!r} into {len(names)} names", target)
    if len(value) != len(names):
        raise p.error(PyptoTypeError, f"cannot unpack {len(value)} values into {len(names)} names",
                      target)
    for n, v in zip(names, value):
        assign_target(p, n, v, node)


@statement(ast.AnnAssign)
def _ann_assign(p: Any, node: ast.AnnAssign) -> None:
    if node.value is None:
        raise p.error(PyptoSyntaxError, "a bare annotation declares nothing in a kernel", node,
                      hint="give it a value, e.g. `a: pl.Scalar[pl.INDEX] = 0`")
    construct = _construct_of(p, node.value)
    bind_results = lookup(ASSIGN_CONSTRUCTS, construct)
    if bind_results is not None:
        # `v: pl.Tensor[...] = pl.yield_(x)`: the construct binds the name; the
        # annotation checks what it bound
        bind_results(p, construct, node.target, node.value, node)
        bound = _bound_result(p, node.target)
        want = _annotated_type(p, node.annotation)
        if want is not None and is_ir(bound):
            check_compatible(p, want, bound.type, node.annotation, "annotated")
        return
    want = _annotated_type(p, node.annotation)
    # an op whose result type is what the assignment declares (pl.tpop_from_aic) reads it
    p.annotated_call = (node.value, want)
    try:
        value = p.visit_expr(node.value)
    finally:
        p.annotated_call = None
    got = p.expr_type(p.to_ir(value, node))
    if want is not None and got is not None:
        check_compatible(p, want, got, node.annotation, "annotated")
    assign_target(p, node.target, value, node)


def _bound_result(p: Any, target: ast.expr) -> Any:
    """The Var a construct just bound to the name `target` (a yield's result is bound
    when its loop or if ends; it is kept on the loop / branch until then)."""
    if not isinstance(target, ast.Name):
        return None
    pending = list(p.branch_stack[-1][-1]) if p.branch_stack and p.branch_stack[-1] else []
    ctx = p.loop_stack[-1] if p.loop_stack else None
    pending += list(getattr(ctx, "results", None) or [])
    found = [v for v in pending if getattr(v, "name", None) == target.id]
    return found[-1] if found else p.env.get(target.id)


def _annotated_type(p: Any, annotation: ast.expr) -> Any:
    try:
        want, _ = to_type(p.visit_expr(annotation))
    except AnnotationError as exc:
        raise p.error(PyptoTypeError, exc.message, annotation, hint=exc.hint) from None
    return want


def _integral(dtype: Any) -> bool:
    """An integer or a BOOL: the real compiler passes one for the other to a scalar
    parameter (its `examples/models/04_paged_attention.py` hands `pl.yield_(1)`, an
    INDEX, to `is_first: pl.Scalar[pl.BOOL]`), a nonzero integer being true."""
    return dtype.is_int() or dtype.kind is dtypes.Kind.BOOL


def check_compatible(p: Any, want: Any, got: Any, node: ast.AST, what: str) -> None:
    """Raise when `got` provably does not fit the declared type `want`."""
    if type(want) is not type(got) and not (isinstance(want, ShapedType)
                                           and isinstance(got, ShapedType)):
        raise p.error(PyptoTypeError, f"{what} type {want} does not match the value's type {got}",
                      node)
    if isinstance(want, ShapedType):
        if want.dtype != got.dtype:
            raise p.error(PyptoTypeError, f"{what} dtype {want.dtype!r} does not match the "
                          f"value's dtype {got.dtype!r}", node, hint="insert a pl.cast")
        if want.rank != got.rank:
            raise p.error(PyptoTypeError, f"{what} rank {want.rank} does not match the value's "
                          f"rank {got.rank} ({got})", node)
        for i, (a, b) in enumerate(zip(want.shape, got.shape)):
            if isinstance(a, int) and isinstance(b, int) and a != b:
                raise p.error(PyptoTypeError, f"{what} shape {want} does not match {got} "
                              f"(axis {i}: {a} vs {b})", node)
    elif isinstance(want, ScalarType) and want.dtype != got.dtype and \
            not (_integral(want.dtype) and _integral(got.dtype)):
        raise p.error(PyptoTypeError, f"{what} {want} does not match {got}", node,
                      hint="insert a pl.cast or fix the annotation")


@statement(ast.AugAssign)
def _aug_assign(p: Any, node: ast.AugAssign) -> None:
    if not isinstance(node.target, ast.Name):
        raise p.error(UnsupportedFeatureError, "augmented assignment works on plain scalar "
                      "names only", node.target, hint="write x = pl.add(x, y) for tensors")
    current = p.lookup(node.target.id, node.target)
    rhs = p.visit_expr(node.value)
    sym, fn = BINOPS[type(node.op)]
    if not contains_ir(current) and not contains_ir(rhs):
        value = fold(p, node, fn, current, rhs)
    else:
        value = scalar_binop(p, sym, current, rhs, node)
    p.bind(node.target.id, value, node.target)


@statement(ast.Return)
def _return(p: Any, node: ast.Return) -> None:
    if node.value is None:
        values: tuple = ()
    else:
        v = p.visit_expr(node.value)
        items = v if isinstance(v, tuple) else (v,)
        values = tuple(p.to_ir(i, node.value) for i in items)
    if p.loop_stack or any(tag != "caller" for tag in p.region_stack):
        raise p.error(PyptoSyntaxError, "return inside a loop or a region is not supported", node,
                      hint="return at the end of the function")
    p.returns.append((values, node))
    p.emit(Return(values, p.span(node)))


@statement(ast.Break)
def _break(p: Any, node: ast.Break) -> None:
    _check_loop_control(p, node, "break")
    p.emit(Break(p.span(node)))


@statement(ast.Continue)
def _continue(p: Any, node: ast.Continue) -> None:
    _check_loop_control(p, node, "continue")
    p.emit(Continue(p.span(node)))


_NO_EXIT = {LoopKind.PARALLEL: "a parallel loop (pl.parallel): its iterations run independently",
            LoopKind.UNROLL: "an unrolled loop (pl.unroll): its iterations are copied out at "
                             "compile time",
            LoopKind.PIPELINE: "a pipelined loop (pl.pipeline): its stages overlap",
            LoopKind.SPMD: "a pl.spmd loop: its iterations are blocks running at once"}


def _check_loop_control(p: Any, node: ast.AST, word: str) -> None:
    """break / continue leave a pl.range or while loop; anything else that encloses them
    is an invalid operation (InvalidOperationError, as the real parser raises)."""
    ctx = p.loop_stack[-1] if p.loop_stack else None
    inner_regions = p.region_stack[ctx.extra.get("regions", 0):] if ctx else p.region_stack
    if "split_aiv" in inner_regions:
        raise p.error(InvalidOperationError, f"'{word}' not supported inside pl.split_aiv: its "
                      "body is a scope run once per AIV lane, not a loop", node)
    if ctx is None:
        raise p.error(PyptoSyntaxError, f"'{word}' outside a loop", node)
    if ctx.kind not in (LoopKind.RANGE, "while"):
        what = _NO_EXIT.get(ctx.kind, f"a pl.{getattr(ctx.kind, 'value', ctx.kind)} loop")
        raise p.error(InvalidOperationError, f"'{word}' is not supported in {what}", node,
                      hint=f"only pl.range and while loops take '{word}'")


def condition(p: Any, test: ast.expr, what: str) -> Any:
    """An if / while condition: a Bool-typed scalar, at run time or compile time (a
    Python bool); an integer such as `if 1:` is rejected, as by the real parser."""
    cond = p.visit_expr(test)
    if not contains_ir(cond):
        if not isinstance(cond, (bool, np.bool_)):
            raise p.error(PyptoTypeError, f"{what} condition must be a Bool-typed scalar, got "
                          f"{type(cond).__name__} {cond!r}", test,
                          hint="write a comparison or True / False, e.g. `if n != 0:`")
        return bool(cond)
    t = cond.type
    if not isinstance(t, ScalarType) or t.dtype != dtypes.BOOL:
        raise p.error(PyptoTypeError, f"{what} condition must be a Bool-typed scalar, got {t}",
                      test, hint="compare it explicitly, e.g. `if n != 0:`")
    return cond


@statement(ast.If)
def _if(p: Any, node: ast.If) -> None:
    cond = condition(p, node.test, "if")
    if not contains_ir(cond):
        p.visit_body(node.body if cond else node.orelse)
        return
    p.materialize(assigned_names(node.body) | assigned_names(node.orelse), node)
    before = dict(p.env)
    then_body, then_results = branch(p, node.body)
    then_env = p.env
    p.env = dict(before)  # the else arm starts from the bindings before the if
    else_body, else_results = branch(p, node.orelse)
    # Names bound in either arm are visible after the if (Python semantics); the
    # SSA pass merges the arms' bindings.
    for name, value in then_env.items():
        p.env.setdefault(name, value)
    results: tuple | list = ()
    if then_results or else_results:
        if [r.name for r in then_results] != [r.name for r in else_results]:
            raise p.error(PyptoSyntaxError, "both arms of an if must pl.yield_ the same names",
                          node)
        results = tuple(then_results)
        for r in results:
            p.env[r.name] = r
    p.emit(If(cond, tuple(then_body), tuple(else_body), tuple(results), p.span(node)))


@statement(ast.Assert)
def _assert(p: Any, node: ast.Assert) -> None:
    cond = p.visit_expr(node.test)
    if contains_ir(cond):
        raise p.error(UnsupportedFeatureError, "assert needs a compile-time condition", node,
                      hint="kernels cannot raise at run time; check inputs before the call")
    if not cond:
        msg = p.visit_expr(node.msg) if node.msg is not None else "assertion failed"
        raise p.error(PyptoSyntaxError, f"compile-time assertion failed: {msg}", node,
                      hint="the condition is evaluated when the kernel is compiled")


def branch(p: Any, body: list[ast.stmt]) -> tuple[list, list]:
    """Parse one arm of a run-time if; returns (statements, yielded result vars)."""
    p.branch_stack.append([])
    try:
        with p.block() as stmts:
            p.visit_body(body)
    finally:
        yielded = p.branch_stack.pop()
    return stmts, (yielded[-1] if yielded else [])
