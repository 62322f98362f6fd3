"""Tile-size sweeps in the workbench: `pypto_lab.sweep(...)` and `%%pypto --sweep`.

The sweep itself is the core's (`pypto.scale.sweep`: each point compiled, checked
against the on-chip budget, run against its golden, its time estimated from the
trace; on the notebook's Dask client when one exists). Here it becomes a view: the
grid as a figure naming the best feasible tiling, the table as its text.
"""
from __future__ import annotations

from typing import Any

from pypto.scale.sweep import SweepResult
from pypto.scale.sweep import sweep as run_sweep
from pypto.scale.sweep_cli import parse_grid
from pypto_lab.figures.sweep import sweep_figure
from pypto_lab.views import FigureView


class SweepView(FigureView):
    """A sweep's figure; `.result` is the `SweepResult` (points, `.best`, `.table()`)."""

    def __init__(self, result: SweepResult):
        super().__init__(sweep_figure(result), f"sweep {result.kernel}", result.table())
        self.result = result


def sweep(target: Any, grid: dict[str, list], **options: Any) -> SweepView:
    """Sweep `target` (a kernel, or a kernel file) over `grid` ({constant: [values]});
    options as `pypto.scale.sweep.sweep` (specs, golden, kernel, client, ...)."""
    return SweepView(run_sweep(target, grid, **options))


def sweep_cell(kernel: Any, items: list[str], specs: Any, golden: Any, *,
               platform: str | None, rtol: float, atol: float) -> SweepView:
    """`%%pypto --sweep NAME=V1,V2 --run SPECS [GOLDEN]`: the cell's kernel over the grid
    of the cell's own constants."""
    return sweep(kernel, parse_grid(items), specs=specs, golden=golden,
                 platform=platform or "a2a3sim", rtol=rtol, atol=atol)
