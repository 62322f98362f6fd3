"""The data path of a mixed (cube + vector) region, left to right, with the on-chip
buffer each stage fills: GM → L1 → L0A/L0B → cube → L0C → (cross-core pipe, its
slots) → UB → vector → GM. Sizes are the compiler's estimates against the platform's
capacity (`compiled.regions`)."""
from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from pypto_lab.figures.style import CLASS_COLORS, esc, layout
from pypto_lab.graphs import fmt_bytes

_MEMORY = "#ecf0f1"


def _stages(info: Any, slots: int | None, split: str | None) -> list[tuple[str, str, str]]:
    """(label, detail, colour) of each stage."""
    budget = dict(getattr(info, "budget", None) or {})

    def size(attr: str, space: str) -> str:
        used = getattr(info, attr, None)
        cap = budget.get(space)
        if used is None:
            return "?"
        return fmt_bytes(int(used)) + (f"<br>of {fmt_bytes(int(cap))}" if cap else "")

    def l0_pair() -> str:
        a, b = getattr(info, "l0a_bytes", None), getattr(info, "l0b_bytes", None)
        if a == 0 and b == 0:
            # the estimate counts explicit pl.Mem.Left/Right tiles only: the compiler cuts
            # matmul operands staged in L1 into L0-sized pieces itself (AutoTileMatmulL0),
            # so "0 B" would misread as "the cube reads nothing"
            cap = budget.get("Left")
            # short lines: the stages sit ~75 px apart and longer notes run into each other
            return "tiled by<br>compiler" + (f"<br>to {fmt_bytes(int(cap))}" if cap else "")
        return f"A {size('l0a_bytes', 'Left')}<br>B {size('l0b_bytes', 'Right')}"

    lanes = "2 AIV<br>lanes" if split in ("UP_DOWN", "LEFT_RIGHT") else "1 AIV"
    return [("GM", "inputs", _MEMORY),
            ("L1", size("l1_bytes", "Mat"), _MEMORY),
            ("L0A / L0B", l0_pair(), _MEMORY),
            ("cube", "AIC", CLASS_COLORS["cube"]),
            ("L0C", size("l0c_bytes", "Acc"), _MEMORY),
            ("pipe", f"{slots or 2} slots" + (f"<br>{split}" if split else ""),
             CLASS_COLORS["mixed"]),
            ("UB", size("ub_bytes", "Vec") + "<br>per lane", _MEMORY),
            ("vector", lanes, CLASS_COLORS["vector"]),
            ("GM", "outputs", _MEMORY)]


def data_path_figure(region: Any, info: Any, title: str) -> go.Figure:
    """`region`: the workbench's `RegionView`; `info`: the compiler's region record."""
    stages = _stages(info, region.slot_num, region.split_mode)
    xs = list(range(len(stages)))
    node = go.Scatter(
        x=xs, y=[0] * len(stages), mode="markers+text", name="stages", showlegend=False,
        text=[f"<b>{s[0]}</b>" for s in stages], textposition="top center",
        hovertext=[f"<b>{s[0]}</b><br>{s[1]}" for s in stages], hoverinfo="text",
        marker={"symbol": "square", "size": 30, "color": [s[2] for s in stages],
                "line": {"width": 1, "color": "#333333"}})
    notes = [{"x": x, "y": -0.45, "text": s[1], "showarrow": False, "yanchor": "top",
              "font": {"size": 10, "color": "#333333"}} for x, s in zip(xs, stages)]
    notes += [{"x": x + 1, "y": 0, "ax": x, "ay": 0, "xref": "x", "yref": "y", "axref": "x",
               "ayref": "y", "text": "", "showarrow": True, "arrowhead": 2, "standoff": 16,
               "startstandoff": 16, "arrowcolor": "#555555", "arrowwidth": 1.4}
              for x in xs[:-1]]
    return go.Figure([node], layout(
        esc(title), height=220, margin={"l": 20, "r": 20, "t": 40, "b": 10},
        xaxis={"visible": False, "range": [-0.6, len(stages) - 0.4]},
        yaxis={"visible": False, "range": [-1.9, 0.9]}, annotations=notes))
