"""Which launches can run batched: a static analysis of one region function.

A region launched by the iterations of a `pl.parallel` loop nest (or by the blocks of
one SPMD launch) runs *batched* when its blocks only differ by affine offsets: the
scalars that differ per block ("varying": the loop variables passed as arguments,
`pl.get_block_idx()`, integer arithmetic on them) only reach window offsets of
slices / loads / assembles / stores, and everything computed from those windows goes
through ops that act on trailing axes (elementwise, row/column reductions and
expansions, casts, matmul). Control flow must be uniform (loop bounds and conditions
independent of the block).

The executor (`pypto.sim.batch`) then stacks the blocks' windows along leading batch
axes and runs the body once. That is only equivalent to running the blocks one after
the other when no block can see another block's writes: every tensor the region
writes must be accessed, along some axis, at `coef * p + const` with one varying
scalar `p` per batch axis, so that the blocks' footprints are disjoint (checked at
launch time against the actual strides, see `Plan.separated`).
"""
from __future__ import annotations

from typing import Any

from pypto.ir.nodes import (
    Assign,
    Break,
    Call,
    CallFunc,
    Const,
    Continue,
    Eval,
    For,
    Function,
    GetItem,
    If,
    ListExpr,
    Return,
    Scope,
    ScopeKind,
    Stmt,
    Var,
    While,
    Yield,
)
from pypto.ir.transform import walk
from pypto.ir.types import ScalarType, ShapedType, TileType, Type
from pypto.ops.facts import Role, View
from pypto.ops.registry import get
from pypto.sim.batch import rules
from pypto.sim.batch.footprints import Access, Plan, plan_of
from pypto.sim.batch.forms import BLOCK, form, shifted_loop
from pypto.sim.batch.predicate import (
    merge_uses,
    predicated_call,
    predicated_if,
    predicated_stmt,
    uniform_if,
)
from pypto.sim.batch.scalars import (
    AFFINE_SYMBOLS,
    DIV_SYMBOLS,
    index_symbol,
    int_const,
)
from pypto.sim.batch.state import NotBatchable
from pypto.sim.faults import source_name

# ops whose result differs per block in ways the batch cannot express
UNSAFE = frozenset((Role.TASK_JOIN, Role.BARRIER, Role.SUBBLOCK_INDEX, Role.LANE_SHARD,
                    Role.LANE_GATHER, Role.COMM))


def _window_valid_names(func: Function) -> set[str]:
    """The names given as extents of a window read's `valid_shape=` in `func`."""
    out: set[str] = set()
    for n in walk(func):
        if isinstance(n, Call):
            try:
                op = get(n.op)
            except KeyError:
                continue
            if op.window_read is None:
                continue
            v = dict(zip(op.params, n.args)).get("valid_shape")
            if isinstance(v, ListExpr):
                out.update(x.name for x in v.items if isinstance(x, Var))
    return out


def _has_valid(t: Type | None) -> bool:
    return isinstance(t, ShapedType) and t.valid_shape is not None


class _Analyzer:
    def __init__(self, func: Function, varying: set, predicate: bool = False):
        self.func = func
        self.params = {p.var.name for p in func.params}
        self.ptypes = {p.var.name: p.var.type for p in func.params}
        self.varying = set(varying)
        self.alias: dict[str, str] = {p.var.name: p.var.name for p in func.params
                                      if isinstance(p.var.type, ShapedType)}
        # values that are views of a parameter under another shape (reshape, tensor.view,
        # ...): their windows are not the parameter's, so accesses through them are
        # recorded with an unknown window and writes through them refuse the batch
        self.views: dict[str, str] = {}
        self.forms: dict[str, Any] = {}
        self.accesses: list[Access] = []
        self.stacked: set[str] = set()
        # the region's own counted loops with constant bounds: var -> (start, step, trips);
        # None when the name is bound otherwise too
        self.loops: dict[str, tuple | None] = {}
        self.changed = False
        self.returns: list = []
        self.vreturns: list[bool] = []
        self.checked = _window_valid_names(func)
        # conditions that differ per block run predicated (`predicate`: untraced runs)
        self.predicate = predicate
        self.under = 0
        self.agreed: set[int] = set()
        self.untaken: dict[int, tuple] = {}
        self.others: list = []
        # how often each name occurs (its definition included), and each loop carry's
        # initial value: a local tile written per block must die at the write
        self.uses: dict[str, int] = {}
        self.inits: dict[str, Any] = {}
        # values that are views of a varying tile's storage (its windows, and what
        # carries them): nothing may write into them in place (`in_place_target`)
        self.tile_views: set[str] = set()
        for n in walk(func.body):
            if isinstance(n, Var):
                self.uses[n.name] = self.uses.get(n.name, 0) + 1
            elif isinstance(n, (For, While)):
                self.inits.update((it.name, init) for it, init in zip(n.iter_args, n.inits))

    # -- helpers -------------------------------------------------------------------

    def merge_uses(self, name: str) -> int:
        """How often `name` occurs in the other branches of the predicated ifs being
        analysed (`predicate.merge_uses`)."""
        return merge_uses(self, name)

    def valid_ok(self, t: Type | None) -> bool:
        """May a value of type `t` be the operand of an op without a mask rule (`masks`)?
        Yes when its type declares no valid shape, or one whose every extent is the
        tile's own or the name of a window's valid extent: a partial tile there is a
        `masks.Masked` value, which such an op refuses per run (`state.Partial`), so in a
        batch that runs the name holds the full extent."""
        if not _has_valid(t):
            return True
        assert isinstance(t, ShapedType) and t.valid_shape is not None
        for v, d in zip(t.valid_shape, t.shape):
            if isinstance(v, Var) and v.name in self.checked:
                continue
            if v == d or (isinstance(v, Const) and v.value == d):
                continue
            return False
        return True

    def tile_view(self, e: Any) -> bool:
        """Is `e` a view of an on-chip tile's storage (a window of a tile, see
        `in_place_target`)?"""
        if isinstance(e, Var):
            return e.name in self.tile_views
        if isinstance(e, Call):
            try:
                op = get(e.op)
            except KeyError:
                return False
            rd = op.window_read
            if rd is not None:
                src = dict(zip(op.params, e.args)).get(rd.tensor)
                return isinstance(getattr(src, "type", None), TileType)
        return False

    def is_var(self, e: Any) -> bool:
        if isinstance(e, Var):
            return e.name in self.varying
        if isinstance(e, ListExpr):
            return any(self.is_var(i) for i in e.items)
        if isinstance(e, (list, tuple)):
            return any(self.is_var(i) for i in e)
        if isinstance(e, GetItem):
            return self.is_var(e.value)
        if isinstance(e, Call):
            return self.call(e)
        if isinstance(e, CallFunc):
            raise NotBatchable("calls another function")
        return False

    def mark(self, name: str, v: bool) -> None:
        if v and name not in self.varying:
            self.varying.add(name)
            self.changed = True

    def resolve(self, e: Any) -> str | None:
        if isinstance(e, Var):
            return self.alias.get(e.name)
        if isinstance(e, Call):
            op = get(e.op)
            w = op.window_write
            if w is not None:
                return self.resolve(dict(zip(op.params, e.args))[w.tensor])
        return None

    def view_of(self, e: Any) -> str | None:
        """The parameter `e` is a reshaped (or reinterpreted) view of, if any."""
        if isinstance(e, Var):
            return self.views.get(e.name)
        if isinstance(e, Call) and e.args:
            op = get(e.op)
            if op.view is View.ALIAS:
                return self.resolve(e.args[0]) or self.view_of(e.args[0])
        return None

    def opaque(self, e: Any, write: bool, what: str) -> None:
        """An access through a view of a parameter (see `views`)."""
        p = self.view_of(e)
        if p is None:
            return
        if write:
            raise NotBatchable(f"{what} writes '{source_name(p)}' through a view of "
                               "another shape")
        self.accesses.append(Access(p, [None], None, False))

    # -- calls ---------------------------------------------------------------------

    def call(self, e: Call) -> bool:
        op = e.op
        try:
            opdef = get(op)
        except KeyError:
            raise NotBatchable(f"unknown op {op}") from None
        if opdef.role in UNSAFE:
            raise NotBatchable(f"{op} in the region")
        a = dict(zip(opdef.params, e.args))
        if self.under:
            predicated_call(self, opdef, a, self.resolve)
        if opdef.matmul is not None and opdef.matmul.acc is not None:
            self.in_place_target(a.get(opdef.matmul.acc))
        if opdef.writes is not None:
            self.in_place_target(a.get(opdef.writes))
        rule = rules.of(opdef)
        if rule is not None and rule.always:  # (windows, index arithmetic: `rules`)
            return rule.admit(self, e, opdef, a, None)
        if opdef.role is Role.ELEMENT_WRITE:
            if any([self.is_var(v) for v in e.args]):
                raise NotBatchable(f"varying {op}")
            self.opaque(e.args[0], True, op)
            t = self.resolve(e.args[0])  # (pl.write takes the tensor first)
            if t is not None:
                self.accesses.append(Access(t, [None], None, True))
            return False
        if opdef.writes is not None:
            # any other op writing in place: into a parameter (GM), every block would
            # write it once where the batch writes it once in all
            w = a.get(opdef.writes)
            p = self.resolve(w) or self.view_of(w)
            if p is not None:
                raise NotBatchable(f"{op} writes '{source_name(p)}' in place")
        vargs = [self.is_var(x) for x in e.args]
        if not any(vargs):
            return False
        rule = rules.resolve(opdef, e)
        if rule is None:
            raise NotBatchable(f"varying operand of {op}")
        return rule.admit(self, e, opdef, a, vargs)

    def in_place_target(self, t: Any) -> None:
        """Refuse an in-place write into `t` when `t` is a view of a tile's storage (a
        window of it, or what carries one): block by block the write reaches the tile
        through the view; batched, the view is not tracked."""
        seen = set()
        while t is not None and id(t) not in seen:
            seen.add(id(t))
            if self.tile_view(t):
                raise NotBatchable("an in-place write into a window of a tile")
            t = self.inits.get(t.name) if isinstance(t, Var) else None

    def bind_loop(self, s: For) -> None:
        name = s.var.name
        a, z, c = (int_const(x) for x in (s.start, s.stop, s.step))
        rng = None
        if a is not None and z is not None and c:
            rng = (a, c, max(0, -((a - z) // c)))
        if name in self.loops and self.loops[name] != rng:
            rng = None
        self.loops[name] = rng

    def offsets(self, off: Any) -> list:
        items = off.items if isinstance(off, ListExpr) else (off if isinstance(off, (list, tuple))
                                                             else None)
        if items is None:
            return [None]
        return [form(self, i) for i in items]

    # -- statements ----------------------------------------------------------------

    def body(self, stmts: tuple[Stmt, ...]) -> None:
        for s in stmts:
            self.stmt(s)

    def stmt(self, s: Stmt) -> None:
        if self.under:
            predicated_stmt(self, s)
        if isinstance(s, Assign):
            v = s.value
            if isinstance(v, CallFunc):
                raise NotBatchable("a call or launch inside the region")
            var = self.is_var(v)
            for t in s.targets:
                self.mark(t.name, var)
                if t.name in self.loops:
                    self.loops[t.name] = None
            if len(s.targets) == 1:
                name = s.targets[0].name
                if isinstance(s.targets[0].type, ScalarType):
                    f = form(self, v)
                    if f is not None:
                        self.forms[name] = f
                r = self.resolve(v)
                if r is not None:
                    self.alias[name] = r
                if self.tile_view(v):
                    self.tile_views.add(name)
                vp = self.view_of(v)
                if vp is not None:
                    self.views[name] = vp
        elif isinstance(s, Eval):
            if isinstance(s.expr, CallFunc):
                raise NotBatchable("a call inside the region")
            self.is_var(s.expr)
        elif isinstance(s, (For, While)):
            if isinstance(s, For):
                if self.is_var(s.start) or self.is_var(s.stop) or self.is_var(s.step):
                    shifted_loop(self, s)
                else:
                    self.bind_loop(s)
            for it, init in zip(s.iter_args, s.inits):
                self.mark(it.name, self.is_var(init))
                if self.tile_view(init):
                    self.tile_views.update((it.name, *(r.name for r in s.results)))
                r = self.resolve(init)
                if r is not None:
                    self.alias[it.name] = r
                vp = self.view_of(init)
                if vp is not None:
                    self.views[it.name] = vp
            self.body(s.body)
            ys = _last_yield(s.body)
            for i, it in enumerate(s.iter_args):
                if ys is not None and i < len(ys.values):
                    y = ys.values[i]
                    self.mark(it.name, self.is_var(y))
                    if self.tile_view(y):
                        self.tile_views.update((it.name, s.results[i].name))
                    r = self.resolve(y)
                    if (r is not None and r != self.alias.get(it.name)) or \
                            self.view_of(y) != self.views.get(it.name):
                        # the accesses through the carry were analysed as another value's
                        raise NotBatchable("a loop carries another tensor than it started with")
                    if r is None:
                        self.alias.pop(it.name, None)
            for it, res in zip(s.iter_args, s.results):
                self.mark(res.name, it.name in self.varying)
                if it.name in self.alias:
                    self.alias[res.name] = self.alias[it.name]
                if it.name in self.views:
                    self.views[res.name] = self.views[it.name]
            if isinstance(s, While) and self.is_var(s.cond):
                raise NotBatchable("a while condition differs per block")
        elif isinstance(s, If):
            if self.is_var(s.cond):
                predicated_if(self, s)
            else:
                uniform_if(self, s)
            for i, r in enumerate(s.results):
                got: set[tuple[str | None, str | None]] = set()
                gone = self.untaken.get(id(s), (None,))[0]
                for k, br in enumerate((s.then_body, s.else_body)):
                    if k == gone:
                        continue  # (taking it gives the batch up: it yields nothing)
                    ys = _last_yield(br)
                    if ys is not None and i < len(ys.values):
                        self.mark(r.name, self.is_var(ys.values[i]))
                        if self.tile_view(ys.values[i]):
                            self.tile_views.add(r.name)
                        got.add((self.resolve(ys.values[i]), self.view_of(ys.values[i])))
                if len(got) > 1 and any(p or q for p, q in got):
                    raise NotBatchable("the branches of an if yield different tensors")
                if len(got) == 1:
                    p, q = got.pop()
                    if p is not None:
                        self.alias[r.name] = p
                    if q is not None:
                        self.views[r.name] = q
        elif isinstance(s, Scope):
            if s.kind is ScopeKind.SPLIT_AIV or s.task is not None:
                raise NotBatchable("split / task scope")
            self.body(s.body)
        elif isinstance(s, Yield):
            for v in s.values:
                self.is_var(v)
        elif isinstance(s, Return):
            # a varying value returned is a fresh tensor per block (a loop body of several
            # launches hands it on; elsewhere it refuses the batch: `Plan.vreturns`)
            self.vreturns = [self.is_var(v) for v in s.values]
            self.returns = [self.resolve(v) for v in s.values]
        elif isinstance(s, (Break, Continue)):
            pass
        else:
            raise NotBatchable(f"{type(s).__name__} statement")


def _last_yield(stmts: tuple[Stmt, ...]) -> Yield | None:
    for s in reversed(stmts):
        if isinstance(s, Yield):
            return s
    return None


def analyzed(func: Function, varying: set, make: Any = None) -> Any:
    """The analyzer (`make(func, varying)`, `_Analyzer` by default) run to the fixpoint of
    the values that vary per block, or the reason the region cannot run batched."""
    make = make or _Analyzer
    try:
        for _ in range(8):
            an = make(func, varying)
            an.body(func.body)
            if not an.changed or set(an.varying) == set(varying):
                break
            varying = set(an.varying)
        else:
            return "no fixpoint"
        an = make(func, varying)
        an.body(func.body)
    except NotBatchable as exc:
        return str(exc)
    return an


def analyze(func: Function, varying: set, predicate: bool = False) -> Plan | str:
    """The batching plan of `func` when the parameters / symbols in `varying` differ per
    block, or the reason it cannot run batched; with `predicate`, conditions that differ
    per block run predicated (`pypto.sim.batch.predicate`)."""
    an = analyzed(func, varying, lambda f, v: _Analyzer(f, v, predicate))
    return an if isinstance(an, str) else plan_of(an)


__all__ = [
    "AFFINE_SYMBOLS",
    "BLOCK",
    "DIV_SYMBOLS",
    "Access",
    "NotBatchable",
    "Plan",
    "analyze",
    "analyzed",
    "index_symbol",
]
