"""`enable_pmu` -> an **estimated** `dfx_outputs/pmu.csv` with the header of simpler's a2a3
`PmuCollector` (`pmu_collector.cpp`, simpler 6ebaf77):

    thread_id,core_id,task_id,func_id,core_type,pmu_total_cycles,<8 counters>,event_type

The counters of an event type are those of `pmu_profiling.h` (unused slots left out);
`enable_pmu=N` selects event type N, 2 (PIPE_UTILIZATION) by default. One row per task
block and core (a mixed block has an AIC row and an AIV row), at the block's place in
the estimated schedule (`pypto.dfx.schedule`): `task_id` "0x%016x" (the runtime's id),
`func_id` the kernel id of that core's side, `core_type` 0 AIC / 1 AIV,
`pmu_total_cycles` the block's estimate in core cycles. For event 2 the counters come
from the cost model's pipes, the task's cycles per pipe shared among its blocks in
proportion to each block's estimate: AIC rows carry cube, mte1 and mte2 (a cube
block's loads go through L1), AIV rows vec, scalar, mte2 and mte3; the FIX pipe has no
column on a2a3; icache counters are 0. Other event types' counters are not modelled:
their columns are 0. A CSV has no field a reader ignores, so the estimate is said by
the harness's note and in docs/dfx.md, not in the file.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from pypto.dfx.schedule import Slot

PMU_EVENTS: dict[int, tuple[str, ...]] = {
    1: ("cube_fp16_exec", "cube_int8_exec", "vec_fp32_exec", "vec_fp16_128lane_exec",
        "vec_fp16_64lane_exec", "vec_int32_exec", "vec_misc_exec"),
    2: ("vec_busy_cycles", "cube_busy_cycles", "scalar_busy_cycles", "mte1_busy_cycles",
        "mte2_busy_cycles", "mte3_busy_cycles", "icache_miss", "icache_req"),
    4: ("ub_read_req", "ub_write_req", "l1_read_req", "l1_write_req", "l2_read_req",
        "l2_write_req", "main_read_req", "main_write_req"),
    5: ("l0a_read_req", "l0a_write_req", "l0b_read_req", "l0b_write_req", "l0c_read_req",
        "l0c_write_req"),
    6: ("bankgroup_stall_cycles", "bank_stall_cycles", "vec_resc_conflict_cycles"),
    7: ("ub_read_bw_mte", "l2_write_bw", "main_mem_write_bw", "ub_write_bw_mte",
        "ub_read_bw_vector", "ub_write_bw_vector", "ub_read_bw_scalar", "ub_write_bw_scalar"),
    8: ("write_cache_hit", "write_cache_miss_allocate", "r0_read_cache_hit",
        "r0_read_cache_miss_allocate", "r1_read_cache_hit", "r1_read_cache_miss_allocate"),
}
DEFAULT_EVENT = 2
# event 2's columns from the cost model's pipes, per core side
_PIPE_COLUMNS = {"AIC": {"cube_busy_cycles": "cube", "mte1_busy_cycles": "mte1",
                         "mte2_busy_cycles": "mte2"},
                 "AIV": {"vec_busy_cycles": "vector", "scalar_busy_cycles": "scalar",
                         "mte2_busy_cycles": "mte2", "mte3_busy_cycles": "mte3"}}


def event_type(level: Any) -> int:
    """The PMU event type `enable_pmu=level` selects (True / unknown: the default, as the
    collector falls back to PIPE_UTILIZATION)."""
    if isinstance(level, bool) or not isinstance(level, int) or level not in PMU_EVENTS:
        return DEFAULT_EVENT
    return level


def header(event: int) -> str:
    return ",".join(("thread_id", "core_id", "task_id", "func_id", "core_type",
                     "pmu_total_cycles", *PMU_EVENTS[event], "event_type"))


def write_pmu(slots: list[Slot], trace: Any, ids: Any, event: int, dfx_dir: Path) -> Path:
    """Write `pmu.csv` for the placed blocks; returns its path."""
    columns = PMU_EVENTS[event]
    lines = [header(event)]
    shares: dict[int, float] = {}
    for s in slots:
        rec = trace.task(s.task)
        total = shares.get(s.task)
        if total is None:
            total = shares[s.task] = sum(rec.block_cycles) or 1.0
        frac = s.cycles / total
        picked = _PIPE_COLUMNS[s.side] if event == DEFAULT_EVENT else {}
        counters = [round(rec.cycles.get(picked[c], 0.0) * frac) if c in picked else 0
                    for c in columns]
        kernels = ids.kernel_ids(s.task)
        func = kernels[0] if s.side == "AIC" else next((k for k in kernels[1:] if k >= 0), -1)
        lines.append(",".join(map(str, (0, s.core, ids.hex(s.task), func,
                                        0 if s.side == "AIC" else 1, round(s.cycles),
                                        *counters, event))))
    dfx_dir.mkdir(parents=True, exist_ok=True)
    path = dfx_dir / "pmu.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


__all__ = ["DEFAULT_EVENT", "PMU_EVENTS", "event_type", "header", "write_pmu"]
