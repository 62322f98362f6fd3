"""`enable_scope_stats` → `dfx_outputs/scope_stats/scope_stats.jsonl`, version 6.

simpler's writer (`src/common/platform/shared/host/scope_stats_collector.cpp`,
`export`): line 1 the run's metadata - `version`, `fatal`, `dropped`, `total` and the
effective capacities `task_window_max` / `heap_max` / `dep_pool_max` (per ring) and
`tensormap_max`; then one record per scope begin and end - `site` (`file:line`),
`phase`, `depth`, `ring`, the ring's task tail / head, heap reclaim / allocation
pointers as monotonic cumulative bytes (version 6), dep-pool tail / top and the tensor
map's use. Key order and separators are the writer's.

The records come from the ring model's replay (`pypto.sim.runtime.rings`): `site` is the
kernel's own `file.py:line` of the scope (a function body, a `for` / `if` body, a
`pl.scope()`; the root scope the executor opens has an empty site, line 0), tails are
the best case (every task done when submitted). Line 1 carries `"source":
"pypto-lab-sim"` and the model's note, which `scope_stats_plot` ignores. A run the
model stops on a deadlock has `"fatal": true` and ends on the open scopes' `begin`
records, as the device's file does.
"""
from __future__ import annotations

import json
from pathlib import Path

from pypto.sim.runtime.rings import RingReport

NOTE = ("estimated by the pypto-lab simulator's ring model: best-case reclaim (every task "
        "done when submitted), so occupancies are lower bounds of the device's; dep_pool "
        "and tensormap count every edge and write as live until its task is reclaimed")


def write_scope_stats(report: RingReport, dfx: Path) -> Path:
    """Write `scope_stats/scope_stats.jsonl` under `dfx`; its path."""
    folder = Path(dfx) / "scope_stats"
    folder.mkdir(parents=True, exist_ok=True)
    caps = report.capacities
    meta = {"version": 6, "fatal": report.deadlock is not None, "dropped": 0,
            "total": len(report.samples), "task_window_max": list(caps.task_window),
            "heap_max": list(caps.heap), "dep_pool_max": list(caps.dep_pool),
            "tensormap_max": caps.tensormap, "source": "pypto-lab-sim", "estimate": NOTE}
    lines = [json.dumps(meta)]
    for s in report.samples:
        lines.append(json.dumps({
            "site": f"{s.site}" if s.site else ":0", "phase": s.phase, "depth": s.depth,
            "ring": s.ring, "task_window_start": s.task_window_start,
            "task_window_end": s.task_window_end, "heap_start": s.heap_start,
            "heap_end": s.heap_end, "dep_pool_start": s.dep_pool_start,
            "dep_pool_end": s.dep_pool_end, "tensormap": s.tensormap}))
    path = folder / "scope_stats.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


__all__ = ["NOTE", "write_scope_stats"]
