"""Host rounds reusing one window buffer (issue 33, item 1).

From the real pypto's `tests/st/distributed/test_l3_host_tensor_barrier.py`,
`test_host_tensor_barrier_signal_reuse`: every rank publishes a row into its window,
a host `pld.tensor.barrier`, every rank remote-loads its peer's row; then a second round
reuses the same data and signal windows. Nothing the runtime tracks orders rank 0's
round-2 publish after rank 1's round-1 remote read of rank 0's window (simpler tracks no
write-after-read edge, `docs/war-anti-dependency.md`): only the ranks' workers keeping
pace do, as they do on the device, and the real test expects each round's own rows.
Before, the simulated ranks ran ahead of each other and round 0 got round 1's rows
(max diff 10000). The kernel below is written in our own words; the schedule and the
sizes are the real test's.
"""
from __future__ import annotations

import numpy as np
import pytest
from frontend_helpers import assert_at

import pypto.language as pl
import pypto.language.distributed as pld
from pypto.sim import SimConfig
from pypto.sim.cluster.happens import WindowRaceError

HERE = __file__
ROW = 64
NR = pl.dynamic("NR")


@pl.program
class TwoRounds:
    @pl.function(type=pl.FunctionType.InCore)
    def publish(self, row: pl.Tensor[[1, ROW], pl.FP32],
                mine: pl.InOut[pld.DistributedTensor[[1, ROW], pl.FP32]]
                ) -> pld.DistributedTensor[[1, ROW], pl.FP32]:
        return pl.store(pl.load(row, [0, 0], [1, ROW]), [0, 0], mine)  # ERR:publish

    @pl.function(type=pl.FunctionType.Orchestration)
    def publish_chip(self, row: pl.Tensor[[1, ROW], pl.FP32],
                     mine: pl.InOut[pld.DistributedTensor[[1, ROW], pl.FP32]]
                     ) -> pld.DistributedTensor[[1, ROW], pl.FP32]:
        return self.publish(row, mine)

    @pl.function(type=pl.FunctionType.InCore)
    def fetch(self, mine: pld.DistributedTensor[[1, ROW], pl.FP32],
              got: pl.Out[pl.Tensor[[1, ROW], pl.FP32]], peer: pl.Scalar[pl.INT32]
              ) -> pl.Tensor[[1, ROW], pl.FP32]:
        theirs = pld.tile.remote_load(mine, peer=peer, offsets=[0, 0], shape=[1, ROW])
        return pl.store(theirs, [0, 0], got)

    @pl.function(type=pl.FunctionType.Orchestration)
    def fetch_chip(self, mine: pld.DistributedTensor[[1, ROW], pl.FP32],
                   got: pl.Out[pl.Tensor[[1, ROW], pl.FP32]], peer: pl.Scalar[pl.INT32]
                   ) -> pl.Tensor[[1, ROW], pl.FP32]:
        return self.fetch(mine, got, peer)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, rows: pl.Tensor[[2, NR, 1, ROW], pl.FP32],
             got: pl.Out[pl.Tensor[[2, NR, 1, ROW], pl.FP32]]
             ) -> pl.Tensor[[2, NR, 1, ROW], pl.FP32]:
        data_buf = pld.alloc_window_buffer(ROW * pl.FP32.get_byte())
        signal_buf = pld.alloc_window_buffer(pld.world_size() * pl.INT32.get_byte())
        signal = pld.window(signal_buf, [pld.world_size()], dtype=pl.INT32)
        for k in pl.range(2):
            for r in pl.range(pld.world_size()):
                mine = pld.window(data_buf, [1, ROW], dtype=pl.FP32)
                self.publish_chip(rows[k, r], mine, device=r)
            pld.tensor.barrier(signal)
            for r in pl.range(pld.world_size()):
                mine = pld.window(data_buf, [1, ROW], dtype=pl.FP32)
                self.fetch_chip(mine, got[k, r], (r + 1) % pld.world_size(), device=r)
        return got


@pl.program
class TwoRoundsFenced:
    """The same, with a second barrier after each round's reads: the next round's
    overwrite waits for every peer's read by the barrier's notify -> wait."""

    @pl.function(type=pl.FunctionType.InCore)
    def publish(self, row: pl.Tensor[[1, ROW], pl.FP32],
                mine: pl.InOut[pld.DistributedTensor[[1, ROW], pl.FP32]]
                ) -> pld.DistributedTensor[[1, ROW], pl.FP32]:
        return pl.store(pl.load(row, [0, 0], [1, ROW]), [0, 0], mine)

    @pl.function(type=pl.FunctionType.Orchestration)
    def publish_chip(self, row: pl.Tensor[[1, ROW], pl.FP32],
                     mine: pl.InOut[pld.DistributedTensor[[1, ROW], pl.FP32]]
                     ) -> pld.DistributedTensor[[1, ROW], pl.FP32]:
        return self.publish(row, mine)

    @pl.function(type=pl.FunctionType.InCore)
    def fetch(self, mine: pld.DistributedTensor[[1, ROW], pl.FP32],
              got: pl.Out[pl.Tensor[[1, ROW], pl.FP32]], peer: pl.Scalar[pl.INT32]
              ) -> pl.Tensor[[1, ROW], pl.FP32]:
        theirs = pld.tile.remote_load(mine, peer=peer, offsets=[0, 0], shape=[1, ROW])
        return pl.store(theirs, [0, 0], got)

    @pl.function(type=pl.FunctionType.Orchestration)
    def fetch_chip(self, mine: pld.DistributedTensor[[1, ROW], pl.FP32],
                   got: pl.Out[pl.Tensor[[1, ROW], pl.FP32]], peer: pl.Scalar[pl.INT32]
                   ) -> pl.Tensor[[1, ROW], pl.FP32]:
        return self.fetch(mine, got, peer)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, rows: pl.Tensor[[2, NR, 1, ROW], pl.FP32],
             got: pl.Out[pl.Tensor[[2, NR, 1, ROW], pl.FP32]]
             ) -> pl.Tensor[[2, NR, 1, ROW], pl.FP32]:
        data_buf = pld.alloc_window_buffer(ROW * pl.FP32.get_byte())
        signal_buf = pld.alloc_window_buffer(pld.world_size() * pl.INT32.get_byte())
        signal = pld.window(signal_buf, [pld.world_size()], dtype=pl.INT32)
        for k in pl.range(2):
            for r in pl.range(pld.world_size()):
                mine = pld.window(data_buf, [1, ROW], dtype=pl.FP32)
                self.publish_chip(rows[k, r], mine, device=r)
            pld.tensor.barrier(signal)
            for r in pl.range(pld.world_size()):
                mine = pld.window(data_buf, [1, ROW], dtype=pl.FP32)
                self.fetch_chip(mine, got[k, r], (r + 1) % pld.world_size(), device=r)
            pld.tensor.barrier(signal)
        return got


def _rows() -> np.ndarray:
    """Round k, rank r: r * 100 + k * 10000 + 0..63, as the real test distinguishes rounds."""
    base = np.arange(ROW, dtype=np.float32).reshape(1, 1, 1, ROW)
    return (base + (np.arange(2) * 100).reshape(1, 2, 1, 1) +
            (np.arange(2) * 10000).reshape(2, 1, 1, 1)).astype(np.float32)


def _swapped(rows: np.ndarray) -> np.ndarray:
    return rows[:, ::-1]


def test_each_round_reads_its_own_rows():
    rows = _rows()
    got = np.full_like(rows, -1)
    res = TwoRounds(rows, got, config=SimConfig(device_ids=(0, 1)))
    np.testing.assert_array_equal(got, _swapped(rows))
    assert got[0, 0, 0, 0] == 100.0 and got[1, 0, 0, 0] == 10100.0
    # the default window check leaves the pace-ordered pairs to the "race" check ...
    assert res.window_races == []
    # ... and keeps them: each rank's round-2 publish against its peer's round-1 read
    pairs = sorted((w.owner, w.first.rank, w.first.write, w.second.rank, w.second.write)
                   for w in res.window_races_by_timing)
    assert pairs == [(0, 1, False, 0, True), (1, 0, False, 1, True)]


def test_the_race_check_reports_the_unordered_overwrite():
    with pytest.raises(WindowRaceError) as info:
        TwoRounds(_rows(), np.zeros_like(_rows()),
                  config=SimConfig(device_ids=(0, 1), checks=("race",)))
    err = info.value
    assert err.message.startswith("race between ranks on window 'data_buf' of rank 0, "
                                  "elements [0:1, 0:64]: rank 1 reads with "
                                  "pld.tile.remote_load at ")
    assert "only the timing of the ranks' dispatches orders them" in err.message
    assert "(and 1 more)" in err.message
    assert_at(err, HERE, "publish", "pl.store")
    assert err.hint.startswith("order the overwrite after the peer's read")
    assert len(err.races) == 2 and all(w.by_timing for w in err.races)


def test_a_barrier_after_the_reads_orders_the_next_round():
    rows = _rows()
    got = np.zeros_like(rows)
    res = TwoRoundsFenced(rows, got, config=SimConfig(device_ids=(0, 1), checks=("race",)))
    np.testing.assert_array_equal(got, _swapped(rows))
    assert res.window_races == [] and res.window_races_by_timing == []
