"""The IR's text form read back into IR: what `pl.parse` and `pl.loads` do.

The text is `pl` DSL syntax, as `pypto.ir.printer` writes it: a `@pl.program` class of
`@pl.function` methods (or one module-level `@pl.function`), `pl.dynamic` symbols and
compile-time constants at module level, `import pypto.language as pl`. The text is read,
never executed: each form maps to one IR node (`text_body.py`), so the printer's output
of any stage of the pipeline parses back to the same IR (`pypto.ir.equal`), and a
malformed text gets a located diagnostic.
"""
from __future__ import annotations

import ast
import linecache
import warnings
from enum import Enum
from typing import Any

import pypto.language.distributed as pld
from pypto.errors import (
    InternalError,
    PyptoError,
    PyptoSyntaxError,
    PyptoTypeError,
    PyptoWarning,
    SourceSyntaxError,
    UnsupportedFeatureError,
)
from pypto.frontend.builder import positional_params
from pypto.frontend.resolve import MISSING, PythonScope
from pypto.frontend.source import SourceInfo, parse_python
from pypto.frontend.statements import assigned_names
from pypto.frontend.text_body import TextParser
from pypto.ir.nodes import Function, FunctionKind, Param, Program
from pypto.ir.printer import entry_by_rule
from pypto.ir.span import Span
from pypto.ir.types import Type
from pypto.language.enums import LINQU_LEVEL, FunctionType, Level, Role
from pypto.language.typing import DynVar


class TextReader:
    """One text: its module-level names, then its program or function."""

    def __init__(self, code: str, filename: str, names: dict,
                 source_map: dict | None = None):
        self.code = code
        self.filename = filename
        self.names = dict(names)  # module-level names the text sees ("pl", constants...)
        self.names.setdefault("pld", pld)  # the multi-card vocabulary (pld.window, ...)
        self.pl = names["pl"]
        self.source_map = source_map or {}
        self.warnings: list[PyptoWarning] = []

    # the parser's `builder` interface
    def warn(self, message: str, span: Span, hint: str | None = None,
             category: type | None = None) -> None:
        w = (category or PyptoWarning)(message, span, hint)
        self.warnings.append(w)
        warnings.warn_explicit(w, type(w), span.file, span.line or 1)

    def read(self) -> Function | Program:
        # the diagnostics show source lines through linecache, like a file's
        linecache.cache[self.filename] = (len(self.code), None,
                                          self.code.splitlines(keepends=True), self.filename)
        try:
            module = parse_python(self.code, filename=self.filename)
        except SyntaxError as exc:
            raise SourceSyntaxError(f"invalid syntax: {exc.msg}",
                                   Span(self.filename, exc.lineno or 1, exc.offset or 1),
                                   hint="pl.parse reads Python source in the pl DSL") from None
        self.module_parser = self._parser(module, FunctionKind.OPAQUE, "<module>", {})
        items: list[tuple[Any, tuple]] = []
        for node in module.body:
            item = self.module_level(node)
            if item is not None:
                items.append((node, item))
        if not items:
            raise ValueError(f"No @pl.function or @pl.program found in {self.filename}. Make "
                             "sure your code contains a function decorated with @pl.function or "
                             "a class decorated with @pl.program.")
        if len(items) > 1:
            raise ValueError(f"Multiple functions/programs found in {self.filename}: "
                             f"{[n.name for n, _ in items]}. pl.parse() can only parse code "
                             "containing a single function or program.")
        node, (what, options) = items[0]
        if what == "program":
            return self.program(node, options)
        return self.functions([node], {})[0]

    def _parser(self, node: Any, kind: FunctionKind, name: str, signatures: dict) -> TextParser:
        src = SourceInfo(self.filename, 1, 0, node)
        return TextParser(self, src, PythonScope.of_namespace(self.names), kind, name,
                          signatures)

    # -- module level ---------------------------------------------------------------------

    def module_level(self, node: ast.stmt) -> tuple | None:
        p = self.module_parser
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
            if all((m or "").split(".")[0] == "pypto" for m in mods):
                return None  # `import pypto.language as pl` (pl is always there)
            raise p.error(UnsupportedFeatureError, "the IR text form imports only pypto", node)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            return None  # a docstring
        names = [t for t in getattr(node, "targets", ()) if isinstance(t, ast.Name)]
        if isinstance(node, ast.Assign) and len(names) == len(node.targets):
            value = p.visit_expr(node.value)  # pl.dynamic("M"), a constant
            for t in names:
                self.names[t.id] = value
            return None
        if isinstance(node, ast.ClassDef):
            return "program", self._decorator(node, self.pl.program)
        if isinstance(node, ast.FunctionDef):
            return "function", self._decorator(node, self.pl.function)
        raise p.error(UnsupportedFeatureError, "at module level the IR text form has imports, "
                      "constants and one @pl.program or @pl.function", node)

    def _decorator(self, node: ast.ClassDef | ast.FunctionDef, want: Any) -> dict:
        p = self.module_parser
        what = "@pl.program class" if want is self.pl.program else "@pl.function"
        for dec in node.decorator_list:
            func = dec.func if isinstance(dec, ast.Call) else dec
            if p.visit_expr(func) is want:
                if isinstance(dec, ast.Call):
                    if dec.args:
                        raise p.error(PyptoSyntaxError, f"{what} takes keyword options only",
                                      dec)
                    for k in dec.keywords:
                        self._check_enum_option(k)
                    return {k.arg: (p.visit_expr(k.value), k.value) for k in dec.keywords}
                return {}
        raise p.error(PyptoSyntaxError, f"'{node.name}' is not a {what}", node,
                      hint=f"decorate it with {what.split()[0]}")

    def _check_enum_option(self, kw: ast.keyword) -> None:
        """`type=pl.FunctionType.X` (or level=, role=) naming no member of the enum: a
        syntax error at `X` that lists the members."""
        value = kw.value
        if kw.arg not in ("type", "level", "role") or not isinstance(value, ast.Attribute):
            return
        p = self.module_parser
        try:
            base = p.visit_expr(value.value)
        except PyptoError:
            return  # the whole option is reported when it is read
        if not (isinstance(base, type) and issubclass(base, Enum)) or \
                value.attr in base.__members__:
            return
        line, end = value.end_lineno or value.lineno, value.end_col_offset or 0
        at = ast.Name(value.attr, lineno=line, end_lineno=line, end_col_offset=end,
                      col_offset=end - len(value.attr.encode("utf-8")))
        raise p.error(PyptoSyntaxError, f"unknown {base.__name__} value: {value.attr}", at,
                      hint="valid values: " + ", ".join(sorted(base.__members__)))

    # -- programs and functions -----------------------------------------------------------

    def program(self, node: ast.ClassDef, options: dict) -> Program:
        defs = []
        for stmt in node.body:
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                continue
            if not isinstance(stmt, ast.FunctionDef):
                raise self.module_parser.error(UnsupportedFeatureError, "a @pl.program class "
                                               "holds @pl.function methods only", stmt)
            defs.append(stmt)
        functions = self.functions(defs, self._decorators(defs), method=True)
        program = Program(node.name, tuple(functions), "", self.module_parser.span(node))
        entry, enode = options.get("entry", (None, node))
        if entry is not None and entry not in {f.name for f in functions}:
            raise self.module_parser.error(PyptoSyntaxError, f"entry {entry!r} is not a "
                                           "function of the program", enode)
        return Program(program.name, program.functions, entry or entry_by_rule(program),
                       program.span)

    def _decorators(self, defs: list) -> dict:
        return {d.name: self._decorator(d, self.pl.function) for d in defs}

    def functions(self, defs: list, options: dict, method: bool = False) -> list[Function]:
        if not options:
            options = self._decorators(defs)
        heads = {d.name: self._head(d, options[d.name], method) for d in defs}
        signatures = {name: head[2] for name, head in heads.items()}
        kinds = {name: head[0] for name, head in heads.items()}
        out = []
        for d in defs:
            kind, params, returns, p = heads[d.name]
            p.signatures = signatures
            p.kinds = kinds
            body = list(d.body)
            attrs = (("source_name", d.name),)
            first = _func_attr_call(p, body[0]) if body else None
            if first is not None:
                attrs = self._func_attrs(p, first)
                body = body[1:]
            if _subworker(options[d.name]):
                body = []  # Python, not pl: its `python_body` attribute holds it
            stmts = p.body(body) if body else ()
            out.append(Function(d.name, tuple(params), stmts, kind, tuple(returns), attrs,
                                p.span(d)))
        return out

    def _head(self, node: ast.FunctionDef, options: dict, method: bool) -> tuple:
        kind = FunctionKind.HOST if _subworker(options) else self._kind(options)
        method = method and not _subworker(options)  # a SubWorker takes no self
        p = self._parser(node, kind, node.name, {})
        args = positional_params(p, node, method, defaults=False,
                                 what="parameters of the IR text form")
        locals_ = assigned_names(node.body)
        params = []
        for arg in args:
            if arg.annotation is None:
                raise p.error(PyptoTypeError, f"Parameter '{arg.arg}' missing type annotation",
                              arg, hint="annotate it, e.g. `x: pl.Tensor[[M, N], pl.FP32]`")
            self._declare_symbols(p, arg.annotation, locals_)
            t, direction = p.annotation(arg.annotation)
            if t is None:
                raise p.error(PyptoTypeError, f"parameter '{arg.arg}' needs a shape", arg)
            var = p.new_var(ast.Name(arg.arg, lineno=arg.lineno, col_offset=arg.col_offset,
                                     end_lineno=arg.end_lineno, end_col_offset=arg.end_col_offset),
                            t)
            params.append(Param(var, direction, p.span(arg)))
            p.env[arg.arg] = var
        returns: tuple[Type, ...] = ()
        if node.returns is not None:
            self._declare_symbols(p, node.returns, locals_)
            returns = self._returns(p, node.returns)
        return kind, params, returns, p

    def _kind(self, options: dict) -> FunctionKind:
        value, vnode = options.get("type", (None, None))
        if value is None:
            return FunctionKind.OPAQUE
        name = value.value if isinstance(value, FunctionType) else value
        try:
            return FunctionKind(name)
        except ValueError:
            raise self.module_parser.error(
                PyptoSyntaxError, f"unknown function type {value!r}", vnode,
                hint="one of " + ", ".join(f"pl.FunctionType.{k.value}" for k in FunctionKind)
            ) from None

    def _declare_symbols(self, p: TextParser, node: ast.expr, locals_: set) -> None:
        """A name a signature uses that nothing defines is a `pl.dynamic` symbol, as in
        the real pl.parse; one the body assigns is that local (an extent the body reads)."""
        for leaf in ast.walk(node):
            if isinstance(leaf, ast.Name) and leaf.id not in p.env and \
                    leaf.id not in locals_ and p.py.lookup(leaf.id) is MISSING:
                self.names[leaf.id] = DynVar(leaf.id)

    def _returns(self, p: TextParser, node: ast.expr) -> tuple:
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and \
                node.value.id == "tuple":
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            return tuple(self._one_type(p, i) for i in items)
        return (self._one_type(p, node),)

    def _one_type(self, p: TextParser, node: ast.expr) -> Type:
        t = p.annotation(node)[0]
        if t is None:
            raise p.error(PyptoTypeError, "a return type needs a shape", node)
        return t

    def _func_attrs(self, p: TextParser, call: ast.Call) -> tuple:
        d = call.args[0] if len(call.args) == 1 and not call.keywords else None
        keys: list = list(d.keys) if isinstance(d, ast.Dict) else []
        if not isinstance(d, ast.Dict) or any(not (isinstance(k, ast.Constant) and
                                                   isinstance(k.value, str)) for k in keys):
            raise p.error(PyptoSyntaxError, "pl.func_attr takes one dict literal with string "
                          "keys", call)
        return tuple((k.value, p.visit_expr(v)) for k, v in zip(keys, d.values))


def _subworker(options: dict) -> bool:
    """`@pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)` (or a higher level)."""
    level, role = options.get("level", (None,))[0], options.get("role", (None,))[0]
    return role is Role.SubWorker and LINQU_LEVEL.get(level, 0) >= LINQU_LEVEL[Level.HOST]


def _func_attr_call(p: TextParser, stmt: ast.stmt) -> ast.Call | None:
    """The `pl.func_attr({...})` call `stmt` is, or None."""
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if isinstance(call, ast.Call) and p._construct(call.func) is p.py.lookup("pl").func_attr:
        return call
    return None


def parse_text(code: str, filename: str, names: dict,
               source_map: dict | None = None) -> Function | Program:
    """The Function or Program the text form `code` describes. `names` are the
    module-level names the text sees; it must hold `pl`."""
    try:
        return TextReader(code, filename, names, source_map).read()
    except (PyptoError, ValueError, InternalError):
        raise
    except RecursionError:
        raise PyptoSyntaxError("the text is nested too deeply to parse",
                               Span(filename, 1, 1)) from None
    except Exception as exc:  # a bug in the reader, not in the text
        raise InternalError(f"pl.parse crashed on {filename}: {type(exc).__name__}: {exc}"
                            ) from exc


__all__ = ["TextReader", "parse_text"]
