"""`BatchCompiler`: compiles a region body once for all blocks of a batch.

Uniform values compile exactly as block by block (`FnCompiler`); each op call the plan
marks varying compiles to a `Core`: a function of the batched frame and the evaluated
operands whose values carry leading batch axes (or are `Aff` scalars). The region's
top-level statements call the cores from one generated function
(`pypto.sim.batch.codegen`); anywhere else a core runs behind a closure.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pypto.ir.nodes import Call, For, Function, If, ListExpr, Var
from pypto.ir.types import ShapedType
from pypto.ops.facts import Role
from pypto.ops.numeric import ValidArray
from pypto.ops.registry import get
from pypto.sim.batch import masks
from pypto.sim.batch.codegen import Core, generate, generate_call
from pypto.sim.batch.frame import BatchFrame
from pypto.sim.batch.loop_axis import axis_loop, axis_loops
from pypto.sim.batch.mask_ops import TaggedCores, reshaped
from pypto.sim.batch.masks import (
    Masked,
    as_masked,
    declares_valid,
    tagged,
)
from pypto.sim.batch.merged import merge_sites, write_merged
from pypto.sim.batch.own import OwnCores
from pypto.sim.batch.placement import placed, placements
from pypto.sim.batch.plan import BLOCK, Plan
from pypto.sim.batch.predicate import (
    agreed_if,
    compare,
    is_compare,
    predicated,
    untaken_if,
)
from pypto.sim.batch.scalar_cores import ScalarCores
from pypto.sim.batch.scalars import SCALAR, index_symbol, per_block_scalar
from pypto.sim.batch.shifted import shifted_loop
from pypto.sim.batch.state import (
    Fallback,
)
from pypto.sim.batch.tag_flow import guarded_places
from pypto.sim.batch.ufuncs import (
    chunked_reduction,
    direct,
    dying_operands,
    reuse,
)
from pypto.sim.batch.window_cores import WindowCores
from pypto.sim.engine.compiler import FnCompiler
from pypto.sim.engine.function import CompiledFunction, Host
from pypto.sim.engine.values import FRAME, Env, Expr, Stmt


class BatchCompiler(OwnCores, ScalarCores, TaggedCores, WindowCores, FnCompiler):
    """Compiles a region for batched execution under a `Plan`; see the module docstring."""

    def __init__(self, host: Host, func: Function, plan: Plan):
        super().__init__(host, func)
        self.plan = plan
        self.in_region = True
        self.masked = 0  # predicated branches being compiled
        self.dying = dying_operands(func)
        # the region's loops that run as a batch axis (untraced: see loop_axis)
        self.axes = {} if self.settings.trace else axis_loops(func, plan)
        # ops computed straight into the windows a later write fills (untraced; where
        # a tile may be partial, only in a batch where none is: `tag_flow`)
        self.places = {} if self.settings.trace else \
            guarded_places(func, placements(func, plan.alias))
        # the window-write calls recorded for a merged write (`merged.merge_sites`)
        self.merging: set[int] = set()

    def compile(self) -> CompiledFunction:
        cf = super().compile()
        if len(set(p[0] for p in cf.params)) == len(cf.params) and \
                self.settings.source != "plain":
            cf.call = generate_call(cf.name, [p[0] for p in cf.params], cf.body,
                                    self.settings.source_dump)
        return cf

    def body(self, stmts: tuple) -> Stmt:
        # the region's top level: one generated function (plain: closures, as elsewhere)
        if stmts is self.func.body and self.settings.source != "plain":
            return generate(self, stmts)
        return super().body(stmts)

    def s_if(self, s: If) -> Stmt:
        if not self.vary(s.cond):
            gone = self.plan.untaken.get(id(s))
            if gone is not None:  # (a branch the batch cannot run: taking it gives up)
                k, why = gone
                return untaken_if(None if k == 0 else self.body(s.then_body),
                                  None if k == 1 else self.body(s.else_body),
                                  self.expr(s.cond), [r.name for r in s.results], why)
            return super().s_if(s)
        if id(s) in self.plan.agreed:  # (branches that cannot run predicated)
            return agreed_if(self.body(s.then_body), self.body(s.else_body),
                             self.expr(s.cond), [r.name for r in s.results],
                             lambda env: env[FRAME])
        # a condition that differs per block: both branches, predicated (`predicate`;
        # traced, each block records the branch it takes: `branch_trace`); a tile
        # written in them is each block's own (`blocal_write`). Untraced, their final
        # writes of the same window are made as one (`merged`: it records no accesses)
        sites = None if self.settings.trace else merge_sites(s, self.plan.alias, self.vary)
        if sites is not None:
            self.merging.update(id(e) for e in sites)
        self.masked += 1
        try:
            then, other = self.body(s.then_body), self.body(s.else_body)
        finally:
            self.masked -= 1
        return predicated(then, other, self.expr(s.cond), [r.name for r in s.results],
                          lambda env: env[FRAME], write_merged if sites is not None else None)

    def s_for(self, s: For) -> Stmt:
        if self.vary(s.start) or self.vary(s.stop):  # (the same trips per block: `shifted`)
            return shifted_loop(self, s)
        ax = self.axes.get(id(s))
        if ax is None:
            return super().s_for(s)
        return axis_loop(self, s, ax)

    def vary(self, e: Any) -> bool:
        """Does `e` differ per block (the plan's varying values, the block index)?"""
        pv = self.plan.varying
        if isinstance(e, Var):
            return e.name in pv
        if isinstance(e, ListExpr):
            return any(self.vary(i) for i in e.items)
        if isinstance(e, (list, tuple)):
            return any(self.vary(i) for i in e)
        if isinstance(e, Call):
            op = get(e.op)
            if op.role is Role.BLOCK_INDEX:
                return BLOCK in pv
            if op.window_write is not None:
                return False
            return any(self.vary(a) for a in e.args)
        return False

    def read_only(self, e: Any) -> bool:
        """Is `e` a tensor parameter the region never writes?"""
        p = self.plan.alias.get(e.name) if isinstance(e, Var) else None
        return p is not None and p not in self.plan.written and e.name not in self.plan.varying

    def core(self, e: Call) -> Core | None:
        """The batched core of the op call `e`, or None when it is uniform."""
        op = get(e.op)
        rd, wr = op.window_read, op.window_write
        if rd is not None or wr is not None:
            a = dict(zip(op.params, e.args))
            if rd is not None:
                valid, clamp = a.get("valid_shape"), a.get("clamp")
                if self.vary(a[rd.tensor]):
                    return self.bstack_window(e, a[rd.tensor], a[rd.shape], a[rd.offset])
                if self.vary(a[rd.offset]) or self.vary(valid) or self.vary(clamp):
                    return self.bwindow(e, a[rd.tensor], a[rd.shape], a[rd.offset], e.op,
                                        valid, clamp, a.get("pad_value"))
            elif wr is not None:
                tgt = a[wr.tensor]
                local = not (isinstance(tgt, Var) and tgt.name in self.plan.alias)
                if local and (self.vary(tgt) or self.vary(a[wr.source]) or self.masked):
                    return self.tagged_local(e, self.blocal_write(e, tgt, a[wr.source],
                                                                  a[wr.offset]))
                if self.vary(tgt):
                    return self.bstack_write(e, tgt, a[wr.source], a[wr.offset])
                src = a[wr.source]
                if self.vary(src) or self.vary(a[wr.offset]):
                    return self.bwrite(e, a[wr.tensor], src, a[wr.offset], e.op)
            return None
        if op.role is Role.BLOCK_INDEX and BLOCK in self.plan.varying:
            return self.bscalar(e, None)
        if not any(self.vary(x) for x in e.args):
            return None
        sym = index_symbol(op)
        if sym is not None:
            return self.bscalar(e, SCALAR[sym])
        if is_compare(op, e):
            return self.bscalar(e, compare(op))
        if op.role is Role.ELEMENT_READ:
            return self.bread(e)
        if per_block_scalar(op, e):
            return self.bper_block(e)
        if op.role is Role.RESHAPE:
            return self.breshape(e)
        c = self.tagged_core(e)  # (set_validshape, transpose, fillpad: `mask_ops`)
        if c is not None:
            return c
        if not op.batchable and op.batch is not None and op.batch.form is not None:
            return self.bbatched(e)
        if op.batchable:
            c = self.bchunked(e) if not self.settings.trace else None
            if c is not None:
                return c
            c = self.bop(e)
            k = self._watched_divisor(e, op, list(range(len(e.args))))
            if k is not None and k < len(c.operands) and c.operands[k] is e.args[k]:
                c = Core(c.kind, _no_zero_divisor(c.fn, k), c.operands)
            return c
        raise AssertionError(f"batch plan admitted {e.op}")  # pragma: no cover

    def call(self, e: Call, target: str | None = None) -> Expr:
        c = self.core(e)
        if c is None:
            return super().call(e, target)
        fn = c.fn
        if c.kind == "args":
            argfns = [self.expr(a) for a in c.operands]

            def run(env: Env) -> Any:
                return fn(env[FRAME], [f(env) for f in argfns])
        elif c.kind == "window":
            src_f, off_f = self.expr(c.operands[0]), self.expr(c.operands[1])

            def run(env: Env) -> Any:
                return fn(env[FRAME], src_f(env), off_f(env), env)
        else:
            target_e, offset, fused_ops, source = c.operands
            tgt_f, off_f, src_f = self.expr(target_e), self.expr(offset), self.expr(source)
            fargfns = [self.expr(a) for a in fused_ops]

            def run(env: Env) -> Any:
                return fn(env[FRAME], tgt_f(env), off_f(env), [f(env) for f in fargfns],
                          lambda: src_f(env))
        return self.guard(run, e)

    # -- ops -------------------------------------------------------------------------

    def bop(self, e: Call) -> Core:
        """A batchable op on operands with leading batch axes."""
        opdef = get(e.op)
        impl = opdef.impl
        assert impl is not None
        names = opdef.params
        public = [i for i, p in enumerate(names) if not p.startswith("_") and i < len(e.args)]
        ranks = [len(e.args[i].type.shape) if isinstance(getattr(e.args[i], "type", None),
                                                          ShapedType) else -1 for i in public]
        shaped = [k for k, r in enumerate(ranks) if r >= 0]
        t = e.type
        assert isinstance(t, ShapedType)
        npdt = t.dtype.np
        static = t.static_shape()
        rank = len(t.shape)
        tracing = self.settings.trace
        acct = self.accountant(e, opdef, public) if tracing else None
        nd_t = np.ndarray
        into = None if tracing else reuse(e, npdt, static, self.dying.get(id(e), []))
        fast = direct(e, npdt)
        # tagged tiles in the batch: the rules of `masks`, and the valid shape the op's
        # type declares (`FnCompiler._typed_valid`; its entries are more operands)
        mkind = masks.kind_of(e)
        mvalid = list(t.valid_shape or ()) if declares_valid(t) else []
        nv = len(mvalid)
        # computed in the destination windows (`placement`): the write's target and
        # offsets are two more operands (when the valid shape the type declares is
        # whole in every block: its result is untagged)
        place = self.places.get(id(e))
        own = place[3] if place is not None else None
        if own is not None and own not in public:
            place = None  # (the chain's value is not among the core's operands)
        into_place = placed(e, npdt, public.index(own) if own is not None else None) \
            if place is not None else None
        where = [place[0], place[1]] if place is not None and into_place is not None else []

        # a product's varying operand of lower rank than its result (a 2-D activation
        # times a [1, N, K] slice of one expert's weights): numpy puts the missing axes
        # in front, which in a batch must go after the block axes, not before them
        lift = [(k, rank - ranks[k]) for k in shaped
                if opdef.matmul is not None and ranks[k] < rank and
                self.vary(e.args[public[k]])]

        def compute(f: BatchFrame, args: list) -> Any:
            nb = f.batch.nb
            if lift:
                args = list(args)
                for k, d in lift:
                    a = args[k]
                    if getattr(a, "ndim", None) == ranks[k] + nb:
                        args[k] = a.reshape(a.shape[:nb] + (1,) * d + a.shape[nb:])
            # (fast gives None unless every operand is a plain array of the op's dtype,
            # and its result is one again)
            r = fast(args) if fast is not None else None
            if r is None:
                for k in shaped:
                    if type(args[k]) is not nd_t:
                        raise Fallback("a tagged or non-array operand")
                r = impl(*args)
                if type(r) is not nd_t:
                    raise Fallback("a tagged result")
                if r.dtype != npdt:
                    r = r.astype(npdt)
            if static is None or r.shape[-rank:] != static or r.ndim not in (rank, rank + nb):
                raise Fallback("unexpected result shape")
            return r

        def charge(f: BatchFrame, args: list, r: Any) -> None:
            # (the cost of one block, all blocks': it depends on the tiles' shapes only)
            assert acct is not None
            nb = f.batch.nb
            z = (0,) * nb
            args = [a.data if type(a) is Masked else a for a in args]
            r = r.data if type(r) is Masked else r
            acct(f.rec, f.costs,
                 [a[z] if k in shaped and a.ndim == ranks[k] + nb else a
                  for k, a in enumerate(args)], r[z] if r.ndim == rank + nb else r)

        def core(f: BatchFrame, args: list) -> Any:
            if into_place is not None:
                args, (tgt, offs) = args[:-2], args[-2:]
            valid = None
            if nv:
                args, valid = args[:-nv], args[-nv:]
            for a in args:
                if type(a) is Masked or type(a) is ValidArray:
                    r = masks.apply(f.batch, mkind, lambda xs: compute(f, xs), args, valid,
                                    rank)
                    if acct is not None and f.rec is not None:
                        charge(f, args, r)
                    return r
            if into_place is not None and \
                    (valid is None or masks.whole_in_all(f.batch, valid, static or ())):
                r = into_place(f.batch, tgt, offs, args)
                if r is not None:
                    return r
            r = into(args, f.batch.nb) if into is not None else None
            if r is None:
                r = compute(f, args)
                if acct is not None and f.rec is not None:
                    charge(f, args, r)
            return masks.declared(f.batch, r, valid, rank) if valid is not None else r

        return Core("args", core, [e.args[i] for i in public] + mvalid + where)

    def bchunked(self, e: Call) -> Core | None:
        """A row reduction of an inline elementwise op, slice by slice of the batch
        (`ufuncs.chunked_reduction`; untraced), or None. Its operands are the inner
        op's: when the run-time values do not fit, the two cores run as usual."""
        t = e.type
        if not isinstance(t, ShapedType) or declares_valid(t) or \
                declares_valid(getattr(e.args[0], "type", None) if e.args else None):
            return None  # (a result tagged by its type: the two ops as usual)
        chunked = chunked_reduction(e, t.dtype.np)
        if chunked is None:
            return None
        inner = e.args[0]
        ic, oc = self.core(inner), self.bop(e)
        rest = [self.const(x) for x in oc.operands[1:]]  # (left at their defaults)
        if ic is None or ic.kind != "args" or not oc.operands or oc.operands[0] is not inner \
                or not all(ok for ok, _ in rest) or \
                any(a is not b for a, b in zip(ic.operands, inner.args)):
            return None  # (valid shapes or a placement among the operands)
        inner_fn, outer_fn = ic.fn, oc.fn
        defaults = [v for _, v in rest]
        static = t.static_shape()
        rank = len(t.shape)

        def core(f: BatchFrame, args: list) -> Any:
            st = f.batch
            r = chunked(args, st.nb, st.bs)
            if r is None:
                return outer_fn(f, [inner_fn(f, args), *defaults])
            if static is None or r.shape[-rank:] != static or r.ndim != rank + st.nb:
                raise Fallback("unexpected result shape")
            return r

        return Core("args", core, list(ic.operands))

    def bbatched(self, e: Call) -> Core:
        """An op whose registry entry computes a batch itself (its `Batching.form`
        fact: `f(nb, rank, *operands)`, None when it cannot), cast to its dtype."""
        opdef = get(e.op)
        batched = opdef.batch.form if opdef.batch is not None else None
        assert batched is not None
        public = [i for i, p in enumerate(opdef.params) if not p.startswith("_")
                  and i < len(e.args)]
        t = e.type
        assert isinstance(t, ShapedType)
        npdt = t.dtype.np
        static = t.static_shape()
        rank = len(t.shape)
        acct = self.accountant(e, opdef, public) if self.settings.trace else None

        def core(f: BatchFrame, args: list) -> Any:
            nb = f.batch.nb
            for a in args:
                if isinstance(a, np.ndarray) and type(a) is not np.ndarray:
                    raise Fallback("a tagged operand")
            masks.refuse(f.batch, args)
            r = batched(nb, rank, *args)
            if type(r) is not np.ndarray or static is None or r.shape[-rank:] != static:
                raise Fallback("no batched form")
            if r.dtype != npdt:
                r = r.astype(npdt)
            if acct is not None and f.rec is not None:
                z = (0,) * nb
                acct(f.rec, f.costs, [a[z] if isinstance(a, np.ndarray) and a.ndim > rank
                                      else a for a in args], r[z] if r.ndim > rank else r)
            return r

        return Core("args", core, [e.args[i] for i in public])

    def breshape(self, e: Call) -> Core:
        """A reshape of a batched value: the trailing axes take the new shape."""
        opdef = get(e.op)
        x_t = e.args[0].type
        assert isinstance(x_t, ShapedType) and isinstance(e.type, ShapedType)
        in_rank = len(x_t.shape)
        static = e.type.static_shape()
        assert static is not None
        acct = self.accountant(e, opdef, [0]) if self.settings.trace else None

        def core(f: BatchFrame, args: list) -> Any:
            x = args[0]
            nb = f.batch.nb
            d = as_masked(x).data if tagged(x) else x
            if type(d) is not np.ndarray:
                raise Fallback("a non-array operand")
            if d.ndim == in_rank + nb:
                r = d.reshape(d.shape[:nb] + static)
            elif d.ndim == in_rank:
                r = d.reshape(static)
            else:
                raise Fallback("unexpected operand rank")
            if acct is not None and f.rec is not None:
                z = (0,) * nb
                acct(f.rec, f.costs, [d[z] if d.ndim > in_rank else d],
                     r[z] if r.ndim > len(static) else r)
            # (a tag is kept when the shape is, else only its class: `mask_ops`)
            return reshaped(f.batch, x, r, len(static)) if tagged(x) else r

        return Core("args", core, [e.args[0]])


def _no_zero_divisor(fn: Callable, k: int) -> Callable:
    """`fn` (a core) giving up its batch when operand `k` (an integer divisor) holds a
    zero: the block-by-block rerun reports the division (checks=("div",))."""

    def core(f: BatchFrame, args: list) -> Any:
        if np.any(np.asarray(args[k]) == 0):
            raise Fallback("an integer division by zero")
        return fn(f, args)

    return core


__all__ = ["BatchCompiler"]
