"""The workbench's rank view: a lane per rank with its steps, an arrow from each notify
to the wait it released, and, for a deadlock, where every rank is stuck."""
from __future__ import annotations

import numpy as np
import pytest
import rank_kernels as rk
from frontend_helpers import where

import pypto_lab
from pypto.sim import SimConfig
from pypto.sim.cluster.signals import DeadlockError
from pypto_lab.rank_steps import rank_run

TWO = SimConfig(device_ids=(0, 1))


def _inputs() -> np.ndarray:
    return np.stack([np.arange(rk.S, dtype=np.float32).reshape(1, rk.S) + 100 * r
                     for r in range(rk.NR)])


def test_each_notify_points_at_the_wait_it_released():
    res = rk.allreduce(_inputs(), np.zeros((rk.NR, 1, rk.S), np.float32), config=TWO)
    run = rank_run(res)
    assert run.world_size == 2 and not run.stuck
    by_seq = {s.seq: s for s in run.steps}
    assert len(run.edges) == 2 and all(e.released for e in run.edges)
    for e in run.edges:
        notify, done = by_seq[e.src_seq], by_seq[e.dst_seq]
        assert (notify.kind, notify.rank, done.kind, done.rank) == \
            ("notify", e.src, "wait_done", e.dst)
        assert e.src != e.dst and notify.seq < done.seq
        assert e.cell == f"signal_buf[{e.src}, 0]"  # my cell for the peer that notified
    assert [s.kind for s in run.of_rank(1)] == ["dispatch", "notify", "wait_done", "finish"]
    assert run.of_rank(1)[1].text == "rank 1 notifies rank 0: signal_buf[1, 0] AtomicAdd 1 → 1"


def test_the_view_draws_lanes_markers_and_arrows():
    res = rk.allreduce(_inputs(), np.zeros((rk.NR, 1, rk.S), np.float32), config=TWO)
    view = pypto_lab.ranks(res)
    names = [t.name for t in view.figure.data]
    assert names[0] == "notify → wait (2)"
    assert {"dispatch", "notify", "wait (blocked)", "wait done", "finished"} <= set(names)
    lanes = {y for t in view.figure.data if t.name == "notify" for y in t.y}
    assert lanes == {"rank 0", "rank 1"}
    assert "2 ranks, 9 steps, 2 notify → wait" in view.summary
    assert "finished" in view.figure.layout.title.text


def test_a_deadlock_shows_where_every_rank_is_stuck():
    with pytest.raises(DeadlockError) as info:
        rk.waits_too_long(_inputs(), np.zeros((rk.NR, 1, rk.S), np.float32), config=TWO)
    run = rank_run(info.value)
    assert run.stuck
    stuck = [s for s in run.steps if s.kind == "deadlock"]
    line, _ = where(rk.__file__, "wait")
    assert [s.rank for s in stuck] == [0, 1]
    assert stuck[0].text == "rank 0 is stuck on its signal_buf[1, 0] >= 2 (holds 1)"
    assert not any(e.released for e in run.edges)  # one notify each: not enough
    assert {(e.src, e.dst) for e in run.edges} == {(0, 1), (1, 0)}
    view = pypto_lab.ranks(info.value)
    assert "DEADLOCK" in view.figure.layout.title.text and "DEADLOCK" in view.summary
    (cross,) = [t for t in view.figure.data if t.name == "stuck (deadlock)"]
    assert list(cross.y) == ["rank 0", "rank 1"]
    waits = [s for s in run.steps if s.kind in ("wait", "deadlock")]
    assert len(waits) == 4 and all(s.source == f"{rk.__file__}:{line}" for s in waits)
    assert f"@ {rk.__file__}:{line}" in cross.hovertext[0]


def test_a_single_card_result_is_refused_with_what_the_view_needs():
    with pytest.raises(TypeError, match="rank views need a multi-card run"):
        rank_run(object())


def test_each_rank_has_its_own_run_for_the_other_views():
    res = rk.allreduce(_inputs(), np.zeros((rk.NR, 1, rk.S), np.float32),
                       config=SimConfig(device_ids=(0, 1), trace=True))
    for r in range(rk.NR):
        run = pypto_lab.on_rank(res, r)
        assert run.kernel.endswith(f"@rank{r}")
        assert [t.name for t in run.tasks] == ["exchange"]  # its one kernel launch
        assert run.trace is res.ranks[r].trace
    view = pypto_lab.timeline(pypto_lab.on_rank(res, 1))
    assert "AIV0 · vector" in view.text()
    with pytest.raises(IndexError, match=r"the run has ranks 0\.\.1, not 2"):
        pypto_lab.on_rank(res, 2)
    with pytest.raises(TypeError, match="on_rank needs a multi-card run"):
        pypto_lab.on_rank(object(), 0)


def test_windows_remember_which_rank_wrote_each_element():
    x = _inputs()
    res = rk.allreduce(x, np.zeros((rk.NR, 1, rk.S), np.float32),
                       config=SimConfig(device_ids=(0, 1), trace=True))
    # rank 1's notify set cell [1, 0] of rank 0's signal, and the other way round
    np.testing.assert_array_equal(res.window_writers("signal_buf", 0), [[-1], [1]])
    np.testing.assert_array_equal(res.window_writers("signal_buf", 1), [[0], [-1]])
    for r in range(rk.NR):  # each rank staged its own row (a traced local store)
        assert (res.window_writers("data_buf", r) == r).all()
    # local stores need a trace: the window race check (on by default) traces the ranks
    untraced = rk.allreduce(x, np.zeros((rk.NR, 1, rk.S), np.float32),
                            config=SimConfig(device_ids=(0, 1), checks=("oob", "ub", "div")))
    assert (untraced.window_writers("data_buf", 0) == -1).all()
    checked = rk.allreduce(x, np.zeros((rk.NR, 1, rk.S), np.float32), config=TWO)
    assert (checked.window_writers("data_buf", 1) == 1).all()


def test_the_window_view_colours_each_rank_copy_by_writer():
    import collective_kernels as ck

    nr = 4
    x = np.stack([np.full((nr, ck.S), r, np.float32) for r in range(nr)])
    res = ck.build(nr).device.all_to_all(x, np.zeros((nr, nr, ck.S), np.float32),
                                         config=SimConfig(device_ids=tuple(range(nr)),
                                                          trace=True))
    for r in range(nr):  # row q of every rank's target came from rank q
        np.testing.assert_array_equal(res.window_writers("data_buf", r)[:, 0], range(nr))
    view = pypto_lab.window_view(res, "data_buf")
    assert view.summary.splitlines()[1] == \
        "  rank 0's copy: 64 by rank 0, 64 by rank 1, 64 by rank 2, 64 by rank 3"
    panels = [t for t in view.figure.data if t.type == "heatmap"]
    assert len(panels) == nr and list(panels[2].z[:, 0]) == [0, 1, 2, 3]
    assert "written by %{customdata[1]}" in panels[0].hovertemplate
    with pytest.raises(KeyError, match="no window buffer 'nope'; the run has"):
        pypto_lab.window_view(res, "nope")
    with pytest.raises(TypeError, match="window_view needs a multi-card run"):
        pypto_lab.window_view(object(), "data_buf")
