"""Render IR as `pl`-style Python text: what the workbench shows, and the text form
that `pl.parse` reads back into the same IR (`pypto.frontend.text`).

The text says everything the IR holds: every binding's full type (valid shape and
layout included), loop and if results as the targets of their `pl.yield_`, scope,
loop and launch attributes as keywords, function attributes as `pl.func_attr`, and
the `pl.dynamic` symbols declared at the top. Where a binding has no place for an
annotation (tuple targets) and its type is not the one the reader would infer, a
bare annotation `name: T` on the line before declares it.

The IR does not know the op table (it sits above the IR): how a call of an op is
spelled - its public name, its signature (for keyword arguments and defaults left
out), the Python operator of a scalar op - comes from the lookup that `pypto.ops`
installs with `use_op_spellings` when it loads. Without one, calls print as
`op(args...)`.
"""
from __future__ import annotations

import inspect
from collections.abc import Callable
from enum import Enum
from typing import Any

from pypto.ir import dtypes
from pypto.ir.distributed import DistributedTensorType
from pypto.ir.nodes import (
    LAUNCH_DEFAULTS,
    Assign,
    Attr,
    Break,
    Call,
    CallFunc,
    Const,
    Continue,
    DynDim,
    Eval,
    Expr,
    For,
    Function,
    FunctionKind,
    GetItem,
    If,
    ListExpr,
    LoopKind,
    Program,
    Return,
    Scope,
    ScopeKind,
    Var,
    While,
    Yield,
    literal,
)
from pypto.ir.options import CrossCoreSlot, Split
from pypto.ir.record import record
from pypto.ir.transform import walk
from pypto.ir.types import (
    ArrayType,
    AttrType,
    NoneType,
    ScalarType,
    TensorType,
    TileType,
    TupleType,
    Type,
)


@record(slots=False)
class OpSpelling:
    """How a call of one op is written."""

    name: str  # the public spelling, e.g. "pl.row_sum"
    params: tuple[inspect.Parameter, ...]  # the op's signature, in argument order
    symbol: str | None = None  # a Python operator: infix with two operands, else prefix


_SPELLINGS: list[Callable[[str], OpSpelling | None]] = []


def use_op_spellings(lookup: Callable[[str], OpSpelling | None]) -> None:
    """Spell op calls as `lookup(op name)` says (installed by `pypto.ops`)."""
    _SPELLINGS[:] = [lookup]




# --- expressions ---------------------------------------------------------------------


def expr_str(e: Any) -> str:
    if isinstance(e, (Var, DynDim)):
        return e.name
    if isinstance(e, Const):
        return _const_str(e)
    if isinstance(e, Attr):
        return value_str(e.value)
    if isinstance(e, ListExpr):
        return "[" + ", ".join(expr_str(i) for i in e.items) + "]"
    if isinstance(e, GetItem):
        return f"{expr_str(e.value)}[{e.index}]"
    if isinstance(e, Call):
        return _call_str(e)
    if isinstance(e, CallFunc):
        return _callfunc_str(e)
    return value_str(e)


def value_str(v: Any) -> str:
    """A compile-time value (attribute, keyword value) as the Python that makes it."""
    if isinstance(v, Expr):
        return expr_str(v)
    if isinstance(v, Enum) and type(v).__name__ == "ArgDirection":
        return f"pl.adir.{v.value}"  # the language's spelling of a call-site direction
    if isinstance(v, Enum):
        # the communication enums (NotifyOp, WaitCmp, ReduceOp) live in `pld`
        space = "pld" if type(v).__module__ == "pypto.ir.distributed" else "pl"
        return f"{space}.{type(v).__name__}.{v.name}"
    if isinstance(v, float):
        return _float_str(v)
    if isinstance(v, tuple):
        return "(" + ", ".join(value_str(i) for i in v) + ("," if len(v) == 1 else "") + ")"
    if isinstance(v, list):
        return "[" + ", ".join(value_str(i) for i in v) + "]"
    if isinstance(v, Split):  # pl.split(...) objects
        slot = f", slot_num={v.slot_num}" if v.slot_num is not None else ""
        return f"pl.split({value_str(v.mode)}{slot})"
    if isinstance(v, CrossCoreSlot):
        return f"pl.cross_core_slot(slot_num={v.slot_num})"
    return repr(v)


def _float_str(v: float) -> str:
    text = repr(v)
    return text if text not in ("inf", "-inf", "nan") else f"float({text!r})"


def _const_str(c: Const) -> str:
    v = c.value
    if c == literal(v) and not isinstance(v, Enum):
        return _float_str(v) if isinstance(v, float) else repr(v)
    if isinstance(v, Enum) and c.type == ScalarType(dtypes.INDEX):
        return value_str(v)  # an IntEnum used as a number (pl.AtomicType.Add)
    dtype = c.type.dtype if isinstance(c.type, ScalarType) else None
    return f"pl.const({value_str(v)}, {dtype!r})"


def _default_expr(value: Any) -> Expr:
    """The IR an op argument left at its default reads back as."""
    if isinstance(value, (bool, int, float)) and not isinstance(value, Enum):
        return literal(value)
    return Attr(value)


def _call_str(c: Call) -> str:
    op = _SPELLINGS[0](c.op) if _SPELLINGS else None
    if op is None:
        return f"{c.op}(" + ", ".join(expr_str(a) for a in c.args) + ")"
    sym = op.symbol
    if sym is not None and len(c.args) == 2:
        return f"({expr_str(c.args[0])} {sym} {expr_str(c.args[1])})"
    if sym is not None and len(c.args) == 1:
        return f"{sym}{' ' if sym.isalpha() else ''}{expr_str(c.args[0])}"
    parts = []
    for p, a in zip(op.params, c.args):
        if p.default is not p.empty and a == _default_expr(p.default):
            continue
        keyword = p.default is not p.empty or p.kind is p.KEYWORD_ONLY
        parts.append(f"{p.name}={expr_str(a)}" if keyword else expr_str(a))
    return f"{op.name}(" + ", ".join(parts) + ")"


def _callfunc_str(c: CallFunc) -> str:
    parts = [expr_str(a) for a in c.args]
    if c.launch_attr("kind") == "device":  # a host's dispatch on one rank (pld)
        if c.launch_attr("device") is not None:  # (none: the runtime picks the chip)
            parts.append(f"device={expr_str(c.launch_attr('device'))}")
    elif c.launch:
        given = dict(c.launch)
        for key, default in LAUNCH_DEFAULTS:
            value = given.get(key, default)
            if key == "kind" or value != default or type(value) is not type(default):
                parts.append(f"{'launch' if key == 'kind' else key}={value_str(value)}")
    if c.attrs:  # the call site's attributes (arg_directions, ...)
        parts.append("attrs={" + ", ".join(
            f"{k!r}: {value_str(list(v) if isinstance(v, tuple) else v)}" for k, v in c.attrs)
            + "}")
    return f"self.{c.func}(" + ", ".join(parts) + ")"


# --- types ---------------------------------------------------------------------------


def _dims(dims: tuple) -> str:
    return "[" + ", ".join(str(d) if isinstance(d, int) else expr_str(d) for d in dims) + "]"


def type_str(t: Type) -> str:
    """A type as the annotation that declares it."""
    if isinstance(t, ScalarType):
        return f"pl.Scalar[{t.dtype!r}]"
    if isinstance(t, TensorType):
        extra = f", pl.{t.layout}" if t.layout != "ND" else ""
        if t.valid_shape is not None:
            extra += f", pl.TensorView(valid_shape={_dims(t.valid_shape)})"
        name = "pld.DistributedTensor" if isinstance(t, DistributedTensorType) else "pl.Tensor"
        return f"{name}[{_dims(t.shape)}, {t.dtype!r}{extra}]"
    if isinstance(t, TileType):
        view = (f", pl.TileView(valid_shape={_dims(t.valid_shape)})"
                if t.valid_shape is not None else "")
        return f"pl.Tile[{_dims(t.shape)}, {t.dtype!r}, pl.Mem.{t.memory.value}{view}]"
    if isinstance(t, TupleType):
        return "pl.Tuple[" + ", ".join(type_str(i) for i in t.items) + "]"
    if isinstance(t, ArrayType):
        return f"pl.Array[{t.extent}, {t.dtype!r}]"
    if isinstance(t, (NoneType, AttrType)):
        return "None"
    return str(t)


def returns_str(returns: tuple) -> str:
    if not returns:
        return ""
    if len(returns) == 1:
        return f" -> {type_str(returns[0])}"
    return " -> tuple[" + ", ".join(type_str(t) for t in returns) + "]"


# --- statements ----------------------------------------------------------------------


def entry_by_rule(program: Program) -> str:
    """The entry a reader infers: the function named like the program, else the only
    Orchestration function, else the only function, else the first Orchestration one."""
    names = [f.name for f in program.functions]
    if program.name in names:
        return program.name
    orch = [f.name for f in program.functions if f.kind is FunctionKind.ORCHESTRATION]
    if len(orch) == 1 or (orch and len(names) > 1):
        return orch[0]
    return names[0] if names else ""


class _Printer:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def line(self, depth: int, text: str) -> None:
        self.lines.append("    " * depth + text)

    def body(self, stmts: tuple, depth: int, results: tuple = ()) -> None:
        if not stmts:
            self.line(depth, "pass")
        for s in stmts:
            if isinstance(s, Yield):
                self._yield(s, depth, results)
            else:
                self.stmt(s, depth)

    def declare(self, d: int, binds: tuple, inferred: tuple | None) -> None:
        """Bare annotations for bindings whose type the reader would not infer."""
        for i, v in enumerate(binds):
            want = inferred[i] if inferred is not None and i < len(inferred) else None
            if v.type != want:
                self.line(d, f"{v.name}: {type_str(v.type)}")

    def stmt(self, s: Any, d: int) -> None:
        if isinstance(s, Assign):
            lhs = ", ".join(t.name for t in s.targets)
            if len(s.targets) == 1:
                lhs += f": {type_str(s.targets[0].type)}"
            else:
                t = s.value.type
                self.declare(d, s.targets, t.items if isinstance(t, TupleType) else None)
            self.line(d, f"{lhs} = {expr_str(s.value)}")
        elif isinstance(s, Eval):
            self.line(d, expr_str(s.expr))
        elif isinstance(s, For):
            self._for(s, d)
        elif isinstance(s, While):
            self.declare(d, s.iter_args, _init_types(s.inits))
            carried = "".join(f"{a.name}, " for a in s.iter_args)
            inits = "".join(f"{expr_str(i)}, " for i in s.inits)
            self.line(d, f"for ({carried.rstrip()}) in pl.while_(init_values=({inits.rstrip()})):")
            self.line(d + 1, f"pl.cond({expr_str(s.cond)})")
            self.body(s.body, d + 1, s.results)
        elif isinstance(s, If):
            self.line(d, f"if {expr_str(s.cond)}:")
            self.body(s.then_body, d + 1, s.results)
            if s.else_body:
                self.line(d, "else:")
                self.body(s.else_body, d + 1, s.results)
        elif isinstance(s, Return):
            self.line(d, ("return " + ", ".join(expr_str(v) for v in s.values)).rstrip())
        elif isinstance(s, Break):
            self.line(d, "break")
        elif isinstance(s, Continue):
            self.line(d, "continue")
        elif isinstance(s, Scope):
            self._scope(s, d)
        else:
            self.line(d, f"<{type(s).__name__}>")

    def _yield(self, s: Yield, d: int, results: tuple) -> None:
        call = "pl.yield_(" + ", ".join(expr_str(v) for v in s.values) + ")"
        if not results:
            self.line(d, call)
        elif len(results) == 1:
            self.line(d, f"{results[0].name}: {type_str(results[0].type)} = {call}")
        else:
            self.declare(d, results, tuple(v.type for v in s.values))
            self.line(d, ", ".join(r.name for r in results) + f" = {call}")

    def _for(self, s: For, d: int) -> None:
        if s.kind is LoopKind.SPMD and s.attrs and s.attrs[0][0] == "core_num" \
                and s.stop == s.attrs[0][1] and s.start == literal(0) and s.step == literal(1):
            args = []  # `pl.spmd(core_num=n, ...)` runs blocks 0 .. n-1
        else:
            args = [expr_str(s.start), expr_str(s.stop)]
            if s.step != literal(1):
                args.append(expr_str(s.step))
        args += [f"{k}={value_str(v)}" for k, v in s.attrs]
        self.declare(d, (s.var,), (ScalarType(dtypes.INDEX),))
        if s.iter_args:
            self.declare(d, s.iter_args, _init_types(s.inits))
            args.append("init_values=(" + "".join(f"{expr_str(i)}, " for i in s.inits).rstrip()
                        + ")")
            target = f"{s.var.name}, (" + "".join(f"{a.name}, " for a in s.iter_args).rstrip() \
                + ")"
        else:
            target = s.var.name
        self.line(d, f"for {target} in pl.{s.kind.value}(" + ", ".join(args) + "):")
        self.body(s.body, d + 1, s.results)

    def _scope(self, s: Scope, d: int) -> None:
        kw = []
        for k, v in s.attrs:
            if k == "level" and s.kind in (ScopeKind.INCORE, ScopeKind.HIERARCHY):
                kw.append(f"level=pl.Level.{v}")  # regions record their level by name
            elif k == "role" and s.kind is ScopeKind.HIERARCHY:
                kw.append(f"role=pl.Role.{v}")
            else:
                kw.append(f"{k}={value_str(v)}")
        head = {ScopeKind.SPMD: "pl.spmd", ScopeKind.INCORE: "pl.at", ScopeKind.HIERARCHY: "pl.at",
                ScopeKind.RUNTIME: "pl.scope", ScopeKind.MANUAL: "pl.manual_scope",
                ScopeKind.CLUSTER: "pl.cluster", ScopeKind.SPLIT_AIV: "pl.split_aiv"}[s.kind]
        tail = ""
        if s.task is not None:
            self.declare(d, (s.task,), (ScalarType(dtypes.TASK_ID),))
            tail = f" as {s.task.name}"
        self.line(d, f"with {head}({', '.join(kw)}){tail}:")
        self.body(s.body, d + 1)

    def function(self, f: Function, d: int = 0, method: bool = True) -> None:
        if f.attr("role") == "SubWorker":
            self.subworker(f, d)
            return
        params = ["self"] if method else []
        for p in f.params:
            t = type_str(p.var.type)
            if p.direction.value != "In":
                t = f"pl.{p.direction.value}[{t}]"
            params.append(f"{p.var.name}: {t}")
        kind = f.kind.value
        kind = f"pl.FunctionType.{kind}" if kind in _FUNCTION_TYPES else repr(kind)
        self.line(d, f"@pl.function(type={kind})")
        self.line(d, f"def {f.name}(" + ", ".join(params) + f"){returns_str(f.returns)}:")
        if f.attrs != (("source_name", f.name),):
            items = ", ".join(f"{k!r}: {value_str(v)}" for k, v in f.attrs)
            self.line(d + 1, f"pl.func_attr({{{items}}})")
        self.body(f.body, d + 1)


    def subworker(self, f: Function, d: int) -> None:
        """A host SubWorker, as it is written: no `self`, its attributes (which say what
        the body is) in the prologue, then `...` or its Python body (never read back:
        the `python_body` attribute holds it)."""
        params = ", ".join(f"{p.var.name}: {type_str(p.var.type)}" for p in f.params)
        self.line(d, f"@pl.function(level=pl.Level.{f.attr('level')}, role=pl.Role.SubWorker)")
        self.line(d, f"def {f.name}({params}){returns_str(f.returns)}:")
        items = ", ".join(f"{k!r}: {value_str(v)}" for k, v in f.attrs)
        self.line(d + 1, f"pl.func_attr({{{items}}})")
        for text in str(f.attr("python_body", "...")).splitlines():
            self.line(d + 1, text)


def _init_types(inits: tuple) -> tuple:
    """The types the reader infers for carried values from their initial values: an
    undefined initial value (`None`, a value first defined in the loop) tells none."""
    return tuple(None if isinstance(i, Attr) and i.value is None else i.type for i in inits)


# FunctionKind values that pl.FunctionType spells (the rest print as strings)
_FUNCTION_TYPES = {"Opaque", "Orchestration", "InCore", "AIC", "AIV", "Group", "Inline"}


def _symbols(node: Any, found: dict) -> None:
    """Every `DynDim` and every `Var` (name -> class) mentioned by `node`, types included."""
    stack = [node]
    seen: set[int] = set()
    while stack:
        n = stack.pop()
        if id(n) in seen or isinstance(n, (str, int, float, Enum)) or n is None:
            continue
        seen.add(id(n))
        if isinstance(n, (DynDim, Var)):
            found.setdefault(n.name, type(n))
            stack.append(n.type)
        elif isinstance(n, (tuple, list)):
            stack.extend(n)
        elif hasattr(n, "__dataclass_fields__"):
            stack.extend(getattr(n, f) for f in n.__dataclass_fields__ if f != "span")


def _bound_names(f: Function) -> set[str]:
    names = {p.var.name for p in f.params}
    for n in walk(f.body):
        if isinstance(n, Assign):
            names.update(t.name for t in n.targets)
        elif isinstance(n, (For, While, If)):
            bound = (*getattr(n, "iter_args", ()), *n.results)
            names.update(v.name for v in bound)
            if isinstance(n, For):
                names.add(n.var.name)
        elif isinstance(n, Scope) and n.task is not None:
            names.add(n.task.name)
    return names


def _dynamic_names(functions: tuple) -> list[str]:
    """The names the text declares with `pl.dynamic`: every `DynDim`, and every symbol a
    signature uses that its function does not bind (the reader would take it for one)."""
    names: set[str] = set()
    for f in functions:
        found: dict = {}
        _symbols(f, found)
        names.update(n for n, cls in found.items() if cls is DynDim)
        sig: dict = {}
        _symbols((tuple(p.var.type for p in f.params), f.returns), sig)
        names.update(set(sig) - _bound_names(f))
    return sorted(names)


def _header(functions: tuple) -> list[str]:
    lines = [f"{n} = pl.dynamic({n!r})" for n in _dynamic_names(functions)]
    return lines + [""] if lines else []


def print_function(f: Function) -> str:
    """`f` as a module-level `@pl.function` (what `pl.parse` reads back as a Function)."""
    p = _Printer()
    p.lines.extend(_header((f,)))
    p.function(f, method=False)
    return "\n".join(p.lines)


def print_program(prog: Program) -> str:
    p = _Printer()
    p.lines.extend(_header(prog.functions))
    entry = "" if entry_by_rule(prog) == prog.entry else f"(entry={prog.entry!r})"
    p.line(0, f"@pl.program{entry}")
    p.line(0, f"class {prog.name}:")
    for i, f in enumerate(prog.functions):
        if i:
            p.lines.append("")
        p.function(f, 1)
    return "\n".join(p.lines)


__all__ = [
    "OpSpelling",
    "entry_by_rule",
    "expr_str",
    "print_function",
    "print_program",
    "type_str",
    "use_op_spellings",
    "value_str",
    "walk",
]
