"""AnalyzeRegions: one `RegionInfo` per InCore function, for tools and the rules.

A region is an InCore function; its launches are the `CallFunc`s with `launch`
attributes in orchestration code (or in a parent region for a nested `pl.at`).
`RegionInfo` gathers what the unit classification (`units.py`) and the buffer
estimate (`buffers.py`) found, plus where the region is launched from: the
enclosing loops (kind, trip count when static, pipeline stage) and the SPMD block
count. Published as `ctx.analyses["regions"]` (a list, in program order) and
returned by `CompiledProgram.regions`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pypto.ir.nodes import CallFunc, Const, For, FunctionKind, If, Program, Scope, While
from pypto.ir.printer import expr_str
from pypto.ir.span import Span
from pypto.ir.transform import walk
from pypto.passes.base import Pass, PassContext
from pypto.passes.buffers import budget_for, split_and_slots


@dataclass(frozen=True)
class LoopInfo:
    """An orchestration loop around a launch."""

    kind: str  # "parallel", "range", "pipeline", "unroll", "while"
    var: str
    trip_count: int | None  # None when the bounds are not compile-time ints
    stage: int | None = None  # pl.pipeline(stage=K)

    def __str__(self) -> str:
        trips = "?" if self.trip_count is None else str(self.trip_count)
        stage = f", stage={self.stage}" if self.stage else ""
        return f"{self.kind}({self.var}: {trips} trips{stage})"


@dataclass(frozen=True)
class PipeInfo:
    """The cross-core pipe of a mixed region."""

    directions: tuple  # ("C->V",), ("V->C",) or both
    tiles: tuple  # units.Crossing, in program order
    split: str  # "NONE", "UP_DOWN", "LEFT_RIGHT"
    slot_num: int
    slot_bytes: int | None  # the largest crossing tile

    def __str__(self) -> str:
        tiles = ", ".join(str(t) for t in self.tiles)
        return (f"{'/'.join(self.directions)} split={self.split} slots={self.slot_num} "
                f"slot_bytes={self.slot_bytes} tiles=[{tiles}]")


@dataclass(frozen=True)
class RegionInfo:
    function: str
    name_hint: str
    kind: str  # "at" or "spmd" (how it is launched)
    parent: str  # the function that launches it
    children: tuple  # InCore functions launched from its body
    span: Span
    ops_per_unit: tuple  # (registry unit, count), sorted
    side_counts: tuple  # ("cube"|"vector"|"shared", count), sorted
    classification: str  # "cube", "vector", "mixed", "scalar"
    pipe: PipeInfo | None
    split: str | None  # pl.split mode named in the launch's optimizations
    slot_num: int  # pl.cross_core_slot (default 2)
    ub_bytes: int
    l1_bytes: int
    l0a_bytes: int
    l0b_bytes: int
    l0c_bytes: int
    budget: tuple  # (space, capacity bytes)
    over_budget: tuple  # spaces whose estimate exceeds the budget
    unknown_buffers: tuple  # buffers with dynamic size (not counted)
    loop_context: tuple  # LoopInfo, outermost first
    core_num: Any  # SPMD block count: int, a printed expression, or None
    launch: tuple  # the launch attributes of the (first) call, as (key, value)
    platform: str

    @property
    def nested(self) -> tuple:
        return self.children

    def __repr__(self) -> str:
        return (f"RegionInfo({self.function!r}, kind={self.kind!r}, "
                f"class={self.classification!r}, ub={self.ub_bytes}, l1={self.l1_bytes}, "
                f"l0a={self.l0a_bytes}, l0b={self.l0b_bytes}, l0c={self.l0c_bytes}, "
                f"split={self.split!r}, slots={self.slot_num})")

    def __str__(self) -> str:
        budget = dict(self.budget)
        loops = " > ".join(str(lp) for lp in self.loop_context) or "-"
        lines = [
            f"region {self.function} ({self.kind} {self.name_hint!r}) in {self.parent} "
            f"at {self.span}",
            f"  class: {self.classification}; ops: "
            + ", ".join(f"{u}={n}" for u, n in self.ops_per_unit),
            "  sides: " + ", ".join(f"{u}={n}" for u, n in self.side_counts),
            f"  loops: {loops}; blocks: {self.core_num if self.core_num is not None else 1}",
            f"  on-chip: Vec {self.ub_bytes}/{budget.get('Vec')} Mat {self.l1_bytes}/"
            f"{budget.get('Mat')} Left {self.l0a_bytes}/{budget.get('Left')} Right "
            f"{self.l0b_bytes}/{budget.get('Right')} Acc {self.l0c_bytes}/{budget.get('Acc')}"
            + (f" OVER: {', '.join(self.over_budget)}" if self.over_budget else ""),
        ]
        if self.pipe is not None:
            lines.append(f"  pipe: {self.pipe}")
        if self.children:
            lines.append(f"  nested: {', '.join(self.children)}")
        if self.unknown_buffers:
            lines.append(f"  dynamic-size buffers: {', '.join(self.unknown_buffers)}")
        return "\n".join(lines)


# --- launch sites ----------------------------------------------------------------------


@dataclass(frozen=True)
class LaunchSite:
    caller: str
    call: CallFunc
    loops: tuple  # LoopInfo
    loop_nodes: tuple  # the For/While nodes themselves
    scopes: tuple  # enclosing Scope kinds (runtime / manual scopes)
    index: int  # program order among all launches


def _static(e: Any) -> int | None:
    if isinstance(e, Const) and isinstance(e.value, int) and not isinstance(e.value, bool):
        return e.value
    if isinstance(e, int):
        return e
    return None


def loop_info(s: Any) -> LoopInfo:
    if isinstance(s, While):
        return LoopInfo("while", ",".join(a.name for a in s.iter_args), None)
    a, b, c = _static(s.start), _static(s.stop), _static(s.step)
    # arithmetic, not len(range(...)): a bound past 2**63 must not overflow
    trips = max(0, -((a - b) // c)) if a is not None and b is not None and c else None
    return LoopInfo(s.kind.value, s.var.name, trips, s.attr("stage"))


def launch_sites(program: Program) -> list[LaunchSite]:
    """Every launching call of the program, in program order, with its context."""
    sites: list[LaunchSite] = []

    def visit(caller: str, body: tuple, loops: tuple, nodes: tuple, scopes: tuple) -> None:
        for s in body:
            if isinstance(s, (For, While)):
                visit(caller, s.body, loops + (loop_info(s),), nodes + (s,), scopes)
                continue
            if isinstance(s, Scope):
                visit(caller, s.body, loops, nodes, scopes + (s.kind.value,))
                continue
            if isinstance(s, If):
                visit(caller, s.then_body, loops, nodes, scopes)
                visit(caller, s.else_body, loops, nodes, scopes)
                continue
            for n in walk(s):
                if isinstance(n, CallFunc) and n.launch:
                    sites.append(LaunchSite(caller, n, loops, nodes, scopes, len(sites)))

    for f in program.functions:
        visit(f.name, f.body, (), (), ())
    return sites


def _core_num(value: Any) -> Any:
    if value is None:
        return None
    n = _static(value)
    if n is not None:
        return n
    return expr_str(value)


class AnalyzeRegions(Pass):
    name = "analyze_regions"
    summary = "RegionInfo per InCore function: class, pipe, buffers vs budget, loop context"

    def run(self, program: Program, ctx: PassContext) -> Program:
        units = ctx.analyses.get("units", {})
        buffers = ctx.analyses.get("buffers", {})
        sites = launch_sites(program)
        first_site: dict[str, LaunchSite] = {}
        children: dict[str, list[str]] = {}
        for site in sites:
            first_site.setdefault(site.call.func, site)
            children.setdefault(site.caller, [])
            if site.call.func not in children[site.caller]:
                children[site.caller].append(site.call.func)
        budget = budget_for(ctx.platform)
        out = []
        for f in program.functions:
            if f.kind is not FunctionKind.INCORE:
                continue
            first = first_site.get(f.name)
            launch = dict(first.call.launch) if first else {}
            split, slots, _, _ = split_and_slots(launch)
            u = units.get(f.name)
            b = buffers.get(f.name)
            peak = b.peak if b else {}
            pipe = None
            if u is not None and u.crossings:
                sizes = [c.nbytes for c in u.crossings if c.nbytes is not None]
                pipe = PipeInfo(u.directions, u.crossings, split or "NONE", slots,
                                max(sizes) if sizes else None)
            out.append(RegionInfo(
                function=f.name,
                name_hint=launch.get("name_hint") or f.attr("name_hint", "") or "",
                kind=launch.get("kind") or f.attr("region", "at"),
                parent=first.caller if first else (f.attr("parent") or ""),
                children=tuple(children.get(f.name, ())),
                span=first.call.span if first and first.call.span.known else f.span,
                ops_per_unit=tuple(sorted((u.op_units if u else {}).items())),
                side_counts=tuple(sorted((u.side_counts if u else {}).items())),
                classification=u.classification if u else "scalar",
                pipe=pipe, split=split, slot_num=slots,
                ub_bytes=peak.get("Vec", 0), l1_bytes=peak.get("Mat", 0),
                l0a_bytes=peak.get("Left", 0), l0b_bytes=peak.get("Right", 0),
                l0c_bytes=peak.get("Acc", 0),
                budget=tuple(budget.items()),
                over_budget=b.over if b else (),
                unknown_buffers=tuple(b.unknown) if b else (),
                loop_context=first.loops if first else (),
                core_num=_core_num(launch.get("core_num")),
                launch=tuple(launch.items()),
                platform=ctx.platform,
            ))
        ctx.analyses["regions"] = out
        return program


__all__ = [
    "AnalyzeRegions",
    "LaunchSite",
    "LoopInfo",
    "PipeInfo",
    "RegionInfo",
    "launch_sites",
    "loop_info",
]
