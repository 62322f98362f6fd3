"""When the footprints of a batch's blocks are pairwise disjoint: cells of one width
placed on a lattice of offsets (a mixed radix).

A term of the lattice is `(coef, n)`: the offset moves by `coef` per step of an index in
`range(n)` (a loop of the region with constant bounds, a batch axis). `n` is None for an
integer the region computes without a known range (`gh // HEADS_PER_GROUP`, a scalar
parameter): any integer. The block index decomposed by a constant divisor `c`
(`q = blk // c`, `r = blk - q * c`, `blk % c`) is two terms, the quotient's and the
remainder's (`r` in `range(c)`): a `Split` separator, whose quotient range is known at
launch from the number of blocks.
"""
from __future__ import annotations

import math
from typing import Any

# the quotient of the block index by a constant: ("q", symbol, divisor, addend) stands
# for (symbol + addend) // divisor (`plan._Analyzer.form`)
QUOTIENT = "q"


def lattice_disjoint(terms: list, width: int, own: list | tuple = ()) -> bool:
    """Are the cells `[o, o + width)` at `o = sum(c * t)` (each `t` in `range(n)`, over
    every `(c, n)` of `terms` and `own`) pairwise disjoint where they differ in an index
    of `own` (the terms of what is separated: the block index, a loop's iterations)?
    Sufficient test: sorted by `|c|`, each step of the bounded terms clears the span of
    all smaller ones plus a cell (a mixed radix). The unbounded terms (`n` None, any
    integer) move the cells by multiples of the gcd `g` of their coefficients; so do
    the bounded terms of `terms` whose coefficient is a multiple of `g`, and the span of
    the others plus a cell must stay under `g`. (A term of `terms` with coefficient 0
    moves nothing; one of `own` separates nothing.)"""
    g = 0
    for c, n in terms:
        if n is None:
            g = math.gcd(g, abs(c))
    radix = [(abs(c), n) for c, n in terms
             if c and n is not None and n > 1 and (g == 0 or c % g)]
    radix += [(abs(c), n) for c, n in own if n is not None and n > 1]
    if any(n is None for _, n in own):
        return False
    span = 0
    for c, n in sorted(radix):
        if c < span + width:
            return False
        span += c * (n - 1)
    return g == 0 or g >= span + width


def _terms(coefs: dict, skip: Any, loops: dict, const: int) -> tuple | None:
    """(const, {symbol: (coef * step, n)}, others) of the symbols of `coefs` but `skip`:
    the region's loops (known ranges: their start goes into the constant), integers
    without a known range (`n` None) and the other symbols (`others`: block symbols, a
    block's own values); None when a symbol is none of those."""
    mine = {}
    other = {}
    for u, c in coefs.items():
        if u == skip:
            continue
        if not isinstance(u, tuple):
            other[u] = c
            continue
        if u[0] == QUOTIENT:
            other[u] = c
            continue
        if u[0] != "u":
            return None  # (not an integer)
        rng = loops.get(u[1])
        if rng is None:
            mine[u] = (c, None)
            continue
        start, step, n = rng
        const += c * start
        mine[u] = (c * step, n)
    return const, mine, other


def split_block(coefs: dict, const: int, sym: str) -> tuple | None:
    """`coefs` (an offset's form) with the block symbol `sym` and its one quotient
    `q = (sym + k) // c` rewritten as quotient and remainder (`sym = c * q + r - k`,
    `r` in `range(c)`): (quotient symbol, const, coefs with q and ("r", q) for r); None
    when the form holds no quotient of `sym`, or several."""
    qs = [u for u in coefs if isinstance(u, tuple) and u[0] == QUOTIENT and u[1] == sym]
    if len(qs) != 1:
        return None
    q = qs[0]
    _, _, c, k = q
    a = coefs.get(sym, 0)
    out = {u: v for u, v in coefs.items() if u != sym and u != q}
    out[q] = coefs[q] + a * c
    out[("r", q)] = a
    return q, const - a * k, out


def axis_separator(accs: list, rank: int, sym: str, ax: int, loops: dict) -> tuple | None:
    """(sym, ax, coef, width, terms) when every access in `accs` sits along axis `ax` at
    `const + coef * sym + sum(loop terms)`, all with one `coef` and the same terms of the
    region's own loops (known ranges) and integers of unknown range; else None. When
    the accesses take the quotient `q` of `sym` by a constant (`split_block`) instead,
    `sym` is `q` and `coef` is the pair (quotient's coef, remainder's coef)."""
    coef: Any = None
    terms: dict | None = None
    lo = hi = None
    split = None
    for a in accs:
        if len(a.forms) != rank or len(a.ext) != rank:
            return None
        const, coefs = a.forms[ax]
        sp = split_block(coefs, const, sym)
        if sp is not None:
            q, const, coefs = sp
            if split not in (None, q):
                return None
            split = q
            mine_coef: Any = (coefs[q], coefs[("r", q)])
            skip = (q, ("r", q))
            coefs = {u: v for u, v in coefs.items() if u not in skip}
        elif split is not None:
            return None
        else:
            mine_coef = coefs.get(sym)
            if mine_coef is None:
                return None
        if coef is not None and mine_coef != coef:
            return None
        got = _terms(coefs, sym, loops, const)
        if got is None:
            return None
        const, mine, other = got
        if other:
            return None
        if terms is not None and mine != terms:
            return None
        coef, terms = mine_coef, mine
        lo = const if lo is None else min(lo, const)
        hi = const + a.ext[ax] if hi is None else max(hi, const + a.ext[ax])
    if coef is None or terms is None or lo is None or hi is None:
        return None
    return (split or sym, ax, coef, hi - lo, list(terms.values()))


def loop_separator(accs: list, rank: int, sym: str, ax: int, loops: dict) -> tuple | None:
    """(coef, width, terms) when every access in `accs` sits along axis `ax` at
    `const + coef * sym + sum(loop terms)` plus the same multiple of every other symbol
    (a block's own values: within one block they cancel), all with one `coef` and the
    same terms of the loops inside `sym`'s loop (known ranges); else None. The cells of
    the iterations of `sym`'s loop within one block are then `coef * step` apart."""
    coef = None
    terms: dict | None = None
    fixed: dict | None = None
    lo = hi = None
    for a in accs:
        if len(a.forms) != rank or a.ext is None or len(a.ext) != rank or a.forms[ax] is None:
            return None
        const, coefs = a.forms[ax]
        if not coefs.get(sym) or (coef is not None and coefs[sym] != coef):
            return None
        got = _terms(coefs, sym, loops, const)
        if got is None or any(n is None for _, n in got[1].values()):
            return None
        const, mine, other = got
        if terms is not None and (mine != terms or other != fixed):
            return None
        coef, terms, fixed = coefs[sym], mine, other
        lo = const if lo is None else min(lo, const)
        hi = const + a.ext[ax] if hi is None else max(hi, const + a.ext[ax])
    if coef is None or terms is None or lo is None or hi is None:
        return None
    return (coef, hi - lo, list(terms.values()))


__all__ = ["QUOTIENT", "axis_separator", "lattice_disjoint", "loop_separator", "split_block"]
