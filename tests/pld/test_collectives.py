"""Every pld collective runs on 2 and 4 simulated ranks and gives what numpy computes:
barrier, allreduce (mesh with every reduce op and dtype, chunked, and ring), broadcast,
allgather, reduce_scatter, all_to_all and all_to_all_v, in their device form (called in
a kernel) and their host form (called by the @pl.jit.host function). The credit barrier
leaves every signal all zero, so the same signal serves the next call."""
from __future__ import annotations

import collective_kernels as ck
import ml_dtypes
import numpy as np
import pytest

import pypto.language as pl
import pypto.language.distributed as pld
from pypto.sim import SimConfig

S = ck.S
_BUILT: dict[int, object] = {}


def kernels(nr: int):
    if nr not in _BUILT:
        _BUILT[nr] = ck.build(nr)
    return _BUILT[nr]


def world(nr: int, **options) -> SimConfig:
    return SimConfig(device_ids=tuple(range(10, 10 + nr)), **options)  # ids need not be 0..


def rows(nr: int, k: int = 1) -> np.ndarray:
    """[nr, k, S] distinct small integers per rank (sums and products are exact)."""
    return np.stack([(np.arange(k * S).reshape(k, S) % 7 + 10 * r + 1).astype(np.float32)
                     for r in range(nr)])


def assert_signal_cleared(result, name: str, nr: int) -> None:
    for r in range(nr):
        assert not np.any(result.window(name, r)), f"{name} on rank {r} not cleared"


RANKS = pytest.mark.parametrize("nr", [2, 4])


# --- device form ----------------------------------------------------------------------------

@RANKS
def test_barrier_orders_every_rank_staging_before_any_read(nr):
    x = rows(nr)
    y = np.full_like(x, np.nan)
    res = kernels(nr).device.barrier(x, y, config=world(nr, checks=("race",), strict=False))
    np.testing.assert_array_equal(y, np.roll(x, -1, axis=0))  # rank r read rank r+1's row
    assert_signal_cleared(res, "sig_buf", nr)
    assert res.window_races == []  # the barrier's notify/wait order the accesses


_REF = {pld.ReduceOp.Sum: np.sum, pld.ReduceOp.Max: np.max, pld.ReduceOp.Min: np.min,
        pld.ReduceOp.Prod: np.prod}


@RANKS
@pytest.mark.parametrize("op", [pld.ReduceOp.Sum, pld.ReduceOp.Max, pld.ReduceOp.Min,
                                pld.ReduceOp.Prod])
def test_mesh_allreduce_twice_on_one_signal_with_every_op(nr, op):
    rng = np.random.default_rng(int(op) + nr)
    x = rng.integers(-3, 4, size=(nr, 2, 4, 48)).astype(np.float32)
    y = np.full_like(x, np.nan)
    res = kernels(nr).device.allreduce(4, 48, pl.FP32, op, "mesh")(x, y, config=world(nr))
    want = _REF[op](x, axis=0)
    for r in range(nr):
        np.testing.assert_array_equal(y[r], want)  # both calls, with their own data
    assert_signal_cleared(res, "sig_buf", nr)


@RANKS
def test_mesh_allreduce_larger_than_one_chunk_reduces_every_chunk(nr):
    from pypto.sim.cluster.collectives import MESH_CHUNK_BYTES

    cols = 640
    assert 8 * cols * 4 > MESH_CHUNK_BYTES  # two 16 KiB chunks and a bit
    x = rows(nr, 2 * 8 * cols // S).reshape(nr, 2, 8, cols)
    y = np.full_like(x, np.nan)
    kernels(nr).device.allreduce(8, cols, pl.FP32, pld.ReduceOp.Sum, "mesh")(
        x, y, config=world(nr))
    for r in range(nr):
        np.testing.assert_array_equal(y[r], x.sum(axis=0))


@RANKS
@pytest.mark.parametrize("dtype,np_dtype", [(pl.INT32, np.int32), (pl.FP16, np.float16),
                                            (pl.BF16, ml_dtypes.bfloat16)])
def test_mesh_allreduce_sums_other_dtypes(nr, dtype, np_dtype):
    x = np.random.default_rng(nr).integers(-20, 20, size=(nr, 2, 2, 32)).astype(np_dtype)
    y = np.zeros_like(x)
    kernels(nr).device.allreduce(2, 32, dtype, pld.ReduceOp.Sum, "mesh")(x, y, config=world(nr))
    want = x.astype(np.float64).sum(axis=0)
    for r in range(nr):
        np.testing.assert_array_equal(y[r].astype(np.float64), want)


@RANKS
def test_ring_allreduce_twice_on_one_signal(nr):
    x = np.random.default_rng(7).standard_normal((nr, 2, 3, 40)).astype(np.float32)
    y = np.full_like(x, np.nan)
    res = kernels(nr).device.allreduce(3, 40, pl.FP32, pld.ReduceOp.Sum, "ring")(
        x, y, config=world(nr))
    for r in range(nr):
        np.testing.assert_allclose(y[r], x.sum(axis=0), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(y[0], y[nr - 1])  # every rank ends with the same bits
    assert_signal_cleared(res, "sig_buf", nr)


@RANKS
def test_broadcast_gives_every_rank_the_root_row(nr):
    x = rows(nr)
    for root in (0, nr - 1):
        y = np.full_like(x, np.nan)
        res = kernels(nr).device.broadcast(root)(x, y, config=world(nr))
        np.testing.assert_array_equal(y, np.broadcast_to(x[root], x.shape))
        assert_signal_cleared(res, "sig_buf", nr)


@RANKS
def test_allgather_gives_every_rank_all_rows_in_rank_order(nr):
    x = rows(nr)
    y = np.full((nr, nr, S), np.nan, np.float32)
    res = kernels(nr).device.allgather(x, y, config=world(nr))
    np.testing.assert_array_equal(y, np.broadcast_to(x[:, 0], (nr, nr, S)))
    assert_signal_cleared(res, "sig_buf", nr)


@RANKS
def test_reduce_scatter_leaves_rank_r_the_sum_of_chunk_r(nr):
    x = rows(nr, nr)  # rank q stages chunks x[q, 0..nr)
    y = np.full((nr, 1, S), np.nan, np.float32)
    res = kernels(nr).device.reduce_scatter(x, y, config=world(nr))
    np.testing.assert_array_equal(y[:, 0], x.sum(axis=0))
    assert_signal_cleared(res, "sig_buf", nr)


@RANKS
def test_all_to_all_transposes_the_rank_and_row_axes(nr):
    x = rows(nr, nr)  # rank q's row d is for rank d
    y = np.full((nr, nr, S), np.nan, np.float32)
    res = kernels(nr).device.all_to_all(x, y, config=world(nr))
    np.testing.assert_array_equal(y, x.transpose(1, 0, 2))
    assert_signal_cleared(res, "sig_buf", nr)


@RANKS
def test_all_to_all_v_pushes_blocks_and_publishes_clamped_counts(nr):
    cap = 3
    x = rows(nr, nr * cap)  # rank q's rows d*cap.. are its block for rank d
    counts = np.array([[[(q + 2 * d) % (cap + 2)] for d in range(nr)] for q in range(nr)],
                      np.int32)  # some counts exceed the block: they are clamped to cap
    y = np.full_like(x, np.nan)
    got = np.full((nr, nr, 1), -1, np.int32)
    kernels(nr).device.all_to_all_v(cap)(x, counts, y, got, config=world(nr))
    for d in range(nr):
        for q in range(nr):
            np.testing.assert_array_equal(y[d, q * cap:(q + 1) * cap],
                                          x[q, d * cap:(d + 1) * cap])
            assert got[d, q, 0] == min(counts[q, d, 0], cap)


# --- host form ------------------------------------------------------------------------------

@RANKS
def test_host_barrier_orders_the_dispatches_around_it(nr):
    x = rows(nr)
    y = np.full_like(x, np.nan)
    kernels(nr).host.barrier(x, y, config=world(nr))
    np.testing.assert_array_equal(y, np.roll(x, -1, axis=0))


@RANKS
def test_host_allreduce_without_a_signal_sums_every_rank(nr):
    x = rows(nr)
    y = np.full_like(x, np.nan)
    kernels(nr).host.allreduce(x, y, config=world(nr))
    np.testing.assert_array_equal(y, np.broadcast_to(x.sum(axis=0), x.shape))


@RANKS
def test_host_broadcast_from_the_last_rank(nr):
    x = rows(nr)
    y = np.full_like(x, np.nan)
    kernels(nr).host.broadcast(x, y, config=world(nr))
    np.testing.assert_array_equal(y, np.broadcast_to(x[nr - 1], x.shape))


@RANKS
def test_host_allgather_and_all_to_all(nr):
    x = rows(nr)
    y = np.full((nr, nr, S), np.nan, np.float32)
    kernels(nr).host.allgather(x, y, config=world(nr))
    np.testing.assert_array_equal(y, np.broadcast_to(x[:, 0], (nr, nr, S)))
    xs = rows(nr, nr)
    y = np.full((nr, nr, S), np.nan, np.float32)
    res = kernels(nr).host.all_to_all(xs, y, config=world(nr))
    np.testing.assert_array_equal(y, xs.transpose(1, 0, 2))
    assert_signal_cleared(res, "sig_buf", nr)


@RANKS
def test_host_reduce_scatter_with_max(nr):
    x = np.random.default_rng(3).standard_normal((nr, nr, S)).astype(np.float32)
    y = np.full_like(x, np.nan)
    kernels(nr).host.reduce_scatter(x, y, config=world(nr))
    for r in range(nr):
        np.testing.assert_array_equal(y[r, r], x[:, r].max(axis=0))  # my chunk, reduced
