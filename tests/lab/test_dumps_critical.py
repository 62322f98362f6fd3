"""Issue 32 item 7: the args dump as a table joined to the task graph (a row's heatmap is
its snapshot), the critical path on the timeline, and their `%%pypto` options.

The CHAIN kernel: `scale` (task 0: 64x64, mte2 256 + vector 144 + mte3 256 = 656 cycles)
writes `tmp`, which `shift` (task 2: 256 + 72 + 256 = 584 cycles) reads; `side` (task 1,
16x64, 152 cycles) runs beside them on another core. By hand the critical path is
0 → 2 and the makespan (656 + 584) cycles at 1.8 GHz = 0.6889 µs."""
from __future__ import annotations

import numpy as np
import pytest
from lab_cells import CHAIN, needs_sim

import pypto_lab
from pypto_lab.args import MagicArgs
from pypto_lab.figures.snapshot import pool_values
from pypto_lab.figures.typed import decode
from pypto_lab.runs import LabTask
from pypto_lab.schedule import critical_path, estimate
from pypto_lab.session import run_cell

pytestmark = needs_sim
X = np.arange(64 * 64, dtype=np.float32).reshape(64, 64) / 4096
CLOCK_MHZ = 1.8e3


@pytest.fixture(autouse=True)
def _build_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))


def _run(level: int = 1, show: tuple = ()):
    result = run_cell(CHAIN, MagicArgs(specs="specs", golden="golden", dump_args=level,
                                       show=show), {})
    run = result.kernels[-1].run
    assert run is not None and run.passed, run.report if run else result.diagnostics
    return result, run


# --- the critical path ----------------------------------------------------------------


def test_the_critical_path_is_the_chain_that_sets_the_makespan():
    _, run = _run(0)
    view = pypto_lab.timeline(run)
    path = view.critical
    assert path.tasks == (0, 2) and path.waits == (0.0,)
    (s0, e0), (s2, e2) = path.spans
    assert s0 == 0.0 and s2 == pytest.approx(e0)
    assert e0 == pytest.approx(656 / CLOCK_MHZ) and e2 == pytest.approx(1240 / CLOCK_MHZ)
    assert view.schedule.makespan_us == pytest.approx(e2)
    assert "critical path: tasks 0 → 2 (0.689 us busy, 0.000 us waiting)" in view.text()


def test_the_timeline_outlines_only_the_path_and_draws_its_edge():
    _, run = _run(0)
    view = pypto_lab.timeline(run)
    traces = [t for t in view.spec["data"] if t["name"].startswith("critical path")]
    outline, edge = traces
    assert outline["name"] == "critical path (2 tasks)"
    ids = decode(outline["customdata"])  # (task, block) per bar
    assert sorted(set(ids[:, 0].tolist())) == [0, 2]  # side (task 1) is not
    assert {lane.split(" · ")[1] for lane in outline["y"]} == {"mte2", "vector", "mte3"}
    assert outline["marker"]["color"] == "rgba(0,0,0,0)"
    # one arrow: from scale's store to shift's load (on AIV2, the earliest free core:
    # AIV0 ran scale, AIV1 side)
    end0 = round(656 / CLOCK_MHZ, 4)
    assert edge["x"] == [end0, end0, None]
    assert edge["y"] == ["AIV0 · mte3", "AIV2 · mte2", None]
    assert "critical path: 2 task(s)" in view.spec["layout"]["title"]["text"]
    off = pypto_lab.timeline(run, critical=False)
    assert off.critical is None
    assert not any(t["name"].startswith("critical") for t in off.spec["data"])


def test_a_busy_core_shows_as_a_wait_on_the_path():
    # one AIV core: side (152 cycles) runs between scale and shift, which waits for it
    _, run = _run(0)
    sched = estimate(run.tasks, aic=1, aiv=1, clock_ghz=1.8)
    path = critical_path(sched)
    assert path.tasks == (0, 2)
    assert path.waits == (pytest.approx(152 / CLOCK_MHZ),)
    assert sched.makespan_us == pytest.approx((656 + 152 + 584) / CLOCK_MHZ)


def _task(tid: int, deps: tuple, cost: dict) -> LabTask:
    return LabTask(tid, 0, 1, f"f{tid}", f"t{tid}", ("vector",), cost, deps,
                   dict.fromkeys(deps, "tensormap"))


def test_the_path_passes_through_a_task_without_bars():
    # task 1 is a dummy (no cycles, no bars) between 0 and 2; 3 is short and independent
    tasks = [_task(0, (), {"vector": 100.0}), _task(1, (0,), {"scalar": 0.0}),
             _task(2, (1,), {"vector": 50.0}), _task(3, (), {"vector": 120.0})]
    path = critical_path(estimate(tasks, clock_ghz=1.0))
    assert path.tasks == (0, 2)
    assert path.spans == ((0.0, 0.1), (0.1, pytest.approx(0.15)))


# --- the dump table -------------------------------------------------------------------


def test_the_table_has_one_row_per_dumped_argument_joined_to_the_tasks():
    _, run = _run(1)
    view = pypto_lab.dumps(run)
    got = [(r.label, r.stage, r.role, r.tensor, r.shape, r.dtype) for r in view.rows]
    assert got == [("scale#0", "after_completion", "output", "tmp", (64, 64), "FLOAT32"),
                   ("shift#2", "before_dispatch", "input", "tmp", (64, 64), "FLOAT32")]
    # the labels are the task graph's: `name#id` of the run's tasks
    assert {r.label for r in view.rows} <= {f"{t.name}#{t.task}" for t in run.tasks}
    # the rows are the core's snapshots, not copies
    assert [id(r.snapshot) for r in view.rows] == [id(s) for s in run.raw.sim.arg_dumps]
    text = view.text()
    assert text.startswith("args dump of chain: level 1, 2 argument(s), 2 with a payload")
    assert "dump_viewer" in text and "/dfx_outputs/args_dump" in text


def test_a_rows_heatmap_draws_the_snapshot_at_that_boundary():
    _, run = _run(1)
    view = pypto_lab.dumps(run)
    assert view.selected == 0
    for row in (0, 1):  # what scale left is what shift read: 2 exp(x)
        spec = view.figure(row)
        (values,) = spec["data"]  # no NaN/Inf layer: tmp is written everywhere
        z = decode(values["z"])
        np.testing.assert_allclose(z, 2 * np.exp(X), rtol=1e-6)
        assert (values["dx"], values["dy"]) == (1, 1)
    title = view.figure(1)["layout"]["title"]["text"]
    assert title.startswith("task shift#2 · before_dispatch · input<br>tmp: min 2 · max 5.4")


def test_level3_rows_without_a_payload_say_so():
    _, run = _run(3)
    view = pypto_lab.dumps(run)
    assert len(view.rows) == 6 and [r.has_payload for r in view.rows].count(True) == 2
    x_row = next(i for i, r in enumerate(view.rows) if r.tensor == "x")
    with pytest.raises(ValueError) as info:
        view.figure(x_row)
    assert str(info.value) == (f"row {x_row} (x of scale#0, before_dispatch) has no payload: "
                               "metadata only (level 3 carries the payloads of tagged tensors)")
    assert view.selected == next(i for i, r in enumerate(view.rows) if r.has_payload)


def test_selecting_a_row_redraws_the_heatmap():
    pytest.importorskip("anywidget")
    _, run = _run(3)
    view = pypto_lab.dumps(run)
    box = view.widget()
    _, pick, note, live = box.children
    shift = next(i for i, r in enumerate(view.rows) if r.label == "shift#2" and r.has_payload)
    pick.value = shift
    assert live.figure["layout"]["title"]["text"].startswith("task shift#2 · before_dispatch")
    assert note.value == ""
    pick.value = next(i for i, r in enumerate(view.rows) if not r.has_payload)
    assert "has no payload" in note.value
    assert live.figure["layout"]["title"]["text"].startswith("task shift#2")  # kept


def test_pooling_keeps_the_largest_magnitude_and_non_finite_values():
    a = np.arange(20.0).reshape(4, 5)
    a[0, 0], a[3, 4] = np.nan, -100.0
    np.testing.assert_array_equal(pool_values(a, 2, 2),
                                  [[np.nan, 8.0, 9.0], [16.0, 18.0, -100.0]])


def test_dumps_of_a_run_without_a_dump_is_refused():
    _, run = _run(0)
    with pytest.raises(ValueError) as info:
        pypto_lab.dumps(run)
    assert str(info.value) == ("the run of chain captured no args dump: run it with "
                               "%%pypto --dump-args N (or runtime_cfg enable_dump_args=N)")


# --- the %%pypto options ---------------------------------------------------------------


def test_the_magic_captures_and_shows_the_dump_and_the_path(ip):
    r = ip.run_cell_magic("pypto", "--run specs golden --dump-args 1 --show timeline,dumps",
                          CHAIN)
    titles = [v.title for v in r.views]
    assert titles == ["summary chain", "run chain", "timeline chain", "args dump chain"]
    dump_view, timeline = r.views[3], r.views[2]
    assert [row.tensor for row in dump_view.rows] == ["tmp", "tmp"]
    assert timeline.critical.tasks == (0, 2)
    html = dump_view.html()
    assert "<td style='text-align:left;padding:2px 8px'>shift#2</td>" in html
    assert "plotly-graph-div" in html or "pypto-static-figure" in html


def test_show_all_leaves_out_the_dump_without_one(ip):
    r = ip.run_cell_magic("pypto", "--run specs golden --show all", CHAIN)
    assert "args dump chain" not in [v.title for v in r.views]
    assert r.kernels[-1].run.dump_level == 0


@pytest.mark.parametrize(("line", "message"), [
    ("--run specs --dump-args 7", "--dump-args takes an args dump level 1, 2 or 3 (1 tagged, "
                                  "2 all, 3 metadata + tagged payloads), got 7"),
    ("--run specs --show dumps", "--show dumps needs an args dump: add --dump-args N (1 tagged, "
                                 "2 all, 3 metadata + tagged payloads)"),
    ("--dump-args 1", "--dump-args needs a run: add --run SPECS [GOLDEN]"),
    ("--show dumps", "--show dumps needs a run: add --run SPECS [GOLDEN]"),
    ("--run specs --dump-args two", "argument --dump-args: invalid int value: 'two'"),
])
def test_bad_dump_options_are_one_line_usage_errors(ip, line, message):
    from IPython.core.error import UsageError

    with pytest.raises(UsageError) as info:
        ip.run_cell_magic("pypto", line, CHAIN)
    assert str(info.value) == message
