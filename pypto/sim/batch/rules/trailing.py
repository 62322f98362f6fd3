"""What the families of ops acting on trailing axes share (ufunc, reduce, expand, matmul,
form): their admission, and the core that runs the op's impl once on operands carrying
leading batch axes. Each family's module gives it its partial-tile rule (`Tags`: how
the valid shapes of tagged operands go through the op), or none.

The core, for each call: a fast path when the impl is a numpy ufunc (`ufuncs.direct`:
the ufunc without the impl's dispatch; `ufuncs.reuse`: into an operand that dies here;
computed into the windows a later write fills, `placement`), else the impl and a cast
to the dtype the type declares. Tagged operands (`masks.Masked`) go through the
family's rule, then the valid shape the type declares (`masks.declared`); a family
without one gives the batch up (`Partial`: the launch splits, the partial blocks run
block by block). Traced, the op's cost is charged once for all blocks (it depends on
the tiles' shapes only).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pypto.ir.nodes import Call
from pypto.ir.types import ScalarType, ShapedType
from pypto.ops.numeric import ValidArray
from pypto.ops.registry import OpDef, get
from pypto.sim.batch import masks
from pypto.sim.batch.codegen import Core
from pypto.sim.batch.frame import BatchFrame
from pypto.sim.batch.masks import Masked, declares_valid
from pypto.sim.batch.placement import placed
from pypto.sim.batch.rules.rule import Analysis, Lowering, public_operands
from pypto.sim.batch.state import BatchState, Fallback, NotBatchable
from pypto.sim.batch.ufuncs import direct, reuse

# a family's partial-tile rule for one call: `tags(st, compute, args, rank)` computes the
# result of the (some tagged) operands `args` - `compute(plain arrays)` is the op - and
# tags it as block by block each block's result is tagged
Tags = Callable[[BatchState, Callable[[list], np.ndarray], list, int], Any]


def admit(an: Analysis, e: Call, op: OpDef, vargs: list, tags: Tags | None,
          product: bool = False) -> bool:
    """An op on trailing axes: a shaped result; its varying operands tiles of the
    result's rank (a product's may have fewer axes: `lift`), no varying scalars. A
    family with a partial-tile rule (`tags`) takes tagged operands and is tagged by its
    type; others only values whose valid shape is whole in a batch that runs
    (`Analysis.valid_ok`)."""
    ruled = tags is not None
    if not isinstance(e.type, ShapedType) or not (ruled or an.valid_ok(e.type)):
        raise NotBatchable(f"{e.op} with a valid shape")
    rank = len(e.type.shape)
    for x, v in zip(e.args, vargs):
        t = getattr(x, "type", None)
        if isinstance(t, ScalarType) and v:
            raise NotBatchable("a varying scalar operand")
        if isinstance(t, ShapedType):
            if not (ruled or an.valid_ok(t)):
                raise NotBatchable(f"{e.op} of a partially valid operand")
            if product and len(t.shape) < 2:
                raise NotBatchable("matmul of a vector")
            # (a product's operand of lower rank gets its missing axes after the block
            # axes, `lift`; any other op's would broadcast wrongly)
            if v and len(t.shape) != rank and not product:
                raise NotBatchable(f"{e.op} of operands of different ranks")
    return True


def core(lo: Lowering, e: Call, tags: Tags | None, lift: bool = False) -> Core:
    """The op's core (see the module docstring), refusing a zero integer divisor."""
    c = _bop(lo, e, tags, lift)
    op = get(e.op)
    k = lo.watched_divisor(e, op, list(range(len(e.args))))
    if k is not None and k < len(c.operands) and c.operands[k] is e.args[k]:
        c = Core(c.kind, _no_zero_divisor(c.fn, k), c.operands)
    return c


def tagged_result(st: BatchState, tags: Tags | None, compute: Callable[[list], np.ndarray],
                  args: list, valid: list | None, rank: int) -> Any:
    """The op on operands some of which are tagged: the family's rule `tags`, then the
    valid shape the type declares; without a rule the batch gives up."""
    if tags is None:
        masks.refuse(st, args)
        raise Fallback("a tagged operand of an op without a mask rule")
    r = tags(st, compute, args, rank)
    return masks.declared(st, r, valid, rank) if valid else r


def refuse_ints(st: BatchState, args: list) -> None:
    """Give the batch up on a tagged integer operand (an integer op's division is not the
    bare ufunc: numpy's tag rule does not hold for it)."""
    if any(masks.tagged(a) and np.dtype(a.dtype if type(a) is ValidArray
                                         else a.data.dtype).kind in "iub" for a in args):
        masks.refuse(st, args)
        raise Fallback("a tagged operand of an op without a mask rule")


def data(args: list) -> list:
    """The plain arrays of (`as_masked`) operands."""
    return [a.data if type(a) is Masked else a for a in args]


def _bop(lo: Lowering, e: Call, tags: Tags | None, lift_lower: bool) -> Core:
    opdef = get(e.op)
    impl = opdef.impl
    assert impl is not None
    public = public_operands(opdef, e)
    ranks = [len(e.args[i].type.shape) if isinstance(getattr(e.args[i], "type", None),
                                                      ShapedType) else -1 for i in public]
    shaped = [k for k, r in enumerate(ranks) if r >= 0]
    t = e.type
    assert isinstance(t, ShapedType)
    npdt = t.dtype.np
    static = t.static_shape()
    rank = len(t.shape)
    tracing = lo.settings.trace
    acct = lo.accountant(e, opdef, public) if tracing else None
    nd_t = np.ndarray
    into = None if tracing else reuse(e, npdt, static, lo.dying.get(id(e), []))
    fast = direct(e, npdt)
    # tagged tiles in the batch: the family's rule, and the valid shape the op's type
    # declares (`FnCompiler._typed_valid`; its entries are more operands)
    mvalid = list(t.valid_shape or ()) if declares_valid(t) else []
    nv = len(mvalid)
    # computed in the destination windows (`placement`): the write's target and offsets
    # are two more operands (when the valid shape the type declares is whole in every
    # block: its result is untagged)
    place = lo.places.get(id(e))
    own = place[3] if place is not None else None
    if own is not None and own not in public:
        place = None  # (the chain's value is not among the core's operands)
    into_place = placed(e, npdt, public.index(own) if own is not None else None) \
        if place is not None else None
    where = [place[0], place[1]] if place is not None and into_place is not None else []

    # a product's varying operand of lower rank than its result (a 2-D activation times
    # a [1, N, K] slice of one expert's weights): numpy puts the missing axes in front,
    # which in a batch must go after the block axes, not before them
    lift = [(k, rank - ranks[k]) for k in shaped
            if lift_lower and ranks[k] < rank and lo.vary(e.args[public[k]])]

    def compute(f: BatchFrame, args: list) -> Any:
        nb = f.batch.nb
        if lift:
            args = list(args)
            for k, d in lift:
                a = args[k]
                if getattr(a, "ndim", None) == ranks[k] + nb:
                    args[k] = a.reshape(a.shape[:nb] + (1,) * d + a.shape[nb:])
        # (fast gives None unless every operand is a plain array of the op's dtype, and
        # its result is one again)
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
        assert acct is not None and f.rec is not None
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
                r = tagged_result(f.batch, tags, lambda xs: compute(f, xs), args, valid, rank)
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


def _no_zero_divisor(fn: Callable, k: int) -> Callable:
    """`fn` (a core) giving up its batch when operand `k` (an integer divisor) holds a
    zero: the block-by-block rerun reports the division (checks=("div",))."""

    def core(f: BatchFrame, args: list) -> Any:
        if np.any(np.asarray(args[k]) == 0):
            raise Fallback("an integer division by zero")
        return fn(f, args)

    return core


__all__ = ["Tags", "admit", "core", "data", "refuse_ints", "tagged_result"]
