"""`SimResult`: the outcome of one simulated call."""
from __future__ import annotations

from types import MappingProxyType
from typing import Any

import numpy as np

from pypto.ir.nodes import Program
from pypto.platform import Platform
from pypto.sim.checks.divide import ZeroDivision
from pypto.sim.checks.oob import OobRead
from pypto.sim.checks.races import RaceReport
from pypto.sim.checks.uninit import UninitRead
from pypto.sim.config import SimConfig
from pypto.sim.machine.capture import ArgSnapshot
from pypto.sim.machine.decisions import Decision, DecisionLog
from pypto.sim.machine.run import Run
from pypto.sim.runtime.dependencies import TaskDependency, runtime_view, task_dependencies
from pypto.sim.runtime.rings import RingCapacities, RingReport, replay
from pypto.sim.trace.trace import TaskRecord, Trace


class SimResult:
    """The outcome of one simulated call: its outputs, its trace and what the checks
    found."""

    def __init__(self, run: Run, returns: tuple, batch_refusals: dict[str, str]):
        self.platform: Platform = run.settings.platform
        self.config: SimConfig = run.settings.config
        self.returns = returns
        self.device: dict[str, np.ndarray]
        self.outputs: dict[str, np.ndarray]
        self.device, self.outputs = run.memory.result_arrays()
        self.trace: Trace | None = run.trace
        self.tasks: list[TaskRecord] = self.trace.tasks if self.trace is not None else []
        self.task_count = run.next_tid
        #: checks=("race",): every race found (a `pypto.sim.checks.RaceReport`), else None
        self.races: RaceReport | None = None
        #: checks=("uninit",) with strict=False: the reads of unwritten memory, else []
        self.uninit_reads: list[UninitRead] = list(run.uninit.reads) \
            if run.uninit is not None else []
        #: checks=("div",) with strict=False: the integer divisions by zero, else []
        self.zero_divisions: list[ZeroDivision] = list(run.divides.divisions) \
            if run.divides is not None else []
        #: oob_reads="warn": the reads past the end of a global tensor, else []
        self.oob_reads: list[OobRead] = run.oob.reads() if run.oob is not None else []
        #: the compiled program and its analyses (a traced run's; the runtime's view of
        #: the run - its task ids, dependencies, artifacts - is derived from them)
        self.program: Program | None = None
        self.analyses: dict = {}
        #: SimConfig.dump_args: the args dump's snapshots (`pypto.sim.machine.capture`)
        self.arg_dumps: list[ArgSnapshot] = run.capture.snapshots \
            if run.capture is not None else []
        self.dump_args_level = run.capture.level if run.capture is not None else 0
        self._batch = run.batch
        self._decisions: DecisionLog = run.decisions
        #: regions that cannot run batched, with the reason (`pypto.sim.batch.plan`)
        self.batch_refusals = MappingProxyType(batch_refusals)

    @property
    def batch_stats(self) -> dict[str, int]:
        """Launches this call ran batched, and batched runs it abandoned for block by block."""
        return self._batch.as_dict()

    def decisions(self) -> dict[str, tuple[Decision, ...]]:
        """Per region this call launched (by its function's name): how its launches ran -
        `batched`, `split` or `per_block` - who decided it and why, each distinct
        `Decision` with the times it was made (per launch, or per run of a launch loop
        nest; `pypto.sim.machine.decisions`). The run-time fallbacks of a batch are
        among them."""
        return self._decisions.decisions()

    def dependencies(self) -> list[TaskDependency]:
        """The edges the device runtime creates between this run's tasks, each with its
        source (explicit / creator / tensormap) and reason (traced runs)."""
        if self.trace is None:
            raise ValueError("run with trace=True to know the runtime's dependencies")
        return task_dependencies(self.trace, self.program, self.analyses)

    def ring_report(self, capacities: RingCapacities | None = None) -> RingReport:
        """The run replayed through the runtime's ring heaps, task windows and dep pools
        (`pypto.sim.runtime.rings`) under `capacities` (default: the compile defaults;
        `RingCapacities.resolve()` reads PTO2_RING_* as the runtime does); traced runs."""
        if self.trace is None:
            raise ValueError("run with trace=True to replay the runtime's rings")
        submits, edges = runtime_view(self.trace, self.program, self.analyses)
        return replay(submits, capacities, edges)

    def blame(self, tensor: str, index: Any) -> dict:
        """Who wrote element `index` of `tensor` last (traced runs)."""
        if self.trace is None:
            raise ValueError("run with trace=True to know who wrote what")
        return self.trace.writers[tensor].blame(index)

    def __repr__(self) -> str:
        outs = ", ".join(f"{k}{list(v.shape)}" for k, v in self.outputs.items())
        return (f"<SimResult on {self.platform.name}: {self.task_count} tasks, "
                f"outputs: {outs or 'none'}>")


__all__ = ["SimResult"]
