"""Issue 12 item 5: the estimated timeline follows the data (load → compute → store), puts
a mixed region's vector epilogue after the cube result it consumes, overlaps the
iterations of a `pl.pipeline` loop, draws the task dependencies, is not clipped (no fixed
width) and offers the Perfetto export from the view."""
from __future__ import annotations

import base64
import itertools
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


def test_pipeline_iterations_the_runtime_orders_do_not_overlap(mixed_view):
    # `post` takes z as InOut in a sequential loop (pl.pipeline is one): the runtime's
    # tensor map makes each iteration wait for the one before, so their stages cannot
    # overlap across tasks whatever stage= says. (A pl.pipeline loop *inside* a region
    # does overlap: test_a_pipeline_inside_a_region_overlaps_its_iterations.)
    assert "mlp_post" in mixed_view.schedule.pipelined
    loads = sorted(_bars(mixed_view, "post", "mte2"), key=lambda b: b.task.task)
    stores = sorted(_bars(mixed_view, "post", "mte3"), key=lambda b: b.task.task)
    assert len(loads) == 4 and len({b.core for b in loads + stores}) == 1
    assert all(nxt.start_us >= cur.end_us - 1e-9 for cur, nxt in zip(stores, loads[1:]))
    posts = sorted({b.task.task for b in loads})
    assert all((a, b) in mixed_view.schedule.deps for a, b in itertools.pairwise(posts))


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


PIPED = '''
import numpy as np
import pypto.language as pl
from pypto.golden import TensorSpec

@pl.jit
def piped(x: pl.Tensor[[128, 128], pl.FP32], y: pl.Out[pl.Tensor[[128, 128], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows"):
        for r in pl.pipeline(0, 128, 16, stage=2):
            y[r : r + 16, :] = pl.exp(x[r : r + 16, :])
    return y

specs = [TensorSpec("x", [128, 128], np.float32, init_value=0.5),
         TensorSpec("y", [128, 128], np.float32, is_output=True)]
'''


@pytest.fixture(scope="module")
def piped_view():
    run = run_cell(PIPED, MagicArgs(specs="specs"), {}).run
    assert run is not None and not run.error, run.report
    return pypto_lab.timeline(run)


def test_a_pipeline_inside_a_region_overlaps_its_iterations(piped_view):
    s = piped_view.schedule
    assert "piped_rows" in s.pipelined
    task = s.bars[0].task
    assert {b.task.task for b in s.bars} == {task.task}
    us = 1 / (s.clock_ghz * 1e3)
    serial = sum(task.cost.get(p, 0) for p in ("mte2", "vector", "mte3")) * us
    busiest = max(task.cost.get(p, 0) for p in ("mte2", "vector", "mte3")) * us
    # stores of one iteration run while later ones load: well under the serial time
    assert busiest - 1e-9 <= s.makespan_us < 0.75 * serial
    vec = sorted((b for b in s.bars if b.pipe == "vector"), key=lambda b: b.start_us)
    assert len(vec) == 8 and [b.note.split(" of ")[0] for b in vec] == \
        [f"iteration {i}" for i in range(8)]
    # the loop as the editor numbers it (the %%pypto line is line 1)
    assert vec[0].note.endswith("of pl.pipeline r ×8 stage=2 (line 10)")
    loads = [b for b in s.bars if b.pipe == "mte2"]
    stores = [b for b in s.bars if b.pipe == "mte3"]
    assert any(st.start_us < ld.end_us and ld.start_us < st.end_us
               for st in stores for ld in loads)  # a load and a store at the same time
    # each iteration computes after its own load; the loads run back to back (the loop
    # is load-bound), each a bar of its own
    loads.sort(key=lambda b: b.start_us)
    assert [b.note.split(" of ")[0] for b in loads] == [f"iteration {i}" for i in range(8)]
    for ld, v in zip(loads, vec):
        assert v.start_us >= ld.end_us - 1e-9
    assert all(abs(a.end_us - b.start_us) < 1e-9 for a, b in itertools.pairwise(loads))
    title = piped_view.to_dict()["layout"]["title"]["text"]
    assert title.endswith("<br>pl.pipeline overlap: rows")  # the legend's name, own line
    hover = next(t for t in piped_view.to_dict()["data"] if t["name"] == "rows")["hovertext"]
    assert any("iteration 3 of pl.pipeline r" in h for h in hover)


def test_two_buffers_hold_back_a_load_until_its_buffer_is_free():
    from pypto_lab.pipelining import InnerPipeline
    from pypto_lab.runs import LabTask
    from pypto_lab.schedule import estimate

    # compute-bound: 4 iterations of 10-cycle loads and 100-cycle compute, 2 buffers
    t = LabTask(0, 0, 1, "k_r", "r", ("vector",), {"mte2": 40.0, "vector": 400.0}, (), {}, "")
    p = InnerPipeline("i", 4, 2, 3, {"mte": 1.0, "vector": 1.0})
    s = estimate([t], clock_ghz=1.0, inner={"k_r": p})
    loads = sorted((b for b in s.bars if b.pipe == "mte2"), key=lambda b: b.start_us)
    vec = [b for b in s.bars if b.pipe == "vector"]
    # loads 0 and 1 back to back (two buffers, one bar); load 2 waits until compute 0
    # has freed its buffer (at 110 ns), load 3 until compute 1 has (at 210 ns)
    assert [(round(b.start_us * 1e3), round(b.end_us * 1e3)) for b in loads] == \
        [(0, 10), (10, 20), (110, 120), (210, 220)]
    assert loads[2].note == "iteration 2 of pl.pipeline i ×4 stage=2 (line 3)"
    # the compute never waits after the first load: 10 to 410 ns without a gap
    assert [round(b.start_us * 1e3) for b in sorted(vec, key=lambda b: b.start_us)] == \
        [10, 110, 210, 310] and round(s.makespan_us * 1e3) == 410
    # one buffer: no overlap at all, every load waits for the compute before it
    one = estimate([t], clock_ghz=1.0, inner={"k_r": InnerPipeline("i", 4, 1, 3, p.share)})
    assert round(one.makespan_us * 1e3) == 440
