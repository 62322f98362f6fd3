"""A compiled function and the launch sites that call one as a task."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from pypto.ir.nodes import Call as OpCall
from pypto.ir.nodes import For, Function, If
from pypto.ir.span import Span
from pypto.ir.types import Type
from pypto.sim.config import Settings
from pypto.sim.engine.values import FRAME, UNDEF, Env, Expr, Stmt
from pypto.sim.machine.frame import TaskFrame

Call = Callable[[list, TaskFrame], tuple]  # (arguments, frame) -> the returned values


class CompiledFunction:
    """An IR function compiled into closures: `call(args, frame)` runs it in `frame`
    (arguments in parameter order; `UNDEF` leaves a parameter unbound)."""

    __slots__ = (
        "body",
        "call",
        "func",
        "has_syncall",
        "in_region",
        "name",
        "params",
        "syncall_core_type",
        "syncall_mode",
        "top",
    )

    def __init__(self, name: str, func: Function, params: list[tuple[str, Any, str]],
                 body: Stmt, in_region: bool):
        self.name = name
        self.func = func
        self.params = params  # [(name, type, direction)]
        self.body = body
        self.in_region = in_region
        self.has_syncall = False  # blocks meet at pl.system.syncall: they run interleaved
        self.syncall_mode = "hard"
        self.syncall_core_type = "mix"
        # the closures of the body's statements (`body` runs them in order), for the
        # short path of a call (`pypto.sim.runtime.direct`); None for extern / group code
        self.top: list[Stmt] | None = None
        names = [p[0] for p in params]
        undef = UNDEF

        def call(args: list, fr: TaskFrame) -> tuple:
            env: Env = {FRAME: fr}
            for n, a in zip(names, args):
                if a is not undef:
                    env[n] = a
            body(env)
            return env.get("$ret", ())

        self.call: Call = call


@dataclass(frozen=True)
class LaunchSite:
    """One call that launches a region as a task (a `CallFunc` with launch attributes)."""

    func: str  # the region function launched
    hint: str  # its name hint (the task's name in the trace)
    kind: str  # "at" or "spmd"
    label: str  # how faults name it: "'hint' (file:line)"
    span: Span | None
    loops: tuple[str, ...] = ()  # the variables of the loops around it, outermost first
    # (each task records their values: the workbench names an element's writer by them)
    # the parameters (indices) whose arguments are tagged for the args dump
    # (`pl.dump_tag`, `dumps=`: the outliner's launch attribute `dumps`)
    dumps: frozenset[int] = frozenset()

    @staticmethod
    def of(func: str, hint: str, kind: str, span: Span | None,
           loops: tuple[str, ...] = (), dumps: frozenset[int] = frozenset()) -> LaunchSite:
        label = f"'{hint}' ({span.file}:{span.line})" if span is not None and span.known \
            else f"'{hint}'"
        return LaunchSite(func, hint, kind, label, span, loops, dumps)


class Lowering(Protocol):
    """Another compiler's way with some of a function's op calls and statements, which the
    block-by-block compiler (`compiler.FnCompiler`) asks first: the batch engine's
    (`pypto.sim.batch.compiler.BatchLowering`). Each hook gives the closure, or None to
    leave the call or statement to the block-by-block compiler."""

    def lower_call(self, e: OpCall, target: str | None) -> Expr | None:
        """The closure of the op call `e` (assigned to `target`), or None."""

    def lower_if(self, s: If) -> Stmt | None:
        """The closure of the `if` statement `s`, or None."""

    def lower_for(self, s: For) -> Stmt | None:
        """The closure of the counted loop `s`, or None."""

    def lower_body(self, stmts: tuple) -> Stmt | None:
        """The closure of the statements `stmts`, or None."""


class Compiler(Protocol):
    """What the compiler of one function (`FnCompiler`) offers the code compiling a part
    of it (the memory intrinsics, the launch nests)."""

    settings: Settings
    in_region: bool
    loop_vars: list[str]  # the loops being compiled, outermost first
    cube_vars: set[str]  # values held in L0C

    def expr(self, e: Any, tolerant: bool = False) -> Expr:
        """The closure computing expression `e` (`tolerant`: UNDEF for an unbound name)."""

    def const(self, e: Any) -> tuple[bool, Any]:
        """(True, value) when `e` is a compile-time constant, else (False, None)."""

    def caster(self, t: Type | None, what: str) -> Callable[[Any], Any] | None:
        """The cast of a result to type `t` (None: keep it)."""


class Host(Protocol):
    """What compiled code needs from the runtime it runs in (`pypto.sim.runtime`)."""

    settings: Settings

    def function(self, name: str) -> CompiledFunction:
        """The compiled function `name` (compiled on first use)."""

    def launch(self, fr: TaskFrame, site: LaunchSite, args: list, core_num: int,
               deps: list[int], loops: tuple = ()) -> tuple[tuple, int]:
        """Run the task `site` launches from `fr` (inside loops at `loops`, (variable,
        value) pairs): (its returns, its task id)."""

    def check_budget(self, cf: CompiledFunction, label: str, span: Span | None) -> None:
        """The `ub` check of region `cf`, launched as `label` (once per region)."""

    def launch_nest(self, fc: Compiler, s: For, seq: Stmt) -> Stmt:
        """The closure running the orchestration loop `s` (compiled as the sequential
        loop `seq`): batched when it is a launch nest that can be."""


__all__ = ["Call", "CompiledFunction", "Compiler", "Host", "LaunchSite", "Lowering"]
