"""HalveSplitLanes: the two AIV lanes of a data-parallel `pl.split_aiv` region each
work on half of every tile.

`for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN)` (rows; LEFT_RIGHT: columns)
written at full width - no `pl.aiv_shard` / `pl.aic_gather` in it - means the
compiler halves the region's vector work: each lane loads, computes and stores its
half of every tile. This pass does that rewrite, so the simulator runs each lane on
its half and the buffer estimate (`EstimateBuffers`, which reads the types) counts
half-size tiles per lane, while the results stay those of the full-width body:

* a window read of a GM tensor (`pl.load`, `pl.slice`) reads the lane's half of the
  window: extent halved on the split axis, offset moved by `lane * half`;
* a window write into a GM tensor (`pl.store`, `pl.assemble`) writes at the lane's
  offset (its source is already half);
* a new buffer (`pl.full`, `pl.create_tile`, ...) is made at half size;
* a compute op reading a whole GM tensor (an implicit load) reads the lane's window;
* every other op is typed again on its halved operands.

An odd extent 2k+1 on the split axis gives both lanes a (k+1)-cell box; the window
reads of lane 1 are valid for k of it, so its stores write k rows (columns).

Refused, with a located error: a reduction that
collapses the split axis (each lane would hold a partial result), element access to a
halved tile, and constructs the rewrite does not follow (while loops, nested scopes).
A region written per lane (it uses `pl.aiv_shard` / `pl.aic_gather`) and a `NONE`
region are left as written.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from pypto.errors import InvalidOperationError, UnsupportedFeatureError
from pypto.ir import dtypes
from pypto.ir.nodes import (
    Assign,
    Attr,
    Break,
    Call,
    Const,
    Continue,
    Eval,
    Expr,
    For,
    Function,
    If,
    ListExpr,
    Program,
    Return,
    Scope,
    ScopeKind,
    Var,
    Yield,
    literal,
)
from pypto.ir.options import SplitMode
from pypto.ir.span import Span
from pypto.ir.transform import walk
from pypto.ir.types import ScalarType, ShapedType, TensorType
from pypto.ops.facts import Role
from pypto.ops.lanes import as_given, window_call
from pypto.ops.registry import OpError, Unit, get
from pypto.passes.base import Pass, PassContext

_AXIS = {SplitMode.UP_DOWN: 0, SplitMode.LEFT_RIGHT: 1}
_INDEX = ScalarType(dtypes.INDEX)
_CROSSINGS = (Role.LANE_SHARD, Role.LANE_GATHER)


def region_mode(s: Scope) -> SplitMode:
    m = s.attr("mode")
    return SplitMode(int(m.value if isinstance(m, (Attr, Const)) else m))


class HalveSplitLanes(Pass):
    name = "halve_split_lanes"
    summary = "give each AIV lane of a full-width pl.split_aiv region half of every tile"

    def run(self, program: Program, ctx: PassContext) -> Program:
        funcs = tuple(self._function(f) for f in program.functions)
        if all(a is b for a, b in zip(funcs, program.functions)):
            return program
        return dataclasses.replace(program, functions=funcs)

    def _function(self, f: Function) -> Function:
        body = _rewrite_scopes(f.body)
        return f if body is f.body else dataclasses.replace(f, body=body)


def _rewrite_scopes(stmts: tuple) -> tuple:
    out, changed = [], False
    for s in stmts:
        new = s
        if isinstance(s, Scope) and s.kind is ScopeKind.SPLIT_AIV:
            new = _halve_region(s)
        elif isinstance(s, (For, If, Scope)):
            new = _map_bodies(s, _rewrite_scopes)
        out.append(new)
        changed = changed or new is not s
    return tuple(out) if changed else stmts


def _map_bodies(s: Any, fn: Any) -> Any:
    if isinstance(s, If):
        t, e = fn(s.then_body), fn(s.else_body)
        return s if t is s.then_body and e is s.else_body else \
            dataclasses.replace(s, then_body=t, else_body=e)
    b = fn(s.body)
    return s if b is s.body else dataclasses.replace(s, body=b)


def _halve_region(s: Scope) -> Scope:
    mode = region_mode(s)
    axis = _AXIS.get(mode)
    loop = s.body[0] if len(s.body) == 1 and isinstance(s.body[0], For) else None
    if axis is None or loop is None:
        return s
    if _per_lane(loop):
        return s
    h = _Halver(axis, loop.var, mode)
    body = h.stmts(loop.body)
    return dataclasses.replace(s, body=(dataclasses.replace(loop, body=body),))


def _per_lane(loop: For) -> bool:
    """Is the region written per lane: it crosses with pl.aiv_shard / pl.aic_gather, or a
    window's offsets depend on the lane index (the author placed each lane's half)?"""
    lane = {loop.var.uid}  # the lane index and the scalars computed from it
    for n in walk(loop.body):
        if isinstance(n, Assign) and any(isinstance(x, Var) and x.uid in lane
                                         for x in walk(n.value)):
            lane.update(t.uid for t in n.targets if isinstance(t.type, ScalarType))
    for n in walk(loop.body):
        if not isinstance(n, Call):
            continue
        op = get(n.op)
        if op.role in _CROSSINGS:
            return True
        w = op.window
        if w is not None:
            offs = dict(zip(op.params, n.args)).get(w.offset)
            if any(isinstance(x, Var) and x.uid in lane for x in walk(offs)):
                return True
    return False


class _Halver:
    """Rewrites one region body (see the module docstring)."""

    def __init__(self, axis: int, lane: Var, mode: SplitMode):
        self.axis = axis
        self.lane = lane
        self.mode = mode
        self.vars: dict[int, Var] = {}  # uid -> the same value, halved

    # -- statements ------------------------------------------------------------------

    def stmts(self, stmts: tuple) -> tuple:
        return tuple(self.stmt(s) for s in stmts)

    def stmt(self, s: Any) -> Any:
        if isinstance(s, Assign):
            value = self.expr(s.value, s.span)
            if len(s.targets) == 1 and isinstance(value, Expr) and hasattr(value, "type"):
                targets = (self.retype(s.targets[0], value.type),)
            else:
                targets = s.targets
            return Assign(targets, value, s.span)
        if isinstance(s, Eval):
            return Eval(self.expr(s.expr, s.span), s.span)
        if isinstance(s, (Yield, Return)):
            return dataclasses.replace(s, values=tuple(self.sub(v) for v in s.values))
        if isinstance(s, (Break, Continue)):
            return s
        if isinstance(s, For):
            inits = tuple(self.sub(v) for v in s.inits)
            iters = tuple(self.retype(v, i.type) for v, i in zip(s.iter_args, inits))
            body = self.stmts(s.body)
            results = tuple(self.retype(r, v.type) for r, v in zip(s.results, iters))
            return dataclasses.replace(s, inits=inits, iter_args=iters, body=body,
                                       results=results, start=self.sub(s.start),
                                       stop=self.sub(s.stop), step=self.sub(s.step))
        if isinstance(s, If):
            then, other = self.stmts(s.then_body), self.stmts(s.else_body)
            results = s.results
            last = then[-1] if then else None
            if results and isinstance(last, Yield):
                results = tuple(self.retype(r, v.type) for r, v in zip(results, last.values))
            return dataclasses.replace(s, cond=self.sub(s.cond), then_body=then,
                                       else_body=other, results=results)
        raise UnsupportedFeatureError(
            f"a {self.mode.name} pl.split_aiv region written at full width is halved between "
            f"the two AIV lanes, and this {type(s).__name__.lower()} cannot be", s.span,
            hint="write the region per lane (pl.aiv_shard the inputs, index by the lane) or "
                 "use mode=pl.SplitMode.NONE")

    def retype(self, v: Var, t: Any) -> Var:
        if v.type == t:
            return v
        new = dataclasses.replace(v, type=t)
        self.vars[v.uid] = new
        return new

    # -- expressions -----------------------------------------------------------------

    def sub(self, e: Any) -> Any:
        if isinstance(e, Var):
            return self.vars.get(e.uid, e)
        if isinstance(e, ListExpr):
            return dataclasses.replace(e, items=tuple(self.sub(i) for i in e.items))
        if isinstance(e, Call):
            return self.expr(e, e.span)
        return e

    def expr(self, e: Any, span: Span) -> Any:
        if not isinstance(e, Call):
            return self.sub(e)
        op = get(e.op)
        orig = dict(zip(op.params, e.args))
        args = {n: self.sub(a) for n, a in orig.items()}
        # the operands that now hold a lane's half (rewritten values of a tile type)
        halved = {n for n, a in args.items()
                  if a is not orig[n] and isinstance(getattr(a, "type", None), ShapedType)}
        where = e.span if e.span.known else span
        if op.role in (Role.ELEMENT_READ, Role.ELEMENT_WRITE) and \
                any(self.halved(a) for a in args.values()):
            raise self.refuse(f"{op.names[0] if op.names else e.op} addresses one element of "
                              "a halved tile", where)
        w = op.window_read
        if w is not None and self.gm(args[w.tensor]):
            self.halve_valid(args, where)
            full = args[w.shape]
            args[w.shape] = self.half_dims(full, where)
            args[w.offset] = self.lane_offsets(args[w.offset], args[w.shape], where)
            self.lane_valid(args, full, args[w.shape], where)
        elif op.window_write is not None and self.gm(args[op.window_write.tensor]):
            ww = op.window_write
            src = args[ww.source]
            if (ww.source in halved or self.halved(src)) and src.type.rank >= 2:
                ext = src.type.shape[self.axis_of(src.type.rank)]
                args[ww.offset] = self.lane_offsets(args[ww.offset], None, where, ext)
        elif op.shape_param is not None and op.role in (None, Role.ALLOC_TILE):
            args[op.shape_param] = self.half_dims(args[op.shape_param], where)
        elif op.unit is Unit.VECTOR:
            for name, a in args.items():
                if self.gm(a) and a.type.rank >= 2:
                    args[name] = self.window_of(a, where)
        return self.retyped(e, op, args, halved, where)

    def retyped(self, e: Call, op: Any, args: dict, halved: set, where: Span) -> Call:
        new_args = tuple(args[p] for p in op.params)
        if new_args == e.args:
            return e
        try:
            t = op.type_rule(**as_given(op, args))
        except OpError as exc:
            raise self.refuse(f"{op.names[0] if op.names else e.op} on the halved operands: "
                              f"{exc.message}", where) from None
        for a in (args[n] for n in halved):
            if isinstance(t, ShapedType) and t.rank >= 2:
                n = a.type.shape[self.axis - (2 - a.type.rank)]
                m = t.shape[self.axis - (2 - t.rank)]
                if m == 1 and isinstance(n, int) and n > 1:
                    raise self.refuse(f"{op.names[0] if op.names else e.op} reduces along the "
                                      "split axis: each lane would hold a partial result",
                                      where)
        return Call(e.op, new_args, e.kwargs, t, e.span)

    # -- helpers ---------------------------------------------------------------------

    def gm(self, a: Any) -> bool:
        return isinstance(getattr(a, "type", None), TensorType)

    def halved(self, a: Any) -> bool:
        return isinstance(a, Var) and a.uid in self.vars and \
            isinstance(a.type, ShapedType)

    def refuse(self, what: str, span: Span) -> InvalidOperationError:
        return InvalidOperationError(
            f"{what} (a {self.mode.name} pl.split_aiv region is halved between the two AIV "
            "lanes)", span,
            hint="write the region per lane (pl.aiv_shard / pl.aic_gather), or use "
                 "mode=pl.SplitMode.NONE to run the full body on both lanes")

    def axis_of(self, n: int) -> int:
        return self.axis - (2 - n) if n >= 2 else -1

    def half_dims(self, dims: Any, span: Span) -> Any:
        if not isinstance(dims, ListExpr):
            raise self.refuse("a shape the rewrite cannot read", span)
        items = list(dims.items)
        ax = self.axis_of(len(items))
        if ax < 0:
            return dims
        d = items[ax]
        if not isinstance(d, Const) or not isinstance(d.value, int):
            raise self.refuse("a run-time extent on the split axis", span)
        # an odd extent 2k+1: both lanes hold a (k+1)-cell box, lane 1 fills k of it
        # (`lane_valid`), as the real compiler's ceil half (pto-isa's *_ODD split)
        items[ax] = literal((d.value + 1) // 2, d.span)
        return dataclasses.replace(dims, items=tuple(items))

    def lane_offsets(self, offs: Any, half_shape: Any, span: Span, half: int | None = None
                     ) -> Any:
        if not isinstance(offs, ListExpr):
            raise self.refuse("offsets the rewrite cannot read", span)
        items = list(offs.items)
        ax = self.axis_of(len(items))
        if ax < 0:
            return offs
        if half is None:
            half = half_shape.items[ax].value
        step = Call("scalar.mul", (self.lane, literal(half)), (), _INDEX, span)
        items[ax] = Call("scalar.add", (items[ax], step), (), _INDEX, span)
        return dataclasses.replace(offs, items=tuple(items))

    def halve_valid(self, args: dict, span: Span) -> None:
        v = args.get("valid_shape")
        if v is None or (isinstance(v, Attr) and v.value is None):
            return
        raise self.refuse("a window with a valid_shape (a ragged split axis)", span)

    def lane_valid(self, args: dict, full: Any, box: Any, span: Span) -> None:
        """An odd split extent: the window's valid extent on this lane, the whole box on
        lane 0 and one cell less on lane 1 (`box - lane`)."""
        ax = self.axis_of(len(box.items))
        if ax < 0 or "valid_shape" not in args or full.items[ax].value % 2 == 0:
            return
        items = list(box.items)
        items[ax] = Call("scalar.sub", (box.items[ax], self.lane), (), _INDEX, span)
        args["valid_shape"] = ListExpr(tuple(items), span=span)

    def window_of(self, a: Var, span: Span) -> Call:
        """The lane's window of the whole GM tensor `a` (an implicit load)."""
        t = a.type
        assert isinstance(t, ShapedType)
        shape = ListExpr(tuple(literal(d) if isinstance(d, int) else d for d in t.shape))
        shape = self.half_dims(shape, span)
        zeros = ListExpr(tuple(literal(0) for _ in t.shape))
        offs = self.lane_offsets(zeros, shape, span)
        args: dict[str, Any] = {"valid_shape": None}
        self.lane_valid(args, ListExpr(tuple(literal(d) if isinstance(d, int) else d
                                             for d in t.shape)), shape, span)
        return window_call(a, shape, offs, args["valid_shape"], span)
