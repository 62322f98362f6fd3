"""Figures are values: assert on `fig.to_dict()`, not on pixels."""
from __future__ import annotations

import json

import numpy as np
import pytest
from lab_cells import MIXED, PARTIAL, needs_sim, simulator_available

import pypto_lab
from pypto_lab.args import MagicArgs
from pypto_lab.figures.heatmap import heatmap_figure
from pypto_lab.figures.typed import decode
from pypto_lab.heatmap_explorer import HeatmapExplorer
from pypto_lab.session import run_cell


@pytest.fixture(scope="module")
def mixed():
    return run_cell(MIXED, MagicArgs(), {}).kernels[0]


@pytest.fixture(scope="module")
def partial_run():
    if not _sim():
        pytest.skip("pypto.sim not available yet")
    return run_cell(PARTIAL, MagicArgs(specs="specs", golden="golden"), {}).run


def _sim() -> bool:
    return simulator_available()


def _region_fig(obj) -> dict:
    """The region graph (show_graph adds a data path per mixed region after it)."""
    view = pypto_lab.show_graph(obj)
    return (view.children[0] if hasattr(view, "children") else view).to_dict()


def _trace(fig: dict, name: str) -> dict:
    return next(t for t in fig["data"] if t.get("name") == name)


class TestRegionGraph:
    def test_nodes(self, mixed):
        fig = _region_fig(mixed.compiled)
        nodes = {n for t in fig["data"] if t.get("customdata") is not None
                 for n in t["customdata"]}
        assert nodes == {"orch:mlp", "loop:8:i", "loop:14:k", "region:mlp_mm_act",
                         "region:mlp_mm_act/AIC", "region:mlp_mm_act/AIV", "region:mlp_post",
                         "region:mlp_sq"}

    def test_colour_classes_and_edge_kinds(self, mixed):
        fig = _region_fig(mixed.compiled)
        names = {t["name"] for t in fig["data"]}
        assert {"mixed", "vector", "cube", "loop", "orchestration"} <= names
        assert {"data edge", "deps= edge", "contains edge", "pipe edge"} <= names
        assert _trace(fig, "deps= edge")["line"]["dash"] == "dash"
        assert _trace(fig, "data edge")["line"]["dash"] == "solid"

    def test_edges(self, mixed):
        from pypto_lab.graphs import region_graph
        from pypto_lab.model import KernelModel

        g = region_graph(KernelModel.of(mixed.compiled))
        deps = {(u, v, d["kind"]) for u, v, d in g.edges(data=True) if d["kind"] != "contains"}
        assert deps == {("region:mlp_mm_act", "region:mlp_post", "explicit"),
                        ("region:mlp_post", "region:mlp_sq", "data"),
                        ("region:mlp_mm_act/AIC", "region:mlp_mm_act/AIV", "pipe")}

    def test_labels_and_hover(self, mixed):
        fig = _region_fig(mixed.compiled)
        texts = [a["text"] for a in fig["layout"]["annotations"]]
        assert "C→V split=UP_DOWN slots=2" in texts
        assert "pl.pipeline k ×4 stage=2" in _trace(fig, "loop")["text"]
        assert "sq [spmd ×4]" in _trace(fig, "vector")["text"]
        hover = " ".join(_trace(fig, "mixed")["hovertext"])
        assert "pl.matmul(ta, w)" in hover.replace("&nbsp;", " ") and "UB:" in hover

    def test_layout_is_deterministic(self, mixed):
        a = _region_fig(mixed.compiled)
        b = _region_fig(mixed.compiled)
        assert json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True,
                                                                         default=str)


class TestPipeline:
    def test_passes_and_diff(self, mixed):
        view = pypto_lab.pipeline_view(mixed.compiled)
        assert "outline_regions" in [r.name for r in view.records]
        html = view.html()
        assert "#e6ffec" in html and "self.mlp_mm_act" in html

    def test_passes_open_on_the_first_that_changed(self, mixed):
        """Issue 29 item 5: the slider opened on pass 0, which changes nothing here."""
        from pypto_lab.api import PassesView

        records = pypto_lab.pipeline_view(mixed.compiled).records
        first = next(i for i, r in enumerate(records) if r.changed)
        assert first > 0 and not records[0].changed
        view = PassesView("p", records)
        assert view.first_changed() == first
        slider, diff = view.widget().children[1], view.widget().children[3]
        assert slider.value.startswith(f"{first}. {records[first].name}")
        assert "#e6ffec" in diff.value or "#ffebe9" in diff.value  # a real diff shown
        html = view.html()
        assert html.count("<details open>") == 1
        assert f"<details open><summary>{first}. " in html

    def test_ir_diff_is_one_block_that_scrolls(self, mixed):
        """One <pre>, a block per line and no newline between them (a <div> per line
        was double-spaced in JupyterLab); wider than the output: it scrolls."""
        from pypto_lab.figures.pipeline import pass_diff

        record = next(r for r in pypto_lab.pipeline_view(mixed.compiled).records if r.changed)
        text, html = pass_diff(record)
        assert html.count("<pre") == 1 and "<div style='background" not in html
        assert "\n" not in html
        assert html.count("display:block") == len(text.splitlines())
        assert "overflow:auto" in html and "width:max-content" in html

    def test_stage_schematic(self, mixed):
        stages = pypto_lab.pipeline_view(mixed.compiled).stages.to_dict()
        lanes = set(stages["data"][0]["y"])
        assert {"pl.pipeline k · buffer 0", "pl.pipeline k · buffer 1", "mm_act · AIC",
                "mm_act · AIV0", "mm_act · AIV1"} == lanes


@needs_sim
class TestHeatmap:
    def test_never_written_rows_are_their_own_layer(self, partial_run):
        fig = pypto_lab.heatmap(partial_run).to_dict()
        never = _trace(fig, "never written")
        z = decode(never["z"])
        assert never["y0"] == 48 and z.shape == (16, 64) and (z == 3).all()
        (writer,) = [t for t in fig["data"] if t["type"] == "heatmap"
                     and t["name"] not in ("never written", "error")]
        assert writer["y0"] == 0 and decode(writer["z"]).shape == (48, 64)
        assert (decode(writer["z"]) == 0).all()  # within tolerance

    def test_unwritten_region_outlined_with_the_kernel_fix(self, partial_run):
        fig = pypto_lab.heatmap(partial_run).to_dict()
        rect = fig["layout"]["shapes"][0]
        assert (rect["y0"], rect["y1"], rect["x0"], rect["x1"]) == (47.5, 63.5, -0.5, 63.5)
        label = fig["layout"]["annotations"][0]["text"]
        assert "unwritten pl.Out [48:64, 0:64]" in label

    def test_hover_names_the_writing_statement_task_and_block(self, partial_run):
        fig = pypto_lab.heatmap(partial_run).to_dict()
        (writer,) = [t for t in fig["data"] if t["type"] == "heatmap"
                     and t["name"] not in ("never written", "error")]
        tpl = writer["hovertemplate"]
        assert "&lt;pypto-cell-" in tpl and "y[r:r+16, :] = pl.exp(t)" in tpl
        assert "written by task %{customdata[3]:d} block %{customdata[4]:d}" in tpl
        assert "y[%{y:d}, %{x:d}]" in tpl  # full resolution: the cell is the element
        custom = decode(writer["customdata"])
        exp, act, _, task, block = custom[20, 5, :5]
        assert (task, block) == (1, 0) and exp == act
        never = _trace(fig, "never written")
        assert "never written by any task" in never["hovertemplate"]

    @pytest.mark.parametrize("metric", ["abs", "rel", "ulp"])
    def test_metrics(self, partial_run, metric):
        from pypto_lab.figures.mismatch import METRICS

        fig = pypto_lab.heatmap(partial_run, metric=metric).to_dict()
        assert METRICS[metric] in fig["layout"]["title"]["text"]

    def test_only_the_visible_metric_is_built(self, partial_run):
        fig = pypto_lab.heatmap(partial_run).to_dict()
        heatmaps = [t for t in fig["data"] if t["type"] == "heatmap"]
        assert len(heatmaps) == 3  # one writer statement, never written, the metric
        assert all(isinstance(t["z"], dict) and "bdata" in t["z"] for t in heatmaps)

    def test_passing_output_opens_on_ownership(self):
        from lab_cells import FULL

        run = run_cell(FULL, MagicArgs(specs="specs", golden="golden"), {}).run
        view = pypto_lab.heatmap(run)
        assert run.passed and view.metric == "task"
        owner = _trace(view.to_dict(), "writer task")
        tasks = decode(owner["z"])
        assert [tasks[r, 0] for r in (0, 16, 32, 48)] == [0, 1, 2, 3]

    def test_controls_redraw_the_figure(self, partial_run):
        drawn = []
        controls = HeatmapExplorer(pypto_lab.heatmap(partial_run), drawn.append).controls
        pick, label, metric = controls.children[0].children
        assert label.value == "metric"  # beside the buttons, not their description
        assert pick.options == ("y",)
        assert metric.options == ("abs", "rel", "ulp", "tol", "count", "task", "block")
        window = controls.children[2]
        assert window.layout.display == "none"  # 64x64 draws whole
        metric.value = "task"
        assert [v.metric for v in drawn] == ["task"]
        assert _trace(drawn[0].to_dict(), "writer task") is not None

    def test_next_mismatch_opens_a_full_resolution_window(self):
        from lab_cells import PARTIAL

        big = PARTIAL.replace("64", "512").replace("pl.parallel(0, 48, 16)",
                                                   "pl.parallel(0, 496, 16)")
        run = run_cell(big, MagicArgs(specs="specs", golden="golden"), {}).run
        drawn = []
        controls = HeatmapExplorer(pypto_lab.heatmap(run), drawn.append).controls
        full, nxt, row, col = controls.children[2].children
        assert controls.children[2].layout.display == ""  # 512x512 pools: offer windows
        nxt.click()
        (view,) = drawn
        # the window starts at the first mismatch, kept inside the plane
        assert view.window == (352, 512, 0, 160) and (row.value, col.value) == (352, 0)
        title = view.to_dict()["layout"]["title"]["text"]
        assert full.value and "rows 352:512, cols 0:160" in title
        err = _trace(view.to_dict(), "never written")
        assert err["dy"] == 1 and err["y0"] == 496  # full resolution: rows 496:512


class TestPooling:
    """A large output draws as at most MAX_SIDE cells a side; every mismatch stays."""

    def _out(self, shape, bad):
        from pypto_lab.runs import LabOutput

        expected = np.zeros(shape, np.float32)
        actual = expected.copy()
        for idx, v in bad.items():
            actual[idx] = v
        return LabOutput("y", actual, expected, False)

    def test_one_wrong_element_survives_pooling(self):
        from pypto_lab.figures.mismatch import ERROR, pool

        p = pool(self._out((2048, 1024), {(1234, 777): 0.5}))
        assert (p.fy, p.fx) == (16, 8) and p.status.shape == (128, 128)
        assert p.status[1234 // 16, 777 // 8] == ERROR and (p.status == ERROR).sum() == 1
        assert (p.rows[77, 97], p.cols[77, 97]) == (1234, 777)
        assert p.value[77, 97] == pytest.approx(0.5) and p.bad_total == 1

    def test_nan_beats_a_larger_finite_error_in_its_block(self):
        from pypto_lab.figures.mismatch import NONFINITE, pool

        p = pool(self._out((1024, 1024), {(0, 0): 100.0, (3, 3): np.nan}))
        assert p.status[0, 0] == NONFINITE and (p.rows[0, 0], p.cols[0, 0]) == (3, 3)
        assert p.bad[0, 0] == 2

    def test_window_is_full_resolution(self):
        fig = heatmap_figure(self._out((2048, 1024), {(1234, 777): 0.5}), window=(1200, 1300,
                                                                                   700, 800))
        err = _trace(fig, "error")
        z = decode(err["z"])
        assert z.shape == (100, 100) and err["dx"] == 1 and err["x0"] == 700
        assert np.nanargmax(z) == 34 * 100 + 77

    def test_typed_arrays_keep_a_2048x1024_map_small(self):
        fig = heatmap_figure(self._out((2048, 1024), {(i, i // 2): 1.0 for i in range(2048)}))
        assert len(json.dumps(fig)) < 1_000_000


@needs_sim
class TestTimeline:
    def test_lanes_and_bars(self, partial_run):
        view = pypto_lab.timeline(partial_run)
        fig = view.to_dict()
        bars = _trace(fig, "rows")
        assert set(bars["y"]) == {f"AIV{i} · {p}" for i in range(3)
                                  for p in ("mte2", "vector", "mte3")}
        x = decode(bars["x"])  # typed arrays: no plotly validation of 10^4 bars
        assert len(x) == 9 and (x > 0).all()
        np.testing.assert_array_equal(decode(bars["customdata"])[:, 0] >= 0, True)
        assert fig["layout"]["yaxis"]["categoryarray"][-1] == "AIV0 · mte2"

    def test_chrome_trace(self, partial_run, tmp_path):
        view = pypto_lab.timeline(partial_run)
        path = view.save(tmp_path / "trace.json")
        data = json.loads(path.read_text())
        complete = [e for e in data["traceEvents"] if e["ph"] == "X"]
        assert len(complete) == 9 and {e["cat"] for e in complete} == {"partial_rows"}
        names = {e["args"]["name"] for e in data["traceEvents"] if e["ph"] == "M"}
        assert {"AIV0", "AIV1", "AIV2", "mte2", "vector", "mte3"} <= names

    def test_task_graph_after_run(self, partial_run):
        from pypto_lab.graphs import task_graph
        from pypto_lab.model import KernelModel

        model = KernelModel.of(partial_run.raw.compiled)
        g = task_graph(model, partial_run.tasks)
        assert g.number_of_nodes() == 3 and g.graph["fold"] == "block"
        assert task_graph(model, partial_run.tasks, max_nodes=2).graph["fold"] == "region"
