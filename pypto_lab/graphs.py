"""Kernel model / run trace → `networkx.DiGraph` (attributes only; `figures/` draws).

Node attributes: `kind` (orchestration, loop, region, core, task), `cls` (colour
class), `label`, `hover` (HTML), `order` (source order inside a layer).
Edge attributes: `kind` (contains, nested, data, explicit, pipe, race), `label`;
`layout=False` on overlay edges the layout ignores (races).
Sanitizer overlays on task nodes: `races` (texts of races inside one node, e.g.
between blocks of one task when blocks are folded) and `uninit` (texts of reads of
unwritten memory by that task).
"""
from __future__ import annotations

from typing import Any

import networkx as nx

from pypto_lab.figures.style import esc
from pypto_lab.model import KernelModel, LoopFrame, RegionView

_HOVER_LINES = 14  # source lines shown in a region's hover


def region_graph(model: KernelModel) -> nx.DiGraph:
    """Orchestration → loops → regions (→ AIC/AIV halves of mixed ones), plus
    nested sub-kernels and the data / explicit dependency edges."""
    g = nx.DiGraph(name=model.name)
    root = f"orch:{model.entry}"
    g.add_node(root, kind="orchestration", cls="orchestration", label=model.entry,
               hover=f"<b>{esc(model.entry)}</b><br>orchestration", order=0)
    launched = {}
    for site in model.sites:
        launched.setdefault(site.region, site)
    for r in model.regions:
        node = f"region:{r.name}"
        site = launched.get(r.name)
        g.add_node(node, kind="region", cls=r.classification, label=_region_label(r),
                   hover=region_hover(r), order=site.line if site else r.span.line)
        if r.parent in {x.name for x in model.regions}:
            g.add_edge(f"region:{r.parent}", node, kind="nested", label="sub-kernel")
        else:
            _attach_loops(g, root, node, site.loops if site else r.loops)
        if r.classification == "mixed":
            _add_pipe(g, node, r)
    for e in model.edges:
        u, v = f"region:{e.src}", f"region:{e.dst}"
        if g.has_edge(u, v) and g.edges[u, v]["kind"] != "contains":
            kinds = {g.edges[u, v]["kind"], e.origin}
            g.edges[u, v]["kind"] = "explicit" if "explicit" in kinds else e.origin
            g.edges[u, v]["label"] = _edge_label(g.edges[u, v]["label"], e)
            continue
        g.add_edge(u, v, kind=e.origin, label=_edge_label("", e))
    return g


def _attach_loops(g: nx.DiGraph, root: str, node: str, loops: tuple[LoopFrame, ...]) -> None:
    parent = root
    for frame in loops:
        loop = f"loop:{frame.line}:{frame.var}"
        if loop not in g:
            g.add_node(loop, kind="loop", cls="loop", label=frame.label, order=frame.line,
                       hover=f"<b>{esc(frame.label)}</b><br>line {frame.line}"
                             + (f"<br>{frame.stage} iterations in flight (ping-pong buffers)"
                                if frame.stage else ""))
        if not g.has_edge(parent, loop):
            g.add_edge(parent, loop, kind="contains", label="")
        parent = loop
    g.add_edge(parent, node, kind="contains", label="")


def _add_pipe(g: nx.DiGraph, node: str, r: RegionView) -> None:
    lanes = 2 if r.split_mode in ("UP_DOWN", "LEFT_RIGHT") else 1
    aic, aiv = f"{node}/AIC", f"{node}/AIV"
    order = g.nodes[node]["order"]
    g.add_node(aic, kind="core", cls="cube", label="AIC", order=order,
               hover=f"cube half of {esc(r.label)}: {r.ops_per_unit.get('cube', 0)} "
                     "cube ops")
    g.add_node(aiv, kind="core", cls="vector", label=f"AIV×{lanes}", order=order + 0.5,
               hover=f"vector half of {esc(r.label)}: "
                     f"{r.ops_per_unit.get('vector', 0)} vector ops on {lanes} lane(s)")
    g.add_edge(node, aic, kind="contains", label="")
    g.add_edge(node, aiv, kind="contains", label="")
    src, dst = (aiv, aic) if r.pipe == "V→C" else (aic, aiv)
    g.add_edge(src, dst, kind="pipe", label=pipe_label(r))


def pipe_label(r: RegionView) -> str:
    """`C→V split=UP_DOWN slots=2` for a mixed region."""
    parts = [r.pipe or "C→V"]
    parts.append(f"split={r.split_mode or 'NONE'}")
    if r.slot_num is not None:
        parts.append(f"slots={r.slot_num}")
    return " ".join(parts)


def _region_label(r: RegionView) -> str:
    label = r.label
    if r.kind == "spmd":
        label += f" [spmd ×{r.core_num if r.core_num is not None else '?'}]"
    return label


def _edge_label(old: str, e: Any) -> str:
    part = "deps=" if e.origin == "explicit" else ",".join(e.tensors)
    return f"{old}; {part}" if old else part


def fmt_bytes(n: int | None) -> str:
    if n is None:
        return "?"
    return f"{n / 1024:.1f} KiB" if n >= 1024 else f"{n} B"


def ub_text(r: RegionView) -> str:
    """`24.0 KiB / 184.0 KiB (13%)`, the UB estimate against the budget."""
    if r.ub_bytes is None:
        return "? (dynamic shape)"
    pct = 100 * r.ub_bytes / r.ub_budget
    flag = "  OVER BUDGET" if r.over_budget else ""
    return f"{fmt_bytes(r.ub_bytes)} / {fmt_bytes(r.ub_budget)} ({pct:.0f}%){flag}"


def region_hover(r: RegionView) -> str:
    """Hover HTML: identity, units, UB estimate, pipe, loops and the source lines."""
    ops = ", ".join(f"{u}={n}" for u, n in r.ops_per_unit.items()) or "none"
    rows = [f"<b>{esc(r.label)}</b> ({esc(r.name)})",
            f"pl.{r.kind} · {r.classification}", f"ops per unit: {ops}", f"UB: {ub_text(r)}"]
    if r.classification == "mixed":
        rows.append(f"pipe: {esc(pipe_label(r))}")
    if r.loops:
        rows.append("in: " + " › ".join(esc(f.label) for f in r.loops))
    src = r.source_lines()
    if src:
        rows.append("―" * 20)
        shown = src[:_HOVER_LINES]
        rows += [f"{n:>4} {esc(text)}".replace(" ", "&nbsp;") for n, text in shown]
        if len(src) > len(shown):
            rows.append(f"… {len(src) - len(shown)} more lines")
    return "<br>".join(rows)


# --- task level ---------------------------------------------------------------------


def task_graph(model: KernelModel, tasks: list, *, max_nodes: int = 60, races: Any = (),
               uninit: Any = ()) -> nx.DiGraph:
    """One node per (task, block) of a simulated run, folded when there are many:
    first the blocks of each task, then all tasks of a region. `races` / `uninit` (the
    dicts of `RaceReport.to_dict()["races"]` / `UninitRead.to_dict()`) become red race
    edges between the two tasks (a marker when both fall in one node) and
    uninitialized-read markers on the reading task."""
    classes = {r.name: r.classification for r in model.regions}
    hints = {r.name: r.label for r in model.regions}
    level = "block"
    if len(tasks) > max_nodes:
        level = "task" if len({t.task for t in tasks}) <= max_nodes else "region"

    def key(t: Any) -> str:
        if level == "block":
            return f"task:{t.task}.{t.block}"
        return f"task:{t.task}" if level == "task" else f"region:{t.region}"

    g = nx.DiGraph(fold=level)
    members: dict[str, list] = {}
    for t in tasks:
        members.setdefault(key(t), []).append(t)
    for node, ts in members.items():
        first = ts[0]
        hint = hints.get(first.region, first.region)
        if level == "block":
            label = f"{hint}#{first.task}.{first.block}"
        elif level == "task":
            label = f"{hint}#{first.task} ×{len(ts)}"
        else:
            label = f"{hint} ×{len({t.task for t in ts})} tasks"
        cost = sum(sum(t.cost.values()) for t in ts)
        g.add_node(node, kind="task", cls=classes.get(first.region, "data"), label=label,
                   order=min(t.task for t in ts),
                   hover=(f"<b>{esc(label)}</b><br>region {esc(first.region)}"
                          f"<br>{len(ts)} block(s), est. {cost:,.0f} cycles"))
    by_task: dict[int, list[str]] = {}
    for node, ts in members.items():
        for t in ts:
            by_task.setdefault(t.task, []).append(node)
    for t in tasks:
        for d in t.deps:
            for src in by_task.get(d, ()):
                dst = key(t)
                if src != dst and not g.has_edge(src, dst):
                    why = t.dep_reason.get(d, "")
                    g.add_edge(src, dst, kind=t.dep_origin.get(d, "data"), label="",
                               **({"hover": esc(why).replace("&lt;br&gt;", "<br>")}
                                  if why else {}))
    _overlay(g, tasks, key, races, uninit)
    return g


def _side_node(g: nx.DiGraph, tasks: list, key: Any, side: dict) -> str | None:
    """The node of a race side or a read: its (task, block), or the task's first block."""
    blk = side.get("block")
    match = [t for t in tasks if t.task == side.get("task")]
    exact = [t for t in match if t.block == (blk if blk is not None else 0)]
    t = (exact or match or [None])[0]
    return key(t) if t is not None and key(t) in g else None


def _overlay(g: nx.DiGraph, tasks: list, key: Any, races: Any, uninit: Any) -> None:
    for r in races or ():
        a = _side_node(g, tasks, key, r["first"])
        b = _side_node(g, tasks, key, r["second"])
        if a is None or b is None:
            continue
        box = "[" + ", ".join(f"{lo}:{hi}" for lo, hi in r["ranges"]) + "]"
        text = (f"race on {r['tensor']}{box}: {r['first']['mode']} by task "
                f"{r['first']['task']} block {r['first']['block']} vs {r['second']['mode']} by "
                f"task {r['second']['task']} block {r['second']['block']}")
        if a == b:
            g.nodes[a].setdefault("races", []).append(text)
            continue
        g.add_edge(a, b, kind="race", label=f"missing edge: {r['tensor']}{box}",
                   layout=False,
                   hover=text + (f"<br>{esc(r.get('reason', ''))}" if r.get("reason") else "")
                   + (f"<br><b>fix:</b> {esc(r['hint'])}" if r.get("hint") else ""))
    for u in uninit or ():
        n = _side_node(g, tasks, key, u)
        if n is None:
            continue
        box = "[" + ", ".join(f"{lo}:{hi}" for lo, hi in u["ranges"]) + "]"
        g.nodes[n].setdefault("uninit", []).append(
            f"uninitialized read: {u['op']} of {u['tensor']}{box} ({u['memory']}, "
            f"{u['elements']} element(s)) at {u['source']}")
