"""`enable_chip_swimlane` -> an **estimated** `dfx_outputs/chip_swimlane_records.json` in
the layout of simpler's `ChipSwimlaneCollector::export_swimlane_json`
(`chip_swimlane_collector.cpp`, simpler 6ebaf77):

    {"chip_swimlane_level": L,
     "metadata": {"clock_freq_hz", "num_cores", "core_types": ["aic"|"aiv", ...]},
     "aicore_tasks": [[core_id, task_token_raw, reg_task_id, start_cycles, end_cycles,
                       receive_to_start_cycles], ...],
     "aicpu_tasks":  [[core_id, reg_task_id, dispatch_cycles, finish_cycles], ...]}

Level 1 is the AICore stream alone, level 2 adds the AICPU's dispatch / finish stamps;
the estimate has nothing more (no scheduler or orchestrator phases), so levels 3 and 4
are written as level 2 and the harness says so. `task_token_raw` is the runtime's task
id (deps.json's), `reg_task_id` the dispatch's sequence number on its core, times are
ticks of the platform's system counter (`clock_freq_hz`: 50 MHz on a2a3, 1 GHz on a5)
from the cost model's schedule (`pypto.dfx.schedule`); dispatch is the block's start
and finish its end (no dispatch or completion latency is modelled). The file says it
is an estimate in `metadata.estimated` and `metadata.source`, keys the readers
(`swimlane_converter`, `critical_path`) ignore.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pypto.dfx.schedule import Slot, core_types, sys_cnt_freq

SOURCE = "pypto-lab-sim"
MAX_LEVEL = 2  # what the estimate holds: AICore + AICPU timing


def written_level(requested: int) -> int:
    """The level the estimated file carries for a requested level (1..4)."""
    return min(max(1, requested), MAX_LEVEL)


def write_swimlane(slots: list[Slot], ids: Any, platform: Any, level: int,
                   dfx_dir: Path) -> Path:
    """Write `chip_swimlane_records.json` for the placed blocks (`place_blocks`); `ids`
    the run's `RuntimeTaskIds`. Returns its path."""
    level = written_level(level)
    types = core_types(platform)
    seq: dict[int, int] = {}
    aicore: list[list[int]] = []
    aicpu: list[list[int]] = []
    for s in sorted(slots, key=lambda s: (s.core, s.start)):
        reg = seq[s.core] = seq.get(s.core, 0) + 1
        aicore.append([s.core, ids.raw(s.task), reg, s.start, s.end, 0])
        if level >= 2:
            aicpu.append([s.core, reg, s.start, s.end])
    doc = {
        "chip_swimlane_level": level,
        "metadata": {"clock_freq_hz": sys_cnt_freq(platform), "num_cores": len(types),
                     "core_types": types, "estimated": True, "source": SOURCE,
                     "estimate": "cost-model schedule (pypto.dfx.schedule), not a device "
                                 "measurement"},
        "aicore_tasks": aicore,
        "aicpu_tasks": aicpu,
    }
    dfx_dir.mkdir(parents=True, exist_ok=True)
    path = dfx_dir / "chip_swimlane_records.json"
    path.write_text(_dumps(doc))
    return path


def _dumps(doc: dict) -> str:
    """JSON with one record a line, as the collector writes its flat tuple streams."""
    parts = []
    for key, value in doc.items():
        if isinstance(value, list) and value and isinstance(value[0], list):
            rows = ",\n".join("    " + json.dumps(r) for r in value)
            parts.append(f'  "{key}": [\n{rows}\n  ]')
        else:
            parts.append(f'  "{key}": {json.dumps(value)}')
    return "{\n" + ",\n".join(parts) + "\n}\n"


__all__ = ["MAX_LEVEL", "SOURCE", "write_swimlane", "written_level"]
