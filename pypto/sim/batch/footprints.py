"""What a batch plan says about a region's accesses: each access's affine window forms,
and the `Plan` that proves (with `Plan.separated`, at launch) that the blocks' footprints
on every written tensor are pairwise disjoint. Made by `plan_of` from the analysis of
`pypto.sim.batch.plan`."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pypto.sim.batch.forms import BLOCK, fixed_ints
from pypto.sim.batch.lattice import axis_separator, lattice_disjoint
from pypto.sim.faults import source_name


@dataclass
class Access:
    tensor: str  # the parameter it resolves to
    forms: list  # per axis: (const, {symbol: coef}) or None
    ext: tuple | None  # static window extents (None: unknown)
    write: bool


@dataclass
class Plan:
    """The outcome of analysing one region for one set of varying parameters."""

    varying: set  # names of varying values
    written: set  # parameters written
    read_written: bool  # some written parameter is also read
    accesses: list = field(default_factory=list)
    # tensor -> [(symbol, axis, coef, width, terms)]: along `axis`, every access of the
    # tensor sits at `const + coef * symbol + sum(c * t for c, n in terms)` with the loop
    # indices t in range(n) (any integer where n is None), inside a cell `width` wide;
    # or with the quotient `q` of the block index (`lattice.split_block`) as the symbol,
    # at `const + cq * q + cr * r + ...` (coef the pair (cq, cr), r the remainder)
    separators: dict = field(default_factory=dict)
    returns: list = field(default_factory=list)  # per returned value: the parameter it is
    vreturns: list = field(default_factory=list)  # per returned value: does it vary
    loops: dict = field(default_factory=dict)  # the region's loops: var -> (start, step, n)
    alias: dict = field(default_factory=dict)  # tensor value -> the parameter it is
    # varying tensor parameters the region writes in place (each iteration's own tensor,
    # `body.Stack`: the batched loop body makes them writable first)
    stacked: set = field(default_factory=set)
    # the `if`s (by id) whose condition differs per block and whose branches run only
    # when every block takes the same one (`predicate.agreed_if`)
    agreed: set = field(default_factory=set)
    # the `if`s (by id) of a uniform condition with a branch that cannot run batched:
    # id -> (0 then / 1 else, why); taking it gives the batch up (`predicate.uniform_if`)
    untaken: dict = field(default_factory=dict)

    def separated(self, sym_deltas: dict, bs: tuple) -> str | None:
        """Why the footprints of the blocks on some written tensor may overlap, or None
        when they are pairwise disjoint. `sym_deltas[symbol]` is the per-batch-axis step of
        a varying scalar (None when it is not affine)."""
        for t in sorted(self.written):
            for k, n in enumerate(bs):
                if n <= 1:
                    continue
                seps = self.separators.get(t, ())
                ok = split_separated(seps, sym_deltas, bs, k)
                for sym, _axis, coef, width, terms in seps:
                    if ok:
                        break
                    if isinstance(sym, tuple):
                        continue
                    d = sym_deltas.get(sym)
                    if d is None or d[k] == 0:
                        continue
                    # the symbol must vary along axis k only (other batch axes of extent > 1
                    # would move the footprint without separating it)
                    if any(d[j] != 0 for j in range(len(bs)) if j != k and bs[j] > 1):
                        continue
                    ok = lattice_disjoint(terms, width, [(coef * d[k], n)])
                if not ok:
                    return f"the windows of '{source_name(t)}' may overlap from block to block " \
                           f"(batch axis {k})"
        return None


def split_separated(seps: list, sym_deltas: dict, bs: tuple, k: int) -> bool:
    """Are the blocks along batch axis `k` kept apart by the quotient and remainder of
    the block index (separators over a `lattice.QUOTIENT` symbol)? Two blocks differ in
    their quotient or, with the same quotient, in their remainder: some axis must
    keep the cells of different quotients apart (whatever the remainder), and some
    axis (maybe another: rows by token, columns by head) those of different remainders
    at one quotient."""
    for q in {sep[0] for sep in seps if isinstance(sep[0], tuple)}:
        by_q = by_r = False
        for sym, _axis, coef, width, terms in seps:
            if sym != q:
                continue
            qr = split_terms(q, coef, sym_deltas, bs, k)
            if qr is None:
                return False
            by_q = by_q or lattice_disjoint(terms + [qr[1]], width, [qr[0]])
            by_r = by_r or lattice_disjoint(terms, width, [qr[1]])
        if by_q and by_r:
            return True
    return False


def split_terms(q: tuple, coef: tuple, sym_deltas: dict, bs: tuple, k: int) -> list | None:
    """The lattice terms of the quotient and remainder of the block index `q[1]` (`q`
    its quotient by `q[2]`, the index plus `q[3]` divided) over a batch whose axis `k`
    steps the index by one from zero (an SPMD batch: block `i` has index `i`); None
    when the index moves otherwise."""
    d = sym_deltas.get(q[1])
    if d is None or d[k] != 1 or any(d[j] != 0 for j in range(len(bs)) if j != k and bs[j] > 1):
        return None
    _, _, c, add = q
    n = bs[k]
    nq = (n - 1 + add) // c - add // c + 1
    return [(coef[0], nq), (coef[1], c)]


def plan_of(an: Any) -> Plan | str:
    """The plan of a finished analysis: what is written, and the separators of the
    written tensors' footprints along every block symbol."""
    varying = an.varying
    written = {a.tensor for a in an.accesses if a.write}
    read_written = any(not a.write and a.tensor in written for a in an.accesses)
    plan = Plan(set(an.varying), written, read_written, an.accesses, returns=an.returns,
                vreturns=an.vreturns, loops=dict(an.loops), alias=dict(an.alias),
                stacked=set(an.stacked), agreed=set(an.agreed), untaken=dict(an.untaken))
    syms = [p for p in varying if p in an.params or p == BLOCK]
    # (an integer parameter the region never rebinds is one value for all blocks and
    # accesses: a term of a single step)
    loops = {**{p: (0, 1, 1) for p in fixed_ints(an)}, **an.loops}
    for t in written:
        accs = [a for a in an.accesses if a.tensor == t]
        if any(a.ext is None or any(f is None for f in a.forms) for a in accs):
            return f"an access to '{source_name(t)}' with an unknown window"
        seps = []
        rank = len(accs[0].forms)
        for sym in syms:
            for ax in range(rank):
                sep = axis_separator(accs, rank, sym, ax, loops)
                if sep is not None:
                    seps.append(sep)
        plan.separators[t] = seps
    return plan


__all__ = ["Access", "Plan", "plan_of", "split_separated", "split_terms"]
