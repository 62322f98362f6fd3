"""Display objects. Every view has a deterministic text form, a static HTML twin, and a
live form for JupyterLab; a figure travels as plotly's own mimetype, which JupyterLab,
VS Code and nbconvert'd notebooks reopened in JupyterLab draw without plotly.js.

In IPython a view shows as one output per part (`_ipython_display_`): a panel of a
summary, two graphs and a heatmap is four outputs, each drawn by the renderer made for
it, and each figure stored in the notebook as plotly JSON (so it draws again when the
notebook is reopened, without re-running). Interactive views (the heatmap's controls,
the pass slider) show as three outputs (`live_outputs`): the live ipywidgets form, its
saved twin (the figure without the widget) and a CSS rule that shows the live form
while it draws and the twin once it cannot (a saved notebook reopened: the widget's
model is gone). `_repr_mimebundle_` gives the whole view as one bundle for everything
else (tests, other frontends).

Every figure also carries a static form (`figures.static_svg`): an SVG drawn from the
figure's spec, for the places plotly.js never runs (GitHub's notebook view, nbviewer
and `jupyter nbconvert --to html` of a notebook stored without plotly.js).

Where plotly.js comes from for the HTML twin of a figure (`set_plotlyjs`):

* `"once"` (default): plotly.js is sent once per kernel session: into the output of
  `%load_ext pypto_lab` when the extension was loaded that way (so no later cell grows
  by its 4.6 MB), else with the first figure; later figures reuse it. An exported HTML
  page draws every figure.
* `"inline"`: every figure's HTML carries plotly.js (self-contained, 4.6 MB each).
* `"none"`: no plotly.js and no script: a figure's static twin is its SVG (an
  `image/svg+xml` output; the tutorials use it to stay small; JupyterLab still draws
  the plotly mimetype).
"""
from __future__ import annotations

import hashlib
import html as _html
import json
import os
from typing import Any

PLOTLYJS_MODES = ("once", "inline", "none")
DEFAULT_PLOTLYJS = "once"
PLOTLY_MIME = "application/vnd.plotly.v1+json"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
_PLOTLY_CONFIG = {"displaylogo": False}
_SLOT_ID = "pypto-lab-plotlyjs"

_plotlyjs: dict = {"mode": os.environ.get("PYPTO_LAB_PLOTLYJS", DEFAULT_PLOTLYJS),
                   "sent": False, "slot": None}
if _plotlyjs["mode"] not in PLOTLYJS_MODES:
    _plotlyjs["mode"] = DEFAULT_PLOTLYJS


def set_plotlyjs(mode: str) -> None:
    """Where a figure's HTML twin gets plotly.js from: `"once"` (default), `"inline"` or
    `"none"` (see the module docstring). `PYPTO_LAB_PLOTLYJS` sets the default."""
    if mode not in PLOTLYJS_MODES:
        raise ValueError(f"plotlyjs mode {mode!r}: choose from {', '.join(PLOTLYJS_MODES)}")
    _plotlyjs.update(mode=mode, sent=False)


def plotlyjs_mode() -> str:
    return _plotlyjs["mode"]


def open_plotlyjs_slot() -> None:
    """Called by `%load_ext`: an empty output that receives plotly.js if and when the
    first figure needs it (`"once"` mode), so the cells showing figures stay small."""
    from IPython.display import HTML, display

    _plotlyjs["slot"] = display(HTML(""), display_id=_SLOT_ID)
    _plotlyjs["sent"] = False


def _plotlyjs_for_twin() -> bool:
    """Whether this figure's HTML twin must inline plotly.js itself."""
    mode = _plotlyjs["mode"]
    if mode == "inline":
        return True
    if mode != "once" or _plotlyjs["sent"]:
        return False
    _plotlyjs["sent"] = True
    slot = _plotlyjs["slot"]
    if slot is None:
        return True
    from IPython.display import HTML
    from plotly.offline import get_plotlyjs

    slot.update(HTML(f"<script type='text/javascript'>{get_plotlyjs()}</script>"))
    return False


class View:
    """Base of every workbench display object."""

    title: str = ""
    interactive: bool = False

    def text(self) -> str:
        """Deterministic plain text (what `repr` and nbval see)."""
        return self.title

    def html(self) -> str:
        """The static HTML twin (figures drawn only when plotly.js is available)."""
        return f"<pre>{_html.escape(self.text())}</pre>"

    def parts(self) -> list[View]:
        """The views shown as separate outputs (a panel: its children's parts)."""
        return [self]

    def has_figure(self) -> bool:
        return False

    def widget(self) -> Any:
        """The live ipywidgets form (default: this view's output in an Output)."""
        return output_of(self)

    def bundle(self) -> dict:
        """This view as one output's mime bundle."""
        data = {"text/plain": self.text(), "text/html": self.html()}
        if self.interactive:
            data.update(widget_bundle(self))
        return data

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict:
        return self.bundle()

    def show(self) -> None:
        """Display this part: one output, or for an interactive view the three of
        `live_outputs` (the live form, its saved twin, the rule that picks one)."""
        from IPython.display import display

        live = widget_bundle(self) if self.interactive else {}
        for data in live_outputs(live, self.saved_bundle()) if live else [self.bundle()]:
            display(data, raw=True)

    def saved_bundle(self) -> dict:
        """What stands in for the live form where no kernel draws it: this view without
        its widget (the figure as plotly JSON and its static twin, or the HTML)."""
        return {"text/plain": self.text(), "text/html": self.html()}

    def _ipython_display_(self) -> None:
        for part in self.parts():
            part.show()

    def __repr__(self) -> str:
        return self.text()


class Raw:
    """A fixed mime bundle as a displayable object (what Output widgets hold)."""

    def __init__(self, data: dict):
        self.data = data

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict:
        return self.data


def live_bundle(view: View) -> dict:
    """What a view shows inside a widget: no HTML twin when there is a figure (the
    plotly mimetype draws it; a twin would carry plotly.js a second time)."""
    if isinstance(view, FigureView):
        return view.figure_bundle()
    return {"text/plain": view.text(), "text/html": view.html()}


def output_of(view: View) -> Any:
    import ipywidgets as w

    if not view.has_figure():
        return w.HTML(view.html())
    out = w.Output()
    out.append_display_data(Raw(live_bundle(view)))
    return out


TWIN_CLASS = "pypto-twin-rule"
# a widget output that drew holds the widget's view (`.jupyter-widgets`: every live form
# is a box); one that did not holds bare text (untrusted or exported, the output is the
# text form instead: jp-RenderedText)
_WIDGET_OUT = ".jp-OutputArea-output:not(.jp-RenderedText)"
_RULE_NEXT = f"+ .jp-OutputArea-child .{TWIN_CLASS}"
#: Shown once per interactive view, after its live form and its saved twin: while the
#: live form draws (its widget output has content), the twin is hidden; when it cannot
#: (a notebook reopened without the widget state: JupyterLab writes "Error displaying
#: widget: model not found", or "Loading widget..." with no kernel, as bare text), the
#: live form is hidden and the twin shows. The rule's own output takes no room. Plain
#: CSS (`:has`), so it works in a trusted reopened notebook without any kernel or
#: extension; frontends that do not render the widget ignore it.
TWIN_RULE = (
    f"<style class='{TWIN_CLASS}'>"
    f".jp-OutputArea-child:has(> {_WIDGET_OUT} > .jupyter-widgets)"
    f" + .jp-OutputArea-child:has({_RULE_NEXT}){{display:none}}"
    f".jp-OutputArea-child:has(> {_WIDGET_OUT}):not(:has(> .jp-OutputArea-output > *))"
    f":has(+ .jp-OutputArea-child {_RULE_NEXT}){{display:none}}"
    f".jp-OutputArea-child:has(.{TWIN_CLASS}){{display:none}}</style>")


def live_outputs(live: dict, saved: dict) -> list[dict]:
    """An interactive view as three outputs: the widget view alone (its text form is
    empty: nbconvert and GitHub show the text of a widget whose state was not saved),
    the saved twin (`saved`, with the text form), and `TWIN_RULE`, which shows one of
    the two. JupyterLab renders the richest mimetype of an output, so the widget and a
    static figure in one output would show the widget's error once its model is gone."""
    return [{"text/plain": "", **live}, saved,
            {"text/plain": "", "text/html": TWIN_RULE}]


def widget_bundle(view: View) -> dict:
    try:
        widget = view.widget()
    except ImportError:
        return {}
    return {k: v for k, v in widget._repr_mimebundle_().items() if k != "text/plain"}


class HtmlView(View):
    """A fixed piece of HTML with its text twin."""

    def __init__(self, title: str, text: str, html: str):
        self.title = title
        self._text = text
        self._html = html

    def text(self) -> str:
        return self._text

    def html(self) -> str:
        return self._html


class FigureView(View):
    """A plotly figure with a text summary. `spec` is the figure as plotly JSON (arrays
    as base64 typed arrays); `.figure` builds a `go.Figure` from it on demand."""

    def __init__(self, figure: Any, title: str, summary: str = ""):
        self._spec = figure if isinstance(figure, dict) else None
        self._figure = None if isinstance(figure, dict) else figure
        self.title = title
        self.summary = summary

    @property
    def spec(self) -> dict:
        if self._spec is None:
            self._spec = json.loads(self._figure.to_json())
        return self._spec

    @property
    def figure(self) -> Any:
        if self._figure is None:
            import plotly.graph_objects as go

            self._figure = go.Figure(self._spec)
        return self._figure

    @property
    def trace_count(self) -> int:
        return len(self.spec.get("data", ()))

    def has_figure(self) -> bool:
        return True

    def text(self) -> str:
        head = f"<{self.title}: {self.trace_count} traces>"
        return f"{head}\n{self.summary}" if self.summary else head

    def svg(self) -> str:
        """The figure as a static SVG (`figures.static_svg`): what shows where plotly.js
        does not run."""
        from pypto_lab.figures.static_svg import figure_svg

        return figure_svg(self.spec)

    def html(self) -> str:
        if plotlyjs_mode() == "none":
            return f"<div class='pypto-figure'>{self.svg()}</div>"
        return figure_html(self.spec, _plotlyjs_for_twin(), self.svg())

    def figure_bundle(self) -> dict:
        """Plotly's own mimetype and the text form (what an Output widget holds)."""
        return {"text/plain": self.text(), PLOTLY_MIME: {**self.spec, "config": _PLOTLY_CONFIG}}

    def static_bundle(self) -> dict:
        """The figure as one output: plotly mimetype (JupyterLab, VS Code), text, and
        for everything else (nbconvert, nbviewer, GitHub) the figure drawn by plotly.js
        over its static SVG, or without plotly.js (`"none"`) the SVG itself as an image."""
        if plotlyjs_mode() == "none":
            return {**self.figure_bundle(), "image/svg+xml": self.svg()}
        return {**self.figure_bundle(), "text/html": self.html()}

    def bundle(self) -> dict:
        data = self.static_bundle()
        if self.interactive:
            data.update(widget_bundle(self))
        return data

    def saved_bundle(self) -> dict:
        return self.static_bundle()

    def to_dict(self) -> dict:
        return self.spec


def figure_html(spec: dict, include_js: bool, static: str = "") -> str:
    """A `<div>` drawing `spec` with plotly.js (inlined when `include_js`; never a CDN).
    Without plotly.js on the page (a page that strips scripts, or never got plotly.js)
    the div shows `static` (the figure's SVG), or says what is missing. The div id is a
    hash of the figure, so the HTML is the same on every run."""
    payload = json.dumps(spec, separators=(",", ":"))
    div_id = "pypto-" + hashlib.sha1(payload.encode()).hexdigest()[:12]
    lib = ""
    if include_js:
        from plotly.offline import get_plotlyjs

        lib = f"<script type='text/javascript'>{get_plotlyjs()}</script>"
    data = payload.replace("</", "<\\/")
    config = json.dumps(_PLOTLY_CONFIG)
    missing = "" if static else "d.textContent='(figure: plotly.js is not loaded on this page)';"
    return (f"{lib}<div id='{div_id}' class='plotly-graph-div'>{static}</div><script>(function(){{"
            f"var d=document.getElementById('{div_id}'),f={data};"
            f"if(window.Plotly){{d.textContent='';Plotly.newPlot(d,f.data,f.layout,{config});}}"
            f"else{{{missing}}}"
            f"}})();</script>")


class Panel(View):
    """Views stacked under a heading; shown as one output per part in IPython."""

    def __init__(self, title: str, parts: list[View], header_html: str = "",
                 header_text: str = ""):
        self.title = title
        self.children = parts
        self.header_html = header_html
        self.header_text = header_text

    @property
    def interactive(self) -> bool:  # type: ignore[override]
        return any(p.interactive or p.has_figure() for p in self.children)

    def parts(self) -> list[View]:
        """The children's parts; the heading joins the first one when that is plain
        HTML (one output, not a heading alone)."""
        parts = [q for p in self.children for q in p.parts()]
        if not self.header_html:
            return parts
        first = parts[0] if parts else None
        if first is not None and not first.has_figure() and not first.interactive:
            joined = HtmlView(first.title, f"{self.header_text}\n{first.text()}",
                              self.header_html + first.html())
            return [joined] + parts[1:]
        return [HtmlView(self.title, self.header_text, self.header_html)] + parts

    def text(self) -> str:
        chunks = [self.header_text or self.title] + [p.text() for p in self.children]
        return "\n\n".join(c for c in chunks if c)

    def html(self) -> str:
        return ("<div class='pypto-panel'>" + self.header_html
                + "".join(p.html() for p in self.children) + "</div>")

    def has_figure(self) -> bool:
        return any(p.has_figure() for p in self.children)

    def widget(self) -> Any:
        import ipywidgets as w

        kids = [w.HTML(self.header_html)] if self.header_html else []
        kids += [p.widget() if p.interactive else output_of(p)
                 for child in self.children for p in child.parts()]
        return w.VBox(kids)


def table_html(rows: list[list[str]], header: list[str]) -> str:
    """A compact HTML table (cells are already escaped HTML)."""
    th = "".join(f"<th style='text-align:left;padding:2px 8px'>{h}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td style='text-align:left;padding:2px 8px'>{c}</td>"
                                    for c in r) + "</tr>" for r in rows)
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
