"""An `Executable`: a compiled program made runnable under one `Settings`.

It holds what stays the same from call to call: the functions compiled into closures
(each on first use), how arguments upload, which launch nests and regions batch, which
regions passed the on-chip budget check. Each call makes a `Run` (its own state) and a
root task frame, runs the entry in it and hands the run back; calls share nothing
else, so one executable serves any number of calls, including calls from several
threads at once (its caches only ever gain entries that any call would compute alike;
compiling takes a lock).
"""
from __future__ import annotations

import threading
import time
from typing import Protocol

import numpy as np

from pypto.ir.nodes import For, Program, Var
from pypto.ir.span import Span
from pypto.ir.transform import walk
from pypto.ops.numeric import _QUIET
from pypto.sim.batch.run import BatchCache
from pypto.sim.checks.budget import buffer_report, check_budget
from pypto.sim.config import Settings
from pypto.sim.engine.compiler import FnCompiler
from pypto.sim.engine.function import CompiledFunction, LaunchSite
from pypto.sim.engine.values import UNDEF
from pypto.sim.faults import settle_failed_run
from pypto.sim.machine.frame import TaskFrame
from pypto.sim.machine.run import Run
from pypto.sim.runtime import launch as launching
from pypto.sim.runtime.direct import DirectEntry, direct_entry
from pypto.sim.runtime.progress import Watched, unwatch, watch
from pypto.sim.runtime.switches import pause_gc, resume_gc
from pypto.sim.runtime.transfers import bind_arguments, copy_back, param_specs, static_spec
from pypto.sim.runtime.written import written_entry_params


class Compiled(Protocol):
    """What the simulator runs: a program and what the compiler found out about it
    (`pypto.compile.CompiledProgram`)."""

    program: Program
    analyses: dict
    platform: str


class Executable:
    """A compiled program runnable under one `Settings` (see the module docstring)."""

    def __init__(self, program: Program, analyses: dict, settings: Settings):
        self.program = program
        self.analyses = analyses  # what the compiler found out (buffer estimates, ...)
        self.settings = settings
        self.entry = program.entry_function
        self.entry_is_region = self.entry.kind.is_region  # (then the entry is one task)
        self.params = param_specs(self.entry)
        self.static_spec = static_spec(self.entry)
        self.batch = BatchCache()
        self.budget_ok: set[str] = set()  # regions the ub check passed
        # id of a For statement that is a launch nest -> its runner (compiled code)
        self.nests: dict[int, launching.LaunchNest] = {}
        self._functions: dict[str, CompiledFunction] = {}
        self._compiling = threading.RLock()
        self._written: frozenset[str] | None = None
        self._deferrable: frozenset[str] | None = None
        self._direct: DirectEntry | bool | None = False  # False: not looked at yet

    # -- the host of compiled code (pypto.sim.engine.function.Host) ------------------------

    def function(self, name: str) -> CompiledFunction:
        cf = self._functions.get(name)
        if cf is None:
            with self._compiling:
                cf = self._functions.get(name)
                if cf is None:
                    cf = FnCompiler(self, self.program.function(name)).compile()
                    self._functions[name] = cf
        return cf

    # (the runtime's functions themselves, bound as methods: no wrapper on the hot path)
    launch = launching.launch
    launch_nest = launching.launch_nest

    def check_budget(self, cf: CompiledFunction, label: str, span: Span | None) -> None:
        if not self.settings.check_ub or cf.name in self.budget_ok:
            return
        platform = self.settings.platform
        check_budget(buffer_report(self.analyses, cf.func, platform), cf.func, platform,
                     label, span)
        self.budget_ok.add(cf.name)

    # -- static decisions ----------------------------------------------------------------

    @property
    def written_params(self) -> frozenset[str]:
        """Entry parameters the program may write (In arguments outside it skip the copy)."""
        if self._written is None:
            with self._compiling:
                if self._written is None:
                    try:
                        self._written = frozenset(written_entry_params(self.program))
                    except Exception:  # noqa: BLE001 - be safe: copy everything
                        self._written = frozenset(p.var.name for p in self.entry.params)
        return self._written

    @property
    def deferrable(self) -> frozenset[str]:
        """Out parameters of the entry whose first mention (in statement order) is a
        batched launch loop nest: nothing can look at them before it runs."""
        if self._deferrable is None:
            with self._compiling:
                if self._deferrable is None:
                    self._deferrable = self._find_deferrable()
        return self._deferrable

    def _find_deferrable(self) -> frozenset[str]:
        entry = self.entry
        if not self.settings.batch or self.entry_is_region:
            return frozenset()
        try:
            self.function(entry.name)  # (compiling it finds the launch nests)
        except Exception:  # noqa: BLE001 - reported by the run itself
            return frozenset()
        outs = {p.var.name for p in entry.params if p.direction.value == "Out"}
        found: set[str] = set()
        for s in entry.body:
            if not outs:
                break
            named = {n.name for n in walk(s) if isinstance(n, Var)} & outs
            if named and isinstance(s, For) and id(s) in self.nests:
                found |= named
            outs -= named
        return frozenset(found)

    # -- running the entry ---------------------------------------------------------------

    @property
    def direct(self) -> DirectEntry | None:
        """The short path of this executable's calls (`pypto.sim.runtime.direct`), or None."""
        d = self._direct
        if d is False:
            with self._compiling:
                d = self._direct
                if d is False:
                    try:
                        d = direct_entry(self)
                    except Exception:  # noqa: BLE001 - the general path reports it
                        d = None
                    self._direct = d
        assert d is not True and d is not False
        return d

    def run(self, args: tuple, kwargs: dict, run: Run | None = None,
            progress: Watched | None = None, report: bool = True) -> tuple[Run, tuple]:
        """One call: (its run, the entry's returns). `pl.Out` / `pl.InOut` arrays among
        `args` are filled in place. A multi-card run passes the `Run` of the host or of a
        rank (`pypto.sim.cluster`): a rank runs its dispatches in one run. A long run
        reports its progress (`progress`: the counters to report instead of the run's:
        the world's, for a host; `report=False`: none, for a rank, which the host's
        report counts)."""
        if run is None and not kwargs:
            d = self._direct
            direct = d if d is not False else self.direct
            if isinstance(direct, DirectEntry):
                got = direct.call(args)
                if got is not None:
                    return got
        # The cyclic GC is paused while simulating (counted across threads: see
        # `switches`). numpy's floating-point error state is set once for the run, in
        # this thread (op impls skip their own np.errstate then).
        pause_gc()
        quiet = _QUIET
        quiet.depth += 1
        try:
            with np.errstate(all="ignore"):
                return self._run(args, kwargs, run, progress, report)
        finally:
            quiet.depth -= 1
            resume_gc()

    def _run(self, args: tuple, kwargs: dict, run: Run | None, progress: Watched | None,
             report: bool) -> tuple[Run, tuple]:
        if run is None:
            run = Run(self.settings, self.program.name)
        # a long run reports its progress
        watched = watch(progress or run, self.program.name) if report else None
        try:
            out = self._call(run, args, kwargs)
        except BaseException:
            unwatch(watched, failed=True)
            raise
        unwatch(watched, failed=False)
        return out

    def _call(self, run: Run, args: tuple, kwargs: dict) -> tuple[Run, tuple]:
        root = TaskFrame(run)
        entry = self.entry
        t0 = time.perf_counter()
        memory = run.memory
        try:
            bound = bind_arguments(self, run, args, kwargs)
        except BaseException:
            memory.flush_pending()
            raise
        try:
            if self.entry_is_region:
                site = LaunchSite.of(entry.name, entry.name, "at", entry.span)
                rets, _ = self.launch(root, site, [bound.get(p.name, UNDEF)
                                                   for p in self.params], 1, [])
            else:
                cf = self.function(entry.name)
                rets = cf.call([bound.get(p[0], UNDEF) for p in cf.params], root)
            if run.comm is not None:  # the host's dispatches run; a rank's deferred waits
                run.comm.finish()
        except BaseException as err:
            settle_failed_run(memory, err)
            raise
        if memory.pending:
            memory.flush_pending()
        copy_back(run)
        if run.trace is not None:
            run.trace.seconds = time.perf_counter() - t0
        return run, rets


__all__ = ["Compiled", "Executable"]
