"""The two programs of a shadow comparison, made from one compiled program:

* `instrument` wraps every value the comparison watches in the identity op
  `shadow.probe` (`pypto.ops.probe`), numbering its site: the result of each computing op
  (the vector and cube units) with a float among its result and operands, and each load of
  a float tile or window (a mover: it carries the error of what it reads, never adds any);
* `widen` turns the instrumented program into its shadow: every float type (tensor, tile,
  scalar, array, a dtype given as an argument) becomes float64, so every float op runs in
  float64 and a cast between floats is the identity. Integer and index types are left as
  they are, and a cast from a float to an integer still rounds (from the float64 value):
  integer arithmetic downstream of a quantisation stays integer arithmetic.

Both keep the program's structure, so the n-th probe of a site in a task of the one run
is the n-th probe of that site in that task of the other.

An op on the bits of a float (the registry's `float_bits`: sort32's (value, index)
pairs, a reinterpretation) has no float64 meaning. The shadow runs it as the kernel does,
in the kernel's dtypes: its float operands are rounded back to their kernel dtype (ties to
even) on the way in, and its result keeps the kernel's type. Past such an op the shadow is
exact only up to that rounding; `Site.island` marks the values that pass through one.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from pypto.diagnostics import site_label
from pypto.ir import dtypes
from pypto.ir import nodes as N
from pypto.ir.dtypes import DType
from pypto.ir.span import Span
from pypto.ir.transform import Mutator, walk
from pypto.ir.types import ArrayType, ScalarType, ShapedType, Type
from pypto.ops.probe import PROBE
from pypto.ops.registry import Unit, all_ops

COMPUTE, MOVE = "compute", "move"


@dataclass(frozen=True)
class Site:
    """One watched value of the program: an op call and where it is."""

    number: int
    function: str
    op: str
    span: Span
    kind: str
    """compute (an op that can add error) or move (a load: it only carries it)."""
    dtype: DType
    """The dtype the kernel computes it in."""
    converts: bool
    """A `pl.cast`."""
    sources: tuple[int, ...]
    """The watched sites its operands come from (through local names, views and
    loop-carried values of the same function)."""

    def where(self) -> str:
        """`file:line`, or `Cell In[3], line 6` for a notebook cell's kernel."""
        return site_label(f"{self.span.file}:{self.span.line}") if self.span.known \
            else self.function


@dataclass(frozen=True)
class Instrumented:
    program: N.Program
    sites: tuple[Site, ...]


def instrument(program: N.Program) -> Instrumented:
    """`program` with a probe around every watched value, and the sites (module doc)."""
    ops = all_ops()
    sites: list[Site] = []
    by_call: dict[int, int] = {}  # id(Call) -> site number
    for fn in program.functions:
        calls: dict[int, N.Call] = {}  # this function's sites -> their calls
        for node in walk(fn):
            if not isinstance(node, N.Call) or id(node) in by_call:
                continue
            kind = _watched(node, ops)
            if kind is None:
                continue
            number = len(sites)
            by_call[id(node)] = number
            calls[number] = node
            t = node.type
            assert isinstance(t, ShapedType)  # (what `_watched` admits)
            sites.append(Site(number, fn.name, node.op, node.span, kind, t.dtype,
                              ops[node.op].converts, ()))
        origins = _Origins(fn, by_call)
        for number, call in calls.items():
            sites[number] = dataclasses.replace(
                sites[number], sources=tuple(sorted(origins.sources_of_args(call))))
    wrapped = _Wrap(by_call).visit(program)
    return Instrumented(wrapped, tuple(sites))


def _watched(call: N.Call, ops: dict) -> str | None:
    """compute, move or None (not watched): a value made from shaped operands with a
    float among them or in the result. A creator (pl.full, pl.arange) has no operand to
    inherit an error from and no rounding worth a stage; pairs of float bits compare as
    no number."""
    op = ops.get(call.op)
    t = call.type
    if op is None or op.on_float_bits(call) or not isinstance(t, ShapedType):
        return None
    shaped = [a.type for a in call.args if isinstance(getattr(a, "type", None), ShapedType)]
    if not shaped or not (t.dtype.is_float() or any(a.dtype.is_float() for a in shaped)):
        return None
    if op.unit in (Unit.VECTOR, Unit.CUBE):
        return COMPUTE
    if op.unit is Unit.MTE and op.writes is None and t.dtype.is_float():
        return MOVE
    return None


class _Origins:
    """Which watched sites the value of an expression comes from, within one function."""

    def __init__(self, fn: N.Function, by_call: dict[int, int]):
        self.by_call = by_call
        self.defs: dict[int, Any] = {}  # Var uid -> expression(s) it is bound to
        for node in walk(fn):
            if isinstance(node, N.Assign):
                for t in node.targets:
                    self.defs.setdefault(t.uid, []).append(node.value)
            elif isinstance(node, (N.For, N.While)):
                yielded = _last_yield(node.body)
                for k, var in enumerate(node.iter_args):
                    bound = [node.inits[k]] if k < len(node.inits) else []
                    if yielded is not None and k < len(yielded.values):
                        bound.append(yielded.values[k])
                    self.defs.setdefault(var.uid, []).extend(bound)
                    if k < len(node.results):
                        self.defs.setdefault(node.results[k].uid, []).extend(bound)
            elif isinstance(node, N.If) and node.results:
                for body in (node.then_body, node.else_body):
                    y = _last_yield(body)
                    if y is not None:
                        for k, var in enumerate(node.results):
                            if k < len(y.values):
                                self.defs.setdefault(var.uid, []).append(y.values[k])
        self._memo: dict[int, frozenset[int]] = {}

    def sources_of_args(self, call: N.Call) -> set[int]:
        out: set[int] = set()
        for a in call.args:
            out |= self.sources(a, set())
        return out

    def sources(self, e: Any, busy: set[int]) -> frozenset[int]:
        if isinstance(e, N.Call):
            n = self.by_call.get(id(e))
            if n is not None:
                return frozenset((n,))
            got: set[int] = set()
            for a in e.args:
                got |= self.sources(a, busy)
            return frozenset(got)
        if isinstance(e, N.ListExpr):
            got = set()
            for a in e.items:
                got |= self.sources(a, busy)
            return frozenset(got)
        if isinstance(e, N.Var):
            uid = e.uid
            if uid in self._memo:
                return self._memo[uid]
            if uid in busy:  # a loop-carried value reaching itself
                return frozenset()
            busy.add(uid)
            got = set()
            for bound in self.defs.get(uid, ()):
                got |= self.sources(bound, busy)
            busy.discard(uid)
            self._memo[uid] = frozenset(got)
            return self._memo[uid]
        return frozenset()


def _last_yield(body: tuple) -> N.Yield | None:
    for st in reversed(body):
        if isinstance(st, N.Yield):
            return st
    return None


class _Wrap(Mutator):
    def __init__(self, by_call: dict[int, int]):
        self.by_call = by_call

    def visit_Call(self, node: N.Call) -> Any:
        number = self.by_call.get(id(node))
        new = self.generic(node)
        if number is None:
            return new
        site = N.Const(number, ScalarType(dtypes.INDEX), node.span)
        return N.Call(PROBE.name, (new, site), (), new.type, node.span)


# --- the shadow ----------------------------------------------------------------------

def widen(program: N.Program) -> N.Program:
    """The float64 shadow of `program` (module doc)."""
    ops = all_ops()
    convert = next(op.name for op in ops.values() if op.converts)
    return _Widen(ops, convert).visit(program)


def _wide(dt: Any) -> Any:
    if isinstance(dt, DType) and dt.is_float() and dt.np_name not in ("uint4", "uint8"):
        return dtypes.SHADOW_FP64  # (HF4 / HF8 are storage-only here: left as they are)
    return dt


class _Widen(Mutator):
    def __init__(self, ops: dict, convert: str):
        self.ops = ops
        self.convert = convert  # the op that rounds a value to a dtype (pl.cast)

    def visit_type(self, t: Type) -> Type:
        t = super().visit_type(t)
        if isinstance(t, (ShapedType, ScalarType, ArrayType)):
            wide = _wide(t.dtype)
            if wide is not t.dtype:
                return dataclasses.replace(t, dtype=wide)
        return t

    def visit_Attr(self, node: N.Attr) -> Any:
        wide = _wide(node.value)
        return node if wide is node.value else dataclasses.replace(node, value=wide)

    def visit_Call(self, node: N.Call) -> Any:
        op = self.ops.get(node.op)
        if op is None or not op.on_float_bits(node):
            return self.generic(node)
        # an island: the op as the kernel runs it, on operands rounded back to theirs
        args = tuple(self._narrowed(a) for a in node.args)
        kwargs = tuple((k, self._narrowed(v)) for k, v in node.kwargs)
        return dataclasses.replace(node, args=args, kwargs=kwargs)

    def _narrowed(self, arg: Any) -> Any:
        t = getattr(arg, "type", None)
        wide = self.visit(arg)
        if isinstance(t, ShapedType) and _wide(t.dtype) is not t.dtype:
            return N.Call(self.convert, (wide, N.Attr(t.dtype), N.Attr("rint")), (), t,
                          arg.span)
        return wide
