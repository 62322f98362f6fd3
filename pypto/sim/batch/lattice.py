"""When the footprints of a batch's blocks are pairwise disjoint: cells of one width
placed on a lattice of offsets (a mixed radix)."""
from __future__ import annotations


def lattice_disjoint(terms: list, width: int) -> bool:
    """Are the cells `[o, o + width)` at `o = sum(c * t)` (each `t` in `range(n)`, over
    every `(c, n)` of `terms`) pairwise disjoint? Sufficient test: sorted by `|c|`, each
    step clears the span of all smaller ones plus a cell (a mixed radix)."""
    span = 0
    for c, n in sorted(((abs(c), n) for c, n in terms if n > 1)):
        if c < span + width:
            return False
        span += c * (n - 1)
    return True


def axis_separator(accs: list, rank: int, sym: str, ax: int, loops: dict) -> tuple | None:
    """(sym, ax, coef, width, terms) when every access in `accs` sits along axis `ax` at
    `const + coef * sym + sum(loop terms)`, all with one `coef` and the same terms of the
    region's own loops (known ranges); else None."""
    coef = None
    terms: dict | None = None
    lo = hi = None
    for a in accs:
        if len(a.forms) != rank or len(a.ext) != rank:
            return None
        const, coefs = a.forms[ax]
        if coefs.get(sym) is None or (coef is not None and coefs[sym] != coef):
            return None
        mine = {}
        for u, c in coefs.items():
            if u == sym:
                continue
            rng = loops.get(u[1]) if isinstance(u, tuple) and u[0] == "u" else None
            if rng is None:
                return None
            start, step, n = rng
            const += c * start
            mine[u] = (c * step, n)
        if terms is not None and mine != terms:
            return None
        coef, terms = coefs[sym], mine
        lo = const if lo is None else min(lo, const)
        hi = const + a.ext[ax] if hi is None else max(hi, const + a.ext[ax])
    if coef is None or terms is None or lo is None or hi is None:
        return None
    return (sym, ax, coef, hi - lo, list(terms.values()))


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
        mine = {}
        other = {}
        for u, c in coefs.items():
            if u == sym:
                continue
            if not isinstance(u, tuple):
                other[u] = c
                continue
            rng = loops.get(u[1]) if u[0] == "u" else None
            if rng is None:
                return None
            start, step, n = rng
            const += c * start
            mine[u] = (c * step, n)
        if terms is not None and (mine != terms or other != fixed):
            return None
        coef, terms, fixed = coefs[sym], mine, other
        lo = const if lo is None else min(lo, const)
        hi = const + a.ext[ax] if hi is None else max(hi, const + a.ext[ax])
    if coef is None or terms is None or lo is None or hi is None:
        return None
    return (coef, hi - lo, list(terms.values()))


__all__ = ["axis_separator", "lattice_disjoint", "loop_separator"]
