"""STAND-IN (replaced by the lead's `pypto/dfx/deps_json.py` on merge): a minimal
deps.json (the trace's observed edges) and its name map."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pypto.dfx.task_ids import RuntimeTaskIds


def write_deps_json(trace: Any, program: Any, analyses: Any, dfx_dir: Path,
                    work_dir_name: str) -> list[Path]:
    ids = RuntimeTaskIds.of_run(trace, program, analyses)
    kernel = [t for t in trace.tasks if t.kind != "dummy"]
    tasks = [{"task_id": str(ids.raw(t.id)), "scope": "auto", "early_dispatch": False,
              "kernel_ids": list(ids.kernel_ids(t.id)), "block_num": t.blocks, "args": []}
             for t in kernel]
    seen = set()
    edges = []
    for e in trace.edges:
        if (e.src, e.dst) in seen:
            continue
        seen.add((e.src, e.dst))
        edges.append({"pred": str(ids.raw(e.src)), "succ": str(ids.raw(e.dst)), "arg": -1,
                      "source": "explicit", "flags": ["wait"]})
    dfx_dir.mkdir(parents=True, exist_ok=True)
    deps = dfx_dir / "deps.json"
    deps.write_text(json.dumps({"tasks": tasks, "tensors": [], "edges": edges}, indent=1))
    names = dfx_dir / f"name_map_{work_dir_name}.json"
    names.write_text(json.dumps({"level": 2, "orchestrator_name": None, "callable_id_to_name":
                                 {str(k): v for k, v in ids.func_names().items()}}, indent=2))
    return [deps, names]
