"""A window buffer of a multi-card run, one panel per rank's copy: each element coloured
by the rank that wrote it last (grey: nobody), its value and writer in the hover. A
window of more than two axes is shown as [rows, last axis]."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from pypto_lab.figures.style import PALETTE, layout

NOBODY = "#e8e8e8"
MAX_CELLS = 200_000  # per panel; larger windows show their leading rows


def _as_2d(a: np.ndarray) -> np.ndarray:
    if a.ndim == 0:
        return a.reshape(1, 1)
    if a.ndim == 1:
        return a.reshape(1, -1)
    return a.reshape(-1, a.shape[-1])


def window_figure(name: str, values: list[np.ndarray], writers: list[np.ndarray]
                  ) -> go.Figure:
    """`values[r]` / `writers[r]`: rank r's copy of the window and who wrote each element."""
    n = len(values)
    fig = make_subplots(rows=1, cols=n, subplot_titles=[f"rank {r}'s {name}" for r in range(n)],
                        horizontal_spacing=0.04 if n > 2 else 0.08)
    # discrete colours: -1 (nobody) then one per rank
    stops: list = []
    for k, color in enumerate([NOBODY] + [PALETTE[r % len(PALETTE)] for r in range(n)]):
        stops += [[k / (n + 1), color], [(k + 1) / (n + 1), color]]
    for r in range(n):
        v2, w2 = _as_2d(values[r]), _as_2d(writers[r]).astype(np.int32)
        rows = max(1, min(v2.shape[0], MAX_CELLS // max(1, v2.shape[1])))
        v2, w2 = v2[:rows], w2[:rows]
        who = np.where(w2 < 0, "nobody", np.char.add("rank ", w2.astype(str)))
        shown = np.char.mod("%.6g", v2.astype(np.float64)) if v2.dtype.kind in "fiub" \
            else v2.astype(str)
        fig.add_trace(go.Heatmap(
            z=w2, zmin=-1.5, zmax=n - 0.5, colorscale=stops, showscale=(r == n - 1),
            colorbar={"title": {"text": "written by"}, "tickvals": list(range(-1, n)),
                      "ticktext": ["nobody"] + [f"rank {k}" for k in range(n)]},
            customdata=np.dstack([shown, who]),
            hovertemplate=(f"rank {r}'s {name}" + "[%{y}, %{x}] = %{customdata[0]}<br>"
                           "written by %{customdata[1]}<extra></extra>")),
            row=1, col=r + 1)
        fig.update_yaxes(autorange="reversed", row=1, col=r + 1)
    fig.update_layout(**layout(f"window {name}: who wrote each element",
                               height=min(260 + 8 * max(_as_2d(v).shape[0] for v in values),
                                          700),
                               margin={"l": 40, "r": 20, "t": 60, "b": 30}))
    return fig
