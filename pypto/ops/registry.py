"""The op registry: one entry per op, read by the parser, the passes, the simulator
and the workbench.

An entry is declared once, next to its type rule::

    @defop("row_sum", unit=Unit.VECTOR, impl=lambda x, tmp_tile=None: ...,
           names=("pl.row_sum", "pl.tensor.row_sum", "pl.tile.row_sum"))
    def row_sum(x, tmp_tile=None):
        '''Sum over the last axis, keeping it as size 1.'''
        return reduce_last(x)

The decorated function *is* the type rule, and its Python signature is the
op's signature, unless a public name declares its own (`pypto.ops.spellings`: the
real wrappers of one op name their parameters differently); the parser binds a
call's arguments to the signature of the name it calls exactly as Python would,
and hands them to the rule under the rule's names. The rule receives IR expressions
(each with `.type`) for the arguments the user passed, and the raw Python default
for the ones they did not. It returns the result type or raises `OpError`.
"""
from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import field
from enum import Enum
from typing import Any

from pypto.ir.record import record
from pypto.ops import spellings
from pypto.ops.facts import (
    TRAILING,
    Batch,
    Matmul,
    Role,
    Ufunc,
    View,
    Window,
    WindowRead,
    WindowWrite,
)


class Unit(Enum):
    """Which hardware unit executes an op (drives region classification and costs)."""

    CUBE = "cube"  # matrix unit (AIC): matmul family
    VECTOR = "vector"  # vector unit (AIV): elementwise, reductions, sort, gather
    MTE = "mte"  # data movement: GM<->on-chip loads and stores
    SCALAR = "scalar"  # scalar pipe: index arithmetic, element reads/writes
    ORCH = "orch"  # control plane only: allocations, dims, task handles
    META = "meta"  # no data movement: views, reshapes, hints


class OpError(Exception):
    """Raised by a type rule; the parser turns it into a located InvalidOperationError
    (or `error`, a user-error class, where the real parser raises another one).

    `arg` names the offending parameter so the caret can point at that argument.
    """

    def __init__(self, message: str, *, arg: str | None = None, hint: str | None = None,
                 error: type | None = None):
        super().__init__(message)
        self.message = message
        self.arg = arg
        self.hint = hint
        self.error = error


@record(slots=False)
class OpDef:
    """Everything the toolchain knows about one op."""

    name: str
    type_rule: Callable[..., Any]
    unit: Unit
    impl: Callable[..., Any] | None = None
    names: tuple[str, ...] = ()
    # Parameter that the op writes in place (assemble's target, store's tensor…);
    # the outliner and the dependency analysis read it.
    writes: str | None = None
    # True when the op is only legal in orchestration (control plane) code.
    orch_only: bool = False
    # True when the op is only legal inside an InCore region.
    incore_only: bool = False
    # The simulator passes its execution context to impls that ask for it.
    wants_ctx: bool = False
    unit_rule: Callable[..., Unit] | None = None
    # Facts the passes and the simulator read (see `pypto.ops.facts`).
    view: View | None = None
    window: Window | None = None
    matmul: Matmul | None = None
    ufunc: Ufunc | None = None
    role: Role | None = None
    batch: Batch | None = None
    symbol: str | None = None
    shape_param: str | None = None
    memory_param: str | None = None
    affinity: Unit | None = None
    divisor: str | None = None
    # its operand `x` in another dtype, rounded by its `mode` (pl.cast): an ordinary value
    # op otherwise (not a Role, which marks ops implemented by what they do)
    converts: bool = False
    # it reads or writes the bits of a float, not its value (sort32's (value, index)
    # pairs, a reinterpretation): True, or the parameter that makes a call do so when
    # the call gives it (gather's output_dtype). The float64 precision shadow runs such a
    # call in the kernel's own dtypes (`pypto.precision.instrument`)
    float_bits: bool | str = False
    # Op-specific extras. `resolve(result_type) -> op name | None`: a unified op whose
    # form at one level is a different IR op (pl.cmp on tiles builds `tile.cmp`).
    extra: dict = field(default_factory=dict)

    # The signature and doc are read off the rule when first asked for (a help() call, a
    # parse, a printed program), not at registration: inspect.signature on ~220 rules
    # was a tenth of `import pypto.language`.
    @functools.cached_property
    def signature(self) -> inspect.Signature:
        """The op's arguments: the rule's parameters, less its `_x` loop-capture defaults."""
        sig = inspect.signature(self.type_rule)
        return sig.replace(parameters=[p for p in sig.parameters.values()
                                       if not p.name.startswith("_")])

    @functools.cached_property
    def doc(self) -> str:
        return inspect.getdoc(self.type_rule) or ""

    @functools.cached_property
    def params(self) -> tuple[str, ...]:
        return _rule_params(self.type_rule)

    def spelling(self, public: str | None = None) -> Any:
        """The signature a call of the public name `public` binds to, and where each of
        its arguments goes in the rule (`pypto.ops.spellings`); the rule's own signature
        when the name declares none."""
        public = public or (self.names[0] if self.names else self.name)
        if public in spellings.SPELLINGS:
            return spellings.parse(public, tuple(self.signature.parameters))
        return spellings.identity(public, self.signature)

    def on_float_bits(self, call: Any) -> bool:
        """Whether IR call `call` of this op reads or writes the bits of a float
        (`float_bits`; a parameter name there counts when the call gives it)."""
        fact = self.float_bits
        if not isinstance(fact, str):
            return bool(fact)
        for k, v in call.kwargs:
            if k == fact:
                return not _absent(v)
        i = self.params.index(fact)
        return i < len(call.args) and not _absent(call.args[i])

    @property
    def batchable(self) -> bool:
        """Does the impl act on the trailing axes only (a batch in leading axes)?"""
        return self.batch is not None and self.batch.family in TRAILING

    @property
    def window_read(self) -> WindowRead | None:
        return self.window if isinstance(self.window, WindowRead) else None

    @property
    def window_write(self) -> WindowWrite | None:
        return self.window if isinstance(self.window, WindowWrite) else None


def _absent(arg: Any) -> bool:
    """An argument the call leaves at None (the parser passes every parameter)."""
    return arg is None or getattr(arg, "value", 0) is None


REGISTRY: dict[str, OpDef] = {}
# the parser's own op facts, kept in `OpDef.extra` (`pypto.frontend.opcall`)
_EXTRAS = frozenset(("resolve", "split_from_scope", "shape_from_annotation", "bind_error",
                     "host_only", "signal_param"))
# Public spelling ("pl.add", "pl.tensor.dim") -> op name.
BY_PUBLIC_NAME: dict[str, str] = {}


def defop(name: str, *, unit: Unit, impl: Callable | None = None, names: tuple[str, ...] = (),
          writes: str | None = None, orch_only: bool = False, incore_only: bool = False,
          wants_ctx: bool = False, unit_rule: Callable | None = None,
          view: View | None = None, window: Window | None = None, matmul: Matmul | None = None,
          ufunc: Ufunc | None = None, role: Role | None = None, batch: Batch | None = None,
          symbol: str | None = None, shape_param: str | None = None,
          memory_param: str | None = None, affinity: Unit | None = None,
          divisor: str | None = None,
          converts: bool = False, float_bits: bool | str = False, public: bool = True,
          **extra: Any) -> Callable:
    """Register an op whose type rule is the decorated function (facts: `pypto.ops.facts`).
    `public=False`: a toolchain-internal op no kernel can spell (no `pl.` name; only a
    transform inserts it)."""

    unknown = set(extra) - _EXTRAS
    if unknown:  # (a misspelt or retired fact would be silently ignored)
        raise ValueError(f"op {name!r}: unknown facts {sorted(unknown)}")

    def register(rule: Callable) -> OpDef:
        if name in REGISTRY:
            raise ValueError(f"op {name!r} registered twice")
        spelled = (names or (f"pl.{name}",)) if public else ()
        op = OpDef(name=name, type_rule=rule, unit=unit, impl=impl, names=tuple(spelled),
                   writes=writes, orch_only=orch_only, incore_only=incore_only,
                   wants_ctx=wants_ctx, unit_rule=unit_rule, view=view, window=window,
                   matmul=matmul, ufunc=ufunc, role=role, batch=batch, symbol=symbol,
                   shape_param=shape_param, memory_param=memory_param, affinity=affinity,
                   divisor=divisor, converts=converts, float_bits=float_bits,
                   extra=extra)
        for param in _named_params(op):
            if param not in op.params:
                raise ValueError(f"op {name!r}: fact names {param!r}, not a parameter")
        REGISTRY[name] = op
        for n in spelled:
            if n in BY_PUBLIC_NAME:
                raise ValueError(f"public name {n!r} given to {BY_PUBLIC_NAME[n]!r} and {name!r}")
            BY_PUBLIC_NAME[n] = name
        return op

    return register


def _rule_params(rule: Callable) -> tuple[str, ...]:
    """The op's parameter names, straight from the rule's code object (no inspect):
    positional and keyword-only, less `_x` (loop-capture defaults, not op arguments)."""
    code = rule.__code__
    names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    return tuple(n for n in names if not n.startswith("_"))


def _named_params(op: OpDef) -> list[str]:
    """The parameter names the op's facts refer to (checked against its signature)."""
    names = [op.shape_param, op.memory_param, op.divisor,
             op.float_bits if isinstance(op.float_bits, str) else None]
    if op.window_read is not None:
        r = op.window_read
        names += [r.tensor, r.offset, r.shape]
    if op.window_write is not None:
        w = op.window_write
        names += [w.tensor, w.offset, w.source]
    if op.matmul is not None:
        names += [op.matmul.lhs, op.matmul.rhs, op.matmul.acc]
    return [n for n in names if n is not None]


# (Every op is registered by the time anything can call these: importing this module
# first runs `pypto/ops/__init__.py`, which imports every op family.)


def get(name: str) -> OpDef:
    """The entry of op `name` (KeyError: no such op)."""
    return REGISTRY[name]


def all_ops() -> dict[str, OpDef]:
    return REGISTRY
