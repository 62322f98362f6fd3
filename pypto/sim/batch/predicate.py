"""Conditions that differ per block: both branches for all blocks, predicated
(issue 17; traced runs too: `pypto.sim.batch.branch_trace`).

pypto-lib's regions guard work with conditions on per-block values: `if row >= 0:`
(a token id read from a tensor, -1 for padding), `if t < num_tokens:`. Block by block
each block runs one branch; the reads of the other branch may be at indices that are
invalid for it. Batched, such an `if` runs as follows:

* its condition is one bool per block (`compare`: comparisons and `and` / `or` / `not`
  of integer scalars, numpy's operators on the per-block values - exactly the Python
  operators' results on integers);
* when every block takes the same branch, that branch runs as if the condition were
  uniform (no predication at all); under an outer condition only the blocks taking the
  outer branch count (the masks are and-ed);
* otherwise both branches run for all blocks, each under its mask (`BatchState.pred`):
  window reads and element reads of a block that does not take the branch are moved
  to an index inside the tensor (their data are read, never used: `clip`); window
  writes into the region's tensors, and into its tiles (each block's own,
  `rules.window_write.blocal_write`), write only the blocks that take the branch
  (`masked_write`); the values the branches yield are chosen per block (`select`).

What keeps this equal to block by block, checked statically (`predicated_if`): a
predicated branch holds only assignments of values (ops, window reads, integer
arithmetic), counted loops (their bounds the same in every block), window writes into
tensor parameters (also as `Eval` statements) or into tiles of the region whose old
value dies there (but for the other branches, whose blocks it keeps: `merge_uses`),
and nested conditions - no while loops, calls, element writes, in-place writers,
writes into a previous launch's tensors (which block by block only the taken blocks
would change), no break / continue / return - and nothing it assigns is used after the
`if` except through its results. An `if` whose branches cannot run so runs only when
every block takes the same branch (`agreed_if`; a mix gives the batch up). At run time
anything else gives up the batch (`Fallback`): a partial tile under a mask, a taken
block's window outside its tensor (the block-by-block rerun reports it), an error on
the data a not-taken block read (a division by zero, say). The footprints of all
blocks, taken or not, are what the plan proves disjoint, so a masked write is one of
them.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from pypto.ir.nodes import (
    Assign,
    Break,
    Call,
    Continue,
    Eval,
    For,
    If,
    Return,
    Scope,
    Var,
    While,
    Yield,
)
from pypto.ir.transform import walk
from pypto.ops.facts import Role
from pypto.ops.registry import OpDef
from pypto.sim.batch.branch_trace import enter, leave
from pypto.sim.batch.state import Aff, BatchState, Fallback, NotBatchable, write_each_block

# -- the analysis ------------------------------------------------------------------------


class Analyzed(Protocol):
    """What the analysis of conditions that differ per block reads and notes on the plan
    analyzer (`plan._Analyzer`; `predicate` says whether the batch may predicate at
    all)."""

    func: Any
    uses: dict[str, int]
    predicate: bool
    under: int  # predicated branches being analysed
    # the `if`s (by id) whose branches cannot run predicated: they run batched only when
    # every block takes the same branch (`agreed_if`), else the batch is given up
    agreed: set
    # the branches (id of the `if`, 0 then / 1 else) of uniform conditions that cannot
    # run batched: taking one gives the batch up (`uniform_if`)
    untaken: dict
    others: list  # per predicated `if` being analysed: the branch not being analysed

    def body(self, stmts: tuple) -> None:
        """Analyse the statements `stmts`."""

    def is_var(self, e: Any) -> bool:
        """Does `e` differ per block?"""


def predicated_if(an: Analyzed, s: If) -> None:
    """Analyse the branches of `s`, whose condition differs per block, as they run
    predicated; when they cannot (a loop in a branch, say), as they run when every
    block takes the same branch (`agreed`, checked at run time), or refuse."""
    if not an.predicate:
        raise NotBatchable("a condition differs per block (not predicated here)")
    before = {k: v.copy() if isinstance(v, (dict, set, list)) else v
              for k, v in vars(an).items()}
    try:
        _predicated(an, s)
    except NotBatchable:
        if an.under:  # (under a mask no branch runs for all blocks)
            raise
        # the analysis restarts at the `if`, its branches analysed as uniform code
        vars(an).clear()
        vars(an).update(before)
        an.agreed.add(id(s))
        an.body(s.then_body)
        an.body(s.else_body)

def uniform_if(an: Analyzed, s: If) -> None:
    """Analyse the branches of `s`, whose condition is the same in every block. A
    branch that cannot run batched (a tail tile's path, say, which the full tiles
    never take) is left out: the batch runs while no run takes it and gives up
    where one does (`untaken_if`: block by block from the start). Both refusing
    refuses the region."""
    why = None
    for k, br in enumerate((s.then_body, s.else_body)):
        before = {n: v.copy() if isinstance(v, (dict, set, list)) else v
                  for n, v in vars(an).items()}
        try:
            an.body(br)
        except NotBatchable as exc:
            if why is not None:
                raise
            vars(an).clear()
            vars(an).update(before)
            why = str(exc)
            an.untaken[id(s)] = (k, why)

def _predicated(an: Analyzed, s: If) -> None:
    inside: dict[str, int] = {}
    assigned: set[str] = set()
    for n in walk(s):
        if isinstance(n, Var):
            inside[n.name] = inside.get(n.name, 0) + 1
        elif isinstance(n, Assign):
            assigned.update(t.name for t in n.targets)
    results = {r.name for r in s.results}
    if any(an.uses.get(n, 0) > inside.get(n, 0) for n in assigned - results):
        raise NotBatchable("a value assigned under a condition that differs per block "
                          "is used after it")
    an.under += 1
    try:
        an.others.append(s.else_body)
        an.body(s.then_body)
        an.others[-1] = s.then_body
        an.body(s.else_body)
    finally:
        an.under -= 1
        an.others.pop()

def merge_uses(an: Analyzed, name: str) -> int:
    """How often `name` occurs in the other branch of each predicated `if` being
    analysed. A tile written in place under a mask changes the blocks of the mask
    only; the other branches run for other blocks, so whatever they do with the old
    tile (yield it, read it, write their own blocks of it) sees it unchanged
    (`rules.window_write`)."""
    n = 0
    for other in an.others:
        for x in walk(other):
            if isinstance(x, Var) and x.name == name:
                n += 1
    return n

def predicated_stmt(an: Analyzed, s: Any) -> None:
    """Refuse the statements a predicated branch cannot run for all blocks. (A
    counted loop runs for all blocks, its bounds the same in every block: the
    analysis of `For` refuses others.)"""
    if isinstance(s, While):
        raise NotBatchable("a while loop under a condition that differs per block")
    if isinstance(s, (Return, Break, Continue)):
        raise NotBatchable("a return / break / continue under a condition that differs "
                          "per block")
    if isinstance(s, Eval) and isinstance(s.expr, Call):
        return  # (an imperative write: the op's analysis decides, `predicated_call`)
    if isinstance(s, Scope) or not isinstance(s, (Assign, For, If, Yield)):
        raise NotBatchable(f"a {type(s).__name__} statement under a condition that "
                          "differs per block")

def predicated_call(an: Analyzed, op: OpDef, a: dict, resolve: Callable[[Any], Any]) -> None:
    """Refuse the ops a predicated branch cannot run for all blocks: writes that
    are not window writes into a tensor parameter or a tile of the region, reads of a
    per-iteration tensor. (A tile write is each block's own, masked:
    `rules.window_write` decides.)"""
    rd, wr = op.window_read, op.window_write
    if rd is not None and resolve(a[rd.tensor]) is not None and an.is_var(a[rd.tensor]):
        raise NotBatchable("a window of a per-iteration tensor under a condition")
    if wr is not None and resolve(a[wr.tensor]) is not None and an.is_var(a[wr.tensor]):
        raise NotBatchable("a write into a per-iteration tensor under a condition that "
                          "differs per block")
    if op.role is Role.ELEMENT_WRITE or (op.writes is not None and wr is None):
        raise NotBatchable(f"{op.name} under a condition that differs per block")


# -- running -----------------------------------------------------------------------------


def clip(st: BatchState, offs: list, shp: tuple, shape: tuple) -> list:
    """The offsets `offs` of windows of extent `shp` with the blocks outside the mask
    `st.pred` moved inside an array of `shape` (where they start, clipped): what they
    read is never used."""
    pred = st.pred
    assert pred is not None
    out: list = []
    for o, s, d in zip(offs, shp, shape):
        if type(o) is int or d < s:
            out.append(o)  # (the same for all blocks: taken blocks read it too)
            continue
        v = np.asarray(st.materialize(o), dtype=np.int64)
        out.append(np.where(pred, v, np.clip(v, 0, d - s)))
    return out


def masked_write(st: BatchState, site: list, tgt: Any, offs: list, src: Any, shp: tuple
                 ) -> None:
    """Write `src` into the windows `offs + shp` of `tgt` of the blocks in the mask
    `st.pred` only (as block by block, only they write); the others' windows are not
    touched (nor bounds-checked: block by block they write nothing)."""
    pred = st.pred
    assert pred is not None
    nb, srank = st.nb, len(shp)
    if type(tgt) is not np.ndarray or type(src) is not np.ndarray or len(offs) != tgt.ndim or \
            src.shape[-srank:] != shp or src.ndim not in (srank, srank + nb):
        raise Fallback("a tagged value or another rank under a condition")
    try:  # every block's window inside the tensor and its own: one strided view
        view = st.window_at(site, tgt, offs, shp, True)
    except Fallback:
        view = None
    if view is not None and view.shape[:nb] == st.bs:
        if st.undo is not None:
            st.undo.append((view, view.copy()))
        # (the taken blocks' windows only: a boolean index over the batch axes copies
        # just them, where a masked copy would visit every element)
        view[pred] = (src if src.shape == view.shape else np.broadcast_to(src, view.shape))[pred]
        if st.wlog is not None:  # (the deferred fill skips the windows of the mask)
            st.wlog.append((tgt, list(offs), shp, pred, st))
        return
    write_each_block(st, tgt, offs, src, shp,
                     [tuple(int(i) for i in idx) for idx in np.argwhere(pred)])


def select(st: BatchState, a: Any, b: Any) -> Any:
    """Per block, `a` where the mask `st.pred` holds, else `b` (the values two predicated
    branches yield)."""
    if a is b:
        return a
    pred = st.pred
    assert pred is not None
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        if type(a) is not np.ndarray or type(b) is not np.ndarray or a.dtype != b.dtype:
            raise Fallback("branches yield tagged or different values")
        rank = max(a.ndim, b.ndim) - st.nb
        if rank < 0:
            raise Fallback("branches yield values of another rank")
        return np.where(pred.reshape(pred.shape + (1,) * rank), a, b)
    if isinstance(a, (int, Aff, np.integer, bool, np.bool_)) and \
            isinstance(b, (int, Aff, np.integer, bool, np.bool_)):
        x, y = np.asarray(st.materialize(a)), np.asarray(st.materialize(b))
        if x.dtype.kind != y.dtype.kind:
            raise Fallback("branches yield scalars of another kind")
        return np.where(pred, x, y)
    raise Fallback("branches yield values the batch cannot choose between")


def predicated(then: Callable, other: Callable, cond: Callable, results: list[str],
               frame_of: Callable, merge: Callable | None = None) -> Callable:
    """The closure of an `if` whose condition differs per block (see the module
    docstring): `then` / `other` the compiled branches, `cond` the condition; with
    `merge` (`merged.write_merged`), the branches' final writes of the same window,
    recorded while they run, are made as one afterwards when no outer condition holds."""

    def run(env: dict) -> str | None:
        f = frame_of(env)
        st: BatchState = f.batch
        c = cond(env)
        if not isinstance(c, np.ndarray):  # (the same in every block after all)
            return _plain(then if c else other, env, results)
        # under an outer condition (`outer`), only its blocks count: the others' values
        # are never used, whichever branch they take here
        outer = st.pred
        m = np.broadcast_to(c, st.bs)
        yes = m if outer is None else m & outer
        no = ~m if outer is None else ~m & outer
        if not no.any():
            return _plain(then, env, results)
        if not yes.any():
            return _plain(other, env, results)
        saved = st.merge
        # (an outer condition: its blocks only, so each branch writes its own)
        st.merge = [] if merge is not None and outer is None else None
        try:
            y_then = _branch(then, env, f, st, yes)
            y_other = _branch(other, env, f, st, no)
            if st.merge is not None and merge is not None:
                recs, st.merge = st.merge, None
                st.pred = None
                merge(st, recs)
            st.pred = yes
            if results:
                if y_then is None or y_other is None:
                    raise Fallback("a branch yields nothing")
                for k, a, b in zip(results, y_then, y_other):
                    env[k] = select(st, a, b)
        finally:
            st.pred = outer
            st.merge = saved
        return None

    return run


def agreed_if(then: Callable, other: Callable, cond: Callable, results: list[str],
              frame_of: Callable) -> Callable:
    """The closure of an `if` whose condition differs per block but whose branches
    cannot run predicated (`Analyzed.agreed`): when every block takes the same
    branch, it runs as if the condition were uniform (exactly what each block runs block
    by block); otherwise the batch is given up (`Fallback`: block by block from the
    start)."""

    def run(env: dict) -> str | None:
        c = cond(env)
        if not isinstance(c, np.ndarray):
            return _plain(then if c else other, env, results)
        st: BatchState = frame_of(env).batch
        if st.pred is not None:  # (the analysis keeps these out of predicated branches)
            raise Fallback("a condition over a loop under a condition")
        if c.all():
            return _plain(then, env, results)
        if not c.any():
            return _plain(other, env, results)
        raise Fallback("blocks take different branches of a condition the batch cannot "
                       "predicate")

    return run


def _branch(branch: Callable, env: dict, f: Any, st: BatchState, pred: np.ndarray) -> Any:
    """Run one branch for the blocks of `pred`; what it yields. A traced run logs and
    counts the branch for those blocks only (`branch_trace`); its loops count their
    iterations for those blocks only, as block by block (`SimConfig.max_work`)."""
    st.pred = pred
    saved = enter(f, st, pred)
    mult = f.work_mult
    f.work_mult = mult // max(1, pred.size) * int(np.count_nonzero(pred))
    done = False
    try:
        if branch(env) is not None:
            raise Fallback("a signal under a condition")
        done = True
    finally:
        f.work_mult = mult
        leave(f, st, pred, saved, done)
    return env.pop("$y", None)


def untaken_if(then: Callable | None, other: Callable | None, cond: Callable,
               results: list[str], why: str) -> Callable:
    """The closure of an `if` whose condition is the same in every block and one of
    whose branches (None here) cannot run batched (`uniform_if`):
    taking it gives the batch up (`Fallback`: the region runs block by block from the
    start, which takes it as it always did)."""

    def run(env: dict) -> str | None:
        branch = then if cond(env) else other
        if branch is None:
            raise Fallback(f"a branch the batch cannot run: {why}")
        return _plain(branch, env, results)

    return run


def _plain(branch: Callable, env: dict, results: list[str]) -> str | None:
    r = branch(env)
    if r is not None:
        return r
    y = env.pop("$y", None)
    if results and y is not None:
        for k, x in zip(results, y):
            env[k] = x
    return None


__all__ = ["Analyzed", "agreed_if", "clip", "masked_write", "merge_uses", "predicated",
           "predicated_call", "predicated_if", "predicated_stmt", "uniform_if", "untaken_if"]
