"""The compile pipeline (per-pass IR diffs) and the run-time pipelines of a kernel
(`pl.pipeline` stages, the cube↔vector ping-pong of split regions)."""
from __future__ import annotations

import difflib
import html
import math

import plotly.graph_objects as go

from pypto.ir.printer import print_program
from pypto_lab.figures.style import CLASS_COLORS, base_layout
from pypto_lab.model import KernelModel

_ADD, _DEL, _HUNK = "#e6ffec", "#ffebe9", "#ddf4ff"


def pass_diff(record: object) -> tuple[str, str]:
    """(text, html) unified diff of one `PassRecord`'s before/after IR."""
    before = print_program(record.before).splitlines()
    after = print_program(record.after).splitlines()
    lines = list(difflib.unified_diff(before, after, "before", "after", n=2, lineterm=""))
    text = "\n".join(lines) if lines else "(no change)"
    rows = []
    for ln in lines:
        bg = (_ADD if ln.startswith("+") and not ln.startswith("+++") else
              _DEL if ln.startswith("-") and not ln.startswith("---") else
              _HUNK if ln.startswith("@@") else "transparent")
        rows.append(f"<span style='display:block;background:{bg}'>{html.escape(ln)}</span>")
    # one <pre> with a block per line, no newlines between them: a <div> per line took the
    # front end's paragraph spacing (double-spaced), and a long line must scroll, not be
    # cut at the output's right edge
    body = ("<pre style='margin:0;font-size:12px;line-height:1.35;white-space:pre;"
            "width:max-content;min-width:100%'>" + "".join(rows) + "</pre>") if rows \
        else "<i>no change</i>"
    return text, (f"<div style='max-height:420px;max-width:100%;overflow:auto;"
                  f"border:1px solid #ddd;padding:4px'>{body}</div>")


def pass_table(records: list) -> list[list[str]]:
    """Rows `#, pass, changed, summary` (no timings: reprs must not change between runs)."""
    return [[str(i), r.name, "yes" if r.changed else "no", r.summary]
            for i, r in enumerate(records)]


def stages_figure(model: KernelModel, most: int = 12) -> go.Figure | None:
    """A small Gantt per run-time pipeline: `pl.pipeline` loops (iteration i uses
    buffer i mod stage) and split mixed regions (AIC pushes tile k into slot k mod
    slots; the two AIV lanes pop halves), with the kernel's own tile counts (the first
    `most` when there are more; unknown counts show `most`). None when the kernel has
    neither."""
    rows: list[tuple[str, int, int, str, str]] = []  # lane, start, len, colour, text
    seen = set()
    for r in model.regions:
        for f in r.loops:
            if f.kind == "pipeline" and f.stage and (f.line, f.var) not in seen:
                seen.add((f.line, f.var))
                n = min(most, f.trips or most)
                for i in range(n):
                    lane = f"pl.pipeline {f.var} · buffer {i % f.stage}"
                    rows.append((lane, i, f.stage, CLASS_COLORS["vector"],
                                 f"{r.label} iter {i}"))
        if r.classification == "mixed":
            slots = r.slot_num or 2
            lanes = 2 if r.split_mode in ("UP_DOWN", "LEFT_RIGHT") else 1
            tiles = math.prod(f.trips or most for f in r.loops) if r.loops else 1
            for k in range(min(most, tiles)):
                rows.append((f"{r.label} · AIC", 2 * k, 2, CLASS_COLORS["cube"],
                             f"push tile {k} → slot {k % slots}"))
                for lane in range(lanes):
                    half = f" half {lane}" if lanes == 2 else ""
                    rows.append((f"{r.label} · AIV{lane}", 2 * k + 2, 2, CLASS_COLORS["vector"],
                                 f"pop tile {k}{half} from slot {k % slots}"))
    if not rows:
        return None
    lanes = list(dict.fromkeys(lane for lane, *_ in rows))
    fig = go.Figure([go.Bar(orientation="h", y=[r[0] for r in rows], x=[r[2] for r in rows],
                            base=[r[1] for r in rows], marker={"color": [r[3] for r in rows],
                                                               "line": {"width": 1,
                                                                        "color": "white"}},
                            text=[r[4] for r in rows], textposition="inside",
                            hovertext=[r[4] for r in rows], hoverinfo="text",
                            name="stages", showlegend=False)],
                    base_layout("run-time pipelines: pl.pipeline buffers and cube↔vector "
                                "ping-pong (schematic)", barmode="overlay",
                                height=120 + 30 * len(lanes),
                                xaxis={"title": {"text": "step"}, "dtick": 2},
                                yaxis={"type": "category", "categoryorder": "array",
                                       "categoryarray": lanes[::-1], "automargin": True}))
    return fig
