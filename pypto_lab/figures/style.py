"""One colour table and one small layout template for every workbench figure."""
from __future__ import annotations

import html

import plotly.graph_objects as go

#: Region classes and units (region graph, task graph, timeline lanes).
CLASS_COLORS = {
    "cube": "#d9822b",      # AIC / matrix unit
    "vector": "#2b7bba",    # AIV / vector unit
    "mixed": "#8e44ad",     # both, joined by a cross-core pipe
    "data": "#7f8c8d",      # only moves data
    "orchestration": "#34495e",
    "loop": "#bdc3c7",
    "mte": "#16a085",
    "scalar": "#95a5a6",
}
#: Dependency edges.
EDGE_STYLES = {
    "data": {"color": "#555555", "dash": "solid", "width": 1.6},
    "explicit": {"color": "#e67e22", "dash": "dash", "width": 1.6},
    # task level, the runtime's edge sources: the tensor map (a producer's write), the
    # creator (the task that allocated the tensor; it also keeps it alive)
    "tensormap": {"color": "#2b7bba", "dash": "solid", "width": 1.6},
    "creator": {"color": "#27ae60", "dash": "dot", "width": 1.6},
    "contains": {"color": "#cccccc", "dash": "dot", "width": 1.0},
    "nested": {"color": "#8e44ad", "dash": "dot", "width": 1.4},
    "pipe": {"color": "#8e44ad", "dash": "solid", "width": 3.0},
    # sanitizer overlay (checks=("race",)): two tasks the runtime does not order - a
    # missing edge, dashed
    "race": {"color": "#d62728", "dash": "dash", "width": 2.6},
}
#: Sanitizer markers on the task graph and the heatmap.
RACE_COLOR = "#d62728"
#: The critical path on the timeline.
CRITICAL_COLOR = "#e31a1c"
UNINIT_COLOR = "#ff7f0e"
#: Heatmap layers.
PASS_COLOR = "#e8e8e8"
NAN_COLOR = "#111111"
UNWRITTEN_OUTLINE = "#ff00aa"
UNWRITTEN_COLOR = "#f4c6e7"
#: The failing elements' error. Its lightest colour is a plain red, never near the pass
#: grey: with one outlier setting the top, plotly's "Reds" drew the many small errors of
#: a precision mismatch almost white, and a map of failing cells read as passing.
ERROR_SCALE = [[0.0, "#fb8a6e"], [0.4, "#e5332a"], [1.0, "#67000d"]]
#: Distinct colours for per-region bars (timeline), assigned in sorted name order.
PALETTE = ("#2b7bba", "#d9822b", "#27ae60", "#8e44ad", "#c0392b", "#16a085", "#f1c40f",
           "#7f8c8d", "#e84393", "#2d3436", "#6c5ce7", "#00b894")


def esc(text: object) -> str:
    """Text for plotly's labels and hovers, which read a little HTML (`<br>`, `<b>`):
    escape `&`, `<`, `>` (plotly decodes those) but not quotes (it shows `&quot;` as is)."""
    return html.escape(str(text), quote=False)


def region_colors(names: list[str]) -> dict[str, str]:
    """A stable colour per region name (sorted, cycled through the palette)."""
    return {n: PALETTE[i % len(PALETTE)] for i, n in enumerate(sorted(set(names)))}


def layout(title: str, **extra: object) -> dict:
    """White background, small margins, no default template (keeps stored JSON small)."""
    spec = dict(title={"text": title, "x": 0.01, "font": {"size": 14}}, template="none",
                  paper_bgcolor="white", plot_bgcolor="white",
                  margin={"l": 40, "r": 20, "t": 40, "b": 30},
                  font={"family": "Menlo, Consolas, monospace", "size": 11},
                  hoverlabel={"font": {"family": "Menlo, Consolas, monospace", "size": 11},
                              "align": "left"})
    spec.update(extra)
    return spec


def base_layout(title: str, **extra: object) -> go.Layout:
    """`layout` as a `go.Layout`."""
    return go.Layout(**layout(title, **extra))
