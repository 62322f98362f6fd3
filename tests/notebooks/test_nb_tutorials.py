"""The committed tutorials match their generator, carry small outputs, and the
`set_plotlyjs` option they rely on does what it says. (nbval runs the notebooks
themselves: see testpaths/addopts in pyproject.toml.)"""
from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
NB_DIR = ROOT / "notebooks"


def _builder():
    spec = importlib.util.spec_from_file_location("build_notebooks",
                                                  ROOT / "tools" / "build_notebooks.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


BUILDER = _builder()
NAMES = list(BUILDER.NOTEBOOKS)


def test_every_tutorial_is_committed_and_nothing_else():
    assert sorted(p.name for p in NB_DIR.glob("*.ipynb")) == sorted(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_committed_notebook_matches_its_generator(name):
    want = BUILDER.notebook(BUILDER.NOTEBOOKS[name])
    have = nbformat.read(NB_DIR / name, as_version=4)
    assert [(c.cell_type, c.source, c.metadata.get("tags", [])) for c in have.cells] == \
        [(c.cell_type, c.source, c.metadata.get("tags", [])) for c in want.cells], \
        "regenerate: python tools/build_notebooks.py --execute " + name


@pytest.mark.parametrize("name", NAMES)
def test_committed_with_small_outputs(name):
    path = NB_DIR / name
    nb = nbformat.read(path, as_version=4)
    # figures are kept as plotly JSON (they draw again when the notebook is reopened);
    # plotly.js and widget state never
    assert path.stat().st_size < 1_000_000
    assert "widgets" not in nb.metadata
    text = path.read_text()
    assert "plotly.js v" not in text and "https://cdn" not in text
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code), "execute before committing"
    for c in code:
        assert not any(o.output_type == "error" for o in c.outputs), c.source[:60]
        if BUILDER.CHECK in c.metadata.get("tags", []):
            assert c.outputs, f"checked cell without a stored output: {c.source[:60]}"
            assert not c.source.startswith("%%"), "magic cells may show a progress bar"


@pytest.mark.parametrize("name", NAMES)
def test_reads_as_a_sequence(name):
    nb = nbformat.read(NB_DIR / name, as_version=4)
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# ")
    first_code = next(c for c in nb.cells if c.cell_type == "code")
    assert "%load_ext pypto_lab" in first_code.source
    assert 'set_plotlyjs("none")' in first_code.source
    for link in re.findall(r"\]\(([^)#]+\.(?:ipynb|py))\)", "".join(
            c.source for c in nb.cells if c.cell_type == "markdown")):
        assert (NB_DIR / link).exists(), f"broken link {link}"


def test_sanitize_file_parses():
    from nbval.plugin import get_sanitize_patterns

    pats = get_sanitize_patterns((NB_DIR / "nbval_sanitize.cfg").read_text())
    assert len(pats) >= 5

    def clean(s):
        for regex, repl in pats:
            s = re.sub(regex, repl, s)
        return s

    assert clean("PASS k on a2a3sim in 0.08s") == clean("PASS k on a2a3sim in 12.50s")
    assert clean("[RUN] PASS (0.27s)") == clean("[RUN] PASS (1.20s)")
    assert clean("<pypto-cell-3>:9:33") == clean("<pypto-cell-12>:9:33") == \
        clean("<pypto-cell-12.2>:9:33")
    assert clean("makespan 0.284 us") == "makespan 0.284 us"


@pytest.mark.parametrize("name", NAMES)
def test_nbconvert_html_shows_every_figure_without_a_kernel(name):
    """`jupyter nbconvert --to html` of the committed tutorial: every figure it stores
    (one `<...: N traces>` text form each) is drawn as a static SVG image, and none
    shows as its text form or as a missing widget."""
    import base64

    nbconvert = pytest.importorskip("nbconvert")
    nb = nbformat.read(NB_DIR / name, as_version=4)
    heads = [h for c in nb.cells if c.cell_type == "code" for o in c.outputs
             for h in re.findall(r"^<[^<>\n]+: \d+ traces>",
                                 o.get("data", {}).get("text/plain", ""), re.M)]
    body, _ = nbconvert.HTMLExporter().from_notebook_node(nb)
    svgs = [base64.b64decode(s).decode() for s in
            re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', body)]
    static = [s for s in svgs if "class='pypto-static-figure'" in s]
    assert len(static) == len(heads), f"{len(heads)} figures, {len(static)} drawn statically"
    # each drew something: a trace or a shape group with marks in it
    assert all(re.search(r"<g class='(trace|shape)'><(rect|image|polyline|circle|polygon)",
                         s) for s in static)
    assert "Error displaying widget" not in body
    # no figure output shows its text form (a cell may print a figure's text on
    # purpose: nbconvert renders stdout the same way, so those are counted out)
    printed = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
               if o.output_type == "stream" and re.match(r"<[^<>\n]+: \d+ traces>", o.text)]
    as_text = re.findall(r'data-mime-type="text/plain"[^>]*>\s*<pre>&lt;[^&]+: \d+ traces&gt;',
                         body)
    assert len(as_text) == len(printed), "a figure shown as its text form"


# --- the plotly.js option --------------------------------------------------------------


@pytest.fixture
def plotlyjs():
    pytest.importorskip("plotly")
    from pypto_lab import views

    saved = dict(views._plotlyjs)
    yield views
    views._plotlyjs.clear()
    views._plotlyjs.update(saved)


def _fig_view(views, title="t"):
    import plotly.graph_objects as go

    return views.FigureView(go.Figure(go.Scatter(x=[1, 2], y=[3, 4])), title, "summary")


class _Slot:
    def __init__(self):
        self.sent = []

    def update(self, obj):
        self.sent.append(obj.data)


def test_once_is_the_default_and_sends_plotlyjs_to_the_load_ext_output(plotlyjs):
    assert plotlyjs.DEFAULT_PLOTLYJS == "once"
    plotlyjs.set_plotlyjs("once")
    slot = plotlyjs._plotlyjs["slot"] = _Slot()
    first = _fig_view(plotlyjs)._repr_mimebundle_()
    second = _fig_view(plotlyjs, "u")._repr_mimebundle_()
    assert len(slot.sent) == 1 and len(slot.sent[0]) > 1_000_000  # once, to %load_ext's output
    for b in (first, second):
        assert len(json.dumps(b)) < 20_000 and "Plotly.newPlot" in b["text/html"]
        assert "application/vnd.plotly.v1+json" in b


def test_once_without_load_ext_inlines_plotlyjs_in_the_first_figure_only(plotlyjs):
    plotlyjs.set_plotlyjs("once")
    plotlyjs._plotlyjs["slot"] = None
    first = _fig_view(plotlyjs).html()
    second = _fig_view(plotlyjs, "u").html()
    assert len(first) > 1_000_000 and len(second) < 10_000 and "Plotly.newPlot" in second


def test_inline_inlines_every_figure(plotlyjs):
    plotlyjs.set_plotlyjs("inline")
    for title in ("t", "u"):
        b = _fig_view(plotlyjs, title)._repr_mimebundle_()
        assert "application/vnd.plotly.v1+json" in b and len(b["text/html"]) > 1_000_000


def test_none_drops_plotlyjs_and_keeps_the_mimetype(plotlyjs):
    import pypto_lab

    pypto_lab.set_plotlyjs("none")
    view = _fig_view(plotlyjs)
    b = view._repr_mimebundle_()
    # no HTML twin: nbconvert and GitHub take the static SVG, JupyterLab the mimetype
    assert set(b) == {"text/plain", "image/svg+xml", "application/vnd.plotly.v1+json"}
    assert "<script" not in b["image/svg+xml"] and "pypto-static-figure" in b["image/svg+xml"]
    assert b["image/svg+xml"].count("<circle") == 2  # the two points
    assert len(json.dumps(b)) < 20_000  # the default template; workbench figures use none
    panel = plotlyjs.Panel("p", [plotlyjs.HtmlView("h", "text", "<b>x</b>"), view])
    pb = panel._repr_mimebundle_()
    assert "<script" not in pb["text/html"] and "pypto-static-figure" in pb["text/html"]
    assert "application/vnd.jupyter.widget-view+json" in pb, "figures still draw live"


def test_a_panel_shows_each_figure_as_its_own_plotly_output(plotlyjs):
    """The cause of figures drawn as text: a panel inside a panel reached its figures'
    HTML twin. Now every figure, however deep, is its own output with the mimetype."""
    plotlyjs.set_plotlyjs("none")
    inner = plotlyjs.Panel("graphs", [_fig_view(plotlyjs, "a"), _fig_view(plotlyjs, "b")])
    outer = plotlyjs.Panel("cell", [plotlyjs.HtmlView("s", "summary", "<b>s</b>"), inner],
                           header_html="<i>head</i>", header_text="head")
    bundles = [p.bundle() for p in outer.parts()]
    assert len(bundles) == 3 and bundles[0]["text/html"] == "<i>head</i><b>s</b>"
    assert all("application/vnd.plotly.v1+json" in b for b in bundles[1:])


def test_widgets_never_carry_plotlyjs(plotlyjs):
    """Inside a widget a figure is the plotly mimetype alone: no HTML twin, so no
    plotly.js per figure (the old default inlined it in every one)."""
    plotlyjs.set_plotlyjs("inline")
    panel = plotlyjs.Panel("p", [_fig_view(plotlyjs, "a"), _fig_view(plotlyjs, "b")])
    outputs = [o for box in panel.widget().children for o in box.outputs]
    assert len(outputs) == 2
    assert all(set(o["data"]) == {"text/plain", "application/vnd.plotly.v1+json"}
               for o in outputs)


def test_unknown_mode_is_rejected(plotlyjs):
    with pytest.raises(ValueError, match="once, inline, none"):
        plotlyjs.set_plotlyjs("cdn")


def test_once_mode_in_a_real_kernel(tmp_path):
    """Default mode in a notebook: plotly.js lands once, in the output %load_ext opened;
    the cell showing a figure stays small and its HTML twin draws with that plotly.js."""
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("%load_ext pypto_lab\nimport pypto_lab"),
                nbformat.v4.new_code_cell(
                    "import plotly.graph_objects as go\nfrom pypto_lab.views import FigureView\n"
                    "FigureView(go.Figure(go.Scatter(x=[1, 2], y=[3, 4])), 'f', 'summary')"),
                nbformat.v4.new_code_cell(
                    "FigureView(go.Figure(go.Scatter(x=[1, 2], y=[4, 3])), 'g', 'summary')")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    sizes = [len(json.dumps(c.outputs)) for c in nb.cells]
    assert sizes[0] > 1_000_000, "plotly.js went into the %load_ext output"
    assert sizes[1] < 20_000 and sizes[2] < 20_000
    for c in nb.cells[1:]:
        (out,) = c.outputs
        assert "application/vnd.plotly.v1+json" in out["data"]
        assert "Plotly.newPlot" in out["data"]["text/html"]
