"""Memory model: uploads, copy-back, residue, views vs copies, valid shapes."""
import warnings

import ml_dtypes
import numpy as np
import pytest
import sim_kernels as k

import pypto.sim as sim
from pypto.backend.pto_backend import OutRebindError

warnings.filterwarnings("ignore", category=UserWarning)

# a pure pl.Out from fresh memory, as the harness starts it (a direct call starts it
# from the caller's array)
FRESH = sim.SimConfig(out_start="fresh")


def rand(*shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def test_in_param_is_never_copied_back():
    x = rand(64, 64)
    keep = x.copy()
    y = np.zeros_like(x)
    r = sim.simulate(k.writes_its_input, x, y)
    np.testing.assert_array_equal(x, keep)  # the host array is untouched
    np.testing.assert_allclose(r.device["x"], keep + 1.0)  # although the device copy changed
    np.testing.assert_allclose(y, keep + 1.0)
    assert "x" not in r.outputs and "y" in r.outputs


def test_in_param_reads_what_the_host_passed_even_zeros():
    x = np.zeros((64, 64), np.float32)
    y = np.full_like(x, 5.0)
    k.half_written(x, y)
    np.testing.assert_array_equal(y[:32], 0.0)


def test_out_param_starts_as_nan_residue_and_is_copied_back():
    x = rand(64, 64)
    y = np.zeros_like(x)  # the host's zeros are NOT uploaded (the harness's rule)
    k.half_written(x, y, config=FRESH)
    np.testing.assert_allclose(y[:32], 2 * x[:32])
    assert np.isnan(y[32:]).all()


def test_a_direct_call_starts_its_out_param_from_the_callers_array():
    """As the real runtime on a direct `@pl.jit` call (real
    `tests/st/runtime/ops/test_atomic_add.py` pre-fills a pl.Out and expects baseline + x)."""
    x = rand(64, 64)
    y = np.full_like(x, 5.0)
    k.half_written(x, y)
    np.testing.assert_allclose(y[:32], 2 * x[:32])
    np.testing.assert_array_equal(y[32:], 5.0)


def test_out_param_read_before_written_sees_residue():
    x = np.ones((32, 32), np.float32)
    y = np.zeros_like(x)
    k.reads_its_output(x, y, config=FRESH)
    assert np.isnan(y).all()
    y = np.full_like(x, 2.0)  # a direct call reads what the caller put there
    k.reads_its_output(x, y)
    np.testing.assert_array_equal(y, 3.0)


def test_integer_residue_is_deterministic_garbage():
    x = np.arange(16 * 32, dtype=np.int32).reshape(16, 32)
    y1 = np.zeros_like(x)
    y2 = np.zeros_like(x)
    y3 = np.zeros_like(x)
    sim.simulate(k.half_written_int, x, y1, seed=1, trace=False)
    sim.simulate(k.half_written_int, x, y2, seed=1, trace=False)
    sim.simulate(k.half_written_int, x, y3, seed=2, trace=False)
    np.testing.assert_array_equal(y1[:8], x[:8])
    np.testing.assert_array_equal(y1[8:], y2[8:])  # same seed, same garbage
    assert (y1[8:] != 0).mean() > 0.9  # not zeros
    assert (y1[8:] != y3[8:]).any()  # another seed, other garbage


def test_zero_uninit_option():
    x = rand(64, 64)
    y = np.full_like(x, 7.0)
    sim.simulate(k.half_written, x, y, uninit="zero")
    np.testing.assert_array_equal(y[32:], 0.0)


def test_inout_is_uploaded_and_copied_back():
    x = np.ones((32, 32), np.float32)
    y = np.full((32, 32), 2.0, np.float32)
    k.accumulate(x, y)
    np.testing.assert_array_equal(y, 3.0)


def test_assignment_to_out_name_in_a_region_is_refused():
    x = rand(32, 32)
    y = np.zeros_like(x)
    with pytest.raises(OutRebindError, match=r"pl\.Out parameter 'y' inside a pl\.at region"):
        k.assign_is_not_write(x, y)
    np.testing.assert_array_equal(y, 0.0)  # nothing ran


def test_bf16_storage_and_rounding():
    x = rand(32, 64).astype(ml_dtypes.bfloat16)
    y = np.zeros_like(x)
    k.bf16_scale(x, y)
    assert y.dtype == ml_dtypes.bfloat16
    ref = (x.astype(np.float32) * 3.0).astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(y.astype(np.float32), ref.astype(np.float32))


def test_create_tensor_is_residue_until_written():
    x = rand(32, 32)
    y = np.zeros_like(x)
    k.scratch_tensor(x, y)
    np.testing.assert_allclose(y[:16], x[:16] + 1)
    assert np.isnan(y[16:]).all()


def test_dynamic_rows_with_valid_shape_tail():
    for n in (200, 224, 17):
        x = rand(n, 128, seed=n)
        y = np.zeros_like(x)
        r = sim.simulate(k.tail_rows, x, y)
        np.testing.assert_allclose(y, x + 1)
        assert len(r.tasks) == -(-n // 32)
        last = r.tasks[-1]
        rows = n - 32 * (len(r.tasks) - 1)
        assert last.writes[0].ranges == [(n - rows, n), (0, 128)]


def test_set_validshape_and_fillpad_min_before_row_max():
    x = -np.abs(rand(32, 128)) - 1.0  # all negative: zero padding would win a max
    y = np.zeros((32, 1), np.float32)
    k.masked_row_max(x, 100, y)
    np.testing.assert_allclose(y[:, 0], x[:, :100].max(axis=1))


def test_padding_takes_no_part_in_reductions():
    x = rand(32, 128)
    y = np.zeros((32, 1), np.float32)
    sim.simulate(k.unpadded_row_sum, x, 50, y)  # default padding: zeros
    np.testing.assert_allclose(y[:, 0], x[:, :50].sum(axis=1), rtol=1e-5, atol=1e-5)
    # NaN poison in the padding does not reach the sum: only the valid columns are read
    sim.simulate(k.unpadded_row_sum, x, 50, y, padding="nan")
    np.testing.assert_allclose(y[:, 0], x[:, :50].sum(axis=1), rtol=1e-5, atol=1e-5)


def test_argument_dtype_is_checked():
    x = rand(64, 64).astype(np.float64)
    with pytest.raises(sim.SimulationError, match="dtype float64 but the kernel declares"):
        k.half_written(x, np.zeros((64, 64), np.float32))


def test_aliased_arguments_keep_upload_semantics():
    x = rand(64, 64)
    keep = x.copy()
    # the same array as In and Out: the kernel must read the uploaded x, not the residue
    k.half_written(x, x, config=FRESH)
    np.testing.assert_allclose(x[:32], 2 * keep[:32])
    assert np.isnan(x[32:]).all()


def test_non_contiguous_out_is_copied_back():
    x = rand(64, 64)
    big = np.zeros((64, 128), np.float32)
    y = big[:, ::2]  # a strided view: simulated in a separate device buffer
    k.half_written(x, y, config=FRESH)
    np.testing.assert_allclose(big[:32, ::2], 2 * x[:32])
    assert np.isnan(big[32:, ::2]).all() and (big[:, 1::2] == 0).all()


def test_in_argument_read_in_place_is_protected():
    x = rand(64, 64)
    y = np.zeros_like(x)
    r = sim.simulate(k.half_written, x, y)
    assert not r.device["x"].flags.writeable  # a read-only view of the caller's array
    assert np.shares_memory(r.device["x"], x) and x.flags.writeable
