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


__all__ = ["lattice_disjoint"]
