"""The `ub` check: a region whose live tiles need more of an on-chip memory than the
platform has faults at its first launch.

The estimate is the compiler's own (`pypto.passes.buffers`: peak bytes of simultaneously
live tiles per memory space, allowing in-place reuse when an operand dies), read from
the compiled program's analyses; the capacities are the platform table's.
"""
from __future__ import annotations

from pypto.errors import SimulationError
from pypto.ir.nodes import Function
from pypto.ir.span import Span
from pypto.passes.buffers import BufferReport, estimate
from pypto.passes.units import classify
from pypto.platform import Platform

# on-chip spaces the check covers, with the hardware's name for each
_SPACES = (("Vec", "UB"), ("Mat", "L1"), ("Acc", "L0C"), ("Left", "L0A"), ("Right", "L0B"))


def buffer_report(analyses: dict, func: Function, platform: Platform) -> BufferReport:
    """The compiler's buffer estimate of region `func` (computed here for a function the
    pipeline did not estimate)."""
    report = (analyses.get("buffers") or {}).get(func.name)
    return report if report is not None else estimate(func, platform.name)


def check_budget(report: BufferReport, func: Function, platform: Platform, label: str,
                 span: Span | None) -> None:
    """Fault when the region `func`, launched as `label` at `span`, needs more of an
    on-chip memory at its peak than `platform` has."""
    for space, cap_name in _SPACES:
        used = int(report.peak.get(space, 0))
        cap = platform.capacity(space)
        if cap and used > cap:
            live = ", ".join(f"{'<temporary>' if n.startswith('%') else n} ({b:,} B)"
                             for n, b in report.at.get(space, [])[:6])
            mixed = classify(func).classification == "mixed"
            raise SimulationError(
                f"region {label} needs about {used:,} bytes of {cap_name} ({space}) at its "
                f"peak, more than the {cap:,} bytes usable on {platform.name}"
                + (f"; live tiles at the peak: {live}" if live else ""),
                report.peak_span.get(space) or span,
                hint="shrink the tiles (fewer rows / columns per block) or loop over smaller "
                     "chunks inside the region" + (
                         ", or split the vector side across the two AIV lanes with "
                         "optimizations=[pl.split(pl.SplitMode.UP_DOWN)]" if mixed else ""),
                note="estimate from the compiler's buffer analysis: peak of simultaneously "
                     "live tiles, allowing in-place reuse when an operand dies",
                tensor=None, region=label, block=None)


__all__ = ["buffer_report", "check_budget"]
