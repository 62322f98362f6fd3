"""The short path of a call (sim speed, issue 17).

Most kernels are an orchestration entry whose body is launch loop nests with some
integer arithmetic around them and a return, called with arrays of the declared
dtypes. Such a call goes from the argument checks (`binding.QuickBinding`, decided
once per executable and argument shapes) straight to the body's statements - the
nests' `LaunchNest` runners, which run batched, and the compiled closures of the
arithmetic and the return - in one function, without the layers the general path
has for everything else (keyword arguments, the full argument checks and their
messages, region entries, multi-card runs, traced runs).

What runs is the same code as on the general path (the entry's own compiled
statements), in a root task frame of a fresh `Run`, with the same deferred-fill,
fault and progress handling: the result is the one `Executable._call` gives
(`pypto.sim.entry.run_compiled` calls it straight, without `Executable.run`, for a call
with the default config). A call
the quick binding does not take (None, nothing touched) goes down the general path,
which binds it or reports what is wrong.
"""
from __future__ import annotations

from time import perf_counter
from typing import TYPE_CHECKING

from pypto.ir.nodes import Assign, CallFunc, For, FunctionKind, Return
from pypto.ir.types import ScalarType
from pypto.ops.numeric import _QUIET
from pypto.sim.engine.values import FRAME, Stmt
from pypto.sim.faults import settle_failed_run
from pypto.sim.machine.frame import TaskFrame
from pypto.sim.machine.run import Run
from pypto.sim.runtime.binding import QuickBinding, quick_binding
from pypto.sim.runtime.progress import LOCAL, MONITOR, SETTINGS, unwatch, watch
from pypto.sim.runtime.switches import FP_STATE, IGNORING, fp_ignore, fp_restore

if TYPE_CHECKING:
    from pypto.sim.runtime.executable import Executable


class DirectEntry:
    """The short path of one executable's calls (see the module docstring)."""

    __slots__ = ("binding", "name", "settings", "steps")

    def __init__(self, exe: Executable, binding: QuickBinding, steps: list[Stmt]):
        self.settings = exe.settings
        self.name = exe.program.name
        self.binding = binding
        self.steps = steps

    def call(self, args: tuple) -> tuple[Run, tuple] | None:
        """(the run, the entry's returns), or None when the quick binding does not take
        these arguments (nothing was touched: the general path runs the call)."""
        # (written out in one function, each step as cheap as it gets: with a kernel's
        # data streaming through the caches, every Python call of this fixed path costs
        # a few us; the general path's `switches.fp_ignore`, `progress.watch` and
        # `progress.unwatch` are inlined in their common case)
        run = Run(self.settings, self.name)
        # As `Executable.run`: floating-point errors ignored once for the whole run. The
        # cyclic GC is not paused here: the pause is for traced runs, whose records pile
        # up (full collections over them grew the cost per task); an untraced run keeps
        # no growing population of objects, and pausing cost ~6 us a call with the caches
        # a kernel's data leave.
        quiet = _QUIET
        quiet.depth += 1
        state = FP_STATE  # (np.errstate(all="ignore"), without its layers)
        if state is not None:
            pair = IGNORING[0]
            fp = state.set(pair[1]) if pair is not None and pair[0] is state.get() \
                else fp_ignore()
        else:  # pragma: no cover - another numpy
            fp = fp_ignore()
        try:
            env = self.binding.bind(run, args)
            if env is None:
                return None
            # a long run reports its progress (`progress.watch`)
            stack = LOCAL.stack
            hooking = stack[-1] if stack else SETTINGS.hooking
            monitor = MONITOR
            if hooking[0] is None:
                watched = None
            elif monitor.thread is not None and hooking[1] >= 0.5:
                watched = (run, self.name, hooking, perf_counter())
                monitor.active[id(watched)] = watched
            else:
                watched = watch(run, self.name)
            # the bound arguments are the environment (no parameter is named FRAME)
            env[FRAME] = TaskFrame(run)
            memory = run.memory
            try:
                try:
                    for step in self.steps:
                        if step(env) is not None:  # (a return)
                            break
                except BaseException as err:
                    settle_failed_run(memory, err)
                    raise
                if memory.pending:
                    memory.flush_pending()
            except BaseException:
                if watched is not None:
                    unwatch(watched, failed=True)
                raise
            # (nothing to copy back: the quick binding uses every Out / InOut array in
            # place; an untraced run has no last writers to collect)
            if watched is not None:  # (`progress.unwatch`: a report only if reported)
                monitor.active.pop(id(watched), None)
                if monitor.reported:
                    unwatch(watched, failed=False)
            return run, env.get("$ret", ())
        finally:
            if state is not None:
                state.reset(fp)
            else:  # pragma: no cover
                fp_restore(fp)
            quiet.depth -= 1


def direct_entry(exe: Executable) -> DirectEntry | None:
    """The short path of `exe`'s calls, or None when its entry is not of the common
    shape (see the module docstring) or its runs are traced."""
    settings = exe.settings
    entry = exe.entry
    if settings.trace or exe.entry_is_region or entry.kind is not FunctionKind.ORCHESTRATION:
        return None
    cf = exe.function(entry.name)
    if cf.top is None or len(cf.top) != len(entry.body):
        return None
    for s in entry.body:
        if isinstance(s, For):
            if id(s) not in exe.nests:
                return None
        elif isinstance(s, Assign):
            if isinstance(s.value, CallFunc) or len(s.targets) != 1 or \
                    not isinstance(s.targets[0].type, ScalarType):
                return None
        elif not isinstance(s, Return):
            return None
    binding = quick_binding(entry, exe.written_params, exe.deferrable,
                            exe.settings.out_from_caller)
    if binding is None:
        return None
    return DirectEntry(exe, binding, list(cf.top))


__all__ = ["DirectEntry", "direct_entry"]
