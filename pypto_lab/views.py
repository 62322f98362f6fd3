"""Display objects: every view has a deterministic text repr, a self-contained HTML
repr (plotly.js inlined, no CDN), and, when it is interactive and ipywidgets is
installed, a widget view that JupyterLab prefers.

`View` is the protocol (`text()`, `html(js)`, `widget()`); `Panel` stacks views and
inlines plotly.js once for all the figures it holds.
"""
from __future__ import annotations

import hashlib
import html as _html
import json
import os
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio

_PLOTLY_CONFIG = {"displaylogo": False, "responsive": True}

PLOTLYJS_MODES = ("inline", "once", "none")
_plotlyjs = {"mode": os.environ.get("PYPTO_LAB_PLOTLYJS", "inline"), "sent": False}
if _plotlyjs["mode"] not in PLOTLYJS_MODES:
    _plotlyjs["mode"] = "inline"


def set_plotlyjs(mode: str) -> None:
    """Where a figure's `text/html` gets plotly.js from (the `application/vnd.plotly.v1+json`
    bundle, which JupyterLab and VS Code draw, is always there):

    * `"inline"` (default): every figure inlines plotly.js (~4.6 MB), self-contained;
    * `"once"`: only the first figure of the session inlines it; later ones reuse it (for
      an HTML export read top to bottom);
    * `"none"`: no plotly.js and no script in HTML; a figure's HTML is its text summary,
      and panels holding figures also carry a widget view that draws them. Keeps saved
      notebooks small (the tutorials use it). `PYPTO_LAB_PLOTLYJS` sets the default.
    """
    if mode not in PLOTLYJS_MODES:
        raise ValueError(f"plotlyjs mode {mode!r}: choose from {', '.join(PLOTLYJS_MODES)}")
    _plotlyjs.update(mode=mode, sent=False)


def plotlyjs_mode() -> str:
    return _plotlyjs["mode"]


class View:
    """Base of every workbench display object."""

    title: str = ""
    interactive: bool = False

    def text(self) -> str:
        """Deterministic plain text (what `repr` and nbval see)."""
        return self.title

    def html(self, include_js: bool = True) -> str:
        """Self-contained HTML; `include_js=False` when plotly.js is already on the page."""
        return f"<pre>{_html.escape(self.text())}</pre>"

    def has_figure(self) -> bool:
        return False

    def widget(self) -> Any:
        """An ipywidgets view (default: an Output showing this view's bundle)."""
        import ipywidgets as w

        out = w.Output()
        out.append_display_data(_Static(self))
        return out

    def __repr__(self) -> str:
        return self.text()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict:
        bundle = {"text/plain": self.text(), "text/html": self.html(include_js=True)}
        if self.interactive or (plotlyjs_mode() == "none" and self.has_figure()):
            bundle.update(_widget_bundle(self))
        return bundle


class _Static:
    """A view's bundle without the widget part (what Output widgets display)."""

    def __init__(self, view: View):
        self.view = view

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict:
        v = self.view
        if isinstance(v, FigureView):
            return v.figure_bundle()
        return {"text/plain": v.text(), "text/html": v.html(include_js=True)}


def _widget_bundle(view: View) -> dict:
    try:
        widget = view.widget()
    except ImportError:
        return {}
    data = widget._repr_mimebundle_()
    return {k: v for k, v in data.items() if k != "text/plain"}


class HtmlView(View):
    """A fixed piece of HTML with its text twin."""

    def __init__(self, title: str, text: str, html: str):
        self.title = title
        self._text = text
        self._html = html

    def text(self) -> str:
        return self._text

    def html(self, include_js: bool = True) -> str:
        return self._html


class FigureView(View):
    """A plotly figure with a text summary; `.figure` is the `go.Figure` value."""

    def __init__(self, figure: go.Figure, title: str, summary: str = ""):
        self.figure = figure
        self.title = title
        self.summary = summary

    def has_figure(self) -> bool:
        return True

    def text(self) -> str:
        head = f"<{self.title}: {len(self.figure.data)} traces>"
        return f"{head}\n{self.summary}" if self.summary else head

    def html(self, include_js: bool = True) -> str:
        if plotlyjs_mode() == "none":
            return (f"<pre title='figure: drawn by JupyterLab, VS Code or the widget view'>"
                    f"{_html.escape(self.text())}</pre>")
        return figure_html(self.figure, include_js)

    def figure_bundle(self) -> dict:
        """Plotly's own mimetype (JupyterLab draws it offline) plus the HTML fallback
        (left out with `set_plotlyjs("none")`: viewers without plotly show the text)."""
        bundle = {"text/plain": self.text(),
                  "application/vnd.plotly.v1+json": {**json.loads(pio.to_json(self.figure)),
                                                     "config": _PLOTLY_CONFIG}}
        if plotlyjs_mode() != "none":
            bundle["text/html"] = self.html(include_js=True)
        return bundle

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict:
        return self.figure_bundle()

    def to_dict(self) -> dict:
        return self.figure.to_dict()


def figure_html(fig: go.Figure, include_js: bool = True) -> str:
    """A `<div>` drawing `fig`; plotly.js is inlined when `include_js` (never a CDN).
    The div id is a hash of the figure, so the HTML is the same on every run."""
    if include_js and _plotlyjs["mode"] == "once":
        include_js, _plotlyjs["sent"] = not _plotlyjs["sent"], True
    payload = pio.to_json(fig, validate=False)
    div_id = "pypto-" + hashlib.sha1(payload.encode()).hexdigest()[:12]
    return pio.to_html(fig, full_html=False, include_plotlyjs=bool(include_js),
                       div_id=div_id, config=_PLOTLY_CONFIG, validate=False)


class Panel(View):
    """Views stacked under a heading; plotly.js is inlined once for all of them."""

    def __init__(self, title: str, parts: list[View], header_html: str = "",
                 header_text: str = ""):
        self.title = title
        self.parts = parts
        self.header_html = header_html
        self.header_text = header_text

    @property
    def interactive(self) -> bool:  # type: ignore[override]
        return any(p.interactive for p in self.parts)

    def text(self) -> str:
        chunks = [self.header_text or self.title] + [p.text() for p in self.parts]
        return "\n\n".join(c for c in chunks if c)

    def html(self, include_js: bool = True) -> str:
        out = [self.header_html]
        js = include_js
        for p in self.parts:
            out.append(p.html(include_js=js))
            js = js and not p.has_figure()
        return "<div class='pypto-panel'>" + "".join(out) + "</div>"

    def has_figure(self) -> bool:
        return any(p.has_figure() for p in self.parts)

    def widget(self) -> Any:
        import ipywidgets as w

        head = w.HTML(self.header_html) if self.header_html else None
        kids = [p.widget() if p.interactive else _output_of(p) for p in self.parts]
        return w.VBox([k for k in [head, *kids] if k is not None])


def _output_of(view: View) -> Any:
    import ipywidgets as w

    if not view.has_figure():
        return w.HTML(view.html(include_js=False))
    out = w.Output()
    out.append_display_data(_Static(view))
    return out


def table_html(rows: list[list[str]], header: list[str]) -> str:
    """A compact HTML table (cells are already escaped HTML)."""
    th = "".join(f"<th style='text-align:left;padding:2px 8px'>{h}</th>" for h in header)
    cell = "<td style='text-align:left;padding:2px 8px'>{}</td>"
    body = "".join("<tr>" + "".join(cell.format(c) for c in r) + "</tr>" for r in rows)
    return (f"<table style='border-collapse:collapse;font-family:monospace;font-size:12px'>"
            f"<thead><tr style='border-bottom:1px solid #999'>{th}</tr></thead>"
            f"<tbody>{body}</tbody></table>")


def table_text(rows: list[list[str]], header: list[str]) -> str:
    """The same table as aligned plain text."""
    cols = list(zip(header, *rows))
    widths = [max(len(str(c)) for c in col) for col in cols]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip()
             for r in [header, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
