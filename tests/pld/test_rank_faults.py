"""Faults the compiler cannot see (the values arrive at run time) are located errors on
the op's line that name the rank, the window and what is out of range."""
from __future__ import annotations

import numpy as np
import pytest
import rank_kernels as rk
from frontend_helpers import assert_at

from pypto.errors import SimulationError
from pypto.sim import SimConfig

KERNELS = rk.__file__
TWO = SimConfig(device_ids=(0, 1))


def _x(rows: int = 1) -> np.ndarray:
    return np.zeros((rk.NR, rows, rk.S), np.float32)


def test_a_broadcast_root_the_run_lacks():
    with pytest.raises(SimulationError) as info:
        rk.bcast_root_off_the_world(_x(), config=TWO)
    assert "pld.tensor.broadcast: root 3 is not a rank (0..1)" in info.value.message
    assert_at(info.value, KERNELS, "root", "pld.tensor.broadcast")


def test_a_notify_past_the_signal_window_names_rank_cell_and_window():
    with pytest.raises(SimulationError) as info:
        rk.notify_past_the_signal(_x(), config=TWO)
    assert "pld.system.notify on rank 0 addresses cell [2, 0] of the window 'sig' of " \
           "rank 0, outside the [2, 1] signal (axis 0: [2, 3) is outside [0, 2))" \
        in info.value.message
    assert_at(info.value, KERNELS, "cell", "pld.system.notify")


def test_a_window_view_larger_than_its_buffer():
    with pytest.raises(SimulationError) as info:
        rk.view_past_the_buffer(_x(), config=TWO)
    assert f"pld.window views [4, {rk.S}] pl.FP32 ({4 * rk.S * 4:,} bytes) of the window " \
           f"buffer 'buf', which holds {rk.S * 4:,} bytes per rank" in info.value.message
    assert info.value.tensor == "buf"
    assert_at(info.value, KERNELS, "view", "pld.window")


def test_a_put_whose_source_box_leaves_the_source():
    with pytest.raises(SimulationError) as info:
        rk.put_past_the_source(np.zeros((rk.NR, 4, rk.S), np.float32), config=TWO)
    assert f"pld.tensor.put: the local box [3:5, 0:{rk.S}] is outside the [4, {rk.S}] " \
           "tensor (axis 0: [3, 5) is outside [0, 4))" in info.value.message
    assert_at(info.value, KERNELS, "put", "pld.tensor.put")
