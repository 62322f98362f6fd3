"""Issue 12 item 6: graphs worth reading. The tasks of a run over the output's tiles
with their estimated cost and dependencies; a mixed region's data path with buffer
sizes; the ping-pong schematic with the kernel's own tile count; labels that do not
sit on nodes; hover text escaped once."""
from __future__ import annotations

import numpy as np
import pytest
from lab_cells import MIXED, MIXED_RUN, PARTIAL, needs_sim

import pypto_lab
from pypto_lab.args import MagicArgs
from pypto_lab.figures.typed import decode
from pypto_lab.session import run_cell


def _child(view, prefix):
    return next(v for v in view.children if v.title.startswith(prefix)).to_dict()


@pytest.fixture(scope="module")
def mixed():
    return run_cell(MIXED, MagicArgs(), {}).kernels[0]


@needs_sim
def test_tasks_laid_over_the_output_tiles_with_their_cost():
    k = run_cell(PARTIAL, MagicArgs(specs="specs", golden="golden"), {}).kernels[0]
    fig = _child(pypto_lab.show_graph(k), "task grid")
    boxes = sorted((s["y0"], s["y1"], s["x0"], s["x1"]) for s in fig["layout"]["shapes"])
    assert boxes == [(-0.5, 15.5, -0.5, 63.5), (15.5, 31.5, -0.5, 63.5),
                     (31.5, 47.5, -0.5, 63.5)]
    labels = sorted(a["text"] for a in fig["layout"]["annotations"] if "ax" not in a)
    assert labels == ["#0", "#1", "#2"]
    marker, layer, key = fig["data"]
    assert all("estimate:" in h and "cycles" in h for h in marker["hovertext"])
    # rows 48:64 nobody wrote: a magenta layer over them, and a legend entry
    z = decode(layer["z"])
    assert layer["name"] == "never written" and z.shape == (64, 64)
    assert np.isfinite(z[48:]).all() and np.isnan(z[:48]).all()
    assert key["name"] == "never written (1,024)"
    title = fig["layout"]["title"]["text"]
    assert "3 task block(s) over y's 64x64 tile space" in title  # its true shape
    assert "1,024 element(s) no task wrote" in title


TWO_OUTPUTS = '''
import numpy as np
import pypto.language as pl
from pypto.golden import TensorSpec

N, D, T = 128, 128, 32

@pl.jit
def stats_and_scale(x: pl.Tensor[[N, D], pl.FP32], s: pl.Out[pl.Tensor[[N, 1], pl.FP32]],
                    y: pl.Out[pl.Tensor[[200, D], pl.FP32]]):
    for r in pl.parallel(0, N, T):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="stats"):
            s[r : r + T, :] = pl.row_sum(x[r : r + T, :])
    for b in pl.spmd(N // T, name_hint="scale"):
        y[b * T : b * T + T, :] = pl.mul(x[b * T : b * T + T, :], 2.0)
    return s, y

specs = [TensorSpec("x", [N, D], np.float32, init_value=lambda: np.ones((N, D))),
         TensorSpec("s", [N, 1], np.float32, is_output=True),
         TensorSpec("y", [200, D], np.float32, is_output=True)]
'''


@needs_sim
def test_every_output_gets_a_grid_at_its_true_shape():
    """Issue 29 item 3: the second output's blocks were missing, a 128x1 output was a
    one-pixel strip, and a 200x128 output read as the 128x128 that was written."""
    k = run_cell(TWO_OUTPUTS, MagicArgs(specs="specs"), {}).kernels[0]
    views = [v for v in pypto_lab.show_graph(k).children if v.title.startswith("task grid")]
    assert [v.title.rsplit(" · ", 1)[1] for v in views] == ["s", "y"]
    s_fig, y_fig = (v.to_dict() for v in views)
    assert "4 task block(s) over s's 128x1 tile space" in s_fig["layout"]["title"]["text"]
    # thin: stretched, not locked 1:1; one tick on the one column
    assert "scaleanchor" not in s_fig["layout"]["yaxis"]
    assert list(s_fig["layout"]["xaxis"]["tickvals"]) == [0]
    assert len(s_fig["layout"]["shapes"]) == 4
    y_title = y_fig["layout"]["title"]["text"]
    assert "over y's 200x128 tile space" in y_title
    assert "9,216 element(s) no task wrote" in y_title  # rows 128:200
    assert y_fig["layout"]["yaxis"]["scaleanchor"] == "x"


@needs_sim
def test_task_grid_draws_the_dependencies():
    k = run_cell(MIXED_RUN, MagicArgs(specs="specs"), {}).kernels[0]
    (fig,) = [v.to_dict() for v in pypto_lab.show_graph(k).children
              if v.title.startswith("task grid") and v.title.endswith("· z")]
    arrows = [a for a in fig["layout"]["annotations"] if a.get("showarrow")]
    assert arrows
    assert " over z's 128x128 tile space" in fig["layout"]["title"]["text"]


def test_a_mixed_region_shows_its_data_path_with_buffer_sizes(mixed):
    fig = _child(pypto_lab.show_graph(mixed.compiled), "data path")
    (stages,) = fig["data"]
    assert [t.replace("<b>", "").replace("</b>", "") for t in stages["text"]] == [
        "GM", "L1", "L0A / L0B", "cube", "L0C", "pipe", "UB", "vector", "GM"]
    details = [a["text"] for a in fig["layout"]["annotations"] if not a.get("showarrow")]
    assert details[5] == "2 slots<br>UP_DOWN" and details[7] == "2 AIV<br>lanes"
    assert "KiB<br>of " in details[6]  # UB used, of its capacity
    # its matmul reads L1 tiles: the compiler cuts them for L0A/L0B, not "0 B" of them
    assert details[2] == "tiled by<br>compiler<br>to 64.0 KiB"


def test_ping_pong_schematic_uses_the_real_tile_count(mixed):
    stages = pypto_lab.pipeline_view(mixed.compiled).stages.to_dict()
    bars = stages["data"][0]
    pushes = [t for t, y in zip(bars["text"], bars["y"]) if y == "mm_act · AIC"]
    assert pushes == ["push tile 0 → slot 0", "push tile 1 → slot 1"]  # pl.parallel i ×2
    assert "width" not in stages["layout"]


def test_pipe_label_sits_under_the_pipe_and_nothing_is_cut(mixed):
    view = pypto_lab.show_graph(mixed.compiled)
    fig = view.children[0].to_dict()
    (pipe,) = [a for a in fig["layout"]["annotations"] if a.get("text", "").startswith("C→V")]
    assert pipe["yshift"] < 0
    xs = [x for t in fig["data"] if t.get("mode") == "markers+text" for x in t["x"]]
    assert fig["layout"]["xaxis"]["range"][1] >= max(xs) + 0.8


def test_hover_is_escaped_once(mixed):
    fig = pypto_lab.show_graph(mixed.compiled).children[0].to_dict()
    hover = " ".join(h for t in fig["data"] for h in (t.get("hovertext") or []))
    assert 'name_hint="mm_act"' in hover.replace("&nbsp;", " ")
    assert "&quot;" not in hover and "&amp;" not in hover
