"""Every runtime check raises a SimulationError that names tensor, region, block, indices."""
import warnings
from pathlib import Path

import numpy as np
import pytest
import sim_kernels as k

import pypto.sim as sim
from pypto.errors import SimulationError

warnings.filterwarnings("ignore", category=UserWarning)


def z(*shape, dtype=np.float32):
    return np.zeros(shape, dtype=dtype)


def test_out_of_bounds_slice_in_a_loop():
    with pytest.raises(SimulationError) as ei:
        k.oob_slice(z(128, 64), z(128, 64))
    e = ei.value
    assert "out-of-bounds slice" in e.message
    assert "window [128:160, 0:64] of 'x' (shape [128, 64])" in e.message
    assert e.tensor == "x"
    assert e.region.startswith("'rows' (") and "sim_kernels.py:" in e.region
    assert e.block == 0
    assert e.indices == "[128:160, 0:64]"
    assert e.span.line > 0
    assert "pl.slice" in Path(e.span.file).read_text().splitlines()[e.span.line - 1]
    text = str(e)
    assert "error[S000]" in text and "region 'rows'" in text and "block 0" in text


def test_out_of_bounds_assemble():
    with pytest.raises(SimulationError) as ei:
        k.oob_assemble(z(128, 64), z(128, 64))
    e = ei.value
    assert "out-of-bounds assemble" in e.message
    assert "writing a [32, 64] block at [112:144, 0:64] into 'y' (shape [128, 64])" in e.message
    assert e.tensor == "y" and e.indices == "[112:144, 0:64]" and e.block == 0
    assert "'shifted'" in e.region


def test_out_of_bounds_names_the_spmd_block():
    with pytest.raises(SimulationError) as ei:
        k.oob_spmd(z(256, 64), z(256, 64))
    e = ei.value
    assert e.block == 4 and "block 4" in e.message
    assert "window [256:320, 0:64] of 'x'" in e.message
    assert "'blocks'" in e.region


def test_out_of_bounds_load():
    with pytest.raises(SimulationError) as ei:
        k.oob_load_store(z(64, 64), 40, z(64, 64))
    assert "out-of-bounds load: window [40:72, 0:64] of 'x'" in ei.value.message
    assert ei.value.indices == "[40:72, 0:64]"


def test_out_of_bounds_store():
    with pytest.raises(SimulationError) as ei:
        k.oob_store(z(64, 64), 40, z(64, 64))
    e = ei.value
    assert "out-of-bounds store" in e.message and "into 'y' (shape [64, 64])" in e.message
    assert e.indices == "[40:72, 0:64]" and "'tiles'" in e.region


def test_out_of_bounds_read_in_orchestration():
    with pytest.raises(SimulationError) as ei:
        k.oob_read(z(8, 8, dtype=np.int32), 8, z(8, 8, dtype=np.int32))
    e = ei.value
    assert "out-of-bounds read: index [8, 0] of 'x'" in e.message
    assert e.region == "orchestration" and e.block is None and e.indices == [8, 0]


def test_out_of_bounds_write():
    with pytest.raises(SimulationError) as ei:
        k.oob_write(z(8, 8, dtype=np.int32), 9, z(8, 8, dtype=np.int32))
    e = ei.value
    assert "out-of-bounds write: index [9, 3] of 'y'" in e.message
    assert e.indices == [9, 3] and e.block == 0


def test_checks_can_be_switched_off():
    x = z(64, 64)
    y = z(64, 64)
    # without the bounds check numpy clips the window and the store cannot broadcast
    with pytest.raises(SimulationError, match="could not broadcast"):
        sim.simulate(k.oob_store, x, 40, y, checks=())
    sim.simulate(k.oob_store, x, 0, y, checks=())


def test_unchecked_over_read_keeps_the_window_and_reads_residue():
    # Without the bounds check a load past the end reads what the device would: whatever
    # follows the tensor in GM - residue (NaN) in the overhang, never a clipped window.
    x = np.arange(128 * 64, dtype=np.float32).reshape(128, 64)
    y = np.zeros((128, 64), np.float32)
    sim.simulate(k.oob_slice, x, y, checks=())  # the last window is [128:160] of 128 rows
    assert np.isnan(y[0:32]).all()  # residue, not a clipped window or a crash
    with pytest.raises(SimulationError) as ei:  # the default check still faults
        k.oob_slice(x, y)
    assert "the device reads whatever follows the tensor in GM" in str(ei.value)


def test_on_chip_budget():
    with pytest.raises(SimulationError) as ei:
        k.too_big_tile(z(64, 4096), z(64, 4096))
    e = ei.value
    assert "region 'huge'" in e.message
    assert "bytes of UB (Vec) at its peak, more than the 188,416 bytes usable on a2a3sim" \
        in e.message
    assert "live tiles at the peak: t (1,048,576 B)" in e.message
    # located at the statement of the peak (the compiler's buffer estimate knows it)
    assert e.span.file.endswith("sim_kernels.py") and \
        "t = x[:, :]" in Path(e.span.file).read_text().splitlines()[e.span.line - 1]
    assert "estimate from the compiler's buffer analysis" in e.note
    assert "shrink the tiles" in e.hint
    assert "pl.split" not in e.hint  # pl.split only applies to mixed cube+vector regions


def test_on_chip_budget_is_per_platform():
    big = z(64, 4096)
    with pytest.raises(SimulationError, match=r"240 ?KiB|245,760 bytes usable on a5sim"):
        sim.simulate(k.too_big_tile, big, z(64, 4096), platform="a5sim")
    sim.simulate(k.too_big_tile, big, z(64, 4096), checks=("oob",))  # ub check off


def test_argument_shape_mismatch():
    with pytest.raises(SimulationError) as ei:
        k.half_written(z(64, 32), z(64, 64))
    assert "argument 'x' has shape [64, 32] but the kernel declares" in ei.value.message
    assert ei.value.tensor == "x"


def test_argument_rank_and_dtype_mismatch():
    with pytest.raises(SimulationError, match="rank 1"):
        k.half_written(z(64), z(64, 64))
    with pytest.raises(SimulationError, match=r"dtype int32 but the kernel declares pl.FP32"):
        k.half_written(z(64, 64, dtype=np.int32), z(64, 64))


def test_dynamic_dim_bound_inconsistently():
    with pytest.raises(SimulationError) as ei:
        k.dyn_pair(z(16, 16), z(32, 16), z(16, 16))
    e = ei.value
    assert "dynamic dim N is bound inconsistently: 'a' axis 0 gives 16 but 'b' axis 0 is 32" \
        in e.message
    assert e.tensor == "b"


def test_absurd_trip_count_fails_fast():
    import time

    t0 = time.perf_counter()
    with pytest.raises(SimulationError) as ei:
        k.endless(z(8, 8), 10 ** 9, z(8, 8))
    assert time.perf_counter() - t0 < 5
    assert "1,000,000,000 iterations" in ei.value.message and "1e+08" in ei.value.message


def test_absurd_tensor_fails_fast():
    with pytest.raises(SimulationError) as ei:
        k.huge_scratch(z(8, 8), z(8, 8))
    assert "needs 16.0 GiB, more than the simulator's 8 GiB limit" in ei.value.message


def test_hardware_platforms_are_refused():
    with pytest.raises(SimulationError) as ei:
        sim.simulate(k.half_written, z(64, 64), z(64, 64), platform="a2a3")
    assert "this build of pypto simulates only" in ei.value.message
    assert "a2a3sim" in ei.value.hint
    with pytest.raises(SimulationError, match="simulates only"):
        k.half_written(z(64, 64), z(64, 64), config={"platform": "a5"})
    with pytest.raises(SimulationError, match="unknown platform"):
        sim.get_platform("tpu")


def test_syncall_mismatch_is_a_deadlock():
    with pytest.raises(SimulationError) as ei:
        k.barrier_mismatch(z(4, 16), z(4, 16))
    e = ei.value
    assert e.message.startswith("deadlock: block 2")
    assert "block(s) 0, 1 wait at it" in e.message
