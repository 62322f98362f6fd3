"""The rank runtime: ranks run concurrently in one process and deterministically; a wait
blocks its own rank; a deadlock, a remote access outside a window and an unordered
window access are located faults naming the ranks."""
from __future__ import annotations

import numpy as np
import pytest
import rank_kernels as rk
from frontend_helpers import assert_at, where

from pypto.errors import SimulationError
from pypto.sim import SimConfig
from pypto.sim.cluster.happens import WindowRaceError
from pypto.sim.cluster.signals import DeadlockError

KERNELS = rk.__file__
TWO = SimConfig(device_ids=(0, 1))


def _inputs() -> np.ndarray:
    return np.stack([np.arange(rk.S, dtype=np.float32).reshape(1, rk.S) + 100 * r
                     for r in range(rk.NR)])


def test_allreduce_on_two_ranks_sums_every_rank_row():
    x = _inputs()
    y = np.full_like(x, np.nan)
    result = rk.allreduce(x, y, config=TWO)
    np.testing.assert_array_equal(y[0], x.sum(axis=0))
    np.testing.assert_array_equal(y[1], x.sum(axis=0))
    assert result.world_size == 2 and len(result.ranks) == 2
    kinds = [e.kind for e in result.events]
    assert kinds.count("notify") == 2 and kinds.count("wait_done") == 2
    # each rank launched the region once, one block: the result sums the ranks' decisions
    (once,) = result.ranks[0].decisions()["exchange"]
    (twice,) = result.decisions()["exchange"]
    assert (once.kind, once.times, twice.times) == ("per_block", 1, 2)
    assert twice.reason == "one block per launch, and no loop nest around it ran batched"


def test_same_inputs_give_the_same_outputs_and_the_same_schedule():
    runs = []
    for _ in range(3):
        x = _inputs()
        y = np.zeros_like(x)
        res = rk.allreduce(x, y, config=SimConfig(device_ids=(0, 1), trace=True))
        events = [(e.seq, e.rank, e.kind, e.task, tuple(sorted(e.info.items())))
                  for e in res.events]
        tasks = [[(t.id, t.name) for t in r.tasks] for r in res.ranks]
        runs.append((y.tobytes(), events, tasks, res.switches))
    assert runs[0] == runs[1] == runs[2]


def test_a_wait_blocks_only_its_own_rank():
    x, y = _inputs(), np.zeros((rk.NR, 1, rk.S), np.float32)
    res = rk.allreduce(x, y, config=TWO)
    # rank 0 runs first and blocks at its wait; rank 1 runs, notifies, and goes on
    order = [(e.rank, e.kind) for e in res.events if e.kind in ("wait", "wait_done", "notify")]
    assert order[:3] == [(0, "notify"), (0, "wait"), (1, "notify")]
    assert (1, "wait_done") in order and order.index((1, "wait_done")) < \
        order.index((0, "wait_done"))


def test_what_the_ranks_wrote_counts_as_written_in_the_host_outputs():
    x, y = _inputs(), np.full((rk.NR, 1, rk.S), np.nan, np.float32)
    res = rk.allreduce(x, y, config=SimConfig(device_ids=(0, 1), trace=True))
    writers = res.trace.writers["outputs"]
    assert (writers.task == -2).all()  # by the host's dispatch to each rank
    np.testing.assert_array_equal(writers.block[:, 0, 0], [0, 1])  # block = the rank
    assert res.trace.writers["inputs"].task.max() == -1  # read, never written


def test_windows_start_zeroed_at_each_dispatch_of_the_host():
    x = _inputs()
    for _ in range(2):  # the credit counters would reach 2 if the windows were kept
        y = np.zeros_like(x)
        res = rk.allreduce(x, y, config=TWO)
        np.testing.assert_array_equal(res.window("signal_buf", 0), [[0], [1]])
        np.testing.assert_array_equal(y[1], x.sum(axis=0))


def test_deadlock_names_every_rank_wait():
    x, y = _inputs(), np.zeros((rk.NR, 1, rk.S), np.float32)
    with pytest.raises(DeadlockError) as info:
        rk.waits_too_long(x, y, config=TWO)
    err = info.value
    line, _ = where(KERNELS, "wait")
    assert err.message.startswith("deadlock: no rank can go on")
    for r, cell in ((0, "signal_buf[1, 0]"), (1, "signal_buf[0, 0]")):
        assert (f"rank {r}: pld.system.wait at {KERNELS}:{line} on {cell} (its own window) "
                "waits for >= 2; the cell holds 1") in err.message
    assert_at(err, KERNELS, "wait", "pld.system.wait")
    assert set(err.waits) == {0, 1} and err.waits[0].current == 1


def test_a_peer_the_run_lacks_is_a_located_fault_with_the_devices_to_give():
    with pytest.raises(SimulationError) as info:
        rk.pair_host(_inputs())  # no devices given: one rank, which notifies rank 1
    err = info.value
    assert "pld.system.notify on rank 0: peer 1 is not a rank of this run, which has 1 " \
           "(rank 0)" in err.message
    assert "DistributedConfig(device_ids=[0, 1])" in err.hint
    assert_at(err, KERNELS, "pair-notify", "pld.system.notify")
    rk.pair_host(_inputs(), config=TWO)  # two ranks: each notifies the other


def test_remote_access_outside_the_window_names_rank_peer_window_and_indices():
    y = np.zeros((rk.NR, 1, rk.S), np.float32)
    with pytest.raises(SimulationError) as info:
        rk.remote_oob(y, config=TWO)
    err = info.value
    assert "remote access outside the window: rank 0 pld.tile.remote_load reaches " \
           f"[3:5, 0:{rk.S}] of the window 'buf' of rank 1, which is [4, {rk.S}] " \
           "(axis 0: [3, 5) is outside [0, 4))" in err.message
    assert err.tensor == "buf"
    assert_at(err, KERNELS, "oob", "pld.tile.remote_load")


def test_a_dispatch_on_a_rank_the_run_lacks_is_located():
    x = _inputs()
    with pytest.raises(SimulationError) as info:
        rk.off_the_world(x, config=TWO)
    assert "device=5 dispatches push_chip on a rank this run does not have: it runs on 2 " \
           "device(s) [0, 1]" in info.value.message
    assert_at(info.value, KERNELS, "device", "push_chip(")


def test_two_ranks_writing_one_window_unordered_is_a_race():
    x = _inputs()
    with pytest.raises(WindowRaceError) as info:
        rk.racy_pushes(x, config=SimConfig(device_ids=(0, 1), checks=("race",)))
    err = info.value
    assert "race between ranks on window 'buf' of rank 0, elements [0:1, 0:64]" in err.message
    assert "with no notify -> wait between them" in err.message
    (race,) = err.races
    assert {race.first.rank, race.second.rank} == {0, 1}
    assert race.first.write and race.second.write
    line, _ = where(KERNELS, "push")
    assert f"pld.tile.remote_store at {KERNELS}:{line} and rank " in err.message
    assert_at(err, KERNELS, "push", "pld.tile.remote_store")


def test_a_local_store_racing_a_peer_read_names_both_ops_and_lines():
    x, y = _inputs(), np.zeros((rk.NR, 1, rk.S), np.float32)
    with pytest.raises(WindowRaceError) as info:
        rk.swap_without_barrier(x, y, config=SimConfig(device_ids=(0, 1), checks=("race",)))
    err = info.value
    stage, _ = where(KERNELS, "stage")
    pull, _ = where(KERNELS, "pull")
    assert (f"race between ranks on window 'buf' of rank 0, elements [0:1, 0:{rk.S}]: "
            f"rank 0 writes with pl.store at {KERNELS}:{stage} and rank 1 reads with "
            f"pld.tile.remote_load at {KERNELS}:{pull}, with no notify -> wait between "
            "them") in err.message
    assert_at(err, KERNELS, "pull", "pld.tile.remote_load")


def test_ordered_window_accesses_are_not_races():
    x, y = _inputs(), np.zeros((rk.NR, 1, rk.S), np.float32)
    res = rk.allreduce(x, y, config=SimConfig(device_ids=(0, 1), checks=("race",),
                                              strict=False))
    assert res.window_races == []
    assert not res.races


def test_races_are_collected_when_not_strict():
    x = _inputs()
    res = rk.racy_pushes(x, config=SimConfig(device_ids=(0, 1), checks=("race",),
                                             strict=False))
    assert len(res.window_races) == 1
