"""Function bodies of the IR's text form, read back into IR (see `text.py`).

Each statement form the printer writes maps to one IR node. Expressions go through the
frontend's own expression handlers; only calls differ (`TextParser.visit_expr`): an op
call is bound and typed by its registry entry without the rules of where an op may run
(the text may come from any stage of the pipeline, outlined kernels included), and
`self.f(...)` is a `CallFunc`, with its launch attributes when it dispatches a task.
"""
from __future__ import annotations

import ast
import difflib
from typing import Any, TypeGuard

from pypto.errors import (
    InvalidOperationError,
    PyptoSyntaxError,
    PyptoTypeError,
    UndefinedNameError,
    UnsupportedFeatureError,
)
from pypto.frontend.annotations import AnnotationError, to_type
from pypto.frontend.call_attrs import call_attrs
from pypto.frontend.calls import call_args, construct_call
from pypto.frontend.constructs import cluster_metadata
from pypto.frontend.dump_tags import listed_dumps
from pypto.frontend.opcall import bind_op
from pypto.frontend.parser import FunctionParser
from pypto.frontend.predicate import parse_predicate, record_outputs
from pypto.frontend.resolve import MISSING
from pypto.frontend.scopes import AT_KEYWORDS, check_spmd_body, reads_block_idx
from pypto.frontend.values import INDEX, fold, is_ir
from pypto.ir import dtypes
from pypto.ir.nodes import (
    LAUNCH_DEFAULTS,
    Assign,
    Attr,
    Break,
    CallFunc,
    Continue,
    Eval,
    Expr,
    For,
    FunctionKind,
    If,
    LoopKind,
    Return,
    Scope,
    ScopeKind,
    Var,
    While,
    Yield,
    literal,
)
from pypto.ir.span import Span
from pypto.ir.transform import walk
from pypto.ir.types import NONE, ScalarType, TupleType, Type
from pypto.language import dsl
from pypto.language.dsl import Construct
from pypto.language.enums import Level, Role
from pypto.language.ops import OpStub

_TASK = ScalarType(dtypes.TASK_ID)
_LOOPS: dict[Any, LoopKind] = {
    dsl.range: LoopKind.RANGE, dsl.parallel: LoopKind.PARALLEL, dsl.unroll: LoopKind.UNROLL,
    dsl.pipeline: LoopKind.PIPELINE, dsl.spmd: LoopKind.SPMD}
_SCOPES: dict[Any, ScopeKind] = {
    dsl.at: ScopeKind.INCORE, dsl.spmd: ScopeKind.SPMD, dsl.scope: ScopeKind.RUNTIME,
    dsl.manual_scope: ScopeKind.MANUAL, dsl.cluster: ScopeKind.CLUSTER,
    dsl.split_aiv: ScopeKind.SPLIT_AIV}
_IR_VALUED = {"core_num"}  # attributes that hold an IR expression, not a Python value


class TextParser(FunctionParser):
    """Reads one function body of the text form. `signatures` maps each function of the
    program to its return types (for the type of a call)."""

    def __init__(self, reader: Any, src: Any, scope: Any, kind: Any, name: str,
                 signatures: dict):
        super().__init__(reader, src, scope, kind, name)
        self.ir_text = True  # composite pl.dynamic dims are IR here, as the printer writes
        self.signatures = signatures
        self.kinds: dict[str, FunctionKind] = {}  # each function's kind (`text.py`)
        # bare annotations awaiting their binding (None: a bare pl.Tensor, infer it)
        self.declared: dict[str, Type | None] = {}
        self.source_map = reader.source_map

    def span(self, node: Any) -> Span:
        span = self.src.span(node)
        where = self.source_map.get(span.line) if self.source_map else None
        if where is None:
            return span
        file, line, col = where
        return Span(file, line, col)

    # -- expressions --------------------------------------------------------------------

    def visit_expr(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Call):
            return self._guard(self._call, node)
        return super().visit_expr(node)

    def ir(self, node: ast.expr) -> Expr:
        value = self.visit_expr(node)
        if isinstance(value, (list, tuple)) and not value:
            return self.to_ir([], node)
        return self.to_ir(value, node)

    def _call(self, p: Any, node: ast.Call) -> Any:
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and \
                func.value.id == "self":
            return self._call_function(func.attr, node)
        callee = self.visit_expr(func)
        if isinstance(callee, Construct):
            return construct_call(self, callee, node)
        args, kwargs, arg_nodes, kw_nodes = call_args(self, node)
        if isinstance(callee, OpStub):
            return bind_op(self, callee.op, args, kwargs, node, arg_nodes, kw_nodes,
                           public=callee.public_name)
        if callable(callee) and not any(is_ir(v) for v in (*args, *kwargs.values())):
            return fold(self, node, callee, *args, **kwargs)
        raise self.error(InvalidOperationError, f"'{ast.unparse(func)}' cannot be called on "
                         "run-time values here", node,
                         hint="calls are pl ops, self.<function>(...) or Python functions of "
                              "constants")

    def _call_function(self, name: str, node: ast.Call) -> CallFunc:
        if name not in self.signatures:
            raise self.error(UndefinedNameError, f"the program has no function '{name}'",
                             node.func, hint=_close(name, self.signatures))
        returns = self.signatures[name]
        args = tuple(self.ir(a) for a in node.args)
        given = next((kw for kw in node.keywords if kw.arg == "attrs"), None)
        attrs = call_attrs(self, {"attrs": self.visit_expr(given.value)}, len(args), node) \
            if given is not None else ()
        launch = {}
        device = next((kw for kw in node.keywords if kw.arg == "device"), None)
        if device is not None:  # a host's dispatch on one rank (pypto.frontend.distributed)
            t = NONE if not returns else returns[0] if len(returns) == 1 else TupleType(returns)
            return CallFunc(name, args, t, self.span(node),
                            (("kind", "device"), ("device", self.ir(device.value))))
        if self.kind is FunctionKind.HOST and self.kinds.get(name) in (
                FunctionKind.ORCHESTRATION, FunctionKind.OPAQUE):
            # a host's chip dispatch without device= (printed so): the runtime picks the rank
            t = NONE if not returns else returns[0] if len(returns) == 1 else TupleType(returns)
            return CallFunc(name, args, t, self.span(node), (("kind", "device"),))
        for kw in node.keywords:
            if kw.arg == "attrs":
                continue
            if kw.arg is None:
                raise self.error(PyptoSyntaxError, "a call of a program function takes no "
                                 "**kwargs", kw)
            key = "kind" if kw.arg == "launch" else kw.arg
            if key not in dict(LAUNCH_DEFAULTS):  # a type error, as the real parser's
                raise self.error(PyptoTypeError, f"unknown launch attribute '{kw.arg}'", kw,
                                 hint="a call takes positional arguments; a task launch adds "
                                      "launch=, name_hint=, core_num=, deps=, ...")
            launch[key] = self._attr_value(key, kw.value)
        if launch and "kind" not in launch:
            raise self.error(PyptoSyntaxError, "a task launch needs launch='at' or 'spmd'", node)
        if launch:
            items = tuple((k, launch.get(k, d)) for k, d in LAUNCH_DEFAULTS)
            return CallFunc(name, args, TupleType(tuple(returns) + (_TASK,)), self.span(node),
                            items, attrs)
        t = NONE if not returns else returns[0] if len(returns) == 1 else TupleType(returns)
        return CallFunc(name, args, t, self.span(node), attrs=attrs)

    def _attr_value(self, key: str, node: ast.expr) -> Any:
        value = self.visit_expr(node)
        if key in _IR_VALUED and value is not None:
            return self.to_ir(value, node)
        return value

    def annotation(self, node: ast.expr) -> tuple[Type | None, Any]:
        """(type, direction) of an annotation. A name it uses that nothing binds is a free
        symbol of the type (an extent the text does not define)."""
        added = []
        for leaf in ast.walk(node):
            if isinstance(leaf, ast.Name) and leaf.id not in self.env and \
                    self.py.lookup(leaf.id) is MISSING:
                self.env[leaf.id] = Var(leaf.id, INDEX, span=self.span(leaf))
                added.append(leaf.id)
        self.annotating = True
        try:
            ann = self.visit_expr(node)
            return to_type(ann)
        except AnnotationError as exc:
            raise self.error(PyptoTypeError, exc.message, node, hint=exc.hint) from None
        finally:
            self.annotating = False
            for name in added:
                self.env.pop(name, None)

    # -- bindings -----------------------------------------------------------------------

    def new_var(self, node: ast.expr, inferred: Type, annotation: Any = None) -> Var:
        """The variable a binding makes: its type is declared (annotation, or a bare
        annotation on an earlier line), else `inferred`."""
        if not isinstance(node, ast.Name):
            raise self.error(PyptoSyntaxError, "a binding is a plain name", node)
        t = self.declared.pop(node.id, None)
        if annotation is not None:
            t = self.annotation(annotation)[0]
        return Var(node.id, t if t is not None else inferred, span=self.span(node))

    # -- statements ---------------------------------------------------------------------

    def body(self, stmts: list[ast.stmt], results: list | None = None) -> tuple:
        out: list = []
        for node in stmts:
            stmt = self._guard(lambda p, n: self.statement(n, results), node)
            if stmt is not None:
                out.append(stmt)
        return tuple(out)

    def statement(self, node: ast.stmt, results: list | None) -> Any:
        if isinstance(node, ast.Pass):
            return None
        if isinstance(node, ast.AnnAssign) and node.value is None:
            self.declared[_target_name(self, node.target)] = self.annotation(node.annotation)[0]
            return None
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            return self._assign(node, results)
        if isinstance(node, ast.Expr):
            return self._expr(node, results)
        if isinstance(node, ast.For):
            return self._for(node)
        if isinstance(node, ast.If):
            return self._if(node)
        if isinstance(node, ast.With):
            return self._with(node)
        if isinstance(node, ast.Return):
            values = () if node.value is None else node.value.elts \
                if isinstance(node.value, ast.Tuple) else (node.value,)
            return Return(tuple(self.ir(v) for v in values), self.span(node))
        if isinstance(node, ast.Break):
            return Break(self.span(node))
        if isinstance(node, ast.Continue):
            return Continue(self.span(node))
        raise self.error(UnsupportedFeatureError, f"'{type(node).__name__}' is not a statement of "
                         "the IR text form", node,
                         hint="pl.parse reads what the IR printer writes: assignments, op calls, "
                              "pl loops, if/else, with-scopes, pl.yield_, return")

    def _is_yield(self, value: ast.expr) -> TypeGuard[ast.Call]:
        return isinstance(value, ast.Call) and self._construct(value.func) is dsl.yield_

    def _construct(self, func: ast.expr) -> Any:
        try:
            callee = self.visit_expr(func)
        except Exception:  # noqa: BLE001 - not a construct; the caller reports the call
            return None
        return callee if isinstance(callee, Construct) else None

    def _assign(self, node: ast.Assign | ast.AnnAssign, results: list | None) -> Any:
        targets = [node.target] if isinstance(node, ast.AnnAssign) else node.targets
        if len(targets) != 1:
            raise self.error(PyptoSyntaxError, "chained assignment is not in the IR text form",
                             node)
        target = targets[0]
        names = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
        annotation = node.annotation if isinstance(node, ast.AnnAssign) else None
        if node.value is None:
            return None  # a bare annotation: `statement` handles it
        if self._is_yield(node.value):
            return self._yield(node.value, names, annotation, results)
        if isinstance(node.value, ast.Call) and \
                self._construct(node.value.func) in (dsl.spmd_submit, dsl.submit):
            return self._submit(node, names, node.value)
        value = self.ir(node.value)
        if len(names) == 1:
            var = self.new_var(names[0], value.type, annotation)
            targets_out: tuple[Var, ...] = (var,)
        else:
            t = value.type
            items = t.items if isinstance(t, TupleType) and len(t.items) == len(names) else None
            if items is None:
                raise self.error(PyptoTypeError, f"cannot bind a {t} value to {len(names)} "
                                 "names", target)
            targets_out = tuple(self.new_var(n, it) for n, it in zip(names, items))
        for v in targets_out:
            self.env[v.name] = v
        return Assign(targets_out, value, self.span(node))

    def _submit(self, node: ast.stmt, names: list, call: ast.Call) -> Scope:
        """`outs..., tid = pl.spmd_submit(self.k, *args, core_num=N, ...)`: the task
        scope the DSL makes of it (one call of `k` in a pl.spmd scope bound to `tid`)."""
        kernel = call.args[0] if call.args else None
        if not (isinstance(kernel, ast.Attribute) and isinstance(kernel.value, ast.Name)
                and kernel.value.id == "self"):
            raise self.error(PyptoSyntaxError, "a submitted task's first argument is "
                             "self.<function>", kernel or call)
        if kernel.attr not in self.signatures:
            raise self.error(UndefinedNameError, f"the program has no function "
                             f"'{kernel.attr}'", kernel, hint=_close(kernel.attr, self.signatures))
        returns = self.signatures[kernel.attr]
        if len(names) != len(returns) + 1:
            raise self.error(PyptoSyntaxError, f"the task returns {len(returns)} output(s) and a "
                             f"TaskId; bind {len(returns) + 1} names", node)
        args = tuple(self.ir(a) for a in call.args[1:])
        kws = {k.arg: k.value for k in call.keywords}
        construct = self._construct(call.func)
        cluster_metadata(self, construct.name if construct else "pl.submit", kws, call)
        attrs: list = [("core_num", self.ir(kws.pop("core_num")) if "core_num" in kws
                        else literal(1)), ("name_hint", kernel.attr)]
        for key in ("sync_start", "deps", "allow_early_resolve"):
            if key in kws:
                value = self._attr_value(key, kws.pop(key))
                attrs.append((key, tuple(value) if key == "deps" else value))
        task_node = names[-1]
        if "predicate" in kws:
            attrs.append(("predicate", parse_predicate(
                self, kws.pop("predicate"), "pl.spmd_submit", dict(attrs).get("deps", ()),
                True)))
        if "dumps" in kws:  # the arguments the args dump captures (no effect on values)
            attrs.append(("dumps", self._submit_dumps(kws.pop("dumps"), args)))
        if kws:
            raise self.error(PyptoSyntaxError, f"unknown task option '{next(iter(kws))}'", call)
        outs = tuple(self.new_var(n, t) for n, t in zip(names[:-1], returns))
        task = self.new_var(task_node, _TASK)
        value = CallFunc(kernel.attr, args, returns[0] if len(returns) == 1 else
                         TupleType(tuple(returns)) if returns else NONE, self.span(call))
        body = (Assign(outs, value, self.span(call)) if outs else Eval(value, self.span(call)),)
        for v in (*outs, task):
            self.env[v.name] = v
        record_outputs(self, outs, task)
        return Scope(ScopeKind.SPMD, body, tuple(attrs), task, self.span(node))

    def _submit_dumps(self, node: ast.expr, args: tuple) -> tuple:
        """`dumps=[a, ...]` of a printed `pl.submit`: each entry one of its arguments."""
        return tuple(listed_dumps(node, args, self.ir, self.error, "pl.submit"))

    def _spmd_body(self, node: ast.With, attrs: list, body: tuple) -> None:
        """A `with pl.spmd(n):` body dispatches one kernel, or reads its block index, or is
        an explicit InCore carrier (`with pl.at(...)`), which alone holds the region's
        optimizations."""
        if len(body) == 1 and isinstance(body[0], Scope) and body[0].kind is ScopeKind.INCORE:
            if "optimizations" in dict(attrs):
                twice = "optimizations" in dict(body[0].attrs)
                where = "is specified twice: on `pl.spmd(...)` and on the inner" if twice else \
                    "belongs on the InCore scope, but the body already provides one as the inner"
                raise self.error(PyptoSyntaxError, f"`optimizations=` {where} "
                                 "`pl.at(level=pl.Level.CORE_GROUP, ...)`", node,
                                 hint="keep optimizations=[...] on the inner pl.at only")
            return
        launched = [c for s in body for c in walk(s) if isinstance(c, CallFunc)]
        if len(launched) > 1 and not reads_block_idx(node.body):  # (else one kernel's calls)
            raise self.error(PyptoSyntaxError, f"the `with pl.spmd(...)` body launches "
                             f"{len(launched)} kernels; a pl.spmd scope dispatches one", node,
                             hint="open one pl.spmd scope per kernel")
        if not launched:
            check_spmd_body(self, node)

    def _yield(self, call: ast.Call, names: list, annotation: Any, results: list | None) -> Yield:
        values = tuple(self.ir(a) for a in call.args)
        if results is None:
            raise self.error(PyptoSyntaxError, "pl.yield_ outside a loop or an if", call)
        if names:
            if len(names) != len(values):
                raise self.error(PyptoSyntaxError, f"pl.yield_ of {len(values)} values is bound "
                                 f"to {len(names)} names", call)
            results[:] = [self.new_var(n, v.type, annotation)
                          for n, v in zip(names, values)]
        return Yield(values, self.span(call))

    def _expr(self, node: ast.Expr, results: list | None) -> Any:
        value = node.value
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            return None  # a docstring
        if self._is_yield(value):
            return self._yield(value, [], None, results)
        construct = self._construct(value.func) if isinstance(value, ast.Call) else None
        if construct is dsl.func_attr:
            raise self.error(PyptoSyntaxError, "pl.func_attr must be the first statement", node)
        if construct in (dsl.static_print, dsl.static_assert) and isinstance(value, ast.Call):
            construct_call(self, construct, value)  # checked / printed now; no statement
            return None
        expr = self.visit_expr(value)
        if not is_ir(expr):
            raise self.error(PyptoSyntaxError, "this statement has no effect", node)
        return Eval(expr, self.span(node))

    def _for(self, node: ast.For) -> Any:
        call = node.iter
        construct = self._construct(call.func) if isinstance(call, ast.Call) else None
        if construct is dsl.while_ and isinstance(call, ast.Call):
            return self._while(node, call)
        kind = _LOOPS.get(construct)
        if kind is None or node.orelse or not isinstance(call, ast.Call):
            raise self.error(PyptoSyntaxError, "a loop of the IR text form iterates pl.range, "
                             "pl.parallel, pl.unroll, pl.pipeline, pl.spmd or pl.while_",
                             node.iter)
        attrs, inits = [], None
        for kw in call.keywords:
            if kw.arg == "init_values":
                inits = kw.value.elts if isinstance(kw.value, (ast.Tuple, ast.List)) \
                    else [kw.value]
            elif kw.arg is None:
                raise self.error(PyptoSyntaxError, "a loop takes no **kwargs", kw)
            else:
                attrs.append((kw.arg, self._attr_value(kw.arg, kw.value)))
        bounds = [self.ir(a) for a in call.args]
        if not bounds and kind is LoopKind.SPMD and attrs and attrs[0][0] == "core_num":
            bounds = [literal(0), attrs[0][1]]
        if not 1 <= len(bounds) <= 3:
            raise self.error(PyptoSyntaxError, "a loop takes 1 to 3 bounds", call)
        if len(bounds) == 1:
            bounds = [literal(0), bounds[0]]
        start, stop, step = (*bounds, literal(1))[:3]
        target = node.target
        init_ir = tuple(self.ir(i) for i in inits) if inits is not None else ()
        carried: list = []
        if inits is not None:
            parts = target.elts if isinstance(target, ast.Tuple) else []
            group = parts[1] if len(parts) == 2 else None
            if not (isinstance(group, (ast.Tuple, ast.List)) and
                    len(group.elts) == len(init_ir)):
                raise self.error(PyptoSyntaxError, "with init_values the target is "
                                 "`i, (a, b, ...)` with one name per value", target)
            target, carried = parts[0], group.elts
        var = self.new_var(target, INDEX)
        iter_args = tuple(self.new_var(n, i.type) for n, i in zip(carried, init_ir))
        init_ir = _typed_inits(init_ir, iter_args)
        results: list = []
        inner = (var, *iter_args)
        saved = {v.name: self.env.get(v.name) for v in inner}
        self.env.update({v.name: v for v in inner})
        try:
            body = self.body(node.body, results)
        finally:
            for name, old in saved.items():
                if old is None:
                    self.env.pop(name, None)
                else:
                    self.env[name] = old
        self.env.update({r.name: r for r in results})
        return For(var, start, stop, step, kind, body, iter_args, init_ir, tuple(results),
                   tuple(attrs), self.span(node))

    def _while(self, node: ast.For, call: ast.Call) -> While:
        init_node = next((k.value for k in call.keywords if k.arg == "init_values"), None)
        if init_node is None or call.args or len(call.keywords) != 1:
            raise self.error(PyptoSyntaxError, "pl.while_ takes only init_values=(...)", call)
        inits = init_node.elts if isinstance(init_node, (ast.Tuple, ast.List)) else [init_node]
        init_ir = tuple(self.ir(i) for i in inits)
        names = node.target.elts if isinstance(node.target, (ast.Tuple, ast.List)) else None
        if names is None or len(names) != len(init_ir):
            raise self.error(PyptoSyntaxError, "pl.while_ needs a tuple target matching "
                             "init_values", node.target)
        iter_args = tuple(self.new_var(n, i.type) for n, i in zip(names, init_ir))
        init_ir = _typed_inits(init_ir, iter_args)
        first = node.body[0] if node.body else node
        if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Call)
                and self._construct(first.value.func) is dsl.cond
                and len(first.value.args) == 1):
            raise self.error(PyptoSyntaxError, "a pl.while_ body starts with pl.cond(<condition>)",
                             first)
        saved = dict(self.env)
        self.env.update({a.name: a for a in iter_args})
        results: list = []
        try:
            cond = self.ir(first.value.args[0])
            body = self.body(node.body[1:], results)
        finally:
            self.env = saved
        self.env.update({r.name: r for r in results})
        return While(cond, body, iter_args, init_ir, tuple(results), self.span(node))

    def _if(self, node: ast.If) -> If:
        cond = self.ir(node.test)
        before = dict(self.env)
        then_results: list = []
        then_body = self.body(node.body, then_results)
        then_env = self.env
        self.env = dict(before)  # the else arm sees the bindings from before the if
        else_results: list = []
        else_body = self.body(node.orelse, else_results)
        for name, value in then_env.items():
            self.env.setdefault(name, value)
        if [r.name for r in then_results] != [r.name for r in else_results] and node.orelse:
            raise self.error(PyptoSyntaxError, "both arms of an if must pl.yield_ the same "
                             "names", node)
        for r in then_results:
            self.env[r.name] = r
        return If(cond, then_body, else_body, tuple(then_results), self.span(node))

    def _with(self, node: ast.With) -> Scope:
        item = node.items[0]
        call = item.context_expr
        kind = _SCOPES.get(self._construct(call.func)) if isinstance(call, ast.Call) else None
        if kind is None or len(node.items) != 1 or not isinstance(call, ast.Call):
            raise self.error(PyptoSyntaxError, "a with-statement of the IR text form opens one "
                             "pl scope (pl.at, pl.spmd, pl.scope, pl.manual_scope, pl.cluster, "
                             "pl.split_aiv)", node)
        attrs: list[tuple[str, Any]] = [("core_num", self.ir(a)) for a in call.args[:1]] \
            if kind is ScopeKind.SPMD else []
        for kw in call.keywords:
            if kw.arg is None:
                raise self.error(PyptoSyntaxError, "a scope takes no **kwargs", kw)
            if kind in (ScopeKind.INCORE, ScopeKind.HIERARCHY) and kw.arg not in AT_KEYWORDS:
                raise self.error(PyptoSyntaxError, f"pl.at() got an unexpected keyword "
                                 f"argument '{kw.arg}'", kw,
                                 hint="pl.at takes " + ", ".join(f"{k}=" for k in
                                                                 sorted(AT_KEYWORDS)))
            if kw.arg == "predicate":
                attrs.append(("predicate", parse_predicate(
                    self, kw.value, "pl.spmd()", tuple(dict(attrs).get("deps", ())),
                    item.optional_vars is not None)))
                continue
            value = self._attr_value(kw.arg, kw.value)
            if kw.arg == "level" and kind is ScopeKind.INCORE and isinstance(value, Level):
                if value is not Level.CORE_GROUP:  # host-level code (pl.at(level=HOST))
                    kind = ScopeKind.HIERARCHY
                value = value.name  # regions record their level by name
            if kw.arg == "role" and isinstance(value, Role):
                value = value.name
            attrs.append((kw.arg, value))
        task = None
        if item.optional_vars is not None:
            task = self.new_var(item.optional_vars, _TASK)
        split = kind is ScopeKind.SPLIT_AIV
        if split:  # the crossings inside read their split from the region
            self.split_modes.append(dict(attrs).get("mode"))
        self.clusters += kind is ScopeKind.CLUSTER
        try:
            body = self.body(node.body)
        finally:
            self.clusters -= kind is ScopeKind.CLUSTER
        if kind is ScopeKind.SPMD:
            self._spmd_body(node, attrs, body)
            if split:
                self.split_modes.pop()
        if task is not None:
            self.env[task.name] = task
            record_outputs(self, _assigned(body), task)
        return Scope(kind, body, tuple(attrs), task, self.span(node))


def _assigned(body: tuple) -> list:
    """The values the statements `body` bind at their top level."""
    return [t for s in body if isinstance(s, Assign) for t in s.targets]


def _typed_inits(inits: tuple, iter_args: tuple) -> tuple:
    """`None` as an initial value is the undefined value of the carried variable (a value
    first defined inside the loop): it has that variable's type."""
    return tuple(Attr(None, a.type, i.span) if isinstance(i, Attr) and i.value is None else i
                 for i, a in zip(inits, iter_args))


def _target_name(p: TextParser, node: ast.expr) -> str:
    if not isinstance(node, ast.Name):
        raise p.error(PyptoSyntaxError, "a declaration names one variable", node)
    return node.id


def _close(name: str, known: dict) -> str | None:
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f"did you mean self.{close[0]}?" if close else None
