"""`enable_dep_gen` → `dfx_outputs/deps.json` and `name_map_<work dir>.json`.

deps.json is what simpler's dep_gen replay writes (`write_deps_json` in
`src/a2a3/runtime/tensormap_and_ringbuffer/host/dep_gen_replay.cpp`), key for key:

    {"tasks": [{"task_id", "scope", "early_dispatch", "kernel_ids", "block_num",
                "args": [{"idx", "type", "tensor_id", "dtype", "shape",
                          "start_offset", "strides"}]}],        # OUTPUT slots: idx, type
     "tensors": [{"tensor_id", "buffer_addr", "version", "dtype", "buffer_numel"}],
     "edges": [{"pred", "succ", "arg", "source", "flags",
                "overlap",                                      # tensormap edges
                "tensor_id", "consumer_dtype", "consumer_shape",
                "consumer_start_offset", "consumer_strides",    # not explicit edges
                "producer_shape", "producer_start_offset",
                "producer_strides"}]}                           # tensormap edges

u64 values (ids, addresses, offsets, numel) are decimal strings. The edges are the
runtime's rule applied to the run's submits (`pypto.sim.runtime.dependencies`), not the
conflicts the simulator observed. Alloc tasks appear only as an edge's `pred`, as on
the device.

What the device cannot say rides in keys the real readers ignore: each edge's
`pypto_lab.reason`, and a top-level `pypto_lab` with the made-up-address note and the
**missing edges** — conflicts the runtime will not order (the race check's findings),
each with its tensor, element box, both source lines and the fix.
"""
from __future__ import annotations

import json
from pathlib import Path

from pypto.dfx.runtime_types import BufferAddresses, dtype_name, row_major_strides
from pypto.dfx.task_ids import RuntimeTaskIds
from pypto.ir.nodes import Program
from pypto.sim.checks.races import RaceReport, find_races
from pypto.sim.runtime.dependencies import edge_reason, runtime_view
from pypto.sim.runtime.submits import SubmitArg
from pypto.sim.trace.trace import Trace

MARK = "pypto-lab-sim"


class _Tensors:
    """The tensors[] table and the per-window fields of args and edges."""

    def __init__(self, trace: Trace):
        self.buffers = trace.buffers
        self.addr = BufferAddresses(trace.buffers)
        self.rows: dict[int, dict] = {}

    def id_of(self, uid: int) -> str:
        if uid not in self.rows:
            _, shape, dtype, _ = self.buffers[uid]
            addr = self.addr.addr[uid]
            self.rows[uid] = {"tensor_id": str(self.addr.tensor_id(uid)),
                              "buffer_addr": str(addr), "version": 0,
                              "dtype": dtype_name(dtype),
                              "buffer_numel": str(int(_numel(shape)))}
        return self.rows[uid]["tensor_id"]

    def window(self, a: SubmitArg) -> tuple[str, list, str, list]:
        """(dtype, shape, start_offset, strides) of an argument's window."""
        _, shape, dtype, _ = self.buffers[a.uid]
        strides = row_major_strides(shape)
        if len(a.lo) == len(shape):
            start = sum(int(lo) * s for lo, s in zip(a.lo, strides))
            wshape = [int(h) - int(lo) for lo, h in zip(a.lo, a.hi)]
        else:  # a view of another rank: the whole buffer
            start, wshape = 0, [int(d) for d in shape]
        return dtype_name(dtype), wshape, str(start), strides


def _numel(shape: tuple) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


def deps_document(trace: Trace, program: Program | None, analyses: dict,
                  races: RaceReport | None = None, ids: RuntimeTaskIds | None = None) -> dict:
    """The deps.json document of a traced run (see the module docstring)."""
    if ids is None:
        ids = RuntimeTaskIds.of_run(trace, program, analyses)
    submits = ids.submits
    edges = runtime_view(trace, program, analyses)[1]
    tensors = _Tensors(trace)
    tasks = []
    for s in submits:
        if s.kind != "task":
            continue
        assert s.trace_id is not None
        args = []
        for a in s.args:
            row: dict = {"idx": a.idx, "type": a.type}
            if a.type != "OUTPUT":
                dt, shape, start, strides = tensors.window(a)
                row.update({"tensor_id": tensors.id_of(a.uid), "dtype": dt, "shape": shape,
                            "start_offset": start, "strides": strides})
            args.append(row)
        tasks.append({"task_id": str(s.task_id), "scope": "manual" if s.manual else "auto",
                      "early_dispatch": s.early_dispatch,
                      "kernel_ids": list(ids.kernel_ids(s.trace_id)),
                      "block_num": max(1, s.block_num), "args": args})
    rows = []
    for e in edges:
        row = {"pred": str(submits[e.pred].task_id), "succ": str(submits[e.succ].task_id),
               "arg": e.arg, "source": e.source, "flags": list(e.flags)}
        if e.source == "tensormap":
            row["overlap"] = e.overlap
        if e.consumer is not None:
            dt, shape, start, strides = tensors.window(e.consumer)
            row.update({"tensor_id": tensors.id_of(e.consumer.uid), "consumer_dtype": dt,
                        "consumer_shape": shape, "consumer_start_offset": start,
                        "consumer_strides": strides})
        if e.producer is not None:
            _, shape, start, strides = tensors.window(e.producer)
            row.update({"producer_shape": shape, "producer_start_offset": start,
                        "producer_strides": strides})
        row["pypto_lab"] = {"reason": edge_reason(e, submits)}
        rows.append(row)
    if races is None:
        races = find_races(trace, program, analyses)
    by_trace = {s.trace_id: s for s in submits if s.trace_id is not None}
    missing = []
    for r in races.races:
        a, b = by_trace.get(r.first.task), by_trace.get(r.second.task)
        if a is None or b is None:
            continue
        missing.append({"pred": str(a.task_id), "succ": str(b.task_id), "kind": r.kind,
                        "tensor": r.tensor, "box": [list(x) for x in r.ranges],
                        "same_task": r.same_task, "pred_source": r.first.source,
                        "succ_source": r.second.source, "reason": r.reason, "fix": r.hint})
    return {"tasks": tasks, "tensors": list(tensors.rows.values()), "edges": rows,
            "pypto_lab": {"source": MARK,
                          "note": "made by the pypto-lab simulator: the runtime's dependency "
                                  "rule over the simulated run's submits; buffer addresses "
                                  "are made up (buffers laid out in creation order)",
                          "missing_edges": missing}}


def write_deps_json(trace: Trace, program: Program | None, analyses: dict, dfx_dir: Path,
                    work_dir_name: str, races: RaceReport | None = None) -> list[Path]:
    """Write `deps.json` and `name_map_<work_dir_name>.json` into `dfx_dir`."""
    dfx_dir = Path(dfx_dir)
    dfx_dir.mkdir(parents=True, exist_ok=True)
    ids = RuntimeTaskIds.of_run(trace, program, analyses)
    doc = deps_document(trace, program, analyses, races, ids)
    deps = dfx_dir / "deps.json"
    deps.write_text(json.dumps(doc, separators=(",", ":")) + "\n", encoding="utf-8")
    names = ids.func_names()
    name_map = dfx_dir / f"name_map_{work_dir_name}.json"
    name_map.write_text(json.dumps({"level": 2, "orchestrator_name": None,
                                    "callable_id_to_name": {str(k): v for k, v in
                                                            names.items()}}, indent=2),
                        encoding="utf-8")
    return [deps, name_map]


__all__ = ["deps_document", "write_deps_json"]
