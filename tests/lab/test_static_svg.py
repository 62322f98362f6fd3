"""`figures.static_svg`: a figure spec drawn as a static SVG, the stand-in for a figure
wherever plotly.js does not run (issue 29, item 1). Asserted on values: the pixels of the
heatmap's embedded PNGs, the positions and count of the drawn marks."""
from __future__ import annotations

import re

import numpy as np
import pytest
from lab_cells import PARTIAL, needs_sim
from svg_pixels import composite, hex_rgb, images, read_png

from pypto_lab.args import MagicArgs
from pypto_lab.figures.heatmap import heatmap_figure
from pypto_lab.figures.static_svg import CLASS, MAX_MARKS, figure_svg, png_bytes
from pypto_lab.figures.style import PASS_COLOR, UNWRITTEN_COLOR
from pypto_lab.session import run_cell


def test_png_round_trip_keeps_every_pixel():
    rng = np.random.default_rng(1)
    rgba = rng.integers(0, 256, (7, 5, 4), dtype=np.uint8)
    assert np.array_equal(read_png(png_bytes(rgba)), rgba)


def test_heatmap_layers_draw_through_their_colour_scales_nan_transparent():
    z = np.array([[0.0, 1.0], [np.nan, 0.5]])
    spec = {"data": [{"type": "heatmap", "z": z.tolist(), "zmin": 0, "zmax": 1,
                      "colorscale": [[0, "#000000"], [1, "#ffffff"]]}],
            "layout": {"width": 300, "height": 300}}
    svg = figure_svg(spec)
    ((box, px),) = images(svg)
    assert px.shape == (2, 2, 4)
    # an autoranged y axis grows upward, as in plotly: z's row 0 is the image's bottom
    assert px[1, 0, :3].tolist() == [0, 0, 0] and px[1, 1, :3].tolist() == [255, 255, 255]
    assert px[0, 1, :3].tolist() == [128, 128, 128]
    assert px[0, 0, 3] == 0 and px[1, 0, 3] == 255  # NaN: a gap, as in plotly
    assert f"class='{CLASS}'" in svg and box[2] > 100 and box[3] > 100


@needs_sim
def test_mismatch_heatmap_svg_shows_the_unwritten_rows():
    """PARTIAL never writes rows 48:64: in the static heatmap those rows are the
    unwritten colour and rows 0:48 the pass grey, cell for cell."""
    run = run_cell(PARTIAL, MagicArgs(specs="specs", golden="golden"), {}).run
    fig = heatmap_figure(run.output("y"), "abs")
    svg = figure_svg(fig)
    top = composite(svg)
    assert top.shape == (64, 64, 3)
    assert (top[:48] == hex_rgb(PASS_COLOR)).all()
    assert (top[48:] == hex_rgb(UNWRITTEN_COLOR)).all()
    # the title (two lines) and the outline of the unwritten rows
    assert "1024/4096 failing" in svg and "unwritten pl.Out [48:64, 0:64]" in svg
    assert len(svg) < 60_000


def test_scatter_marks_are_bounded():
    n = 20_000
    spec = {"data": [{"type": "scatter", "mode": "markers", "x": list(range(n)),
                      "y": [float(i % 7) for i in range(n)]}], "layout": {}}
    svg = figure_svg(spec)
    assert svg.count("<circle") == MAX_MARKS
    assert len(svg) < 150_000


def test_timeline_bars_land_on_their_lanes():
    """Horizontal bars with a base (the timeline's form) on a category axis."""
    spec = {"data": [{"type": "bar", "orientation": "h", "y": ["a", "b"], "x": [2.0, 1.0],
                      "base": [0.0, 3.0]}],
            "layout": {"width": 400, "height": 300, "margin": {"l": 40, "r": 20, "t": 40,
                                                               "b": 30},
                       "xaxis": {"range": [0, 4]},
                       "yaxis": {"type": "category", "categoryarray": ["a", "b"]}}}
    svg = figure_svg(spec)
    rects = [tuple(float(v) for v in m.groups()) for m in re.finditer(
        r"<rect x='([\d.]+)' y='([\d.]+)' width='([\d.]+)' height='([\d.]+)' fill='#1f77b4'",
        svg)]
    (x0, ya, w0, _), (x1, yb, w1, _) = rects
    plot_w = 400 - 40 - 20
    assert x0 == pytest.approx(40) and w0 == pytest.approx(plot_w / 2, abs=0.2)
    assert x1 == pytest.approx(40 + plot_w * 3 / 4, abs=0.2)
    assert w1 == pytest.approx(plot_w / 4, abs=0.2)
    assert ya > yb, "the first category is the bottom lane, as in plotly"


def test_a_log_axis_places_points_by_their_log_and_labels_powers_of_ten():
    """The precision ladder's axis: 1e-3 sits half as far up as 1e-5 is from 1e-2 down
    (range 1e-6..1e-2 in log10 units), and a shape at 1e-4 (data units) and an annotation
    at -4 (log10 units, as plotly takes it) land on the same row."""
    import re

    from pypto_lab.figures.static_svg import figure_svg
    spec = {"data": [{"type": "scatter", "mode": "markers", "x": [0, 1], "y": [1e-3, 1e-5]}],
            "layout": {"yaxis": {"type": "log", "range": [-6, -2]},
                       "shapes": [{"type": "line", "xref": "paper", "x0": 0, "x1": 1,
                                   "y0": 1e-4, "y1": 1e-4}],
                       "annotations": [{"xref": "paper", "x": 0.5, "y": -4, "text": "mark",
                                        "showarrow": False}]}}
    svg = figure_svg(spec)
    ys = [float(y) for y in re.findall(r"<circle[^>]*cy='([0-9.]+)'", svg)]
    assert len(ys) == 2 and ys[0] < ys[1]
    line_y = float(re.search(r"<line x1='[0-9.]+' y1='([0-9.]+)'", svg).group(1))  # the shape
    mark_y = float(re.search(r"<text[^>]*y='([0-9.]+)'[^>]*>mark</text>", svg).group(1))
    # 1e-4 is midway between 1e-3 and 1e-5 on a log axis
    assert abs(line_y - (ys[0] + ys[1]) / 2) < 1.0
    assert mark_y == line_y
    assert "1e-3" in svg and "1e-5" in svg
