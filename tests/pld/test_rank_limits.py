"""Issue 31, item 8 (multi-card): more than 128 ranks run (the per-byte writer ids of a
window were int8), and a fault inside a rank's run names the rank and its device - its
blocks and tasks are numbered per rank, "block 0" alone does not say which card."""
from __future__ import annotations

import numpy as np
import pytest
import rank_kernels as rk
from frontend_helpers import assert_at

from pypto.errors import SimulationError
from pypto.sim import SimConfig
from pypto.sim.cluster.windows import Windows

KERNELS = rk.__file__


@pytest.mark.parametrize("n", [128, 200])
def test_more_than_128_ranks_run_and_remember_their_writers(n):
    res = rk.mark_every_rank(config=SimConfig(device_ids=tuple(range(n)), trace=True))
    assert res.world_size == n
    for r in (0, 127, n - 1):
        assert (res.window("buf", r) == 1).all()
        assert (res.window_writers("buf", r) == r).all()


def test_writer_ids_take_the_narrowest_type_holding_every_rank():
    assert Windows(127).writer_dtype == np.int8
    assert Windows(128).writer_dtype == np.int16
    assert Windows(40_000).writer_dtype == np.int32


def test_a_fault_on_rank_two_of_four_names_the_rank_and_its_device():
    x = np.ones((4, 1, rk.S), np.float32)
    with pytest.raises(SimulationError) as info:
        rk.fault_on_rank_two(x, config=SimConfig(device_ids=(4, 5, 6, 7)))
    err = info.value
    assert "[rank 2 of 4 (device 6), tensor 'x', region 'load_at'" in err.message
    assert err.rank == 2
    assert "= context: rank=2, tensor=x" in str(err)
    assert_at(err, KERNELS, "rank2", "pl.load")
