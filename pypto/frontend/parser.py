"""The parser: a Python function's AST becomes an IR `Function`.

Statements and expressions are dispatched through two tables keyed by AST node
class (`dispatch.STATEMENTS`, `dispatch.EXPRESSIONS`), which the handler modules
fill when `pypto.frontend` is imported. The two `visit_*` methods are the single
choke point: they attach the node's span to errors, let user errors
(`PyptoError`) through, turn anything else into an `InternalError`, and reject AST
nodes no handler knows with a located `UnsupportedFeatureError` naming the
construct.

The IR produced here is *named*: rebinding a name creates a new `Var` with the
same name, and loop-carried values are implicit. The SSA pass makes both
explicit.
"""
from __future__ import annotations

import ast
import difflib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pypto.errors import (
    InternalError,
    PyptoError,
    PyptoTypeError,
    SSAViolationError,
    UndefinedNameError,
    UnsupportedFeatureError,
    UserError,
)
from pypto.frontend.dispatch import EXPRESSIONS, STATEMENTS
from pypto.frontend.opcall import dynvar_value
from pypto.frontend.resolve import MISSING, PythonScope
from pypto.frontend.source import SourceInfo
from pypto.frontend.values import const, is_number
from pypto.ir.nodes import Assign, Attr, Call, Direction, Expr, FunctionKind, ListExpr, Param, Var
from pypto.ir.refusal import Refusal
from pypto.ir.span import Span
from pypto.ir.transform import walk
from pypto.ir.types import ShapedType, Type
from pypto.language.typing import DimExpr


class FunctionParser:
    """Parses one function body. `builder` is the program being assembled."""

    def __init__(self, builder: Any, src: SourceInfo, scope: PythonScope, kind: FunctionKind,
                 name: str):
        self.builder = builder
        self.src = src
        self.py = scope
        self.kind = kind
        self.name = name
        self.env: dict[str, Any] = {}
        self.stmts: list = []
        self.params: list[Param] = []
        # DynVar name -> (param var, axis): a DynVar used as a value in the body
        # is read from the first parameter that declares it.
        self.dyn_dims: dict[str, tuple[Var, int]] = {}
        self.bound_dynamic: set[tuple[str, int]] = set()
        self.dynvar_uses: list[tuple[str, ast.AST]] = []  # DynVars read as values in the body
        self.statement_call: ast.AST | None = None  # the call of the current `f(...)` statement
        self.bind_dynamic_calls: list = []
        self.returns: list = []  # (values, node) of each return statement
        self.branch_stack: list = []  # yield_ results collected per if-arm
        self.force_ir: set[str] = set()
        self.region_stack: list[str] = []  # "at" / "spmd" scopes we are inside
        # `with pl.spmd(n):` scopes open here: (region depth, kernel-call nodes dispatched)
        self.dispatch_scopes: list[tuple[int, list]] = []
        self.loop_stack: list[Any] = []
        self.func_attrs: dict[str, Any] = {}
        self.self_object: Any = None  # the @pl.program whose methods `self.` reaches
        self.annotating = False  # evaluating a parameter annotation, not the body
        self.ir_text = False  # reading the printed IR text form (pl.parse), not a kernel
        self.split_modes: list[Any] = []  # modes of the pl.split_aiv loops we are inside
        self.group_body = False  # a Group function: its calls run its AIC / AIV members
        # `t: pl.Tile[...] = op(...)`: (the call node, the declared type) while it is parsed
        self.annotated_call: tuple[ast.AST, Any] | None = None
        # strict_ssa=True: each name is assigned once per scope (function, loop body, if
        # arm, region); the names defined so far in each open scope, with their spans
        self.strict_ssa = False
        self.ssa_scopes: list[dict[str, Span]] = [{}]
        # auto_scope=True (the default): the compiler places the AUTO runtime scopes, so
        # the body may open only MANUAL ones; the modes of the runtime scopes open here
        self.auto_scope = True
        self.runtime_scopes: list[Any] = []
        self.clusters = 0  # pl.cluster scopes open here
        # the values `pl.dump_tag` marked, in order (matched by identity: `dump_tags`)
        self.dump_tags: list[Var] = []
        # tensor value uid -> the TaskId of the task in this function that produced it
        # (a dispatch predicate over it needs that task in deps=)
        self.task_outputs: dict[int, Var] = {}
        # ids of the comprehensions a `deps=` of this body holds (the only place the
        # language reads one), found on first use (expressions._deps_comprehensions)
        self.deps_comprehensions: set[int] | None = None
        # a @pl.function body: a rebound name keeps its type (`_check_retype`)
        self.one_var_per_name = False
        # a @pl.jit body: the rebindings that keep their variable, by statement (the
        # rest the real specializer renames; jit_rebind.py), or None
        self.jit_rebinds: dict[int, set[str]] | None = None
        self.current_stmt: ast.stmt | None = None

    # -- diagnostics -------------------------------------------------------------

    def span(self, node: Any) -> Span:
        return self.src.span(node)

    def error(self, cls: type[UserError], message: str, node: Any, hint: str | None = None,
              note: str | None = None) -> UserError:
        return cls(message, self.span(node), hint, note)

    def warn(self, message: str, node: Any, hint: str | None = None,
             category: type | None = None) -> None:
        self.builder.warn(message, self.span(node), hint, category)

    # -- the choke points --------------------------------------------------------

    def visit_stmt(self, node: ast.stmt) -> None:
        handler = STATEMENTS.get(type(node))
        if handler is None:
            raise self.error(UnsupportedFeatureError,
                             f"the Python statement '{_construct(node)}' is not supported in a "
                             "kernel body", node, hint=_STMT_HINTS.get(type(node)))
        saved, self.current_stmt = self.current_stmt, node
        try:
            self._guard(handler, node)
        finally:
            self.current_stmt = saved

    def visit_expr(self, node: ast.expr) -> Any:
        """Evaluate an expression: an IR `Expr` for run-time values, a Python object
        for compile-time ones (constants, modules, dtypes, kernels, ops)."""
        handler = EXPRESSIONS.get(type(node))
        if handler is None:
            raise self.error(UnsupportedFeatureError,
                             f"the Python expression '{_construct(node)}' is not supported in a "
                             "kernel body", node, hint=_EXPR_HINTS.get(type(node)))
        return self._guard(handler, node)

    def _guard(self, handler: Any, node: ast.AST) -> Any:
        try:
            return handler(self, node)
        except PyptoError as err:
            if err.span is None:
                err.span = self.span(node)
            raise
        except InternalError:
            raise
        except RecursionError:
            raise self.error(UnsupportedFeatureError, "the kernel is nested too deeply to parse",
                             node) from None
        except Exception as exc:  # a bug in a handler, not in the user's kernel
            raise InternalError(f"parser crashed on {self.span(node)} "
                                f"({type(node).__name__}): {type(exc).__name__}: {exc}") from exc

    def visit_body(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            self.visit_stmt(stmt)

    @contextmanager
    def block(self) -> Iterator[list]:
        """Collect the statements emitted inside the `with` into a fresh list."""
        saved = self.stmts
        self.stmts = []
        self.ssa_scopes.append({})
        try:
            yield self.stmts
        finally:
            self.stmts = saved
            self.ssa_scopes.pop()

    def emit(self, stmt: Any) -> None:
        self.stmts.append(stmt)

    # -- names -------------------------------------------------------------------

    def lookup(self, name: str, node: ast.AST) -> Any:
        if name in self.env:
            return self.env[name]
        if name == "self" and self.self_object is not None:
            return self.self_object
        if name == "self" and self.builder.jit_program is not None:
            return self.builder.jit_program
        value = self.py.lookup(name)
        if value is MISSING:
            known = [n for n in (*self.env, *self.py.closure, *self.py.globals)
                     if not n.startswith("__")]
            close = difflib.get_close_matches(name, known, n=1, cutoff=0.7)
            hint = (f"did you mean '{close[0]}'?" if close else
                    "define it before the kernel, or assign it earlier in the body")
            raise self.error(UndefinedNameError, f"name '{name}' is not defined", node, hint=hint)
        return value

    def bind(self, name: str, value: Any, node: ast.AST) -> Any:
        """Bind `name` to `value`. Run-time values get a Var and an Assign; Python
        values stay compile-time unless the name is carried across a loop or branch."""
        if self.strict_ssa:
            self.define_once(name, node)
        if isinstance(value, Expr) or (name in self.force_ir and is_number(value)):
            ir = self.to_ir(value, node)
            self._check_out_rebind(name, ir, node)
            self._check_retype(name, ir, node)
            var = Var(name, ir.type, span=self.span(node))
            self.emit(Assign((var,), ir, self.span(node)))
            self.env[name] = var
            return var
        self.env[name] = value
        return value

    def define_once(self, name: str, node: ast.AST) -> None:
        """strict_ssa=True: `name` must not be assigned twice in the current scope."""
        scope = self.ssa_scopes[-1]
        if name in scope:
            raise self.error(SSAViolationError, f"Variable '{name}' is already defined", node,
                             hint="use a different name for each assignment (strict_ssa=True "
                                  "asks for SSA form)",
                             note=f"first defined at {scope[name]}")
        scope[name] = self.span(node)

    def _check_retype(self, name: str, value: Expr, node: ast.AST) -> None:
        """In a `@pl.function` a name keeps its tensor / tile type when rebound (the real
        parser's rule, #642: one Python name is one IR variable there). Checked on what
        both parsers know the same way: tensor or tile, dtype, rank and static extents.
        A `@pl.jit` body is alpha-renamed first by the real specializer: a rebinding at
        the depth of the name's first binding is a new variable, one deeper keeps it
        and is checked (`jit_rebind.checked_rebinds`)."""
        prev = self.env.get(name)
        if self.strict_ssa or not isinstance(prev, Var):
            return
        if not self.one_var_per_name and (self.jit_rebinds is None or name not in
                                          self.jit_rebinds.get(id(self.current_stmt), ())):
            return
        was, got = prev.type, value.type
        if not (isinstance(was, ShapedType) and isinstance(got, ShapedType)):
            return
        differ = type(was) is not type(got) or was.dtype != got.dtype or \
            len(was.shape) != len(got.shape) or \
            any(isinstance(a, int) and isinstance(b, int) and a != b
                for a, b in zip(was.shape, got.shape))
        if differ:
            raise self.error(PyptoTypeError, f"Cannot reassign '{name}' with a different type: "
                             f"was {was}, got {got}", node,
                             hint="use another name for a value of another shape or dtype",
                             note=f"'{name}' was bound at {prev.span}")

    def _check_out_rebind(self, name: str, value: Expr, node: ast.AST) -> None:
        """`out = pl.exp(x)` on an Out/InOut parameter rebinds the name and writes nothing
        to the caller's buffer (`out = f(out, ...)` and `out[...] = v` are writes)."""
        prev = self.env.get(name)
        if not isinstance(prev, Var) or not isinstance(value, Call):
            return
        if self.kind not in (FunctionKind.ORCHESTRATION, FunctionKind.OPAQUE,
                             FunctionKind.HOST):
            return
        param = next((q for q in self.params if q.var is prev), None)
        if param is None or param.direction is Direction.IN:
            return
        if any(isinstance(n, Var) and n is prev for n in walk(value)):
            return
        if param.direction is Direction.OUT and "at" in self.region_stack:
            # inside a region the name becomes a local of the outlined kernel that no
            # store ever takes to the output. The real parser accepts it and its code
            # generator fails (PartialCodegenError): so it compiles here and a run is
            # refused (`pypto.passes.runnable`, which warns)
            self.builder.refusals.append(Refusal(
                "codegen", f"assigning to pl.Out parameter '{name}' inside a pl.at region "
                "rebinds the name: the value never reaches the output buffer", self.span(node),
                f"write into it with `{name}[...] = value` (or pl.assemble / pl.store), or "
                "bind the value to another name",
                "the program compiles, as with the real parser; the real code generator "
                "fails on it (PartialCodegenError, real examples/utils/error_handling.py)"))
            return
        self.warn(f"assigning to pl.{param.direction.value} parameter '{name}' rebinds the name; "
                  "nothing is written to the output buffer", node,
                  hint=f"write into it with `{name}[...] = value` (or pl.assemble / pl.store)")

    def materialize(self, names: set[str], node: ast.AST) -> None:
        """Names (re)assigned inside a loop body or a run-time branch must be run-time
        values from here on, or the loop would fold its first iteration."""
        for name in sorted(names):
            self.force_ir.add(name)
            value = self.env.get(name)
            if value is not None and is_number(value):
                self.bind(name, value, node)

    # -- conversions -------------------------------------------------------------

    def to_ir(self, value: Any, node: ast.AST) -> Expr:
        """A value as an IR expression (Python numbers become literals, other Python
        objects become attributes, lists become `ListExpr`)."""
        span = self.span(node)
        if isinstance(value, Expr):
            return value
        if is_number(value):
            return const(value, span)
        if isinstance(value, (list, tuple)):
            return ListExpr(tuple(self.to_ir(v, node) for v in value), span=span)
        if isinstance(value, DimExpr):
            return dynvar_value(self, value, node)
        return Attr(value, span=span)

    def expr_type(self, value: Any) -> Type | None:
        return value.type if isinstance(value, Expr) and not isinstance(value, Attr) else None

    @property
    def in_region(self) -> bool:
        return bool(self.region_stack) or self.kind is FunctionKind.INCORE


def _construct(node: ast.AST) -> str:
    try:
        text = ast.unparse(node).splitlines()[0]
    except Exception:  # noqa: BLE001 - best effort for the message only
        text = type(node).__name__
    return text if len(text) <= 60 else text[:57] + "..."


_EXPR_HINTS = {
    ast.NamedExpr: "assign on its own line first, then use the name",
    ast.Set: "use a list or a tuple",
    ast.SetComp: "use a list comprehension over a compile-time iterable",
    ast.DictComp: "build the dict before the kernel; kernels fold compile-time dicts only",
    ast.Yield: "kernels are not generators; return values with `return`",
    ast.YieldFrom: "kernels are not generators; return values with `return`",
    ast.Await: "kernels are not coroutines",
    ast.Slice: "slices are only valid inside a subscript",
}

_STMT_HINTS = {
    ast.While: "write `for (x,) in pl.while_(init_values=(...)):` with pl.cond(...) first",
    ast.Try: "kernels cannot catch exceptions",
    ast.Raise: "use pl.static_assert(cond, 'message') for compile-time checks",
    ast.ClassDef: "define classes outside the kernel",
    ast.FunctionDef: "define helpers at module level as @pl.jit.inline functions",
    ast.Import: "import modules at module level",
    ast.ImportFrom: "import modules at module level",
    ast.Global: "kernels cannot rebind module globals",
    ast.Nonlocal: "kernels cannot rebind closure variables",
    ast.Delete: "names cannot be deleted in a kernel",
}
