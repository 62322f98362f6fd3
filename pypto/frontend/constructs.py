"""Language constructs called in expression or statement position: `pl.const`,
`pl.static_assert`, `pl.static_print`, `pl.no_dep`, `pl.dump_tag`,
`pl.func_attr`, and the task-submitting `pl.spmd_submit` / `pl.submit`."""
from __future__ import annotations

import ast
import inspect
import sys
from typing import Any

from pypto.errors import (
    PyptoSyntaxError,
    PyptoTypeError,
    ScopeError,
    UnsupportedFeatureError,
    UserError,
)
from pypto.frontend.dispatch import assign_construct, call_construct
from pypto.frontend.dump_tags import call_dumps, is_tagged, listed_dumps
from pypto.frontend.predicate import parse_predicate, record_outputs
from pypto.frontend.scopes import deps_attr
from pypto.frontend.values import contains_ir, is_ir, is_number
from pypto.ir import dtypes
from pypto.ir.nodes import Assign, Const, Eval, FunctionKind, Scope, ScopeKind, Var
from pypto.ir.printer import expr_str
from pypto.ir.types import NONE, ScalarType, TensorType, TupleType
from pypto.language import dsl
from pypto.language.kernels import FunctionDef, KernelFunction

_TASK = ScalarType(dtypes.TASK_ID)


@call_construct(dsl.const)
def _const(p: Any, node: ast.Call) -> Const:
    args = [p.visit_expr(a) for a in node.args]
    if any(k.arg is None for k in node.keywords):
        raise p.error(PyptoSyntaxError, "pl.const(value, dtype) takes no **kwargs", node)
    kwargs = {str(k.arg): p.visit_expr(k.value) for k in node.keywords}
    try:
        sig = inspect.signature(lambda value, dtype: None).bind(*args, **kwargs)
    except TypeError as exc:
        raise p.error(PyptoSyntaxError, f"pl.const(): {exc}", node) from None
    value, dtype = sig.arguments["value"], sig.arguments["dtype"]
    if contains_ir(value) or not is_number(value) or not isinstance(dtype, dtypes.DType):
        raise p.error(PyptoSyntaxError, "pl.const(value, dtype) takes a literal and a pl dtype",
                      node)
    try:
        v = float(value) if dtype.is_float() else int(value) if dtype.is_int() else bool(value)
    except (OverflowError, ValueError) as exc:
        raise p.error(PyptoSyntaxError, f"pl.const(): {value!r} is not a {dtype!r} value: {exc}",
                      node) from None
    return Const(v, ScalarType(dtype), p.span(node))


@call_construct(dsl.static_assert)
def _static_assert(p: Any, node: ast.Call) -> None:
    if not node.args or len(node.args) > 2:
        raise p.error(PyptoSyntaxError, "pl.static_assert(cond, 'message')", node)
    cond = p.visit_expr(node.args[0])
    if contains_ir(cond):
        raise p.error(PyptoSyntaxError, "pl.static_assert needs a compile-time condition",
                      node.args[0], hint="it checks values known when compiling (constants, "
                                         "static shapes); run-time values cannot be asserted")
    msg = "static assertion failed"
    if len(node.args) == 2:
        if not (isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)):
            raise p.error(PyptoSyntaxError, "pl.static_assert's message must be a string literal",
                          node.args[1])
        msg = node.args[1].value
    if not cond:
        raise p.error(PyptoSyntaxError, f"static assertion failed: {msg}", node)
    return None


@call_construct(dsl.static_print)
def _static_print(p: Any, node: ast.Call) -> None:
    if not node.args:
        raise p.error(PyptoSyntaxError, "pl.static_print needs at least one argument", node)
    parts = []
    for a in node.args:
        if isinstance(a, ast.JoinedStr):
            parts.append("".join(_fstring_part(p, v, a) for v in a.values))
        else:
            parts.append(_print_part(p, a, p.visit_expr(a)))
    span = p.span(node)
    print(f"static_print [{span.file}:{span.line}]: " + " ".join(parts), file=sys.stdout)
    return None


def _print_part(p: Any, node: ast.expr, v: Any) -> str:
    """One argument of pl.static_print, as the real parser prints it: a string literal as
    written, a variable as `name: type`, a constant as `value: type` (a Python int is an
    INDEX scalar, a float FP32, a bool BOOL, as the real parser reads literals), any other
    kernel expression in its printed form."""
    if isinstance(v, Var):
        name = node.id if isinstance(node, ast.Name) else v.name
        return f"{name}: {v.type}"
    if isinstance(v, Const):
        return f"{v.value}: {v.type}"
    if is_ir(v):
        return expr_str(v)
    if isinstance(v, str):
        return v
    literal = {bool: dtypes.BOOL, int: dtypes.INDEX, float: dtypes.FP32}.get(type(v))
    if literal is not None:
        return f"{v}: {ScalarType(literal)}"
    return str(v)


def _fstring_part(p: Any, v: ast.expr, fstring: ast.JoinedStr) -> str:
    if not isinstance(v, ast.FormattedValue):
        return str(getattr(v, "value", ""))
    if v.conversion != -1 or v.format_spec is not None:
        raise p.error(UnsupportedFeatureError, "f-string conversion (!r, !s, !a) and format "
                      "spec (:.2f) are not supported in pl.static_print", fstring,
                      hint='write plain placeholders such as f"{x}"')
    return _print_part(p, v.value, p.visit_expr(v.value))


@call_construct(dsl.no_dep)
def _no_dep(p: Any, node: ast.Call) -> Any:
    if len(node.args) != 1:
        raise p.error(PyptoSyntaxError, "pl.no_dep(tensor) takes one argument", node)
    return p.visit_expr(node.args[0])


@call_construct(dsl.dump_tag)
def _dump_tag(p: Any, node: ast.Call) -> None:
    if len(node.args) != 1 or not isinstance(node.args[0], ast.Name):
        raise p.error(PyptoSyntaxError, "pl.dump_tag takes a bare tensor name", node)
    if p.in_region or p.kind not in (FunctionKind.ORCHESTRATION, FunctionKind.INLINE):
        raise p.error(PyptoSyntaxError, "pl.dump_tag() is only valid inside an Orchestration "
                      "or Inline function: it marks a tensor for the orchestration's task "
                      "dumps, which a kernel body has none of", node,
                      hint="tag the tensor in the orchestration function that submits the task")
    value = p.visit_expr(node.args[0])
    if not (isinstance(value, Var) and isinstance(value.type, TensorType)):
        raise p.error(PyptoTypeError, f"pl.dump_tag() argument '{node.args[0].id}' is not a "
                      "tensor", node.args[0], hint="only tensors can be dumped")
    if not is_tagged(p, value):
        p.dump_tags.append(value)
    return None


@call_construct(dsl.func_attr)
def _func_attr(p: Any, node: ast.Call) -> None:
    if len(node.args) != 1 or not isinstance(node.args[0], ast.Dict):
        raise p.error(PyptoSyntaxError, "pl.func_attr takes one dict literal", node)
    if p.stmts:
        raise p.error(PyptoSyntaxError, "pl.func_attr must be the first statement", node,
                      hint="move pl.func_attr({...}) to the first line of the body")
    for k, v in zip(node.args[0].keys, node.args[0].values):
        if not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
            raise p.error(PyptoSyntaxError, "pl.func_attr keys must be string literals", k or node)
        if k.value in p.func_attrs:
            raise p.error(PyptoSyntaxError, f"duplicate function attribute '{k.value}'", k)
        p.func_attrs[k.value] = p.visit_expr(v)
    return None


@assign_construct(dsl.spmd_submit, dsl.submit)
def submit_assign(p: Any, construct: Any, target: ast.expr, call: ast.Call,
                  node: ast.AST) -> None:
    """`outs..., tid = pl.spmd_submit(kernel, *args, core_num=N, deps=[...])`: one task of N
    blocks running `kernel`; the last target receives the task's TaskId."""
    if p.in_region:
        raise p.error(ScopeError, f"{construct.name} dispatches a task; it cannot run inside an "
                      "InCore region", call)
    if not call.args:
        raise p.error(PyptoSyntaxError, f"{construct.name} needs the kernel as its first "
                      "argument", call)
    kernel = p.visit_expr(call.args[0])
    if construct is dsl.submit and not isinstance(kernel, FunctionDef):
        raise p.error(PyptoSyntaxError, "pl.submit takes `self.<kernel>` of a @pl.program", call,
                      hint="under @pl.jit use `with pl.at(...) as tid:` or pl.spmd_submit")
    if not isinstance(kernel, (KernelFunction, FunctionDef)):
        raise p.error(PyptoSyntaxError, f"{construct.name}'s first argument must be a kernel "
                      "(@pl.jit.incore or a @pl.program InCore function)", call.args[0],
                      hint="decorate the per-block body with @pl.jit.incore and pass it first")
    attrs: list = []
    core_num: Any = 1
    kw_nodes = {}
    allowed = {"deps", "allow_early_resolve", "dumps", "predicate"} | (
        {"core_num", "sync_start"} if construct is dsl.spmd_submit else set())
    for kw in call.keywords:
        if kw.arg not in allowed:
            hint = "it takes " + ", ".join(f"{k}=" for k in sorted(allowed))
            cls: type[UserError] = PyptoSyntaxError
            if kw.arg in ("core_num", "sync_start"):  # a launch option of the other form
                hint = "a multi-block launch is pl.spmd_submit(kernel, ..., core_num=N)"
                cls = PyptoTypeError
            raise p.error(cls, f"{construct.name}() got an unexpected keyword "
                          f"argument {kw.arg!r}" if kw.arg else
                          f"{construct.name}() takes no **kwargs", kw.value if kw.arg is None
                          else kw, hint=hint)
        kw_nodes[kw.arg] = kw.value
    cluster_metadata(p, construct.name, kw_nodes, call)
    if construct is dsl.spmd_submit:
        if "core_num" not in kw_nodes:
            raise p.error(PyptoSyntaxError, "pl.spmd_submit needs core_num=N", call)
        core_num = p.visit_expr(kw_nodes["core_num"])
        if not contains_ir(core_num):
            if isinstance(core_num, bool) or not isinstance(core_num, int) or core_num < 1:
                raise p.error(PyptoSyntaxError, "pl.spmd_submit's core_num must be a positive "
                              f"integer, got {core_num!r}", kw_nodes["core_num"])
        elif not (isinstance(core_num.type, ScalarType) and core_num.type.dtype.is_int()):
            raise p.error(PyptoSyntaxError, "pl.spmd_submit's core_num must be an integer, got "
                          f"{core_num.type}", kw_nodes["core_num"])
    attrs.append(("core_num", p.to_ir(core_num, call)))
    attrs.append(("name_hint", getattr(kernel, "__name__", "")))
    if "sync_start" in kw_nodes:
        flag = kw_nodes["sync_start"]
        if not (isinstance(flag, ast.Constant) and isinstance(flag.value, bool)):
            raise p.error(PyptoSyntaxError, "pl.spmd_submit's sync_start must be a boolean "
                          "literal (True or False)", flag)
        attrs.append(("sync_start", flag.value))
    deps: tuple = ()
    if "deps" in kw_nodes:
        deps = deps_attr(p, p.visit_expr(kw_nodes["deps"]), kw_nodes["deps"])
        attrs.append(("deps", deps))
    if "allow_early_resolve" in kw_nodes:
        flag = p.visit_expr(kw_nodes["allow_early_resolve"])
        if not isinstance(flag, bool):
            raise p.error(PyptoSyntaxError, f"{construct.name}'s allow_early_resolve must be a "
                          "boolean literal (True or False)", kw_nodes["allow_early_resolve"])
        attrs.append(("allow_early_resolve", flag))
    if "predicate" in kw_nodes:
        attrs.append(("predicate", parse_predicate(p, kw_nodes["predicate"], construct.name,
                                                   deps, True)))
    args = [p.visit_expr(a) for a in call.args[1:]]
    listed = _check_dumps(p, construct, args, kw_nodes["dumps"]) if "dumps" in kw_nodes else []
    dumps = call_dumps(p, args, listed)  # what the args dump captures: no effect on values
    if dumps:
        attrs.append(("dumps", dumps))
    # `res = pl.spmd_submit(...)` binds the whole (outs..., tid) tuple to one name
    whole = target.id if isinstance(target, ast.Name) else None
    targets = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
    if not all(isinstance(n, ast.Name) for n in targets):
        raise p.error(PyptoSyntaxError, "bind the results to plain names", target)
    names = [n for n in targets if isinstance(n, ast.Name)]
    p.region_stack.append("spmd")
    try:
        with p.block() as body:
            launched = p.builder.call_function(p, kernel, args, {}, call, launch=True)
    finally:
        p.region_stack.pop()
    out_types = launched.type.items if isinstance(launched.type, TupleType) else \
        (() if launched.type is NONE else (launched.type,))
    if whole is not None and len(out_types) != 0:
        names = [ast.Name(f"{whole}__out{i}") for i in range(len(out_types))] + \
            [ast.Name(f"{whole}__tid")]
        for n in names:
            ast.copy_location(n, target)
    if len(names) != len(out_types) + 1:
        raise p.error(PyptoSyntaxError, f"{construct.name} returns the kernel's "
                      f"{len(out_types)} output(s) and a TaskId; bind {len(out_types) + 1} "
                      f"names", target)
    outs = tuple(Var(n.id, t, span=p.span(n)) for n, t in zip(names[:-1], out_types))
    task = Var(names[-1].id, _TASK, span=p.span(names[-1]))
    body.append(Assign(outs, launched, p.span(call)) if outs else Eval(launched, p.span(call)))
    p.emit(Scope(ScopeKind.SPMD, tuple(body), tuple(attrs), task, p.span(node)))
    for v in (*outs, task):
        p.env[v.name] = v
    record_outputs(p, outs, task)
    if whole is not None and len(out_types) != 0:
        p.env[whole] = (*outs, task)


_PER_TASK = ("deps", "allow_early_resolve", "predicate", "core_num", "sync_start")


def cluster_metadata(p: Any, what: str, kws: dict, node: ast.AST) -> None:
    """Inside `pl.cluster()` the submitted kernels run as members of one group launch, so
    a submit there cannot carry options of a task of its own."""
    given = [k for k in _PER_TASK if k in kws]
    if p.clusters and given:
        raise p.error(PyptoSyntaxError, f"{what} inside pl.cluster() cannot carry per-task "
                      f"dispatch metadata ({', '.join(f'{k}=' for k in given)}): the cluster's "
                      "kernels run as one group launch", kws[given[0]],
                      hint="drop the option, or submit the task outside the pl.cluster")


def _check_dumps(p: Any, construct: Any, args: list, node: ast.expr) -> list:
    """`dumps=[a, ...]`: each entry one of the submit's positional tensor arguments;
    the entries."""
    return listed_dumps(node, args, p.visit_expr, p.error, construct.name)
