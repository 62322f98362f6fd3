"""Reads past the end of a global tensor, kept as warnings (`SimConfig.oob_reads="warn"`).

A window a region loads from DDR may run past the tensor: kernels over-read on purpose
(a 16-row tile over an 8-row tensor whose extra rows are dropped later) or by mistake.
On the device the DMA reads whatever follows the tensor in GM and nothing faults, so
the golden harness runs with `oob_reads="warn"`: the overhang reads fresh memory
(residue, or zeros when fresh memory is zero-filled), the run goes on, and each reading
site is reported once with its window, so a result that depends on those rows is
explained rather than mysterious. The core's default (`"fault"`) raises at the read.
Writes past the end always fault: they would corrupt a neighbour.
"""
from __future__ import annotations

from dataclasses import dataclass

from pypto.ir.span import Span
from pypto.sim.faults import region_name, source_name


@dataclass
class OobRead:
    """One reading site whose window ran past the end of one global tensor."""

    tensor: str  # as the user wrote it (inliner / SSA suffixes dropped)
    op: str  # "slice" or "load"
    shape: tuple  # the tensor's shape
    window: str  # the first over-reaching window, "[lo:hi, ...]"
    axes: tuple  # the axes it runs past
    region: str
    block: int | None
    source: str  # file:line:col of the reading op
    line: int
    count: int = 1  # reads at this site that ran past the end

    def __str__(self) -> str:
        blk = f" block {self.block}" if self.block is not None else ""
        axes = ", ".join(map(str, self.axes))
        return (f"{self.op} of '{self.tensor}'{self.window} runs past axis {axes} of its "
                f"shape {list(self.shape)} in region '{self.region}'{blk} at {self.source}"
                + (f" ({self.count} reads)" if self.count > 1 else ""))

    def to_dict(self) -> dict:
        return {"tensor": self.tensor, "op": self.op, "shape": list(self.shape),
                "window": self.window, "axes": list(self.axes), "region": self.region,
                "block": self.block, "source": self.source, "line": self.line,
                "count": self.count}


class OobLog:
    """The reads past the end of a tensor one run made: one `OobRead` per (site, tensor)."""

    def __init__(self) -> None:
        self._by_site: dict[tuple, OobRead] = {}

    def note(self, span: Span | None, op: str, tensor: str, shape: tuple, window: str,
             axes: tuple, region: str | None, block: int | None) -> None:
        """Record a read past the end (once per site and tensor; later ones count)."""
        key = (span, op, tensor)
        seen = self._by_site.get(key)
        if seen is not None:
            seen.count += 1
            return
        self._by_site[key] = OobRead(source_name(tensor), op, tuple(shape), window,
                                     tuple(axes), region_name(region), block,
                                     str(span) if span else "<unknown>",
                                     getattr(span, "line", 0) or 0)

    def reads(self) -> list[OobRead]:
        return list(self._by_site.values())


__all__ = ["OobLog", "OobRead"]
