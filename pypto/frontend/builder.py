"""Assemble a program: the entry function plus every inline body and InCore kernel
it reaches, each parsed from its own source.

Inline bodies are specialised per call site (argument types, compile-time
argument values, and whether the call sits inside a region), so a body written
once serves callers of different shapes, like a macro with type checking.
"""
from __future__ import annotations

import ast
import inspect
import warnings
from typing import Any, ClassVar

from pypto.errors import (
    DynamicShapeError,
    InvalidOperationError,
    PyptoDeprecationWarning,
    PyptoSyntaxError,
    PyptoTypeError,
    PyptoWarning,
    ScopeError,
    UnsupportedFeatureError,
)
from pypto.frontend.annotations import AnnotationError, to_type
from pypto.frontend.call_attrs import call_attrs
from pypto.frontend.distributed import dispatch_on_device
from pypto.frontend.dump_tags import call_dumps, is_tagged
from pypto.frontend.expressions import SelfProgram
from pypto.frontend.extern import extern_body
from pypto.frontend.func_attrs import decorator_attrs
from pypto.frontend.jit_program import JitProgram
from pypto.frontend.jit_rebind import checked_rebinds
from pypto.frontend.opaque import parse_as_region, self_contained
from pypto.frontend.parser import FunctionParser
from pypto.frontend.program_rules import bind_dims, check_external, takes_self
from pypto.frontend.reshape_back import check_reshape_back
from pypto.frontend.resolve import PythonScope
from pypto.frontend.source import get_source, parse_python
from pypto.frontend.statements import check_compatible
from pypto.frontend.subworker import check_no_self, subworker_function
from pypto.frontend.values import contains_ir, is_ir
from pypto.ir.dtypes import from_numpy
from pypto.ir.nodes import (
    Assign,
    CallFunc,
    Direction,
    DynDim,
    Eval,
    Function,
    FunctionKind,
    Param,
    Scope,
    ScopeKind,
    Var,
)
from pypto.ir.refusal import Refusal
from pypto.ir.span import Span
from pypto.ir.types import NONE, ShapedType, TensorType, TupleType
from pypto.language.enums import FunctionType, Level
from pypto.language.kernels import FunctionDef, core_function_attrs, extern_spec, parse_options

PROGRAM_KINDS = {FunctionType.Opaque: FunctionKind.OPAQUE,
                  FunctionType.Orchestration: FunctionKind.ORCHESTRATION,
                  FunctionType.InCore: FunctionKind.INCORE, FunctionType.AIC: FunctionKind.INCORE,
                  FunctionType.AIV: FunctionKind.INCORE, FunctionType.Group: FunctionKind.INCORE,
                  FunctionType.Inline: FunctionKind.INLINE,
                  None: FunctionKind.OPAQUE}


def _callee_kind(callee: Any) -> FunctionKind | None:
    """The kind of a called program or `@pl.jit` function, None for anything else."""
    if isinstance(callee, FunctionDef):
        return program_kind(callee)
    kind = getattr(callee, "kind", None)
    return kind if isinstance(kind, FunctionKind) else None


def program_kind(fdef: FunctionDef) -> FunctionKind:
    """The kind of a `@pl.function`: its `type=`, or HOST for
    `@pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)`."""
    if fdef.type is None and fdef.options.get("level") is Level.HOST:
        return FunctionKind.HOST
    return PROGRAM_KINDS.get(fdef.type, FunctionKind.OPAQUE)


_Def = ast.FunctionDef | ast.AsyncFunctionDef


class ProgramBuilder:
    """Collects the functions of one program while parsing."""

    def __init__(self, platform: str | None = None, jit_entry: Any = None):
        self.platform = platform
        self.functions: dict[str, Function] = {}
        self.warnings: list[PyptoWarning] = []
        # what compiles and a run refuses, found while parsing (`pypto.passes.runnable`)
        self.refusals: list[Refusal] = []
        self._specs: dict[Any, tuple[str, Any]] = {}
        self._active: list[Any] = []  # callees being parsed, to reject recursion
        # inline functions without a return value: name -> span of their `def`
        self.no_return: dict[str, Span] = {}
        self.externals: dict[str, Any] = {}  # external @pl.functions called, by name
        # a @pl.jit entry's program: what `self.<name>` reaches in its bodies
        self.jit_program = JitProgram(jit_entry) if jit_entry is not None else None

    # -- bookkeeping -------------------------------------------------------------

    def warn(self, message: str, span: Span, hint: str | None = None,
             category: type | None = None) -> None:
        w = (category or PyptoWarning)(message, span, hint)
        self.warnings.append(w)
        warnings.warn_explicit(w, type(w), span.file, span.line or 1)

    def unique(self, name: str) -> str:
        if name not in self.functions and name not in {n for n, _ in self._specs.values()}:
            return name
        k = 1
        while f"{name}_{k}" in self.functions:
            k += 1
        return f"{name}_{k}"

    # -- parsing -----------------------------------------------------------------

    def parse_function(self, fn: Any, kind: FunctionKind, name: str, *,
                       args: list | None = None, entry: bool = False, in_region: bool = False,
                       self_object: Any = None, tagged: frozenset = frozenset()
                       ) -> tuple[Function, FunctionParser]:
        """Parse `fn` as a function of `kind`. `args` are the caller's values (for
        specialisation) or the runtime arguments of an entry; `tagged`, the positions of
        the ones `pl.dump_tag` marked in the caller (an inline body dumps them too)."""
        src = get_source(fn)
        p = FunctionParser(self, src, PythonScope(fn), kind, name)
        if self_object is not None:
            p.self_object = SelfProgram(self_object)
        options = parse_options(fn)
        if options.get("subworker"):
            check_no_self(p, src.tree)
            self_object = None  # self-contained: it reaches no siblings
        p.strict_ssa = bool(options.get("strict_ssa"))
        p.auto_scope = bool(options.get("auto_scope", True))
        p.one_var_per_name = bool(options.get("one_var_per_name"))
        if not p.one_var_per_name and not p.strict_ssa:  # a @pl.jit form
            p.jit_rebinds = checked_rebinds(src.tree, [a.arg for a in src.tree.args.args])
        if in_region:
            p.region_stack.append("caller")
        params = self._params(p, src.tree, kind, args, entry, self_object is not None)
        p.params = params
        # a tag marks a value, and an inline parameter is bound to the caller's value:
        # the body's dispatches dump it as the caller's would (after the real parser's
        # sticky dump tags, which follow the value through the splice)
        for i in sorted(tagged):
            var = p.env.get(positional_params(p, src.tree, self_object is not None)[i].arg)
            if isinstance(var, Var):
                p.dump_tags.append(var)
        spec = extern_spec(fn)
        if spec is not None:
            body, returns, attrs = extern_body(p, src.tree, params, spec)
            func = Function(name, tuple(params), body, kind, returns,
                            attrs + (("source_name", fn.__name__),), span=p.span(src.tree))
            self.functions[name] = func
            return func, p
        core = core_function_attrs(fn)
        p.group_body = ("group", True) in core
        if "attrs" in options:  # @pl.function(attrs={...}): pl.func_attr may not repeat a key
            p.func_attrs.update(decorator_attrs(p, src.tree, options["attrs"]))
        if options.get("subworker"):  # a host callback: its body is Python, not pl
            func = subworker_function(p, src.tree, name, tuple(params),
                                      str(options["subworker"]),
                                      (("source_name", fn.__name__),))
            self.functions[name] = func
            return func, p
        if kind is FunctionKind.OPAQUE and not in_region and self_contained(src.tree,
                                                                           self_object):
            parse_as_region(p, src.tree, name)  # a self-contained compute kernel
        else:
            p.visit_body(src.tree.body)
        returns = self._returns(p, kind, src.tree)
        if entry and kind in (FunctionKind.ORCHESTRATION, FunctionKind.HOST) and \
                self_object is None:  # bind_dynamic is @pl.jit's; a @pl.program has none
            self._check_bound_dynamic(p, src.tree)
        # auto_scope=False is kept: the runtime's scopes (and so its rings and task ids)
        # depend on it (`pypto.sim.runtime.submits`)
        scoping = () if p.auto_scope or kind is not FunctionKind.ORCHESTRATION else \
            (("auto_scope", False),)
        func = Function(name, tuple(params), tuple(p.stmts), kind, returns,
                        core + tuple(p.func_attrs.items()) + scoping +
                        (("source_name", fn.__name__),), span=p.span(src.tree))
        self.functions[name] = func
        return func, p

    def _params(self, p: FunctionParser, tree: _Def, kind: FunctionKind,
                args: list | None, entry: bool, is_method: bool) -> list[Param]:
        nodes = positional_params(p, tree, is_method)
        defaults = [p.visit_expr(d) for d in tree.args.defaults]
        defaults = [None] * (len(nodes) - len(defaults)) + defaults
        params: list[Param] = []
        bound: dict[str, tuple[int, str]] = {}  # a dynamic dim's extent in this call
        for i, node in enumerate(nodes):
            given = args[i] if args is not None and i < len(args) else _NOARG
            if given is _NOARG and defaults[i] is not None:
                given = defaults[i]
            declared, direction = self._annotation(p, node, kind, entry)
            # a compile-time argument of an inline helper, folded into its body; an
            # entry's values (any kind, @pl.jit.opaque too) are run-time arguments
            if given is not _NOARG and not is_ir(given) and not _is_array(given) and \
                    kind is FunctionKind.INLINE and not entry:
                p.env[node.arg] = given
                continue
            t = self._param_type(p, node, declared, given, kind, entry)
            if not entry and is_ir(given):
                bind_dims(p, node, declared, getattr(given, "type", None), bound)
            if kind is FunctionKind.INLINE and direction is not Direction.IN:
                self.warn(f"pl.{direction.value} on parameter '{node.arg}' of an inline function "
                          "is stripped: direction annotations are deprecated for inline helpers",
                          p.span(node.annotation), hint="annotate it as a plain pl.Tensor; only "
                          "the @pl.jit entry declares directions",
                          category=PyptoDeprecationWarning)
                direction = Direction.IN
            var = Var(node.arg, t, span=p.span(node))
            params.append(Param(var, direction, p.span(node)))
            p.env[node.arg] = var
            p.ssa_scopes[0][node.arg] = p.span(node)
            if isinstance(declared, ShapedType):
                for axis, d in enumerate(declared.shape):
                    if isinstance(d, DynDim) and d.name not in p.dyn_dims:
                        p.dyn_dims[d.name] = (var, axis)
        return params

    def _annotation(self, p: FunctionParser, node: ast.arg, kind: FunctionKind,
                    entry: bool) -> tuple[Any, Direction]:
        if node.annotation is None:
            if entry or kind is FunctionKind.INCORE:
                raise p.error(PyptoTypeError, f"Parameter '{node.arg}' missing type annotation",
                              node, hint="annotate it, e.g. `x: pl.Tensor[[M, N], pl.FP32]`")
            return None, Direction.IN
        p.annotating = True
        try:
            ann = p.visit_expr(node.annotation)
            if isinstance(ann, str):  # `from __future__ import annotations`
                ann = p.visit_expr(parse_python(ann, mode="eval").body)
        finally:
            p.annotating = False
        try:
            return to_type(ann)
        except AnnotationError as exc:
            raise p.error(PyptoTypeError, f"parameter '{node.arg}': {exc.message}",
                          node.annotation, hint=exc.hint) from None

    def _param_type(self, p: FunctionParser, node: ast.arg, declared: Any, given: Any,
                    kind: FunctionKind, entry: bool) -> Any:
        if entry:
            if declared is None:
                if not _is_array(given):
                    raise p.error(PyptoTypeError, f"parameter '{node.arg}' is a bare pl.Tensor: "
                                  "its shape comes from the argument, so compile() needs example "
                                  "arrays", node, hint="call kernel.compile(x, y, ...) or give "
                                  "the annotation a shape")
                return TensorType(tuple(int(d) for d in given.shape), from_numpy(given.dtype))
            return declared
        if given is _NOARG:
            if declared is None:
                raise p.error(PyptoTypeError, f"Parameter '{node.arg}' missing type annotation",
                              node)
            return declared
        if not is_ir(given):  # a Python number passed to a scalar parameter of a kernel
            given = p.to_ir(given, node)
        actual = given.type
        if declared is not None:
            check_compatible(p, declared, actual, node, f"parameter '{node.arg}' declared")
            if kind is not FunctionKind.INLINE:
                return declared
        return actual

    def _returns(self, p: FunctionParser, kind: FunctionKind, tree: _Def) -> tuple:
        if kind is FunctionKind.INLINE:
            if not p.returns or not p.returns[-1][0]:
                # Called as a statement this is fine (real kernels do it); using the
                # value of such a call is the error (see `no_return_error`).
                self.no_return[p.src.tree.name] = p.span(_name_node(tree))
                return ()
            last = tree.body[-1]
            if not isinstance(last, ast.Return):
                raise p.error(PyptoSyntaxError, "an inline function must end with its return "
                              "statement", p.returns[-1][1])
        if not p.returns:
            return ()
        return tuple(v.type for v in p.returns[-1][0])

    def _check_bound_dynamic(self, p: FunctionParser, tree: _Def) -> None:
        """A pl.dynamic symbol the entry body reads as a value must be bound with
        `x.bind_dynamic(axis, DYN)` on some parameter declaring it. Dims that are only
        declared (e.g. a cache's block count the body never reads) need no binding: real
        kernels leave them unbound."""
        declared: dict[str, list[tuple[str, int]]] = {}
        for param in p.params:
            t = param.var.type
            if not isinstance(t, ShapedType):
                continue
            for axis, d in enumerate(t.shape):
                if isinstance(d, DynDim):
                    declared.setdefault(d.name, []).append((param.var.name, axis))
        for name, node in p.dynvar_uses:
            where = declared.get(name, [])
            if where and not any(w in p.bound_dynamic for w in where):
                pname, axis = where[0]
                raise p.error(DynamicShapeError,
                              f"dynamic dim {name} is used in the entry body but not bound "
                              f"(it is axis {axis} of parameter '{pname}')", node,
                              hint=f"add `{pname}.bind_dynamic({axis}, {name})` at the top of "
                                   "the @pl.jit function, or read the size with "
                                   f"pl.tensor.dim({pname}, {axis})")

    def no_return_error(self, p: FunctionParser, fn_name: str, use: ast.AST) -> Exception:
        """The error for using the value of an inline call whose body returns nothing."""
        return PyptoSyntaxError(
            f"inline function '{fn_name}' returns nothing, but its value is used at "
            f"{p.span(use)}", self.no_return[fn_name],
            hint="an @pl.jit.inline function must return a value; return the output tensor "
                 "it writes (e.g. `return out`)")

    # -- calls between functions -------------------------------------------------

    def call_function(self, p: FunctionParser, callee: Any, args: list, kwargs: dict,
                      node: ast.AST, launch: bool = False) -> Any:
        if "device" in kwargs:  # `chip(..., device=r)`: a dispatch on rank r (pld)
            return self._device_call(p, callee, args, kwargs, node)
        if p.kind is FunctionKind.HOST and not p.in_region and \
                _callee_kind(callee) in (FunctionKind.ORCHESTRATION, FunctionKind.OPAQUE):
            # a chip dispatch with no device=: the runtime hands these out round-robin
            # over the chips in submit order (real `_resolve_chip_worker`)
            return self._device_call(p, callee, args, {**kwargs, "device": None}, node)
        if callable(getattr(callee, "fn", None)) and parse_options(callee.fn).get("subworker"):
            return self._subworker_call(p, callee.fn, args, kwargs, node)
        fn, kind, self_object = self._callee(p, callee, node)
        kwargs = dict(kwargs)
        given = call_attrs(p, kwargs, len(args) + len(kwargs) - ("attrs" in kwargs), node)
        bound = _bind(p, fn, self_object, args, kwargs, node)
        values = list(bound.arguments.values())[1 if self_object else 0:]
        if kind is FunctionKind.INCORE and p.group_body:
            return self._member(p, fn, values, node, self_object)
        if kind is FunctionKind.INCORE:
            return self._launch(p, fn, values, node, launch, self_object, given)
        if given:
            raise p.error(PyptoSyntaxError, "attrs= is for calls of kernels (InCore "
                          f"functions); {fn.__name__} is spliced into its caller", node)
        tagged = frozenset(i for i, v in enumerate(values) if is_ir(v) and is_tagged(p, v))
        key = (id(fn), _signature(values), p.in_region, tagged)
        if key in self._active:
            raise p.error(InvalidOperationError, f"recursive call of {fn.__name__}", node)
        name, func = self._specs.get(key, ("", None))
        if func is None:
            self._active.append(key)
            try:
                name = self.unique(fn.__name__)
                func, _ = self.parse_function(fn, FunctionKind.INLINE, name, args=values,
                                              in_region=p.in_region, self_object=self_object,
                                              tagged=tagged)
            finally:
                self._active.pop()
            self._specs[key] = (name, func)
        if p.kind is FunctionKind.INLINE and node is not p.statement_call:
            # Only a used result matters: a statement call discards the reshaped view.
            check_reshape_back(func, p.span(node))
        ir_args = tuple(p.to_ir(v, node) for v in values if is_ir(v))
        call = CallFunc(name, ir_args, _ret_type(func), p.span(node))
        # Inline calls always stand alone as statements, so the inliner can splice
        # them without looking inside expressions.
        if call.type is NONE:
            p.emit(Eval(call, p.span(node)))
            return None
        tmp = Var(f"{func.attr('source_name', name)}_ret", call.type, span=p.span(node))
        p.emit(Assign((tmp,), call, p.span(node)))
        return tmp

    def _subworker_call(self, p: FunctionParser, fn: Any, args: list, kwargs: dict,
                        node: ast.AST) -> Any:
        """`self.callback(...)` of a host SubWorker: a call the host runs (no task)."""
        values = list(_bind(p, fn, None, args, kwargs, node).arguments.values())
        key = ("subworker", id(fn))
        name, func = self._specs.get(key, ("", None))
        if func is None:
            name = self.unique(fn.__name__)
            func, _ = self.parse_function(fn, FunctionKind.HOST, name)
            self._specs[key] = (name, func)
        call = CallFunc(name, tuple(p.to_ir(v, node) for v in values), _ret_type(func),
                        p.span(node))
        return self._emit_call(p, call, fn.__name__, node)

    def _device_call(self, p: FunctionParser, callee: Any, args: list, kwargs: dict,
                     node: ast.AST) -> Any:
        kwargs = dict(kwargs)
        device = kwargs.pop("device")
        dnode = next((k.value for k in getattr(node, "keywords", ()) if k.arg == "device"), node)
        if isinstance(callee, FunctionDef):
            fn, self_object = callee.fn, (p.self_object.program if p.self_object else None)
            kind = program_kind(callee)
        else:
            fn, self_object, kind = callee.fn, None, callee.kind
        bound = _bind(p, fn, self_object, args, kwargs, node)
        values = list(bound.arguments.values())[1 if self_object else 0:]
        return dispatch_on_device(p, fn, kind, values, device, node, dnode, self_object)

    def chip_function(self, p: FunctionParser, fn: Any, values: list, self_object: Any
                      ) -> tuple[Function, str]:
        """The per-device orchestration function `fn` specialised for these arguments."""
        key = ("device", id(fn), _signature(values))
        spec = self._specs.get(key)
        if spec is None:
            name = self.unique(fn.__name__)
            func, _ = self.parse_function(fn, FunctionKind.ORCHESTRATION, name, args=values,
                                          self_object=self_object)
            spec = self._specs[key] = (name, func)
        return spec[1], spec[0]

    def _callee(self, p: FunctionParser, callee: Any, node: ast.AST) -> tuple:
        if isinstance(callee, FunctionDef):
            if p.self_object is None:
                self.warn(f"mixing kernel forms: a @pl.jit function calls the @pl.program "
                          f"function {callee.__name__}", p.span(node),
                          hint="keep one form per kernel: @pl.jit with @pl.jit.inline helpers, "
                               "or a @pl.program class")
            kind = program_kind(callee)
            if kind is not FunctionKind.INCORE:
                kind = FunctionKind.INLINE
            if not takes_self(callee.fn):
                # an external @pl.function (defined outside any class): called like a
                # sibling method, as the real parser adds it to the program
                check_external(p, self.externals, callee.fn, node)
                return callee.fn, kind, None
            # Outside a program the method still takes `self`; it reaches no siblings.
            owner = p.self_object.program if p.self_object else _NoProgram()
            return callee.fn, kind, owner
        if p.self_object is not None and not callee.options.get("program_form"):
            self.warn(f"mixing kernel forms: a @pl.program function calls the @pl.jit function "
                      f"{callee.__name__}", p.span(node),
                      hint="keep one form per kernel: call self.<function> inside a @pl.program")
        if callee.kind is FunctionKind.ORCHESTRATION and p.kind is not FunctionKind.HOST:
            raise p.error(InvalidOperationError, f"a @pl.jit entry cannot call another @pl.jit "
                          f"entry ({callee.__name__})", node,
                          hint=f"decorate {callee.__name__} with @pl.jit.inline to splice it in")
        kind = FunctionKind.INCORE if callee.kind is FunctionKind.INCORE else FunctionKind.INLINE
        return callee.fn, kind, None

    def _member(self, p: FunctionParser, fn: Any, values: list, node: ast.AST,
                self_object: Any) -> Any:
        """A Group function calls its AIC / AIV functions: they run together as one core
        group (no task launch of their own)."""
        if not core_function_attrs(fn):
            raise p.error(ScopeError, f"a Group function runs AIC and AIV functions; "
                          f"{fn.__name__} is neither", node,
                          hint="declare it @pl.function(type=pl.FunctionType.AIC) or AIV")
        key = ("incore", id(fn), _signature(values))
        name, func = self._specs.get(key, ("", None))
        if func is None:
            name = self.unique(fn.__name__)
            func, _ = self.parse_function(fn, FunctionKind.INCORE, name, args=values,
                                          self_object=self_object)
            self._specs[key] = (name, func)
        call = CallFunc(name, tuple(p.to_ir(v, node) for v in values), _ret_type(func),
                        p.span(node))
        return self._emit_call(p, call, fn.__name__, node)

    @staticmethod
    def _emit_call(p: FunctionParser, call: CallFunc, base: str, node: ast.AST) -> Any:
        """Emit a call run inside the caller's body (no task of its own); its value."""
        if call.type is NONE:
            p.emit(Eval(call, p.span(node)))
            return None
        tmp = Var(f"{base}_ret", call.type, span=p.span(node))
        p.emit(Assign((tmp,), call, p.span(node)))
        return tmp

    def _launch(self, p: FunctionParser, fn: Any, values: list, node: ast.AST, launch: bool,
                self_object: Any, attrs: tuple = ()) -> Any:
        if not launch and p.dispatch_scopes and p.dispatch_scopes[-1][0] == len(p.region_stack):
            # `with pl.spmd(n): self.kernel(...)`: the scope dispatches the kernel on n blocks.
            p.dispatch_scopes[-1][1].append(node)
            launch = True
        key = ("incore", id(fn), _signature(values))
        name, func = self._specs.get(key, ("", None))
        if func is None:
            name = self.unique(fn.__name__)
            func, _ = self.parse_function(fn, FunctionKind.INCORE, name, args=values,
                                          self_object=self_object)
            self._specs[key] = (name, func)
        ir_args = tuple(p.to_ir(v, node) for v in values)
        call = CallFunc(name, ir_args, _ret_type(func), p.span(node), attrs=attrs)
        if launch:
            return call
        if p.in_region:
            # A kernel called from inside a kernel (a pl.at region, an inline pl.spmd
            # body, an InCore function). The real parser accepts it and its outliner
            # keeps the call in the outlined InCore function; its code generator has no
            # code for a call between kernels. So it compiles here too and a run is
            # refused (passes/runnable.py).
            return self._emit_call(p, call, fn.__name__, node)
        # A plain call from orchestration is one task with one block.
        attrs = (("name_hint", fn.__name__),)
        dumps = call_dumps(p, ir_args)
        if dumps:
            attrs += (("dumps", dumps),)
        rt = call.type
        if rt is NONE:
            p.emit(Scope(ScopeKind.INCORE, (Eval(call, p.span(node)),), attrs, None, p.span(node)))
            return None
        items = rt.items if isinstance(rt, TupleType) else (rt,)
        outs = tuple(Var(f"{fn.__name__}_out{i}", t, span=p.span(node))
                     for i, t in enumerate(items))
        p.emit(Scope(ScopeKind.INCORE, (Assign(outs, call, p.span(node)),), attrs, None,
                     p.span(node)))
        return outs[0] if len(outs) == 1 else outs


_NOARG = object()



def positional_params(p: Any, tree: _Def, is_method: bool, defaults: bool = True,
                      what: str = "kernel parameters") -> list[ast.arg]:
    """The parameters of `tree` (after `self` for a method): plain positional ones only."""
    a = tree.args
    if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs or (a.defaults and not defaults):
        extra = ", keyword-only parameters or defaults" if not defaults else \
            " or keyword-only parameters"
        raise p.error(UnsupportedFeatureError, f"{what} must be plain positional parameters "
                      f"(no *args, **kwargs{extra})", tree)
    nodes = list(a.args)
    if is_method:
        if not nodes or nodes[0].arg != "self":
            raise p.error(PyptoSyntaxError, "a @pl.program function takes self first", tree)
        nodes = nodes[1:]
    return nodes


class _NoProgram:
    """`self` of a @pl.function called from outside any @pl.program."""

    __name__ = "<no @pl.program>"
    functions: ClassVar[dict] = {}


def _is_array(v: Any) -> bool:
    return hasattr(v, "shape") and hasattr(v, "dtype") and not is_ir(v)


def _bind(p: Any, fn: Any, self_object: Any, args: list, kwargs: dict,
          node: ast.AST) -> inspect.BoundArguments:
    """The arguments of a call of kernel function `fn`, bound to its parameters; a call
    that does not fit its signature is a type error, as in the real parser."""
    sig = inspect.signature(fn)
    lead = (None,) if self_object else ()
    try:
        return sig.bind(*lead, *args, **kwargs)
    except TypeError as exc:
        params = list(sig.parameters.values())[len(lead):]
        bad = next((k for k in kwargs if k not in sig.parameters), None)
        if bad is not None:
            msg = f"{fn.__name__}() does not accept keyword argument '{bad}'"
            hint = ("task options (deps=, allow_early_resolve=, dumps=, core_num=) belong to "
                    "pl.submit / pl.spmd_submit or a with-scope, not to a plain call"
                    if bad in _TASK_OPTIONS else None)
        else:
            need = [q.name for q in params if q.default is inspect.Parameter.empty]
            msg = (f"{fn.__name__}() expects {len(need)} argument(s) "
                   f"({', '.join(need)}), got {len(args) + len(kwargs)}: {exc}")
            hint = None
        raise p.error(PyptoTypeError, msg, node, hint=hint) from None


_TASK_OPTIONS = {"deps", "allow_early_resolve", "dumps", "core_num", "attrs", "sync_start"}

def _signature(values: list) -> tuple:
    out: list[tuple] = []
    for v in values:
        if is_ir(v):
            out.append(("ir", v.type))
        elif contains_ir(v):
            out.append(("mixed", id(v)))
        else:
            try:
                hash(v)
                out.append(("py", type(v).__name__, v))
            except TypeError:
                out.append(("py", type(v).__name__, repr(v)))
    return tuple(out)


def _ret_type(func: Function) -> Any:
    if not func.returns:
        return NONE
    return func.returns[0] if len(func.returns) == 1 else TupleType(func.returns)


def _name_node(tree: _Def) -> ast.AST:
    """A node whose span is the function's name on its `def` line."""
    n = ast.Name(tree.name)
    n.lineno = tree.lineno
    n.col_offset = tree.col_offset + (6 if isinstance(tree, ast.AsyncFunctionDef) else 4)
    n.end_lineno = tree.lineno
    n.end_col_offset = n.col_offset + len(tree.name)
    return n
