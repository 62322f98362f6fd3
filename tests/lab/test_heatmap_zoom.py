"""Zooming or clicking a pooled heatmap shows the full-resolution window (issue 12, item 2).

The events go through the live figure's own message handler, as JupyterLab delivers
them; what is asserted is the figure the widget then holds (its title, its resolution,
its values against the run's arrays) and the window controls.
"""
from __future__ import annotations

import numpy as np
import pytest
from lab_cells import PARTIAL, needs_sim

import pypto_lab
from pypto_lab.args import MagicArgs
from pypto_lab.figures.typed import decode
from pypto_lab.heatmap_explorer import click_window, is_pooled, zoom_window
from pypto_lab.session import run_cell

pytest.importorskip("anywidget")


def test_zoom_window_covers_the_cells_in_the_ranges():
    # element c is drawn over [c-0.5, c+0.5]: a range ending at 10.2 shows column 10
    assert zoom_window((512, 256), [3.7, 10.2], [99.5, 20.1]) == (20, 100, 4, 11)
    assert zoom_window((512, 256), [-0.5, 255.5], [511.5, -0.5]) is None  # all of it
    assert zoom_window((512, 256), [-40, 300], [-9, 600]) is None  # clamped: all of it
    assert zoom_window((512, 256), [300, 400], [0, 10]) is None  # off the plane


def test_click_window_is_aligned_and_inside_the_plane():
    assert click_window((512, 512), x=5, y=300) == (208, 368, 0, 160)
    assert click_window((512, 512), x=511, y=511) == (352, 512, 352, 512)
    assert click_window((100, 2048), x=1000, y=50) == (0, 100, 912, 1072)


def test_is_pooled():
    assert is_pooled((512, 512), None) and not is_pooled((160, 160), None)
    assert not is_pooled((512, 512), (0, 160, 0, 160)) and is_pooled((512, 512), (0, 512, 0, 100))


@pytest.fixture(scope="module")
def big_run():
    # 512x512, rows 496:512 never written
    cell = PARTIAL.replace("64", "512").replace("pl.parallel(0, 48, 16)",
                                                "pl.parallel(0, 496, 16)")
    return run_cell(cell, MagicArgs(specs="specs", golden="golden"), {}).run


def _live(view):
    box = view.widget()
    controls, fig, hint = box.children
    return controls, fig, hint


def _send(fig, **event):
    fig._on_message(fig, event, [])


def _title(fig) -> str:
    return fig.figure["layout"]["title"]["text"]


def _trace(fig, name):
    return next(t for t in fig.figure["data"] if t.get("name") == name)


@needs_sim
class TestLiveHeatmap:
    def test_zoom_on_the_pooled_map_draws_the_window_at_full_resolution(self, big_run):
        controls, fig, hint = _live(pypto_lab.heatmap(big_run))
        assert "each cell the worst of a 4×4 block" in _title(fig)
        assert hint.layout.display == ""  # the hint shows for a pooled map
        _send(fig, kind="zoom", x=[99.6, 180.4], y=[480.2, 511.5])
        assert "rows 480:512, cols 100:181" in _title(fig)
        assert "worst of" not in _title(fig)
        never = _trace(fig, "never written")
        assert never["dx"] == 1 and never["dy"] == 1 and never["y0"] == 496
        err = _trace(fig, "error")
        assert err["dx"] == 1 and err["x0"] == 100 and err["y0"] == 480
        # the window's values are the run's own, element for element
        out = big_run.output("y")
        writer = next(t for t in fig.figure["data"]
                      if t["type"] == "heatmap" and t["name"] not in ("never written", "error"))
        cd = decode(writer["customdata"])
        assert writer["y0"] == 480 and writer["x0"] == 100 and writer["dx"] == 1
        np.testing.assert_array_equal(cd[:, :, 0], out.expected[480:496, 100:181])
        np.testing.assert_array_equal(cd[:, :, 1], out.actual[480:496, 100:181])
        # the window controls follow the zoom
        full, _, row, col = controls.children[2].children
        assert full.value and (row.value, col.value) == (480, 100)

    def test_a_larger_zoom_pools_more_finely(self, big_run):
        _, fig, _ = _live(pypto_lab.heatmap(big_run))
        _send(fig, kind="zoom", x=[-0.5, 319.5], y=[-0.5, 319.5])
        assert "rows 0:320, cols 0:320" in _title(fig)
        assert "each cell the worst of a 2×2 block" in _title(fig)

    def test_click_on_a_pooled_cell_opens_its_window(self, big_run):
        _, fig, _ = _live(pypto_lab.heatmap(big_run))
        _send(fig, kind="click", x=201.5, y=498.5)  # a pooled cell's centre
        assert "rows 352:512, cols 112:272" in _title(fig)
        assert _trace(fig, "never written")["dx"] == 1

    def test_full_resolution_maps_zoom_in_the_page_only(self, big_run):
        _, fig, _ = _live(pypto_lab.heatmap(big_run))
        _send(fig, kind="click", x=10, y=10)
        window = fig.figure
        # a full-resolution map: plotly zooms it in the page, the kernel has nothing to add
        _send(fig, kind="zoom", x=[10, 20], y=[10, 20])
        _send(fig, kind="click", x=12, y=12)
        assert fig.figure is window

    def test_double_click_goes_back_to_the_whole_output(self, big_run):
        controls, fig, _ = _live(pypto_lab.heatmap(big_run))
        whole = _title(fig)
        _send(fig, kind="zoom", x=[0, 50], y=[0, 50])
        assert _title(fig) != whole
        _send(fig, kind="reset")
        assert _title(fig) == whole and not controls.children[2].children[0].value

    def test_metric_switch_keeps_the_zoomed_window(self, big_run):
        controls, fig, _ = _live(pypto_lab.heatmap(big_run))
        _send(fig, kind="zoom", x=[0, 50], y=[470, 511])
        metric = controls.children[0].children[2]
        metric.value = "task"
        assert "rows 470:512, cols 0:51" in _title(fig) and "writer task" in _title(fig)

    def test_a_small_map_offers_no_hint(self):
        from lab_cells import PARTIAL as small

        run = run_cell(small, MagicArgs(specs="specs", golden="golden"), {}).run
        _, fig, hint = _live(pypto_lab.heatmap(run))
        assert hint.layout.display == "none"
        before = fig.figure
        _send(fig, kind="zoom", x=[0, 10], y=[0, 10])
        assert fig.figure is before


def test_the_page_gets_plotlyjs_once_from_the_kernel(monkeypatch):
    from pypto_lab.live_figure import LiveFigure

    fig = LiveFigure({"data": [], "layout": {}})
    sent = []
    monkeypatch.setattr(fig, "send", lambda content, buffers=None: sent.append(
        (content, buffers)))
    _send(fig, kind="plotlyjs")
    ((content, buffers),) = sent
    assert content == {"kind": "plotlyjs"}
    assert len(buffers[0]) > 1_000_000 and b"Plotly" in buffers[0][:5000]
    # the figure itself travels without plotly.js
    assert "Plotly.newPlot" in fig._esm and len(fig._esm) < 5000
