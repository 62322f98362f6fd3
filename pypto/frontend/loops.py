"""Loops (`pl.range`, `pl.parallel`, `pl.unroll`, `pl.pipeline`, `pl.spmd`,
`pl.while_`), loop-carried values and `pl.yield_`."""
from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass, field
from typing import Any

from pypto.errors import (
    PyptoSyntaxError,
    PyptoTypeError,
    UnsupportedFeatureError,
)
from pypto.frontend.dispatch import (
    LOOP_ITERATORS,
    assign_construct,
    iterator_call,
    lookup,
    loop_iterator,
    statement,
)
from pypto.frontend.statements import (
    assigned_names,
    check_compatible,
    condition,
    plain_names,
)
from pypto.frontend.values import INDEX, contains_ir, dim_value, is_ir
from pypto.ir.nodes import For, LoopKind, Var, While, Yield
from pypto.ir.types import ScalarType
from pypto.language import dsl

_LOOP_KW = {LoopKind.RANGE: {"init_values", "attrs"}, LoopKind.PARALLEL: {"init_values", "attrs"},
            LoopKind.UNROLL: set(), LoopKind.PIPELINE: {"init_values", "stage", "attrs"},
            LoopKind.SPMD: {"name_hint", "sync_start", "optimizations", "allow_early_resolve",
                            "predicate"}}


@dataclass
class LoopCtx:
    kind: Any
    has_init: bool = False
    results: list | None = None
    yielded: bool = False
    extra: dict = field(default_factory=dict)


@statement(ast.For)
def visit_for(p: Any, node: ast.For) -> None:
    it = node.iter
    callee = p.visit_expr(it.func) if isinstance(it, ast.Call) else None
    if node.orelse:
        raise p.error(UnsupportedFeatureError, "for/else is not supported in a kernel", node,
                      hint="move the else body after the loop")
    if callee is builtins.range and isinstance(it, ast.Call):
        raise p.error(PyptoSyntaxError, "a kernel loop must use pl.range, pl.parallel, "
                      "pl.unroll, pl.pipeline, pl.spmd or pl.while_", it,
                      hint="write `for ... in pl.range("
                           f"{', '.join(ast.unparse(a) for a in it.args)})`")
    handler = lookup(LOOP_ITERATORS, callee)
    if handler is None:
        raise p.error(PyptoSyntaxError, "a kernel loop must use pl.range, pl.parallel, pl.unroll, "
                      "pl.pipeline, pl.spmd or pl.while_", node.iter,
                      hint="to walk a compile-time sequence write `for i in pl.unroll(len(seq)):` "
                           "and index seq[i]")
    handler(p, node)


def _counted_loop(kind: LoopKind):
    def handler(p: Any, node: ast.For) -> None:
        _counted(p, node, kind)

    handler.__qualname__ = f"counted_loop[{kind.value}]"
    return handler


loop_iterator(dsl.range)(_counted_loop(LoopKind.RANGE))
loop_iterator(dsl.parallel)(_counted_loop(LoopKind.PARALLEL))
loop_iterator(dsl.unroll)(_counted_loop(LoopKind.UNROLL))
loop_iterator(dsl.pipeline)(_counted_loop(LoopKind.PIPELINE))


def loop_bounds(p: Any, call: ast.Call, kind: LoopKind) -> tuple[Any, Any, Any, dict]:
    """(start, stop, step, kwargs) from `pl.range(stop)`, `(start, stop)` or
    `(start, stop, step)`."""
    args = [dim_value(p, p.visit_expr(a), a) for a in call.args]
    kwargs = {k.arg: (p.visit_expr(k.value), k.value) for k in call.keywords}
    for k in kwargs:
        if k not in _LOOP_KW[kind]:
            allowed = ", ".join(f"{a}=" for a in sorted(_LOOP_KW[kind])) or "no keywords"
            raise p.error(PyptoSyntaxError, f"pl.{kind.value}() got an unexpected keyword "
                          f"argument '{k}'", call, hint=f"pl.{kind.value} takes {allowed}")
    if not 1 <= len(args) <= 3:
        raise p.error(PyptoSyntaxError, f"pl.{kind.value}() takes 1 to 3 positional bounds, got "
                      f"{len(args)}", call)
    start, stop, step = (0, args[0], 1) if len(args) == 1 else \
        (args[0], args[1], 1) if len(args) == 2 else tuple(args)
    for b, name in ((start, "start"), (stop, "stop"), (step, "step")):
        if is_ir(b) and not (isinstance(b.type, ScalarType) and b.type.dtype.is_int()):
            raise p.error(PyptoTypeError, f"loop {name} must be an integer, got {b.type}", call)
        if not contains_ir(b) and (isinstance(b, bool) or not isinstance(b, int)):
            raise p.error(PyptoTypeError, f"loop {name} must be an integer, got {b!r}", call)
    if not contains_ir(step) and step == 0:
        raise p.error(PyptoSyntaxError, "loop step must not be 0", call,
                      hint="use a positive step, or a negative one to count down")
    if kind is LoopKind.UNROLL and (contains_ir(start) or contains_ir(stop) or contains_ir(step)):
        # a syntax rule of the real parser (ParserSyntaxError), as pl.pipeline's stage
        raise p.error(PyptoSyntaxError, "pl.unroll needs compile-time bounds", call,
                      hint="use pl.range for a loop whose trip count is only known at run time")
    return start, stop, step, kwargs


def _counted(p: Any, node: ast.For, kind: LoopKind) -> None:
    start, stop, step, kwargs = loop_bounds(p, iterator_call(node), kind)
    attrs = []
    if kind is LoopKind.PIPELINE:
        if "stage" not in kwargs:
            raise p.error(PyptoSyntaxError, "pl.pipeline needs stage=K", node.iter,
                          hint="give the pipeline depth, e.g. pl.pipeline(0, n, TILE, stage=2)")
        stage, snode = kwargs["stage"]
        if contains_ir(stage):
            # the real parser's ParserSyntaxError ("stage must be a compile-time constant
            # integer"): a rule of the loop's form, not of a shape
            raise p.error(PyptoSyntaxError, "pl.pipeline's stage is a tiling constant and must "
                          "be a compile-time integer", snode,
                          hint="use a module-level constant such as stage=2")
        if isinstance(stage, bool) or not isinstance(stage, int) or stage < 1:
            raise p.error(PyptoSyntaxError, f"pl.pipeline's stage must be a positive integer, "
                          f"got {stage!r}", snode)
        attrs.append(("stage", stage))
    if "attrs" in kwargs:
        attrs.append(("attrs", kwargs["attrs"][0]))
    inits = kwargs.get("init_values")
    target = node.target
    if inits is not None:
        _carried_loop(p, node, kind, start, stop, step, inits, tuple(attrs))
        return
    if not isinstance(target, ast.Name):
        raise p.error(PyptoSyntaxError, "the loop target must be a single name (use "
                      "`for i, (a, b) in pl.range(n, init_values=(x, y))` to carry values)",
                      target)
    rebound = assigned_names(node.body)
    p.materialize(rebound, node)
    before = {n: p.env.get(n) for n in rebound}
    var = Var(target.id, INDEX, span=p.span(target))
    body = _loop_body(p, node, LoopCtx(kind), {target.id: var})
    _check_implicit_carries(p, node, before)
    p.emit(For(var, p.to_ir(start, node), p.to_ir(stop, node), p.to_ir(step, node), kind,
               tuple(body), attrs=tuple(attrs), span=p.span(node)))


def _check_implicit_carries(p: Any, node: ast.For | ast.While, before: dict) -> None:
    """A name read in the body before it is rebound there is carried to the next
    iteration (ConvertToSSA makes it an iter_arg): its type must not change."""
    for name, old in before.items():
        new = p.env.get(name)
        if new is old or not (is_ir(old) and is_ir(new)):
            continue
        if _first_use(node.body, name) != "load":
            continue
        at = _last_store(node.body, name) or node
        check_compatible(p, old.type, new.type, at,
                         f"'{name}' is carried to the next iteration, but its")


def _first_use(nodes: list, name: str) -> str | None:
    """'load' or 'store': how `name` is first used, in evaluation order."""
    for n in nodes:
        if n is None:
            continue
        order: list[Any]
        if isinstance(n, ast.Name) and n.id == name:
            return "load" if isinstance(n.ctx, ast.Load) else "store"
        if isinstance(n, ast.Assign):
            order = [n.value, *n.targets]
        elif isinstance(n, (ast.AnnAssign, ast.AugAssign)):
            order = [n.target] if isinstance(n, ast.AugAssign) and isinstance(
                n.target, ast.Name) and n.target.id == name else [n.value, n.target]
            if len(order) == 1:
                return "load"
        else:
            order = list(ast.iter_child_nodes(n))
        found = _first_use(order, name)
        if found:
            return found
    return None


def _last_store(body: list, name: str) -> ast.AST | None:
    last = None
    for stmt in body:
        for n in ast.walk(stmt):
            if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                if any(isinstance(t, ast.Name) and t.id == name for t in targets) and \
                        (last is None or (n.lineno, n.col_offset) > (last.lineno, last.col_offset)):
                    last = n
    return last


def _loop_body(p: Any, node: ast.For | ast.While, ctx: LoopCtx, bindings: dict) -> list:
    saved = {k: p.env.get(k) for k in bindings}
    p.env.update(bindings)
    ctx.extra["regions"] = len(p.region_stack)  # (a break may not leave a region opened inside)
    p.loop_stack.append(ctx)
    try:
        with p.block() as body:
            p.visit_body(node.body)
    finally:
        p.loop_stack.pop()
        for k, v in saved.items():
            if v is None:
                p.env.pop(k, None)
            else:
                p.env[k] = v
    return body


def _carried_loop(p: Any, node: ast.For, kind: LoopKind, start: Any, stop: Any, step: Any,
                  inits: tuple, attrs: tuple) -> None:
    init_vals, init_node = inits
    if kind is LoopKind.UNROLL:
        raise p.error(PyptoSyntaxError, "pl.unroll does not take init_values", init_node)
    init_vals = init_vals if isinstance(init_vals, (list, tuple)) else (init_vals,)
    target = node.target
    if not (isinstance(target, ast.Tuple) and len(target.elts) == 2
            and isinstance(target.elts[0], ast.Name)
            and isinstance(target.elts[1], (ast.Tuple, ast.List))):
        raise p.error(PyptoSyntaxError, "with init_values the loop target must be "
                      "`i, (a, b, ...)`", target)
    names = plain_names(p, target.elts[1].elts, "the carried values of a loop")
    if len(names) != len(init_vals):
        raise p.error(PyptoSyntaxError, f"Mismatch: {len(names)} iter_args but "
                      f"{len(init_vals)} init_values", target)
    ir_inits = tuple(p.to_ir(v, init_node) for v in init_vals)
    iter_args = tuple(Var(n.id, i.type, span=p.span(n)) for n, i in zip(names, ir_inits))
    (index,) = plain_names(p, target.elts[:1], "the loop index")
    var = Var(index.id, INDEX, span=p.span(index))
    ctx = LoopCtx(kind, has_init=True)
    ctx.extra["iter_names"] = [a.name for a in iter_args]
    ctx.extra["iter_types"] = [a.type for a in iter_args]
    bindings = {var.name: var, **{a.name: a for a in iter_args}}
    body = _loop_body(p, node, ctx, bindings)
    if not ctx.yielded:
        raise p.error(PyptoSyntaxError, "a loop with init_values must end with "
                      "`outs = pl.yield_(...)`", node)
    results = tuple(ctx.results or ())
    p.emit(For(var, p.to_ir(start, node), p.to_ir(stop, node), p.to_ir(step, node), kind,
               tuple(body), iter_args, ir_inits, results, attrs, p.span(node)))
    for r in results:
        p.env[r.name] = r


@assign_construct(dsl.yield_)
def yield_assign(p: Any, construct: Any, target: ast.expr, call: ast.Call,
                 node: ast.AST) -> None:
    """`a, b = pl.yield_(x, y)`: the yielded values become the loop's (or branch's) results."""
    values = tuple(p.to_ir(p.visit_expr(a), a) for a in call.args)
    targets = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
    if not all(isinstance(n, ast.Name) for n in targets) or len(targets) != len(values):
        raise p.error(PyptoSyntaxError, f"pl.yield_ of {len(values)} values must be bound to "
                      f"{len(values)} names", target)
    names = plain_names(p, targets, "pl.yield_ results")
    results = [Var(n.id, v.type, span=p.span(n)) for n, v in zip(names, values)]
    ctx = p.loop_stack[-1] if p.loop_stack else None
    if p.branch_stack:
        p.branch_stack[-1].append(results)
    elif ctx is not None and ctx.has_init:
        carried = ctx.extra.get("iter_names", [])
        if len(values) != len(carried):
            raise p.error(PyptoSyntaxError, f"pl.yield_ yields {len(values)} values but the loop "
                          f"carries {len(carried)}", call)
        for name, want, v, a in zip(carried, ctx.extra.get("iter_types", []), values, call.args):
            # the next iteration sees the yielded value where the loop declared the carry
            check_compatible(p, want, v.type, a, f"pl.yield_ value for the carried '{name}':")
        ctx.results = results
        ctx.yielded = True
    else:
        raise p.error(PyptoSyntaxError, "pl.yield_ outside a loop with init_values or an if "
                      "branch", call)
    p.emit(Yield(values, p.span(call)))


@statement(ast.While)
def visit_while(p: Any, node: ast.While) -> None:
    """A natural `while cond:` loop: the names its body rebinds are carried from one
    iteration to the next (ConvertToSSA makes them iter_args, as for pl.range), and
    `cond` is evaluated before every iteration."""
    if node.orelse:
        raise p.error(UnsupportedFeatureError, "while/else is not supported in a kernel", node,
                      hint="move the else body after the loop")
    rebound = assigned_names(node.body)
    p.materialize(rebound, node)
    before = {n: p.env.get(n) for n in rebound}
    cond = condition(p, node.test, "while")
    if not contains_ir(cond):
        if cond:
            raise p.error(UnsupportedFeatureError, "`while True:` needs a run-time exit; the "
                          "loop condition is a compile-time constant", node.test,
                          hint="write the condition the loop runs on, e.g. `while i < n:`")
        return  # `while False:` never runs
    body = _loop_body(p, node, LoopCtx("while"), {})
    _check_implicit_carries(p, node, before)
    p.emit(While(cond, tuple(body), (), (), (), p.span(node)))


@loop_iterator(dsl.while_)
def _while(p: Any, node: ast.For) -> None:
    call = iterator_call(node)
    kwargs = {k.arg: (p.visit_expr(k.value), k.value) for k in call.keywords}
    if "init_values" not in kwargs or call.args:
        raise p.error(PyptoSyntaxError, "pl.while_ takes only init_values=(...)", call,
                      hint="write `for (a, b) in pl.while_(init_values=(a0, b0)):`")
    init_vals, init_node = kwargs["init_values"]
    init_vals = init_vals if isinstance(init_vals, (list, tuple)) else (init_vals,)
    target = node.target
    if not isinstance(target, (ast.Tuple, ast.List)) or len(target.elts) != len(init_vals):
        raise p.error(PyptoSyntaxError, "pl.while_ needs a tuple target matching init_values",
                      target)
    names = plain_names(p, target.elts, "the carried values of a pl.while_")
    if not node.body or not (isinstance(node.body[0], ast.Expr)
                             and isinstance(node.body[0].value, ast.Call)
                             and p.visit_expr(node.body[0].value.func) is dsl.cond):
        raise p.error(PyptoSyntaxError, "the first statement of a pl.while_ body must be "
                      "pl.cond(...)", node.body[0] if node.body else node,
                      hint="start the body with `pl.cond(<condition>)`; the loop runs while it "
                           "holds")
    cond_call = node.body[0].value
    if len(cond_call.args) != 1 or cond_call.keywords:
        raise p.error(PyptoSyntaxError, "pl.cond takes exactly one condition", cond_call,
                      hint="write `pl.cond(<condition>)`")
    ir_inits = tuple(p.to_ir(v, init_node) for v in init_vals)
    iter_args = tuple(Var(n.id, i.type, span=p.span(n)) for n, i in zip(names, ir_inits))
    ctx = LoopCtx("while", has_init=True)
    ctx.extra["iter_names"] = [a.name for a in iter_args]
    ctx.extra["iter_types"] = [a.type for a in iter_args]
    saved = dict(p.env)
    p.env.update({a.name: a for a in iter_args})
    cond = p.to_ir(condition(p, node.body[0].value.args[0], "while"), node.body[0])
    p.loop_stack.append(ctx)
    try:
        with p.block() as body:
            p.visit_body(node.body[1:])
    finally:
        p.loop_stack.pop()
    p.env = saved
    if not ctx.yielded:
        raise p.error(PyptoSyntaxError, "a pl.while_ body must end with `outs = pl.yield_(...)`",
                      node)
    results = tuple(ctx.results or ())
    p.emit(While(cond, tuple(body), iter_args, ir_inits, results, p.span(node)))
    for r in results:
        p.env[r.name] = r
