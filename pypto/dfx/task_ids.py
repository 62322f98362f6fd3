"""The runtime's ids for a traced run: task ids and kernel (callable) ids.

Every artifact of a run (deps.json, the args dump, the swimlane records, pmu.csv)
names tasks by the runtime's `PTO2TaskId` — `(ring << 32) | local`, made by
`pypto.sim.runtime.submits` — and kernels by callable id, so they join on them as the
device's artifacts do.

Callable ids number the kernels in the order the run first launched them. A kernel
that uses both cores (cube and vector) is two callables, `<name>_aic` and
`<name>_aiv`, as the compiler splits it; a task's `kernel_ids` are its callables per
sub-slot (AIC, AIV0, AIV1), -1 for a slot it leaves idle. Both AIV slots are busy when
the kernel splits its vector work over the two lanes (`pl.split_aiv`).
"""
from __future__ import annotations

from pypto.ir.nodes import Program, Scope, ScopeKind
from pypto.ir.transform import walk
from pypto.sim.runtime.dependencies import runtime_view
from pypto.sim.runtime.submits import Submit
from pypto.sim.trace.trace import TaskRecord, Trace


def _splits(program: Program | None, name: str) -> bool:
    if program is None:
        return False
    try:
        f = program.function(name)
    except KeyError:
        return False
    return f.attr("split") not in (None, 0, "none", "NONE") or any(
        isinstance(n, Scope) and n.kind is ScopeKind.SPLIT_AIV for n in walk(f.body))


class RuntimeTaskIds:
    """Task ids and callable ids of one traced run."""

    def __init__(self, submits: list[Submit], tasks: list[TaskRecord],
                 program: Program | None):
        self.submits = submits
        self._raw = {s.trace_id: s.task_id for s in submits if s.trace_id is not None}
        self._names: dict[int, str] = {}
        ids: dict[str, int] = {}
        self._kernels: dict[int, tuple[int, int, int]] = {}
        split: dict[str, bool] = {}

        def callable_id(name: str) -> int:
            got = ids.get(name)
            if got is None:
                got = ids[name] = len(ids)
                self._names[got] = name
            return got

        for t in sorted(tasks, key=lambda t: t.id):
            if t.id not in self._raw:
                continue
            if t.function not in split:
                split[t.function] = _splits(program, t.function)
            if "cube" in t.units and "vector" in t.units:
                aic = callable_id(f"{t.function}_aic")
                aiv = callable_id(f"{t.function}_aiv")
                self._kernels[t.id] = (aic, aiv, aiv if split[t.function] else -1)
            elif "cube" in t.units:
                self._kernels[t.id] = (callable_id(t.function), -1, -1)
            else:
                k = callable_id(t.function)
                self._kernels[t.id] = (-1, k, k if split[t.function] else -1)

    @classmethod
    def of_run(cls, trace: Trace, program: Program | None, analyses: dict) -> RuntimeTaskIds:
        return cls(runtime_view(trace, program, analyses)[0], trace.tasks, program)

    def raw(self, trace_task_id: int) -> int:
        """The runtime's u64 task id of the trace's task `trace_task_id`."""
        return self._raw[trace_task_id]

    def hex(self, trace_task_id: int) -> str:
        """As the args dump and the swimlane print it: "0x%016x"."""
        return f"0x{self._raw[trace_task_id]:016x}"

    def kernel_ids(self, trace_task_id: int) -> tuple[int, int, int]:
        """(AIC, AIV0, AIV1) callable ids of a task; -1 for an idle sub-slot."""
        return self._kernels[trace_task_id]

    def func_names(self) -> dict[int, str]:
        """Callable id -> kernel name (the name map's `callable_id_to_name`)."""
        return dict(self._names)

    def __contains__(self, trace_task_id: int) -> bool:
        return trace_task_id in self._raw


__all__ = ["RuntimeTaskIds"]
