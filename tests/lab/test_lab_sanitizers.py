"""The workbench runs every simulator check and draws what they find: races as red
edges / markers on the task graph, uninitialized reads as orange markers on the
task graph and outlines on the heatmap. Asserted on `fig.to_dict()`."""
from __future__ import annotations

import pytest

import pypto_lab
from pypto_lab.args import MagicArgs
from pypto_lab.session import run_cell

RACY = '''
import numpy as np
import pypto.language as pl
from pypto.golden import TensorSpec

@pl.jit
def racy(x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    for i in pl.parallel(3):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows"):
            y[i * 16:i * 16 + 32, :] = pl.exp(x[i * 16:i * 16 + 32, :])
    return y

specs = [TensorSpec("x", [64, 64], np.float32,
                    init_value=lambda: np.random.default_rng(0).standard_normal((64, 64))),
         TensorSpec("y", [64, 64], np.float32, is_output=True)]

def golden(v):
    v["y"][:] = np.exp(v["x"])
'''

SPMD = '''
import numpy as np
import pypto.language as pl
from pypto.golden import TensorSpec

@pl.jit
def blocks(x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    for b in pl.spmd(2, name_hint="halves"):
        y[b * 16:b * 16 + 48, :] = pl.exp(x[b * 16:b * 16 + 48, :])
    return y

specs = [TensorSpec("x", [64, 64], np.float32,
                    init_value=lambda: np.random.default_rng(0).standard_normal((64, 64))),
         TensorSpec("y", [64, 64], np.float32, is_output=True)]

def golden(v):
    v["y"][:] = np.exp(v["x"])
'''

UNINIT = '''
import numpy as np
import pypto.language as pl
from pypto.golden import TensorSpec

@pl.jit
def acc(x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="top"):
        y[0:32, :] = pl.exp(x[0:32, :])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="update"):
        y[16:48, :] = pl.add(y[16:48, :], 1.0)
    return y

specs = [TensorSpec("x", [64, 64], np.float32,
                    init_value=lambda: np.random.default_rng(0).standard_normal((64, 64))),
         TensorSpec("y", [64, 64], np.float32, is_output=True)]

def golden(v):
    v["y"][:] = np.exp(v["x"])
'''


def _run(src):
    cell = run_cell(src, MagicArgs(specs="specs", golden="golden"), {})
    assert cell.ok, cell.text()
    return cell.kernels[0]


def _trace(fig: dict, name: str) -> dict | None:
    return next((t for t in fig["data"] if t.get("name") == name), None)


def _task_fig(kernel) -> dict:
    panel = pypto_lab.show_graph(kernel)
    view = next(v for v in panel.children if v.title.startswith("task graph"))
    return view.to_dict()


@pytest.fixture(scope="module")
def racy():
    return _run(RACY)


def test_workbench_runs_all_four_checks(racy):
    sim = racy.run.raw.sim
    assert sim.config.checks == ("oob", "ub", "race", "uninit") and not sim.config.strict
    assert len(racy.run.races) == 2  # iterations 0/1 and 1/2 overlap by 16 rows
    assert "2 race(s)" in racy.run.report


def test_races_are_red_edges_between_the_two_tasks(racy):
    fig = _task_fig(racy)
    edge = _trace(fig, "missing edge (race)")
    assert edge is not None and edge["line"]["color"] == "#d62728"
    assert edge["line"]["dash"] == "dash"  # a missing edge
    segments = [tuple(edge["x"][i:i + 2]) for i in range(0, len(edge["x"]), 3)]
    assert len(segments) == 2
    labels = [a["text"] for a in fig["layout"]["annotations"]]
    assert "missing edge: y[16:32, 0:64]" in labels and "missing edge: y[32:48, 0:64]" in labels
    # hovering the edge's middle says why and how to fix it
    why = _trace(fig, "edge reasons")
    assert why is not None and all("fix:" in h for h in why["hovertext"])
    assert any("pl.parallel" in h for h in why["hovertext"])
    # the race edges are an overlay: the three iterations stay in one column
    nodes = _trace(fig, "vector")
    assert len(set(nodes["x"])) == 1 and len(nodes["x"]) == 3
    assert "title" in fig["layout"] and "2 race(s)" in fig["layout"]["title"]["text"]


def test_races_outlined_on_the_heatmap(racy):
    fig = pypto_lab.heatmap(racy).to_dict()
    shapes = [s for s in fig["layout"].get("shapes", []) if s.get("name") == "race"]
    assert len(shapes) == 2 and all(s["line"]["color"] == "#d62728" for s in shapes)
    assert {(s["y0"], s["y1"]) for s in shapes} == {(15.5, 31.5), (31.5, 47.5)}
    texts = [a["text"] for a in fig["layout"]["annotations"] if a.get("name") == "race label"]
    assert any("task 0 'rows' (write) vs task 1 'rows' (write)" in t for t in texts)


def test_race_between_blocks_of_one_task_is_a_marker_when_folded():
    k = _run(SPMD)
    fig = _task_fig(k)
    # two blocks, one node each: the race is an edge between them
    assert _trace(fig, "missing edge (race)") is not None
    from pypto_lab.figures.region_graph import graph_figure
    from pypto_lab.graphs import task_graph

    g = task_graph(k.model, k.run.tasks, max_nodes=1, races=k.run.races)  # fold per task
    assert g.graph["fold"] in ("task", "region")
    folded = graph_figure(g, "folded").to_dict()
    marker = _trace(folded, "race")
    assert marker is not None and marker["marker"]["symbol"] == "x"
    assert "race on y[16:48, 0:64]" in marker["hovertext"][0]
    assert _trace(folded, "missing edge (race)") is None


def test_uninitialized_read_markers():
    k = _run(UNINIT)
    (u,) = k.run.uninit_reads
    assert (u["tensor"], u["region"], u["ranges"]) == ("y", "update", [[32, 48], [0, 64]])
    fig = _task_fig(k)
    marker = _trace(fig, "uninitialized read")
    assert marker is not None and marker["marker"]["color"] == "#ff7f0e"
    assert marker["marker"]["symbol"] == "triangle-up"
    assert "y[32:48, 0:64]" in marker["hovertext"][0] and "pl.Out" in marker["hovertext"][0]
    assert _trace(fig, "missing edge (race)") is None
    heat = pypto_lab.heatmap(k).to_dict()
    (shape,) = [s for s in heat["layout"]["shapes"] if s.get("name") == "uninitialized read"]
    assert shape["line"]["dash"] == "dashdot" and (shape["y0"], shape["y1"]) == (31.5, 47.5)
    (label,) = [a["text"] for a in heat["layout"]["annotations"]
                if a.get("name") == "uninitialized read label"]
    assert "task 1 'update' block 0" in label and ":12:" in label
    assert "read(s) of unwritten memory" in k.run.report


def test_clean_run_draws_no_sanitizer_overlay():
    from lab_cells import PARTIAL

    k = _run(PARTIAL)
    assert k.run.races == [] and k.run.uninit_reads == []
    titles = [v.title for v in pypto_lab.show_graph(k).children]
    # no findings: the tasks over the output's tiles, no separate task graph to mark up
    assert titles == ["region graph partial", "task grid partial · y"]


# --- choosing the checks: %%pypto --checks, run_jit(config=) (issue 29 item 5) ----------


def test_checks_option_chooses_the_runs_checks(ip):
    everything = ip.run_cell_magic("pypto", "--run specs golden", RACY)
    assert everything.kernels[-1].run.races  # the workbench's default: every check
    chosen = ip.run_cell_magic("pypto", "--run specs golden --checks oob,ub", RACY)
    run = chosen.kernels[-1].run
    assert run.races == [] and not run.raw.sim.races
    none = ip.run_cell_magic("pypto", "--run specs golden --checks none", RACY)
    assert none.kernels[-1].run.races == []


@pytest.mark.parametrize(("line", "message"), [
    ("--run specs --checks oob,rcae", "--checks: unknown simulator check(s) 'rcae'; choose "
                                      "from oob, ub, race, window, uninit, div (did you mean "
                                      "'race'? several checks: a tuple such as ('oob', 'ub') "
                                      "or one string such as 'oob,ub')"),
    ("--checks race", "--checks needs a run: add --run SPECS [GOLDEN]"),
])
def test_bad_checks_are_one_line_usage_errors(ip, line, message):
    from IPython.core.error import UsageError

    with pytest.raises(UsageError) as info:
        ip.run_cell_magic("pypto", line, RACY)
    assert str(info.value) == message


def test_run_jit_honours_a_sim_config(tmp_path):
    import sys

    import numpy as np

    from pypto.errors import ConfigError
    from pypto.golden import run_jit
    from pypto.sim import SimConfig

    path = tmp_path / "racy_kernel.py"
    path.write_text(RACY)
    sys.path.insert(0, str(tmp_path))
    try:
        import racy_kernel as m
    finally:
        sys.path.remove(str(tmp_path))
    plain = run_jit(m.racy, m.specs, m.golden, verbose=False)
    assert not plain.sim.races  # the harness's default checks leave races out
    found = run_jit(m.racy, m.specs, m.golden, verbose=False,
                    config=SimConfig(checks=("race",), strict=False))
    assert found.sim.races and {r.tensor for r in found.sim.races} == {"y"}
    assert np.array_equal(found.outputs["y"].actual, plain.outputs["y"].actual)
    with pytest.raises(ConfigError) as info:
        run_jit(m.racy, m.specs, m.golden, verbose=False, config={"platform": "a5sim"})
    assert info.value.message == ("config= sets platform='a5sim', which the harness decides "
                                  "itself")
    assert info.value.hint == "use runtime_cfg={'platform': ...}"


def test_every_sim_option_is_honoured_or_refused_by_the_harness():
    """A SimConfig field the harness's config= neither uses nor refuses would be
    silently ignored: the two lists together are every field."""
    import dataclasses

    from pypto.golden.sim_options import _CONFIG_OPTIONS, _HARNESS_KNOBS
    from pypto.sim import SimConfig

    fields = {f.name for f in dataclasses.fields(SimConfig)}
    assert set(_CONFIG_OPTIONS) | set(_HARNESS_KNOBS) == fields
    assert not set(_CONFIG_OPTIONS) & set(_HARNESS_KNOBS)
