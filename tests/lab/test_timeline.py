"""Issue 12 item 5: the estimated timeline follows the data (load → compute → store), puts
a mixed region's vector epilogue after the cube result it consumes, overlaps the
iterations of a `pl.pipeline` loop, draws the task dependencies, is not clipped (no fixed
width) and offers the Perfetto export from the view."""
from __future__ import annotations

import base64
import json

import pytest
from lab_cells import MIXED_RUN, PARTIAL, needs_sim

import pypto_lab
from pypto_lab.args import MagicArgs
from pypto_lab.session import run_cell

pytestmark = needs_sim


@pytest.fixture(scope="module")
def mixed_view():
    run = run_cell(MIXED_RUN, MagicArgs(specs="specs"), {}).run
    assert run is not None and not run.error, run.report
    return pypto_lab.timeline(run)


def _bars(view, region, pipe):
    return [b for b in view.schedule.bars if b.task.name == region and b.pipe == pipe]


def _by_task(bars):
    return {(b.task.task, b.task.block): b for b in bars}


def test_each_block_loads_then_computes_then_stores():
    run = run_cell(PARTIAL, MagicArgs(specs="specs", golden="golden"), {}).run
    view = pypto_lab.timeline(run)
    load, vec, store = (_by_task(_bars(view, "rows", p)) for p in ("mte2", "vector", "mte3"))
    assert load.keys() == vec.keys() == store.keys() and len(load) == 3
    for k in load:
        assert load[k].end_us <= vec[k].start_us + 1e-9
        assert vec[k].end_us <= store[k].start_us + 1e-9
        assert load[k].start_us < store[k].start_us


def test_the_vector_epilogue_waits_for_the_cube_result(mixed_view):
    fix = _by_task(_bars(mixed_view, "mm_act", "fix") or _bars(mixed_view, "mm_act", "cube"))
    vec = _by_task(_bars(mixed_view, "mm_act", "vector"))
    assert fix and vec.keys() <= fix.keys()
    for k, v in vec.items():
        assert v.start_us >= fix[k].end_us - 1e-9
        assert v.core.startswith("AIV") and fix[k].core.startswith("AIC")


def test_pipeline_iterations_overlap_on_one_core(mixed_view):
    assert "mlp_post" in mixed_view.schedule.pipelined
    loads = sorted(_bars(mixed_view, "post", "mte2"), key=lambda b: b.task.task)
    stores = sorted(_bars(mixed_view, "post", "mte3"), key=lambda b: b.task.task)
    assert len(loads) == 4 and len({b.core for b in loads + stores}) == 1
    # iteration i+1 loads while iteration i is still busy (double buffering)
    assert any(nxt.start_us < cur.end_us for cur, nxt in zip(stores, loads[1:]))


def test_dependencies_are_drawn_and_respected(mixed_view):
    s = mixed_view.schedule
    assert s.deps
    for src, dst in s.deps:
        a, b = s.task_span(src), s.task_span(dst)
        assert b[0] >= a[1] - 1e-9
    fig = mixed_view.to_dict()
    dep = next(t for t in fig["data"] if t["name"].startswith("dependency"))
    assert dep["mode"] == "lines+markers" and dep["marker"]["symbol"] == "arrow"


def test_nothing_clipped_and_the_export_is_in_the_view(mixed_view):
    layout = mixed_view.to_dict()["layout"]
    assert "width" not in layout and layout["yaxis"]["automargin"]
    html = mixed_view.export_html()
    b64 = html.split("base64,", 1)[1].split("'", 1)[0]
    trace = json.loads(base64.b64decode(b64))
    flows = [e for e in trace["traceEvents"] if e["ph"] in ("s", "f")]
    assert flows and trace["otherData"]["estimated"]
    assert "ui.perfetto.dev" in html and "download='mlp.perfetto.json'" in html
