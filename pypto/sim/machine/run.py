"""The state of one simulated call: created by the call, owned by it, never shared.

A `Run` holds what the call changes as it goes - the device memory, the trace, the
task counter, the work done, the dynamic dims its arguments bound, the state of the
checks - so two calls of one compiled kernel (from two threads, or two simulated
cards of one process) never see each other's state. What stays the same from call to
call (the settings, the compiled closures, the batching plans) lives in the
`pypto.sim.runtime.Executable` the runs are made from.
"""
from __future__ import annotations

from typing import Any

from pypto.ir.span import Span
from pypto.sim.checks.divide import DivideLog
from pypto.sim.checks.oob import OobLog
from pypto.sim.checks.uninit import UninitTracker
from pypto.sim.config import Settings
from pypto.sim.device.memory import DeviceMemory
from pypto.sim.machine.capture import ArgCapture
from pypto.sim.machine.decisions import DecisionLog
from pypto.sim.trace.trace import TaskRecord, Trace


class BatchStats:
    """How one run's launches went batched: runs done batched, runs abandoned."""

    __slots__ = ("batched", "fallback")

    def __init__(self) -> None:
        self.batched = 0
        self.fallback = 0

    def as_dict(self) -> dict[str, int]:
        return {"batched": self.batched, "fallback": self.fallback}


class Run:
    """The state of one simulated call (see the module docstring)."""

    __slots__ = (
        "batch",
        "capture",
        "comm",
        "decisions",
        "divides",
        "dyn",
        "memory",
        "next_tid",
        "oob",
        "settings",
        "trace",
        "uninit",
        "work",
    )

    def __init__(self, settings: Settings, program_name: str):
        self.settings = settings
        self.memory = DeviceMemory(settings.seed, settings.zero_fresh)
        self.trace: Trace | None = Trace(settings.platform, program_name) \
            if settings.trace else None
        if self.trace is not None:
            self.memory.on_release = self.trace.forget
        self.dyn: dict[str, int] = {}  # dynamic dims bound by the arguments
        self.work = 0  # loop iterations + blocks so far (`SimConfig.max_work`)
        self.next_tid = 0
        # checks=("uninit",): written-bitmaps of fresh memory, tested on every read
        self.uninit = UninitTracker(self.memory, settings.strict) \
            if settings.check_uninit else None
        # oob_reads="warn": the reads past the end of a tensor (made only then: nothing
        # else notes such a read; `SimResult.oob_reads` is [] without it)
        self.oob: OobLog | None = OobLog() if settings.warn_oob_reads else None
        # checks=("div",): integer divisions by zero
        self.divides = DivideLog(settings.strict) if settings.check_div else None
        self.batch = BatchStats()
        # how each region's launches ran and why (`pypto.sim.machine.decisions`)
        self.decisions = DecisionLog()
        # a multi-card run: the host's or a rank's communication runtime (`ctx.run.comm`
        # of the pld ops; `pypto.sim.cluster`), else None
        self.comm: Any = None
        # SimConfig.dump_args: the task-boundary snapshots of the args dump, else None
        self.capture: ArgCapture | None = ArgCapture(settings.dump_args) \
            if settings.dump_args else None

    def new_tid(self) -> int:
        t = self.next_tid
        self.next_tid += 1
        return t

    def dummy_task(self, deps: list[int] | tuple, span: Span | None) -> int:
        """A task that only joins dependencies (`pl.system.task_dummy`, a task scope)."""
        tid = self.new_tid()
        if self.trace is not None:
            rec = TaskRecord(tid, "task_dummy", "", "dummy", 0, span, deps=list(deps))
            self.trace.add_task(rec)
            self.trace.finish_task(rec, self.memory)
        return tid


__all__ = ["BatchStats", "Run"]
