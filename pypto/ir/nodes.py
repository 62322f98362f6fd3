"""IR nodes: frozen, slotted records (`pypto.ir.record`: frozen dataclasses that cost less
to define), each with a source span.

Expressions have a `type`. Statements do not. Passes never mutate a node: they
build new ones with `dataclasses.replace`. Spans take no part in equality, so
two programs that differ only in where they were written compare equal.
"""
from __future__ import annotations

import itertools
from dataclasses import field
from enum import Enum
from typing import Any

from pypto.ir import dtypes
from pypto.ir.record import record
from pypto.ir.span import Span
from pypto.ir.types import ATTR, ScalarType, Type

_uid = itertools.count(1)


def fresh_uid() -> int:
    return next(_uid)


def _span() -> Any:
    return field(default_factory=Span.unknown, compare=False, repr=False)


# --- expressions --------------------------------------------------------------------


class Expr:
    __slots__ = ()
    type: Type
    span: Span


@record
class Const(Expr):
    """A numeric or boolean literal with its scalar type (bare ints are INDEX)."""

    value: int | float | bool
    type: Type
    span: Span = _span()

    def __str__(self) -> str:
        return repr(self.value)


def literal(value: Any, span: Span | None = None) -> Const:
    """A Python number as an IR literal: bools are BOOL, ints INDEX, others FP32."""
    if isinstance(value, bool):
        t = ScalarType(dtypes.BOOL)
    elif isinstance(value, int):
        t = ScalarType(dtypes.INDEX)
    else:
        t = ScalarType(dtypes.FP32)
        value = float(value)
    return Const(value, t, span or Span.unknown())


@record
class Attr(Expr):
    """A compile-time Python value used as an op argument: dtype, enum, str, None."""

    value: Any
    type: Type = ATTR
    span: Span = _span()

    def __str__(self) -> str:
        v = self.value
        if isinstance(v, Enum):
            return f"pl.{type(v).__name__}.{v.name}"
        return repr(v)


@record
class Var(Expr):
    """A named value. `uid` makes two bindings of the same name distinct."""

    name: str
    type: Type
    uid: int = field(default_factory=fresh_uid)
    span: Span = _span()

    def __str__(self) -> str:
        return self.name


@record
class DynDim(Expr):
    """A dynamic dimension symbol declared with `pl.dynamic(name)`."""

    name: str
    type: Type
    span: Span = _span()

    def __str__(self) -> str:
        return self.name


@record
class ListExpr(Expr):
    """A list/tuple literal such as a shape `[M, 64]` or offsets `[r, 0]`."""

    items: tuple
    type: Type = ATTR
    span: Span = _span()

    def __str__(self) -> str:
        return "[" + ", ".join(str(i) for i in self.items) + "]"


@record
class Call(Expr):
    """An op application. `op` is the registry name ("add", "tensor.dim", "scalar.mul")."""

    op: str
    args: tuple
    kwargs: tuple = ()
    type: Type = ATTR
    span: Span = _span()

    def kwarg(self, name: str, default: Any = None) -> Any:
        for k, v in self.kwargs:
            if k == name:
                return v
        return default


@record
class CallFunc(Expr):
    """A call of another function of the program (an inline body or an InCore kernel).

    After outlining, the calls that dispatch InCore kernels carry `launch`
    attributes (kind, name_hint, core_num, deps, optimizations, nested): each such
    call is one task of `core_num` blocks.
    """

    func: str
    args: tuple
    type: Type
    span: Span = _span()
    launch: tuple = ()
    # the call site's attributes (`attrs={...}`: arg_directions, ...), sorted pairs
    attrs: tuple = ()

    def launch_attr(self, name: str, default: Any = None) -> Any:
        return dict(self.launch).get(name, default)


# The launch attributes of a `CallFunc`, in their order, with the value each has when
# the region does not set it (the text form writes only the ones that differ).
LAUNCH_DEFAULTS: tuple = (("kind", None), ("name_hint", ""), ("core_num", None), ("deps", ()),
                          ("optimizations", ()), ("allow_early_resolve", False),
                          ("sync_start", False), ("nested", False), ("no_dep_args", ()),
                          ("predicate", None), ("dumps", ()))


@record
class GetItem(Expr):
    """Element `index` of a tuple-typed value."""

    value: Expr
    index: int
    type: Type
    span: Span = _span()


# --- statements ---------------------------------------------------------------------


class Stmt:
    __slots__ = ()
    span: Span


@record
class Assign(Stmt):
    """`targets = value`; several targets unpack a tuple-typed value."""

    targets: tuple
    value: Expr
    span: Span = _span()


@record
class Eval(Stmt):
    """An expression evaluated for its effect (`pl.write(...)`, a kernel call)."""

    expr: Expr
    span: Span = _span()


class LoopKind(Enum):
    RANGE = "range"
    PARALLEL = "parallel"
    UNROLL = "unroll"
    PIPELINE = "pipeline"
    SPMD = "spmd"  # `for i in pl.spmd(n)`: each iteration is one block of one task


@record
class For(Stmt):
    """A counted loop. With `iter_args`, values are carried: each iteration starts
    with the carried values bound to `iter_args`, the body ends in a `Yield`, and
    after the loop `results` hold the last yielded values."""

    var: Var
    start: Expr
    stop: Expr
    step: Expr
    kind: LoopKind
    body: tuple
    iter_args: tuple = ()
    inits: tuple = ()
    results: tuple = ()
    attrs: tuple = ()
    span: Span = _span()

    def attr(self, name: str, default: Any = None) -> Any:
        return dict(self.attrs).get(name, default)


@record
class While(Stmt):
    """`for (a, b) in pl.while_(init_values=(...)):` — `cond` is re-evaluated before
    every iteration with the carried values bound."""

    cond: Expr
    body: tuple
    iter_args: tuple
    inits: tuple
    results: tuple
    span: Span = _span()


@record
class If(Stmt):
    """A branch on a runtime boolean. With `results`, both arms end in a `Yield`."""

    cond: Expr
    then_body: tuple
    else_body: tuple
    results: tuple = ()
    span: Span = _span()


@record
class Yield(Stmt):
    values: tuple
    span: Span = _span()


@record
class Return(Stmt):
    values: tuple
    span: Span = _span()


@record
class Break(Stmt):
    span: Span = _span()


@record
class Continue(Stmt):
    span: Span = _span()


class ScopeKind(Enum):
    INCORE = "at"  # `with pl.at(level=pl.Level.CORE_GROUP)`
    SPMD = "spmd"  # `with pl.spmd(n)`: body is one task of n blocks
    RUNTIME = "scope"  # `with pl.scope()` (auto dependency tracking boundary)
    MANUAL = "manual_scope"  # `with pl.manual_scope()`
    CLUSTER = "cluster"
    SPLIT_AIV = "split_aiv"
    # `with pl.at(level=pl.Level.HOST)` (any level above CORE_GROUP): host-level code of
    # a multi-card system, which the real compiler outlines into a function of that level
    HIERARCHY = "hierarchy"


@record
class Scope(Stmt):
    """A `with` block of the language. `task` binds the region's TaskId (`as tid`)."""

    kind: ScopeKind
    body: tuple
    attrs: tuple = ()
    task: Var | None = None
    span: Span = _span()

    def attr(self, name: str, default: Any = None) -> Any:
        return dict(self.attrs).get(name, default)


# --- functions and programs ---------------------------------------------------------


class Direction(Enum):
    IN = "In"
    OUT = "Out"
    INOUT = "InOut"


class FunctionKind(Enum):
    OPAQUE = "Opaque"
    ORCHESTRATION = "Orchestration"
    INCORE = "InCore"
    INLINE = "Inline"
    HOST = "Host"
    AIC = "AIC"
    AIV = "AIV"
    GROUP = "Group"

    @property
    def is_region(self) -> bool:
        """Code that runs on a core (an InCore kernel, or one side of a mixed one), as
        opposed to orchestration, host and inline code."""
        return self in (FunctionKind.INCORE, FunctionKind.AIC, FunctionKind.AIV,
                        FunctionKind.GROUP)


@record
class Param:
    var: Var
    direction: Direction = Direction.IN
    span: Span = _span()


@record
class Function:
    name: str
    params: tuple
    body: tuple
    kind: FunctionKind
    returns: tuple = ()
    attrs: tuple = ()
    span: Span = _span()

    def attr(self, name: str, default: Any = None) -> Any:
        return dict(self.attrs).get(name, default)

    @property
    def func_type(self) -> FunctionKind:
        """The real IR's name of the function's kind."""
        return self.kind


class FunctionTable(tuple):
    """A program's functions: a tuple in program order that also answers by name like
    the real `Program.functions` dict (`keys`, `values`, `items`, `table["name"]`)."""

    __slots__ = ()

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            for f in self:
                if f.name == key:
                    return f
            raise KeyError(key)
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        return [f.name for f in self]

    def values(self) -> list[Any]:
        return list(self)

    def items(self) -> list[tuple[str, Any]]:
        return [(f.name, f) for f in self]


@record
class Program:
    name: str
    functions: tuple
    entry: str
    span: Span = _span()

    def __post_init__(self) -> None:
        if type(self.functions) is not FunctionTable:
            object.__setattr__(self, "functions", FunctionTable(self.functions))

    def function(self, name: str) -> Function:
        for f in self.functions:
            if f.name == name:
                return f
        raise KeyError(name)

    @property
    def entry_function(self) -> Function:
        return self.function(self.entry)
