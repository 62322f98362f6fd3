"""A notebook saved after a run keeps every figure (issue 29, item 1).

* an interactive view is three outputs (`views.live_outputs`): the widget alone, its
  saved twin, the CSS rule choosing between them (JupyterLab itself: tests/browser/);
* `jupyter nbconvert --to html` of a notebook executed with a `%%pypto --show heatmap`
  cell shows every figure as a static image, the heatmap's cells included, without a
  kernel.
"""
from __future__ import annotations

import base64
import json
import re

import pytest
from lab_cells import PARTIAL
from svg_pixels import composite, hex_rgb

from pypto_lab.figures.static_svg import CLASS
from pypto_lab.figures.style import PASS_COLOR, UNWRITTEN_COLOR
from pypto_lab.views import TWIN_CLASS, WIDGET_MIME, live_outputs

PLOTLY_MIME = "application/vnd.plotly.v1+json"


def test_live_outputs_are_widget_twin_rule():
    live = {WIDGET_MIME: {"model_id": "m", "version_major": 2, "version_minor": 0}}
    saved = {"text/plain": "<f: 1 traces>", PLOTLY_MIME: {}, "image/svg+xml": "<svg/>"}
    a, b, rule = live_outputs(live, saved)
    assert a == {"text/plain": "", **live}, "nbconvert shows the widget's text: none"
    assert b is saved and WIDGET_MIME not in b
    assert TWIN_CLASS in rule["text/html"] and rule["text/plain"] == ""
    assert ":has(" in rule["text/html"] and "display:none" in rule["text/html"]


# --- a real kernel, then nbconvert ------------------------------------------------------

HEATMAP_CELL = "%%pypto --run specs golden --show heatmap" + PARTIAL


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """A notebook as a user saves it: `set_plotlyjs("none")` (the tutorials' setting)
    and one heatmap cell, executed in a real kernel."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    if not _sim():
        pytest.skip("pypto.sim not available yet")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell('%load_ext pypto_lab\nimport pypto_lab\n'
                                          'pypto_lab.set_plotlyjs("none")'),
                nbformat.v4.new_code_cell(HEATMAP_CELL)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    path = tmp_path_factory.mktemp("export")
    nbclient.NotebookClient(nb, timeout=180, kernel_name="python3",
                            resources={"metadata": {"path": str(path)}}).execute()
    return nb


def _sim() -> bool:
    from lab_cells import simulator_available

    return simulator_available()


def test_a_heatmap_cell_stores_widget_twin_and_rule(executed):
    outs = [o for o in executed.cells[1].outputs if o.output_type == "display_data"]
    kinds = [("widget" if WIDGET_MIME in o.data else "rule" if TWIN_CLASS in
              o.data.get("text/html", "") else "figure" if "image/svg+xml" in o.data
              else "html")
             for o in outs]
    i = kinds.index("widget")
    assert kinds[i:i + 3] == ["widget", "figure", "rule"], kinds
    twin = outs[i + 1].data
    assert twin["text/plain"].startswith("<heatmap partial.y:")
    # the map as an SVG, not its plotly JSON again (the live widget has that)
    assert set(twin) == {"text/plain", "image/svg+xml"}
    assert "pypto-static-figure" in twin["image/svg+xml"]
    assert len(json.dumps(twin)) < 60_000
    assert len(json.dumps(outs[i].data)) < 500, "the widget output holds no figure"


def test_nbconvert_html_shows_every_figure_without_a_kernel(executed):
    nbconvert = pytest.importorskip("nbconvert")
    body, _ = nbconvert.HTMLExporter().from_notebook_node(executed)
    heads = [m for o in executed.cells[1].outputs
             for m in re.findall(r"^<[^<>\n]+: \d+ traces>", o.get("data", {}).get(
                 "text/plain", ""), re.M)]
    assert any(h.startswith("<heatmap partial.y") for h in heads)
    svgs = [base64.b64decode(s).decode() for s in
            re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', body)]
    static = [s for s in svgs if f"class='{CLASS}'" in s]
    assert len(static) == len(heads), (heads, len(static))
    (heat,) = [s for s in static if "1024/4096 failing" in s]
    top = composite(heat)
    assert top.shape == (64, 64, 3) and (top[:48] == hex_rgb(PASS_COLOR)).all()
    assert (top[48:] == hex_rgb(UNWRITTEN_COLOR)).all()
    # the widget contributed no text, and nothing says a widget is missing
    assert "Error displaying widget" not in body and "VBox(" not in body
    # and no figure fell back to its text form
    assert "&lt;heatmap partial.y:" not in body
