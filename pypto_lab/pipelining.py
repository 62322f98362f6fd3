"""A `pl.pipeline(..., stage=F)` loop inside a region: its iterations overlap on the core.

`with pl.at(...): for k in pl.pipeline(0, K, T, stage=2): ...` runs as one task whose
loop keeps F buffers in flight: iteration k+1 loads while iteration k computes, and
iteration k stores while k+1 computes. The trace gives a task's cycles per pipe in
total, so the loop's share of each pipe's work is estimated from the region's IR: the
ops of that unit inside the loop, counted once per iteration, against those outside it
(a prologue load, an epilogue that normalises and stores). The schedule then runs the
loop's part iteration by iteration with the stages chained and the buffers counted,
the rest before (loads) or after (compute, stores) it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from pypto.ir.nodes import Call, Const, For
from pypto.ir.transform import walk
from pypto.ops.registry import get

#: the unit whose ops do a pipe's work
PIPE_UNIT = {"mte2": "mte", "mte1": "mte", "mte3": "mte", "cube": "cube", "fix": "cube",
             "vector": "vector", "scalar": "scalar"}
MAX_DRAWN_ITERATIONS = 16
"""Longer loops are drawn (and estimated) in this many groups of consecutive iterations:
a bar per iteration of a 1000-trip loop on every core would drown the figure."""


@dataclass(frozen=True)
class InnerPipeline:
    var: str
    trips: int
    stage: int
    line: int
    share: dict[str, float]
    """Per unit: the fraction of the region's work on it done inside the loop."""

    @property
    def label(self) -> str:
        return f"pl.pipeline {self.var} ×{self.trips} stage={self.stage} (line {self.line})"


def inner_pipelines(program: Any) -> dict[str, InnerPipeline]:
    """Region function name → its first `pl.pipeline` loop with stage ≥ 2 and a constant
    trip count ≥ 2 (regions without one are left out)."""
    out = {}
    for f in program.functions:
        loop = next((n for n in walk(f.body) if isinstance(n, For)
                     and n.kind.value == "pipeline" and (n.attr("stage") or 0) >= 2), None)
        trips = _trips(loop) if loop is not None else None
        if loop is None or trips is None or trips < 2:
            continue
        inside, total = _units(loop.body), _units(f.body)
        share = {u: n * trips / (n * trips + total[u] - n) for u, n in inside.items()}
        out[f.name] = InnerPipeline(loop.var.name, trips, int(loop.attr("stage")),
                                    loop.span.line, share)
    return out


def _trips(loop: For) -> int | None:
    if not all(isinstance(e, Const) for e in (loop.start, loop.stop, loop.step)) \
            or not loop.step.value:
        return None
    return max(0, math.ceil((loop.stop.value - loop.start.value) / loop.step.value))


def _units(body: Any) -> dict[str, int]:
    counts: dict[str, int] = {}
    for n in walk(body):
        if isinstance(n, Call):
            try:
                unit = get(n.op).unit.value
            except KeyError:
                continue
            counts[unit] = counts.get(unit, 0) + 1
    return counts


def iteration_plan(cost: dict[str, float], stages: tuple, p: InnerPipeline
                   ) -> tuple[list[dict], list[list[dict]], list[dict], int]:
    """Cycles per pipe of the prologue (loads outside the loop), of each drawn group of
    iterations (one group per iteration up to MAX_DRAWN_ITERATIONS), and of the
    epilogue (compute and stores outside the loop), per stage; and the iterations in a
    drawn group."""
    groups = min(p.trips, MAX_DRAWN_ITERATIONS)
    per_group = math.ceil(p.trips / groups)
    groups = math.ceil(p.trips / per_group)
    pre, each, post = [], [], []
    for k, pipes in enumerate(stages):
        inside = {q: cost.get(q, 0.0) * p.share.get(PIPE_UNIT.get(q, q), 0.0) for q in pipes}
        outside = {q: cost.get(q, 0.0) - inside[q] for q in pipes}
        pre.append(outside if k == 0 else {})
        post.append({} if k == 0 else outside)
        each.append({q: c / groups for q, c in inside.items()})
    return pre, [each] * groups, post, per_group
