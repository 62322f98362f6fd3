"""`with` scopes (`pl.at`, `pl.spmd`, `pl.scope`, `pl.manual_scope`, `pl.cluster`)
and the loop forms that open a region (`for i in pl.spmd(n)`, `pl.split_aiv`)."""
from __future__ import annotations

import ast
import keyword
from typing import Any

from pypto.errors import (
    DynamicShapeError,
    PyptoDeprecationWarning,
    PyptoSyntaxError,
    PyptoTypeError,
    ScopeError,
    UnsupportedFeatureError,
)
from pypto.frontend.dispatch import (
    WITH_SCOPES,
    iterator_call,
    lookup,
    loop_iterator,
    statement,
    with_scope,
)
from pypto.frontend.dump_tags import dumps_attr, live_tags
from pypto.frontend.predicate import parse_predicate, record_outputs
from pypto.frontend.statements import assigned_names
from pypto.frontend.values import INDEX, const, contains_ir, dim_value, is_ir
from pypto.ir import dtypes
from pypto.ir.nodes import For, LoopKind, Scope, ScopeKind, Var
from pypto.ir.types import ArrayType, ScalarType, TensorType, TileType
from pypto.language import dsl
from pypto.language.enums import (
    LINQU_LEVEL,
    CrossCoreSlot,
    Level,
    Role,
    ScopeMode,
    Split,
    SplitMode,
)

_TASK = ScalarType(dtypes.TASK_ID)
_AT_KW = AT_KEYWORDS = {"level", "role", "optimizations", "deps", "no_dep_args", "dumps",
                       "allow_early_resolve", "name_hint", "windowize"}
_SPMD_KW = {"core_num", "sync_start", "name_hint", "optimizations", "deps",
            "allow_early_resolve", "predicate"}


def _kwargs(p: Any, call: ast.Call, allowed: set[str], what: str) -> dict:
    out = {}
    for kw in call.keywords:
        if kw.arg not in allowed:
            raise p.error(PyptoSyntaxError, f"{what}() got an unexpected keyword argument "
                          f"'{kw.arg}'", kw,
                          hint=f"{what} takes {', '.join(f'{a}=' for a in sorted(allowed))}")
        # lists of names the scope checks entry by entry before they are looked up
        out[kw.arg] = (None if kw.arg in _LAZY else p.visit_expr(kw.value), kw.value)
    return out


_NAME_LISTS = {"no_dep_args", "dumps"}
_LAZY = _NAME_LISTS | {"predicate"}  # read by their own rules, not as plain expressions


def _name_list(p: Any, key: str, node: ast.expr) -> list:
    """`key=[t1, t2]` of a pl.at: a list literal of bare names of tensors in scope, each
    once; the tensors, in order."""
    if not isinstance(node, (ast.List, ast.Tuple)):
        raise p.error(PyptoTypeError, f"{key}= must be a list literal of tensor names", node,
                      hint=f"write {key}=[t1, t2]")
    seen: set[str] = set()
    values = []
    for e in node.elts:
        if not isinstance(e, ast.Name):
            raise p.error(PyptoTypeError, f"{key}= entries must be bare tensor names, got "
                          f"'{ast.unparse(e)}'", e)
        if e.id not in p.env:  # every tensor of a kernel is one of its values
            raise p.error(PyptoTypeError, f"{key}= names an unknown name '{e.id}'", e)
        if e.id in seen:
            raise p.error(PyptoTypeError, f"{key}= lists '{e.id}' more than once", e)
        seen.add(e.id)
        v = p.visit_expr(e)
        if not (is_ir(v) and isinstance(v.type, (TensorType, TileType))):
            raise p.error(PyptoTypeError, f"{key}= entry '{e.id}' is not a tensor", e)
        values.append(v)
    return values


def _optimizations(p: Any, value: Any, node: ast.AST) -> tuple:
    if not isinstance(node, ast.List):
        raise p.error(PyptoSyntaxError, "optimizations= must be a list literal such as "
                      "[pl.split(pl.SplitMode.UP_DOWN)]", node)
    out: list = []
    for item, inode in zip(value, node.elts):
        if not isinstance(item, (Split, CrossCoreSlot)):
            raise p.error(PyptoSyntaxError, f"optimizations= takes pl.split(...) and "
                          f"pl.cross_core_slot(...), not {item!r}", inode)
        if any(type(o) is type(item) for o in out):
            raise p.error(PyptoSyntaxError, f"duplicate {type(item).__name__} in optimizations=",
                          inode)
        if isinstance(item, Split) and item.slot_num is not None:
            if any(isinstance(o, CrossCoreSlot) for o in value):
                raise p.error(PyptoSyntaxError, "pl.split(slot_num=...) and pl.cross_core_slot "
                              "cannot be combined", inode,
                              hint="drop slot_num= from pl.split")
            p.warn("pl.split(..., slot_num=N) is deprecated; it means "
                   "pl.cross_core_slot(slot_num=N)", inode,
                   hint=f"write pl.split(pl.SplitMode.{SplitMode(item.mode).name}), "
                        f"pl.cross_core_slot(slot_num={item.slot_num})",
                   category=PyptoDeprecationWarning)
            out.append(Split(item.mode))
            out.append(CrossCoreSlot(item.slot_num))
            continue
        if isinstance(item, CrossCoreSlot) and (not isinstance(item.slot_num, int)
                                                or item.slot_num < 1):
            raise p.error(PyptoSyntaxError, "cross_core_slot(slot_num=) must be a positive "
                          "integer", inode)
        out.append(item)
    return tuple(out)


def deps_attr(p: Any, value: Any, node: ast.AST) -> tuple:
    """The `deps=` of a region or a submitted task: TaskIds only."""
    items = value if isinstance(value, (list, tuple)) else [value]
    out = []
    for item in items:
        if item is None:
            continue
        ir = p.to_ir(item, node)
        t = ir.type
        ok = (isinstance(t, ScalarType) and t.dtype == dtypes.TASK_ID) or \
            (isinstance(t, ArrayType) and t.dtype == dtypes.TASK_ID)
        if not ok:
            raise p.error(PyptoTypeError, f"deps= takes TaskIds (from `as tid`, pl.spmd_submit or "
                          f"a pl.array of TASK_ID), got {t}", node,
                          hint="dependencies between tensors are derived automatically; deps= "
                               "only adds edges between tasks")
        out.append(ir)
    if len({isinstance(d.type, ArrayType) for d in out}) > 1:
        raise p.error(PyptoTypeError, "deps= cannot mix whole TaskId arrays and single TaskIds "
                      "(the real compiler cannot lower the mix)", node,
                      hint="list single entries (arr[0], arr[1], ...) or whole arrays, not both")
    return tuple(out)


def _region_guard(p: Any, node: ast.AST, what: str) -> None:
    if "spmd" in p.region_stack:
        raise p.error(ScopeError, f"{what} cannot be nested inside pl.spmd", node,
                      hint="an SPMD block is already one InCore kernel; put the work directly "
                           "in its body")
    if what == "pl.at" and p.in_region and "spmd" not in p.region_stack:
        # A pl.at inside a pl.at (or inside an InCore function) is a named
        # sub-kernel: the outliner cuts it into its own InCore function that the
        # enclosing kernel launches.
        return
    if p.in_region:
        outer = ("a pl.at region" if "at" in p.region_stack else
                 "an InCore function" if p.kind.value == "InCore" else
                 "a region (this inline function is called inside one)")
        raise p.error(ScopeError, f"{what} cannot be nested inside {outer}", node,
                      hint="a region is already one InCore kernel; put the work directly in "
                           "its body")


@statement(ast.With)
def visit_with(p: Any, node: ast.With) -> None:
    if len(node.items) != 1:
        raise p.error(UnsupportedFeatureError, "a kernel `with` takes exactly one scope", node)
    item = node.items[0]
    call = item.context_expr
    callee = p.visit_expr(call.func) if isinstance(call, ast.Call) else None
    handler = lookup(WITH_SCOPES, callee)
    if handler is None:
        raise p.error(PyptoSyntaxError, f"'{ast.unparse(call)}' is not a kernel scope", call,
                      hint="kernel scopes are pl.at, pl.spmd, pl.scope, pl.manual_scope and "
                           "pl.cluster")
    handler(p, node, call, item.optional_vars)


def _task_var(p: Any, target: ast.expr | None) -> Var | None:
    if target is None:
        return None
    if not isinstance(target, ast.Name):
        raise p.error(PyptoSyntaxError, "`as` binds a single name (the region's TaskId)", target)
    return Var(target.id, _TASK, span=p.span(target))


def _region_body(p: Any, node: Any, tag: str, body: list[ast.stmt], bindings: dict | None = None
                 ) -> list:
    p.region_stack.append(tag)
    saved = {k: p.env.get(k) for k in (bindings or {})}
    p.env.update(bindings or {})
    try:
        with p.block() as stmts:
            p.visit_body(body)
    finally:
        p.region_stack.pop()
        for k, v in saved.items():
            if v is None:
                p.env.pop(k, None)
            else:
                p.env[k] = v
    return stmts


@with_scope(dsl.at)
def _at(p: Any, node: ast.With, call: ast.Call, target: ast.expr | None) -> None:
    if call.args:
        raise p.error(PyptoSyntaxError, "pl.at takes keyword arguments only "
                      "(level=pl.Level.CORE_GROUP, name_hint=...)", call,
                      hint="write pl.at(level=pl.Level.CORE_GROUP, name_hint=\"...\")")
    kw = _kwargs(p, call, _AT_KW, "pl.at")
    level, lnode = kw.get("level", (None, call))
    if isinstance(level, Level) and level is not Level.CORE_GROUP and not p.in_region:
        _hierarchy(p, node, call, target, kw, level)
        return
    if level is not Level.CORE_GROUP:
        raise p.error(ScopeError, f"pl.at(level={_level_str(level)}) is not supported here; "
                      "inside a kernel only pl.Level.CORE_GROUP regions exist", lnode,
                      hint="write pl.at(level=pl.Level.CORE_GROUP, name_hint=...), or open the "
                           "host-level scope in orchestration code")
    if "role" in kw:
        raise p.error(PyptoSyntaxError, "role= is not allowed with pl.Level.CORE_GROUP",
                      kw["role"][1])
    _region_guard(p, call, "pl.at")
    attrs: list[tuple[str, Any]] = [("level", "CORE_GROUP")]
    name_hint = kw.get("name_hint", ("", None))[0]
    if "name_hint" in kw:
        _check_name_hint(p, name_hint, kw["name_hint"][1])
    attrs.append(("name_hint", name_hint))
    if "optimizations" in kw:
        attrs.append(("optimizations", _optimizations(p, *kw["optimizations"])))
    if "deps" in kw:
        attrs.append(("deps", deps_attr(p, *kw["deps"])))
    if "allow_early_resolve" in kw:
        v, vnode = kw["allow_early_resolve"]
        if not isinstance(v, bool):
            raise p.error(PyptoSyntaxError, "allow_early_resolve= must be True or False", vnode)
        attrs.append(("allow_early_resolve", v))
    if "no_dep_args" in kw:
        v = _name_list(p, "no_dep_args", kw["no_dep_args"][1])
        attrs.append(("no_dep_args", tuple(a.name for a in v)))
    # tensors the args dump captures at this task: no effect on values
    tagged = live_tags(p, _name_list(p, "dumps", kw["dumps"][1]) if "dumps" in kw else ())
    p.materialize(assigned_names(node.body), node)
    task = _task_var(p, target)
    body = _region_body(p, node, "at", node.body)
    attrs += dumps_attr(tagged, body)
    p.emit(Scope(ScopeKind.INCORE, tuple(body), tuple(attrs), task, p.span(node)))
    if task is not None:
        p.env[task.name] = task


def _hierarchy(p: Any, node: ast.With, call: ast.Call, target: ast.expr | None, kw: dict,
               level: Level) -> None:
    """`with pl.at(level=pl.Level.HOST, ...)` (any level above CORE_GROUP): host-level
    code of a multi-card system. The real parser builds a hierarchy scope that its
    compiler outlines into a function of that level; here it compiles and a run is
    refused (passes/runnable.py): the simulator runs the regions of one card."""
    role, rnode = kw.get("role", (None, call))
    if "optimizations" in kw:
        raise p.error(PyptoSyntaxError, "optimizations=[pl.split(...)] / optimizations="
                      "[pl.cross_core_slot(...)] are only supported with "
                      "level=pl.Level.CORE_GROUP", kw["optimizations"][1],
                      hint="use pl.at(level=pl.Level.CORE_GROUP, optimizations=[...])")
    if role is not None and not isinstance(role, Role):
        raise p.error(PyptoSyntaxError, f"role= takes a pl.Role member, got {role!r}", rnode)
    if role is Role.SubWorker and LINQU_LEVEL[level] >= LINQU_LEVEL[Level.HOST]:
        raise p.error(PyptoSyntaxError, "Inline 'with pl.at(level>=HOST, "
                      "role=pl.Role.SubWorker)' is not supported.", rnode,
                      hint="declare a SubWorker with @pl.function(level=..., "
                           "role=pl.Role.SubWorker) as a self-contained function (no 'self' "
                           "parameter) inside the @pl.program")
    if "spmd" in p.region_stack or p.clusters:
        raise p.error(ScopeError, f"pl.at(level={_level_str(level)}) cannot be nested inside "
                      "a pl.spmd or pl.cluster scope", call)
    attrs: list[tuple[str, Any]] = [("level", level.name)]
    if role is not None:
        attrs.append(("role", role.name))
    name_hint = kw.get("name_hint", ("", None))[0]
    if "name_hint" in kw:
        _check_name_hint(p, name_hint, kw["name_hint"][1])
    attrs.append(("name_hint", name_hint))
    if "deps" in kw:
        attrs.append(("deps", deps_attr(p, *kw["deps"])))
    task = _task_var(p, target)
    with p.block() as body:  # host code: orchestration, not a region
        p.visit_body(node.body)
    p.emit(Scope(ScopeKind.HIERARCHY, tuple(body), tuple(attrs), task, p.span(node)))
    if task is not None:
        p.env[task.name] = task


def _level_str(level: Any) -> str:
    return f"pl.Level.{level.name}" if isinstance(level, Level) else repr(level)


def _spmd_common(p: Any, call: ast.Call, node: Any) -> tuple[Any, list]:
    kw = _kwargs(p, call, _SPMD_KW, "pl.spmd")
    if len(call.args) > 1:
        raise p.error(PyptoSyntaxError, "pl.spmd takes at most one positional argument (the "
                      "block count)", call.args[1], hint="write pl.spmd(n, name_hint=...)")
    args = [dim_value(p, p.visit_expr(a), a) for a in call.args]
    if args and "core_num" in kw:
        raise p.error(PyptoSyntaxError, "pl.spmd got core_num twice", call)
    if not args and "core_num" not in kw:
        raise p.error(PyptoSyntaxError, "pl.spmd needs the block count: pl.spmd(n)", call)
    core_num = args[0] if args else kw["core_num"][0]
    cnode = call.args[0] if call.args else kw["core_num"][1]
    if "at" in p.region_stack or p.kind.value == "InCore":
        raise p.error(ScopeError, "pl.spmd cannot be nested inside a pl.at region (or an InCore "
                      "function)", call,
                      hint="make the pl.spmd the outer construct, or drop the inner region")
    _region_guard(p, call, "pl.spmd")
    if not contains_ir(core_num):
        if isinstance(core_num, bool) or not isinstance(core_num, int) or core_num < 1:
            raise p.error(PyptoSyntaxError, f"pl.spmd's block count must be a positive integer, "
                          f"got {core_num!r}", cnode, hint="pl.spmd(n) runs n >= 1 blocks")
    elif not (isinstance(core_num.type, ScalarType) and core_num.type.dtype.is_int()):
        raise p.error(PyptoTypeError, f"pl.spmd's block count must be an integer, got "
                      f"{core_num.type}", cnode)
    else:
        _check_spmd_factor(p, cnode)
    attrs = [("core_num", p.to_ir(core_num, cnode))]
    name_hint = kw.get("name_hint", ("", None))[0]
    if "name_hint" in kw:
        _check_name_hint(p, name_hint, kw["name_hint"][1])
    attrs.append(("name_hint", name_hint if isinstance(name_hint, str) else ""))
    for key in ("sync_start", "allow_early_resolve"):
        if key in kw:
            flag, fnode = kw[key]
            if not isinstance(flag, bool):
                raise p.error(PyptoSyntaxError, f"pl.spmd's {key} must be a boolean literal "
                              f"(True or False), got {ast.unparse(fnode)}", fnode)
            attrs.append((key, flag))
    if "optimizations" in kw:
        attrs.append(("optimizations", _optimizations(p, *kw["optimizations"])))
    if p.clusters and dict(attrs).get("allow_early_resolve"):
        raise p.error(PyptoSyntaxError, "`pl.spmd(..., allow_early_resolve=True)` cannot be "
                      "nested inside `pl.cluster()`: a pl.spmd inside a cluster runs as part "
                      "of the cluster's group and is not a task of its own, so the "
                      "early-dispatch hint would be lost", call,
                      hint="use a standalone `with pl.spmd(..., allow_early_resolve=True):` "
                           "outside the pl.cluster")
    return kw, attrs


def _predicate(p: Any, kw: dict, deps: tuple, deps_accepted: bool) -> list:
    """The scope's `predicate=` attribute (empty when it has none)."""
    if "predicate" not in kw:
        return []
    return [("predicate", parse_predicate(p, kw["predicate"][1], "pl.spmd()", deps,
                                          deps_accepted))]


def _check_name_hint(p: Any, name: Any, node: ast.AST) -> None:
    """A scope's name_hint names the outlined function: a Python identifier."""
    if not isinstance(name, str):
        raise p.error(PyptoSyntaxError, "name_hint= must be a string", node)
    # a literal the user typed must be an identifier; a computed one (an f-string over
    # run-time values) is made one when the region is outlined
    if isinstance(node, ast.Constant) and name and (not name.isidentifier()
                                                    or keyword.iskeyword(name)):
        raise p.error(PyptoSyntaxError, f"name_hint {name!r} must be a valid non-keyword "
                      "identifier (it names the outlined function)", node,
                      hint="use letters, digits and underscores, not starting with a digit")


def _check_spmd_factor(p: Any, cnode: ast.AST) -> None:
    """A dynamic block count may fold one run-time dim with constants; a product of two
    run-time values makes the block factor itself dynamic."""
    dynamic_leaves = []
    for leaf in ast.walk(cnode):
        if isinstance(leaf, ast.Name) and leaf.id in p.env and is_ir(p.env[leaf.id]):
            dynamic_leaves.append(leaf)
    if isinstance(cnode, ast.BinOp) and len(dynamic_leaves) > 1 and \
            isinstance(cnode.op, (ast.Mult, ast.FloorDiv, ast.Mod)):
        raise p.error(DynamicShapeError, "the pl.spmd block factor must be a compile-time "
                      "constant; this block count multiplies two run-time values", cnode,
                      hint="fold one run-time dim with compile-time constants, e.g. "
                           "pl.spmd(t_dim * BLOCKS_PER_TOKEN)")


@loop_iterator(dsl.spmd)
def spmd_loop(p: Any, node: ast.For) -> None:
    kw, attrs = _spmd_common(p, iterator_call(node), node)
    if "deps" in kw:
        raise p.error(PyptoSyntaxError, "pl.spmd() does not accept 'deps=' here",
                      kw["deps"][1], hint="use `with pl.spmd(n, deps=[...]) as tid:`")
    if not isinstance(node.target, ast.Name):
        raise p.error(PyptoSyntaxError, "the pl.spmd loop target must be a single name (the "
                      "block index)", node.target)
    attrs += _predicate(p, kw, (), False)
    var = Var(node.target.id, INDEX, span=p.span(node.target))
    p.materialize(assigned_names(node.body), node)
    tagged = live_tags(p)
    body = _region_body(p, node, "spmd", node.body, {var.name: var})
    attrs += dumps_attr(tagged, body)
    core_num = dict(attrs)["core_num"]
    p.emit(For(var, const(0), core_num, const(1), LoopKind.SPMD, tuple(body),
               attrs=tuple(attrs), span=p.span(node)))


@with_scope(dsl.spmd)
def _spmd_with(p: Any, node: ast.With, call: ast.Call, target: ast.expr | None) -> None:
    if p.clusters and target is not None:
        # (the real parser's rule: the cluster's group function runs the spmd body, so
        # no Submit of its own produces a TaskId)
        raise p.error(PyptoSyntaxError, "`with pl.spmd(...) as tid:` cannot capture a TaskId "
                      "when nested inside `pl.cluster()`: a pl.spmd inside a cluster runs as "
                      "part of the cluster's group, not as a task of its own", target,
                      hint="use a standalone `with pl.spmd(...) as tid:` outside the "
                           "pl.cluster to capture the dispatch's TaskId")
    kw, attrs = _spmd_common(p, call, node)
    deps: tuple = ()
    if "deps" in kw:
        if target is None:
            raise p.error(PyptoSyntaxError, "`with pl.spmd(...)` does not accept 'deps=' "
                          "without `as tid`", kw["deps"][1],
                          hint="bind the scope's TaskId: `with pl.spmd(n, deps=[...]) as tid:`")
        deps = deps_attr(p, *kw["deps"])
        attrs.append(("deps", deps))
    attrs += _predicate(p, kw, deps, target is not None)
    task = _task_var(p, target)
    p.materialize(assigned_names(node.body), node)
    calls: list = []
    # A body that reads its block index does the per-block work itself: the whole body,
    # a kernel call in it included, is one per-block kernel (the real parser wraps it in
    # an InCore carrier), so its calls dispatch nothing. Decided on the source, as there.
    inline = reads_block_idx(node.body)
    tagged = live_tags(p)
    if not inline:
        p.dispatch_scopes.append((len(p.region_stack) + 1, calls))
    try:
        body = _region_body(p, node, "spmd", node.body)
    finally:
        if not inline:
            p.dispatch_scopes.pop()
    attrs += dumps_attr(tagged, body)
    if len(calls) > 1:
        raise p.error(PyptoSyntaxError, "a `with pl.spmd(n):` scope dispatches a single kernel "
                      "call", calls[1], hint="open one pl.spmd scope per kernel")
    if not calls and not inline:
        check_spmd_body(p, node)
    if calls and len(node.body) > 1:
        other = next((s for s in node.body if not _contains(s, calls[0])), node.body[1])
        raise p.error(PyptoSyntaxError, "a `with pl.spmd(n):` scope that dispatches a kernel "
                      "must contain only that call", other,
                      hint="move the other statements before or after the scope")
    p.emit(Scope(ScopeKind.SPMD, tuple(body), tuple(attrs), task, p.span(node)))
    if task is not None:
        p.env[task.name] = task
        record_outputs(p, [p.env.get(n) for n in assigned_names(node.body)], task)


def reads_block_idx(body: list[ast.stmt]) -> bool:
    """Does a `with pl.spmd` body call `get_block_idx()` (any spelling: `pl.`,
    `pl.tile.`, a bare imported name)? Matched by name, as the real parser does."""
    return any(isinstance(n, ast.Call) and (
        (isinstance(n.func, ast.Attribute) and n.func.attr == "get_block_idx") or
        (isinstance(n.func, ast.Name) and n.func.id == "get_block_idx"))
        for s in body for n in ast.walk(s))


def check_spmd_body(p: Any, node: ast.With) -> None:
    """A `with pl.spmd(n):` body that dispatches no kernel must read its block index
    (`get_block_idx()`, any spelling), or every block does the same work."""
    if reads_block_idx(node.body):
        return
    raise p.error(PyptoSyntaxError, "the `with pl.spmd(...)` body neither reads the "
                  "per-block index (pl.tile.get_block_idx()) nor dispatches a kernel, so every "
                  "block would run identical work", node.items[0].context_expr,
                  hint="read `i = pl.tile.get_block_idx()` inside the scope, dispatch a kernel "
                       "that reads it, or write `for i in pl.spmd(n):`")


def _contains(stmt: ast.AST, node: ast.AST) -> bool:
    return any(n is node for n in ast.walk(stmt))


def _runtime_scope(kind: ScopeKind, name: str):
    def handler(p: Any, node: ast.With, call: ast.Call, target: ast.expr | None) -> None:
        if p.in_region:
            raise p.error(ScopeError, f"{name} is an orchestration scope; it cannot appear "
                          "inside an InCore region", call,
                          hint="open it around the pl.at / pl.spmd block, not inside it")
        if target is not None:
            raise p.error(PyptoSyntaxError, f"{name} does not bind a value", target,
                          hint="drop the `as ...`; only pl.at and pl.spmd bind a TaskId")
        if call.args:
            raise p.error(PyptoSyntaxError, f"{name} takes keyword arguments only", call,
                          hint="write pl.scope(mode=pl.ScopeMode.MANUAL)")
        attrs = []
        allowed = {"mode"} if kind is ScopeKind.RUNTIME else \
            {"name_hint"} if kind is ScopeKind.CLUSTER else set()
        for kw in call.keywords:
            if kw.arg not in allowed:
                takes = f"only {next(iter(allowed))}=" if allowed else "no arguments"
                raise p.error(PyptoSyntaxError, f"{name}() got an unexpected keyword "
                              f"argument '{kw.arg}': it takes {takes}", kw,
                              hint="write `with pl.scope(mode=pl.ScopeMode.MANUAL):` or "
                                   "`with pl.manual_scope():`")
            attrs.append((kw.arg, p.visit_expr(kw.value)))
        # pl.cluster() groups the cube and vector kernels of its regions; it is not a
        # runtime scope (the real parser's Cluster ScopeKind, parsed with pl.spmd), so the
        # AUTO-scope placement rules of pl.scope() do not apply to it: an auto-scoped
        # function may hold one (real tests/ut/jit/test_dump_tag_outline.py)
        cluster = kind is ScopeKind.CLUSTER
        mode = _runtime_mode(kind, dict(attrs))
        if not cluster:
            _check_runtime_mode(p, call, name, mode)
            p.runtime_scopes.append(mode)
        p.clusters += cluster
        try:
            with p.block() as body:
                p.visit_body(node.body)
        finally:
            if not cluster:
                p.runtime_scopes.pop()
            p.clusters -= cluster
        p.emit(Scope(kind, tuple(body), tuple(attrs), None, p.span(node)))

    return handler


@loop_iterator(dsl.split_aiv)
def split_aiv_loop(p: Any, node: ast.For) -> None:
    call = iterator_call(node)
    args = [p.visit_expr(a) for a in call.args]
    kw = {k.arg: p.visit_expr(k.value) for k in call.keywords}
    if args != [2]:
        raise p.error(PyptoSyntaxError, "pl.split_aiv takes the literal 2", call)
    if "mode" not in kw:
        raise p.error(PyptoSyntaxError, "pl.split_aiv needs mode=pl.SplitMode...", call)
    extra = next((k for k in call.keywords if k.arg != "mode"), None)
    if extra is not None:
        raise p.error(PyptoSyntaxError, f"pl.split_aiv does not accept '{extra.arg}=': it "
                      "takes the lane count and mode= only", extra,
                      hint="the region is the split declaration; no loop-carried values or "
                           "optimizations")
    if p.split_modes:
        raise p.error(PyptoSyntaxError, "a pl.split_aiv loop cannot be nested inside another "
                      "pl.split_aiv region: there are two AIV lanes, not four", node.iter)
    if not isinstance(node.target, ast.Name):
        raise p.error(PyptoSyntaxError, "the pl.split_aiv target must be a name", node.target)
    var = Var(node.target.id, INDEX, span=p.span(node.target))
    p.split_modes.append(kw["mode"])
    try:
        body = _region_body(p, node, "split_aiv", node.body, {var.name: var})
    finally:
        p.split_modes.pop()
    p.emit(Scope(ScopeKind.SPLIT_AIV, (For(var, const(0), const(2), const(1), LoopKind.RANGE,
                                           tuple(body), span=p.span(node)),),
                 (("mode", kw["mode"]),), None, p.span(node)))


def _runtime_mode(kind: ScopeKind, attrs: dict) -> ScopeMode:
    if kind is ScopeKind.MANUAL:
        return ScopeMode.MANUAL
    mode = attrs.get("mode", ScopeMode.AUTO)
    return ScopeMode(int(mode)) if isinstance(mode, int) else ScopeMode.AUTO


def _check_runtime_mode(p: Any, call: ast.Call, name: str, mode: ScopeMode) -> None:
    """The real parser's rules: an AUTO scope needs auto_scope=False (otherwise the
    compiler places AUTO scopes itself), and may not nest inside a MANUAL one."""
    if mode is not ScopeMode.AUTO:
        return
    if p.auto_scope:
        raise p.error(PyptoSyntaxError, f"{name}() opens an AUTO runtime scope, which needs "
                      "auto_scope=False on the function: with auto_scope=True the compiler "
                      "places the AUTO scopes itself", call,
                      hint="decorate it @pl.function(auto_scope=False) (or "
                           "@pl.jit(auto_scope=False)), or open pl.manual_scope()")
    if ScopeMode.MANUAL in p.runtime_scopes:
        raise p.error(PyptoSyntaxError, f"an AUTO {name}() cannot nest inside a MANUAL scope",
                      call, hint="the runtime tracks dependencies either automatically or "
                                 "manually within one scope; close the manual scope first")


with_scope(dsl.scope)(_runtime_scope(ScopeKind.RUNTIME, "pl.scope"))
with_scope(dsl.manual_scope)(_runtime_scope(ScopeKind.MANUAL, "pl.manual_scope"))
with_scope(dsl.cluster)(_runtime_scope(ScopeKind.CLUSTER, "pl.cluster"))
