"""What a batch plan says about a region's accesses: each access's affine window forms,
and the `Plan` that proves (with `Plan.separated`, at launch) that the blocks' footprints
on every written tensor are pairwise disjoint. Made by `pypto.sim.batch.plan`."""
from __future__ import annotations

from dataclasses import dataclass, field

from pypto.sim.batch.lattice import lattice_disjoint
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
    # indices t in range(n), inside a cell `width` wide
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

    def separated(self, sym_deltas: dict, bs: tuple) -> str | None:
        """Why the footprints of the blocks on some written tensor may overlap, or None
        when they are pairwise disjoint. `sym_deltas[symbol]` is the per-batch-axis step of
        a varying scalar (None when it is not affine)."""
        for t in sorted(self.written):
            for k, n in enumerate(bs):
                if n <= 1:
                    continue
                ok = False
                for sym, _axis, coef, width, terms in self.separators.get(t, ()):
                    d = sym_deltas.get(sym)
                    if d is None or d[k] == 0:
                        continue
                    # the symbol must vary along axis k only (other batch axes of extent > 1
                    # would move the footprint without separating it)
                    if any(d[j] != 0 for j in range(len(bs)) if j != k and bs[j] > 1):
                        continue
                    if lattice_disjoint(terms + [(coef * d[k], n)], width):
                        ok = True
                        break
                if not ok:
                    return f"the windows of '{source_name(t)}' may overlap from block to block " \
                           f"(batch axis {k})"
        return None


__all__ = ["Access", "Plan"]
