"""What the workbench knows about one compiled kernel, as plain data.

`KernelModel.of(compiled)` reads `compiled.analyses["regions"]` and
`compiled.analyses["task_graph"]` when the passes published them, and derives the
same facts from `compiled.program` when they did not: the InCore regions (units,
cube/vector/mixed class, cross-core pipe, split mode, UB estimate, loop context),
the launch sites in the orchestration, and the dependency edges between regions
(`data` from parameter directions, `explicit` from `deps=`).

Nothing here draws; `graphs.py` and `figures/` read these dataclasses.
"""
from __future__ import annotations

import linecache
import math
import re
from dataclasses import dataclass, field
from typing import Any

from pypto.ir.nodes import Assign, Call, CallFunc, Const, Eval, For, Function, FunctionKind, Var
from pypto.ir.span import Span
from pypto.ir.transform import walk
from pypto.ir.types import ShapedType
from pypto.ops.registry import Unit, get

#: Usable unified-buffer bytes per AIV core, by platform family.
UB_BUDGET = {"a2a3": 188416, "a5": 245760}
_ENTRY_KINDS = (FunctionKind.ORCHESTRATION, FunctionKind.OPAQUE, FunctionKind.HOST)
_VIEW_OPS = {"slice", "view", "reshape", "transpose"}


def ub_budget(platform: str) -> int:
    """UB bytes a region may use on `platform` ("a2a3sim", "a5", ...)."""
    return UB_BUDGET["a5"] if platform.startswith("a5") else UB_BUDGET["a2a3"]


@dataclass(frozen=True)
class LoopFrame:
    """One loop around a launch site."""

    kind: str
    """`range`, `parallel`, `pipeline`, `unroll` or `spmd`."""
    var: str
    trips: int | None
    """Iteration count when the bounds are constants."""
    stage: int | None = None
    """`pl.pipeline(..., stage=F)`: how many iterations are in flight."""
    line: int = 0

    @property
    def label(self) -> str:
        n = f"×{self.trips}" if self.trips is not None else "×?"
        stage = f" stage={self.stage}" if self.stage else ""
        return f"pl.{self.kind} {self.var} {n}{stage}"


@dataclass(frozen=True)
class RegionView:
    """One InCore region (an outlined `pl.at` / `pl.spmd` body)."""

    name: str
    """The outlined function's name (unique in the program)."""
    name_hint: str
    kind: str
    """`at` or `spmd`."""
    parent: str
    """The function that launches it: the orchestration, or the enclosing region."""
    children: tuple[str, ...]
    """Regions launched from this region's body (nested sub-kernels)."""
    span: Span
    last_line: int
    ops_per_unit: dict[str, int]
    classification: str
    """`cube`, `vector`, `mixed` or `data` (moves data only)."""
    pipe: str | None
    """Cross-core direction of a mixed region: `C→V`, `V→C` or `C↔V`."""
    split_mode: str | None
    slot_num: int | None
    ub_bytes: int | None
    """Estimated unified-buffer bytes per AIV lane."""
    ub_budget: int
    loops: tuple[LoopFrame, ...]
    core_num: int | str | None = None
    """SPMD block count (a name when it is only known at run time)."""

    @property
    def label(self) -> str:
        return self.name_hint or self.name

    @property
    def over_budget(self) -> bool:
        return self.ub_bytes is not None and self.ub_bytes > self.ub_budget

    def source_lines(self) -> list[tuple[int, str]]:
        """The region's lines from its source file (works for notebook cells)."""
        if not self.span.known:
            return []
        lines = linecache.getlines(self.span.file)
        last = max(self.last_line, self.span.line)
        return [(n, lines[n - 1].rstrip("\n")) for n in range(self.span.line, last + 1)
                if n <= len(lines)]


@dataclass(frozen=True)
class LaunchSite:
    """One launch of a region in the source (one task per execution)."""

    index: int
    region: str
    caller: str
    """The function holding the launch (the orchestration, or a region for a sub-kernel)."""
    task_var: str
    reads: tuple[str, ...]
    writes: tuple[str, ...]
    deps: tuple[str, ...]
    loops: tuple[LoopFrame, ...]
    line: int


@dataclass(frozen=True)
class RegionEdge:
    src: str
    dst: str
    origin: str
    """`data` (a tensor written by src and used by dst) or `explicit` (`deps=`)."""
    tensors: tuple[str, ...] = ()


@dataclass(frozen=True)
class KernelModel:
    """Regions, launch sites and region-level dependencies of one compiled kernel."""

    name: str
    entry: str
    platform: str
    regions: tuple[RegionView, ...]
    sites: tuple[LaunchSite, ...]
    edges: tuple[RegionEdge, ...]
    warnings: tuple[str, ...] = field(default=())

    def region(self, name: str) -> RegionView:
        for r in self.regions:
            if r.name == name:
                return r
        raise KeyError(name)

    @staticmethod
    def of(compiled: Any) -> KernelModel:
        """Build the model from a `CompiledProgram`."""
        program = compiled.program
        platform = getattr(compiled, "platform", "a2a3sim")
        sites = _launch_sites(program)
        derived = _derive_regions(program, sites, platform)
        published = compiled.analyses.get("regions") if hasattr(compiled, "analyses") else None
        regions = _merge_published(derived, published)
        edges = _published_edges(compiled, sites) or _derive_edges(sites)
        warnings = tuple(str(w) for w in getattr(compiled, "warnings", ()))
        return KernelModel(program.name, program.entry, platform, regions, sites, edges,
                           warnings)


# --- launch sites -------------------------------------------------------------------


def _launch_sites(program: Any) -> tuple[LaunchSite, ...]:
    sites: list[LaunchSite] = []
    for f in program.functions:
        roots = {p.var.name: p.var.name for p in f.params}
        _scan(f.body, (), roots, program, sites, f.name)
    return tuple(sites)


def _scan(stmts: tuple, loops: tuple, roots: dict, program: Any, sites: list, caller: str
          ) -> None:
    for s in stmts:
        if isinstance(s, For):
            _scan(s.body, loops + (_frame(s),), roots, program, sites, caller)
            continue
        value = s.value if isinstance(s, Assign) else s.expr if isinstance(s, Eval) else None
        if isinstance(s, Assign) and isinstance(value, Call) and value.op in _VIEW_OPS:
            first = value.args[0] if value.args else None
            if isinstance(first, Var):
                roots[s.targets[0].name] = roots.get(first.name) or _base(first.name)
        if isinstance(value, CallFunc) and value.launch:
            sites.append(_site(s, value, loops, roots, program, len(sites), caller))
            continue
        for name in ("body", "then_body", "else_body"):
            inner = getattr(s, name, None)
            if isinstance(inner, tuple):
                _scan(inner, loops, roots, program, sites, caller)


def _base(name: str) -> str:
    """The user's name of an SSA version (`y__2` → `y`): one buffer, many versions."""
    return re.sub(r"__\d+$", "", name)


def _frame(s: For) -> LoopFrame:
    trips = None
    if all(isinstance(e, Const) for e in (s.start, s.stop, s.step)) and s.step.value:
        trips = max(0, math.ceil((s.stop.value - s.start.value) / s.step.value))
    return LoopFrame(s.kind.value, s.var.name, trips, s.attr("stage"), s.span.line)


def _site(s: Any, call: CallFunc, loops: tuple, roots: dict, program: Any, index: int,
          caller: str) -> LaunchSite:
    callee = program.function(call.func)
    reads, writes = [], []
    for param, arg in zip(callee.params, call.args):
        if not isinstance(arg, Var) or not isinstance(arg.type, ShapedType):
            continue
        root = roots.get(arg.name) or _base(arg.name)
        if param.direction.value in ("In", "InOut"):
            reads.append(root)
        if param.direction.value in ("Out", "InOut"):
            writes.append(root)
    task_var = s.targets[-1].name if isinstance(s, Assign) else ""
    deps = tuple(v.name for v in walk(call.launch_attr("deps", ())) if isinstance(v, Var))
    return LaunchSite(index, call.func, caller, task_var, tuple(reads), tuple(writes), deps, loops,
                      s.span.line)


# --- regions ------------------------------------------------------------------------


def _derive_regions(program: Any, sites: tuple, platform: str) -> tuple[RegionView, ...]:
    launches = _launches_by_callee(program)
    loops_of = {}
    for site in sites:
        loops_of.setdefault(site.region, site.loops)
    out = []
    for f in program.functions:
        if f.kind is not FunctionKind.INCORE:
            continue
        caller, launch = launches.get(f.name, (f.attr("parent", ""), {}))
        out.append(_region(f, caller, launch, launches, loops_of.get(f.name, ()), platform))
    return tuple(out)


def _launches_by_callee(program: Any) -> dict[str, tuple[str, dict]]:
    found = {}
    for f in program.functions:
        for n in walk(f.body):
            if isinstance(n, CallFunc) and n.launch:
                found.setdefault(n.func, (f.name, dict(n.launch)))
    return found


def _region(f: Function, caller: str, launch: dict, launches: dict, loops: tuple,
            platform: str) -> RegionView:
    units = _ops_per_unit(f)
    cls = _classify(units)
    split_mode, slot_num = _optimizations(launch.get("optimizations", ()))
    if cls == "mixed" and slot_num is None:
        slot_num = 2
    ub = _ub_bytes(f)
    if ub is not None and split_mode in ("UP_DOWN", "LEFT_RIGHT"):
        ub = (ub + 1) // 2
    children = tuple(sorted(n for n, (c, _) in launches.items() if c == f.name))
    core_num = launch.get("core_num")
    if isinstance(core_num, Const):
        core_num = core_num.value
    elif core_num is not None and not isinstance(core_num, int):
        core_num = str(core_num)
    return RegionView(
        name=f.name, name_hint=launch.get("name_hint") or f.attr("name_hint", ""),
        kind=launch.get("kind") or f.attr("region", "at"), parent=caller, children=children,
        span=f.span, last_line=_last_line(f), ops_per_unit=units, classification=cls,
        pipe=_pipe_direction(f) if cls == "mixed" else None,
        split_mode=split_mode if cls == "mixed" or split_mode else None, slot_num=slot_num,
        ub_bytes=ub, ub_budget=ub_budget(platform), loops=loops, core_num=core_num)


def _unit_of(call: Call) -> str:
    try:
        return get(call.op).unit.value
    except KeyError:
        return "unknown"


def _ops_per_unit(f: Function) -> dict[str, int]:
    counts: dict[str, int] = {}
    for n in walk(f.body):
        if isinstance(n, Call):
            u = _unit_of(n)
            counts[u] = counts.get(u, 0) + 1
    return dict(sorted(counts.items()))


def _classify(units: dict[str, int]) -> str:
    cube = units.get(Unit.CUBE.value, 0)
    vector = units.get(Unit.VECTOR.value, 0)
    if cube and vector:
        return "mixed"
    if cube:
        return "cube"
    if vector:
        return "vector"
    return "data"


def _pipe_direction(f: Function) -> str:
    """Which way tiles cross between the cube and the vector side."""
    produced: dict[str, str] = {}
    directions = set()
    for n in walk(f.body):
        if isinstance(n, Assign) and isinstance(n.value, Call):
            produced[n.targets[0].name] = _unit_of(n.value)
    for n in walk(f.body):
        if not isinstance(n, Call):
            continue
        unit = _unit_of(n)
        if unit not in ("cube", "vector"):
            continue
        for a in n.args:
            src = produced.get(a.name) if isinstance(a, Var) else (
                _unit_of(a) if isinstance(a, Call) else None)
            if src in ("cube", "vector") and src != unit:
                directions.add("C→V" if src == "cube" else "V→C")
    if len(directions) == 2:
        return "C↔V"
    return directions.pop() if directions else "C→V"


def _optimizations(opts: Any) -> tuple[str | None, int | None]:
    mode, slots = None, None
    for o in opts or ():
        o = getattr(o, "value", o)
        if type(o).__name__ == "Split":
            mode = getattr(o.mode, "name", str(o.mode))
            slots = o.slot_num if o.slot_num is not None else slots
        elif type(o).__name__ == "CrossCoreSlot":
            slots = o.slot_num
    return mode, slots


def _ub_bytes(f: Function) -> int | None:
    """Bytes of the values the vector side holds at once (a sum: no liveness reuse)."""
    consumers: dict[str, set[str]] = {}
    for n in walk(f.body):
        if isinstance(n, Call):
            for a in n.args:
                if isinstance(a, Var):
                    consumers.setdefault(a.name, set()).add(_unit_of(n))
    total, seen = 0, set()
    assigned = {id(n.value) for n in walk(f.body) if isinstance(n, Assign)}
    for n in walk(f.body):
        if isinstance(n, Assign) and isinstance(n.value, Call):
            var, call = n.targets[0], n.value
            if var.name in seen:
                continue
            seen.add(var.name)
            if _holds_ub(call, consumers.get(var.name, set())):
                size = var.type.nbytes() if isinstance(var.type, ShapedType) else 0
                if size is None:
                    return None
                total += size
        elif (isinstance(n, Call) and id(n) not in assigned and isinstance(n.type, ShapedType)
              and _unit_of(n) == "vector"):
            total += n.type.nbytes() or 0  # a temporary nested in a larger expression
    return total


def _holds_ub(call: Call, consumers: set[str]) -> bool:
    try:
        op = get(call.op)
    except KeyError:
        return False
    if op.writes is not None or not isinstance(call.type, ShapedType):
        return False
    return op.unit is Unit.VECTOR or "vector" in consumers


def _last_line(f: Function) -> int:
    last = f.span.end_line or f.span.line
    for n in walk(f.body):
        span = getattr(n, "span", None)
        if span is not None and span.known and span.file == f.span.file:
            last = max(last, span.end_line or span.line)
    return last


def _merge_published(derived: tuple, published: Any) -> tuple[RegionView, ...]:
    """Prefer the passes' numbers (`analyses["regions"]`) where they published them."""
    if not published:
        return derived
    by_name = {getattr(r, "function", None): r for r in published}
    out = []
    for r in derived:
        p = by_name.get(r.name)
        if p is None:
            out.append(r)
            continue
        updates: dict[str, Any] = {}
        for ours, theirs in (("classification", "classification"), ("slot_num", "slot_num"),
                             ("ub_bytes", "ub_bytes"), ("core_num", "core_num")):
            value = getattr(p, theirs, None)
            if value is not None:
                updates[ours] = value
        budget = dict(getattr(p, "budget", ()) or ())
        if budget.get("Vec"):
            updates["ub_budget"] = int(budget["Vec"])
        split = getattr(p, "split", None)
        split = getattr(split, "name", split)
        updates["split_mode"] = None if split in (None, "NONE", 0) else str(split)
        units = getattr(p, "ops_per_unit", None)
        if units:
            updates["ops_per_unit"] = dict(sorted((getattr(k, "value", str(k)), v)
                                                  for k, v in dict(units).items()))
        pipe = getattr(p, "pipe", None)
        if pipe is not None:
            dirs = sorted(str(d).replace("->", "→") for d in getattr(pipe, "directions", ()))
            updates["pipe"] = "C↔V" if len(dirs) > 1 else (dirs[0] if dirs else r.pipe)
        elif updates.get("classification") != "mixed":
            updates["pipe"] = None
        if isinstance(updates.get("core_num"), Const):
            updates["core_num"] = updates["core_num"].value
        out.append(_replace(r, updates))
    return tuple(out)


def _replace(r: RegionView, updates: dict) -> RegionView:
    import dataclasses

    return dataclasses.replace(r, **updates)


# --- edges --------------------------------------------------------------------------


def _derive_edges(sites: tuple) -> tuple[RegionEdge, ...]:
    """Runtime overlap rules at region granularity: a read waits for the last writer,
    a write for the previous writer (WAW) and readers (WAR); `deps=` on top."""
    regions = {s.region for s in sites}

    last_writer: dict[str, str] = {}
    readers: dict[str, set[str]] = {}
    task_region = {_base(s.task_var): s.region for s in sites if s.task_var}
    data: dict[tuple[str, str], set[str]] = {}
    explicit: set[tuple[str, str]] = set()

    def add(src: str | None, dst: str, tensor: str) -> None:
        if src is not None and src != dst:
            data.setdefault((src, dst), set()).add(tensor)

    # Tensor names only mean the same buffer inside one caller; a sub-kernel's
    # ordering with its parent is the `nested` relation, not a data edge.
    for s in sites:
        if s.caller in regions:
            continue
        for t in s.reads:
            add(last_writer.get(t), s.region, t)
        for t in s.writes:
            add(last_writer.get(t), s.region, t)
            for r in sorted(readers.get(t, ())):
                add(r, s.region, t)
        for t in s.reads:
            readers.setdefault(t, set()).add(s.region)
        for t in s.writes:
            last_writer[t] = s.region
            readers[t] = set()
        for d in s.deps:
            src = task_region.get(_base(d))
            if src is not None and src != s.region:
                explicit.add((src, s.region))
    edges = [RegionEdge(a, b, "data", tuple(sorted(ts))) for (a, b), ts in data.items()]
    edges += [RegionEdge(a, b, "explicit") for a, b in sorted(explicit)]
    return tuple(sorted(edges, key=lambda e: (e.src, e.dst, e.origin)))


def _published_edges(compiled: Any, sites: tuple) -> tuple[RegionEdge, ...]:
    """Region edges from the passes' task graph (`analyses["task_graph"]`)."""
    graph = compiled.analyses.get("task_graph") if hasattr(compiled, "analyses") else None
    edges = getattr(graph, "edges", None) if graph is not None else None
    if not edges:
        return ()
    nested = {s.region for s in sites if s.caller in {x.region for x in sites}}
    function = {n.id: n.function for n in getattr(graph, "nodes", ())}
    function = function or {s.index: s.region for s in sites}
    merged: dict[tuple[str, str, str], set[str]] = {}
    for e in edges:
        src, dst = function.get(e.src), function.get(e.dst)
        if src is None or dst is None or src == dst or dst in nested:
            continue
        origin = "explicit" if "explicit" in str(_field(e, "origin", "data")) else "data"
        tensors = merged.setdefault((src, dst, origin), set())
        if _field(e, "tensor", None):
            tensors.add(e.tensor)
    return tuple(sorted((RegionEdge(a, b, o, tuple(sorted(ts)))
                         for (a, b, o), ts in merged.items()),
                        key=lambda e: (e.src, e.dst, e.origin)))


def _field(obj: Any, name: str, default: Any) -> Any:
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)
