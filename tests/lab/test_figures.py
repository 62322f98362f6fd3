"""Figures are values: assert on `fig.to_dict()`, not on pixels."""
from __future__ import annotations

import json

import numpy as np
import pytest
from lab_cells import MIXED, PARTIAL, needs_sim, simulator_available

import pypto_lab
from pypto_lab.args import MagicArgs
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


def _trace(fig: dict, name: str) -> dict:
    return next(t for t in fig["data"] if t.get("name") == name)


class TestRegionGraph:
    def test_nodes(self, mixed):
        fig = pypto_lab.show_graph(mixed.compiled).to_dict()
        nodes = {n for t in fig["data"] if t.get("customdata") is not None
                 for n in t["customdata"]}
        assert nodes == {"orch:mlp", "loop:8:i", "loop:14:k", "region:mlp_mm_act",
                         "region:mlp_mm_act/AIC", "region:mlp_mm_act/AIV", "region:mlp_post",
                         "region:mlp_sq"}

    def test_colour_classes_and_edge_kinds(self, mixed):
        fig = pypto_lab.show_graph(mixed.compiled).to_dict()
        names = {t["name"] for t in fig["data"]}
        assert {"mixed", "vector", "cube", "loop", "orchestration"} <= names
        assert {"data edge", "explicit edge", "contains edge", "pipe edge"} <= names
        assert _trace(fig, "explicit edge")["line"]["dash"] == "dash"
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
        fig = pypto_lab.show_graph(mixed.compiled).to_dict()
        texts = [a["text"] for a in fig["layout"]["annotations"]]
        assert "C→V split=UP_DOWN slots=2" in texts
        assert "pl.pipeline k ×4 stage=2" in _trace(fig, "loop")["text"]
        assert "sq [spmd ×4]" in _trace(fig, "vector")["text"]
        hover = " ".join(_trace(fig, "mixed")["hovertext"])
        assert "pl.matmul(ta, w)" in hover.replace("&nbsp;", " ") and "UB:" in hover

    def test_layout_is_deterministic(self, mixed):
        a = pypto_lab.show_graph(mixed.compiled).to_dict()
        b = pypto_lab.show_graph(mixed.compiled).to_dict()
        assert json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True,
                                                                         default=str)


class TestPipeline:
    def test_passes_and_diff(self, mixed):
        view = pypto_lab.pipeline_view(mixed.compiled)
        assert "outline_regions" in [r.name for r in view.records]
        html = view.html(include_js=False)
        assert "#e6ffec" in html and "self.mlp_mm_act" in html

    def test_stage_schematic(self, mixed):
        stages = pypto_lab.pipeline_view(mixed.compiled).stages.to_dict()
        lanes = set(stages["data"][0]["y"])
        assert {"pl.pipeline k · buffer 0", "pl.pipeline k · buffer 1", "mm_act · AIC",
                "mm_act · AIV0", "mm_act · AIV1"} == lanes


@needs_sim
class TestHeatmap:
    def test_nan_block_of_unwritten_out(self, partial_run):
        fig = pypto_lab.heatmap(partial_run).to_dict()
        z = np.array(_trace(fig, "unwritten")["z"], dtype=float)
        assert np.isfinite(z[48:64]).all() and np.isnan(z[:48]).all()
        ok = np.array(_trace(fig, "within tolerance")["z"], dtype=float)
        assert np.isfinite(ok[:48]).all() and np.isnan(ok[48:]).all()

    def test_unwritten_region_outlined_with_fix(self, partial_run):
        fig = pypto_lab.heatmap(partial_run).to_dict()
        rect = fig["layout"]["shapes"][0]
        assert (rect["y0"], rect["y1"], rect["x0"], rect["x1"]) == (47.5, 63.5, -0.5, 63.5)
        label = fig["layout"]["annotations"][0]["text"]
        assert "unwritten pl.Out [48:64, 0:64]" in label and "fix:" in label

    def test_hover_names_the_writer(self, partial_run):
        fig = pypto_lab.heatmap(partial_run).to_dict()
        custom = _trace(fig, "within tolerance")["customdata"]
        writer = custom[20][5][4]
        assert writer.startswith("task ") and "'rows' block 0 at <pypto-cell-" in writer
        assert custom[50][5][4] == "never written by a task"

    @pytest.mark.parametrize("metric", ["abs", "rel", "ulp"])
    def test_metrics(self, partial_run, metric):
        from pypto_lab.figures.heatmap import METRICS

        fig = pypto_lab.heatmap(partial_run, metric=metric).to_dict()
        assert METRICS[metric] in fig["layout"]["title"]["text"]
        assert _trace(fig, "unwritten")["hovertemplate"].count(METRICS[metric]) == 1

    def test_widget_has_controls(self, partial_run):
        w = pypto_lab.heatmap(partial_run).widget()
        controls = w.children[0].children
        assert controls[0].options == ("y",) and controls[1].options == ("abs", "rel", "ulp")


@needs_sim
class TestTimeline:
    def test_lanes_and_bars(self, partial_run):
        view = pypto_lab.timeline(partial_run)
        fig = view.to_dict()
        bars = _trace(fig, "rows")
        assert set(bars["y"]) == {f"AIV{i} · {p}" for i in range(3)
                                  for p in ("mte2", "vector", "mte3")}
        assert len(bars["x"]) == 9 and all(x > 0 for x in bars["x"])
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
