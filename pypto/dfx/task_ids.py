"""STAND-IN (replaced by the lead's `pypto/dfx/task_ids.py` on merge): the runtime's task
ids of a traced run, here ring 0 and local id = the trace's task id."""
from __future__ import annotations

from typing import Any


class RuntimeTaskIds:
    """The runtime's ids of a run's tasks and the callable ids of its kernels."""

    def __init__(self, raw: dict[int, int], kernels: dict[int, tuple[int, int, int]],
                 names: dict[int, str]):
        self._raw = raw
        self._kernels = kernels
        self._names = names

    @staticmethod
    def of_run(trace: Any, program: Any = None, analyses: Any = None) -> RuntimeTaskIds:
        raw: dict[int, int] = {}
        kernels: dict[int, tuple[int, int, int]] = {}
        ids: dict[str, int] = {}
        for t in trace.tasks:
            raw[t.id] = t.id
            if t.kind == "dummy":
                kernels[t.id] = (-1, -1, -1)
                continue
            cid = ids.setdefault(t.name, len(ids))
            cube = "cube" in t.units
            vector = "vector" in t.units or not cube
            kernels[t.id] = (cid if cube else -1, cid if vector else -1, -1)
        return RuntimeTaskIds(raw, kernels, {v: k for k, v in ids.items()})

    def raw(self, tid: int) -> int:
        return self._raw[tid]

    def hex(self, tid: int) -> str:
        return f"0x{self._raw[tid]:016x}"

    def kernel_ids(self, tid: int) -> tuple[int, int, int]:
        return self._kernels.get(tid, (-1, -1, -1))

    def func_names(self) -> dict[int, str]:
        return dict(self._names)
