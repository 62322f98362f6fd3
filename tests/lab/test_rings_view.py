"""The ring-heap view (issue 28 items 4-5): what each ring holds after every submit,
from the core's replay, its capacity, and the deadlock at its submit and scope."""
from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
import pypto_lab
from pypto.golden import TensorSpec, run_jit
from pypto_lab.figures.typed import decode
from pypto_lab.runs import from_run_result

N = 256
TILE = 64 * 64 * 4


@pl.jit(auto_scope=False)
def piling(x: pl.Tensor[[N, 64], pl.FP32], y: pl.Out[pl.Tensor[[N, 64], pl.FP32]]):
    for i in pl.range(0, N, 64):
        t = pl.create_tensor([64, 64], dtype=pl.FP32)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="fill"):
            t[:, :] = pl.exp(x[i:i + 64, :])
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="use"):
            y[i:i + 64, :] = pl.add(t[:, :], 1.0)
    return y


@pl.jit(auto_scope=False)
def scoped(x: pl.Tensor[[N, 64], pl.FP32], y: pl.Out[pl.Tensor[[N, 64], pl.FP32]]):
    for i in pl.range(0, N, 64):
        with pl.scope():
            t = pl.create_tensor([64, 64], dtype=pl.FP32)
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="fill"):
                t[:, :] = pl.exp(x[i:i + 64, :])
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="use"):
                y[i:i + 64, :] = pl.add(t[:, :], 1.0)
    return y


def _run(kernel, heap=None):
    specs = [TensorSpec("x", [N, 64], np.float32, init_value=0.5),
             TensorSpec("y", [N, 64], np.float32, is_output=True)]

    def golden(v):
        v["y"][:] = np.exp(v["x"]) + 1.0

    cfg = {"ring_heap": heap} if heap else None
    return from_run_result(run_jit(kernel, specs, golden, runtime_cfg=cfg, verbose=False),
                           kernel.__name__, "a2a3sim")


def _trace(fig, name):
    return next(t for t in fig["data"] if t.get("name") == name)


def test_the_heap_each_submit_leaves_held():
    run = _run(piling)
    assert run.passed
    fig = pypto_lab.rings(run).to_dict()
    heap = _trace(fig, "ring 0 heap")
    report = run.rings[0]
    assert list(decode(heap["x"])) == [u.pos for u in report.uses if u.ring == 0]
    y = list(decode(heap["y"]))
    assert y == [u.heap for u in report.uses if u.ring == 0]
    assert max(y) == 4 * TILE  # nothing reclaimed before the end: every t still held
    assert "estimate: best case" in fig["layout"]["title"]["text"]


def test_a_scope_per_iteration_keeps_one_tile():
    fig = pypto_lab.rings(_run(scoped)).to_dict()
    assert max(decode(_trace(fig, "ring 1 heap")["y"])) == TILE


def test_the_deadlock_is_marked_at_its_submit():
    run = _run(piling, heap=3 * TILE)
    assert not run.passed and run.error.startswith("orch_error_code=2 (HEAP_RING_DEADLOCK)")
    dead = run.rings[0].deadlock
    fig = pypto_lab.rings(run).to_dict()
    mark = _trace(fig, "HEAP_RING_DEADLOCK (orch_error_code=2)")
    assert list(decode(mark["x"])) == [dead.submit.pos]
    assert list(decode(mark["y"])) == [3 * TILE + TILE]  # held + what did not fit
    title = fig["layout"]["title"]["text"]
    assert f"<b>HEAP_RING_DEADLOCK</b> at submit {dead.submit.pos}, alloc_tensors @ " \
           "test_rings_view.py:" in title
    assert "innermost open scope: the root scope, open for the whole run" in title
    # the capacity is drawn (close to the peak), not named off scale
    assert any(s.get("y0") == 3 * TILE for s in fig["layout"]["shapes"])
    assert "orch_error_code=2" in pypto_lab.rings(run).text()


def test_a_run_without_a_replay_is_refused():
    run = _run(scoped)
    run.rings = []
    with pytest.raises(ValueError, match="has no ring replay"):
        pypto_lab.rings(run)
    with pytest.raises(ValueError, match="rank 3 out of range: the run has 1 rank"):
        pypto_lab.rings(_run(scoped), rank=3)


def test_the_magic_shows_the_rings(ip):
    from lab_cells import PARTIAL

    r = ip.run_cell_magic("pypto", "--run specs golden --show rings", PARTIAL)
    assert [v.title for v in r.views] == ["summary partial", "run partial", "rings partial"]
    all_views = ip.run_cell_magic("pypto", "--run specs golden --show all", PARTIAL)
    assert "rings partial" in [v.title for v in all_views.views]


def test_a_scope_in_a_cell_is_named_by_its_cell(ip, monkeypatch):
    monkeypatch.setenv("PTO2_RING_HEAP", str(3 * TILE))
    cell = '''
import numpy as np
import pypto.language as pl
from pypto.golden import TensorSpec

@pl.jit(auto_scope=False)
def stage(x: pl.Tensor[[256, 64], pl.FP32], y: pl.Out[pl.Tensor[[256, 64], pl.FP32]]):
    with pl.scope():
        for i in pl.range(0, 256, 64):
            t = pl.create_tensor([64, 64], dtype=pl.FP32)
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="fill"):
                t[:, :] = pl.exp(x[i:i + 64, :])
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="use"):
                y[i:i + 64, :] = pl.add(t[:, :], 1.0)
    return y

specs = [TensorSpec("x", [256, 64], np.float32, init_value=0.5),
         TensorSpec("y", [256, 64], np.float32, is_output=True)]
'''
    r = ip.run_cell("%%pypto --run specs --show rings" + cell, store_history=True)
    run = r.result.kernels[0].run
    dead = run.rings[0].deadlock
    assert dead is not None and dead.site.startswith("<pypto-cell-")  # the record's site
    assert dead.where == f"Cell In[{r.execution_count}], line 8"  # the words people read
    assert f"innermost open scope Cell In[{r.execution_count}], line 8" in run.error
